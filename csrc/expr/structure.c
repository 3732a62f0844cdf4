/*
 * structure.c -- which input coordinates interact.
 *
 * Every value gets a dependency map.  A vector whose element j depends on
 * coordinates {a*j + c + d : d in D} (D small) is "affine" -- x, its slices,
 * and elementwise combinations of them; anything else is described by the set
 * S of coordinates every element may depend on (a bitset).  The result is
 * then split into additive terms (through + - neg, multiplication and
 * division by constants, sum, mean and fused sums); each term couples the
 * coordinates it touches.  Union-find over those couplings gives the groups,
 * and the edge list classifies the program:
 *   constant   no coordinate is used
 *   separable  no term touches two coordinates: f = c + sum_j g_j(x_j)
 *   chained    every coupling is (j, j+1), one chain or chains of length >= 3
 *   grouped    two or more independent groups
 *   general    anything else
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "expr/vm.h"

#define MAXD 8
#define MAX_EDGES ((size_t)1 << 18)
#define MAX_TERM_MEMBERS 64 /* a term coupling more is not listed pair by pair */
#define MAX_BITSET_BYTES ((size_t)64 << 20)

enum { DEP_CONST, DEP_AFFINE, DEP_SET };

typedef struct dep {
    int kind;       /* DEP_AFFINE may also carry S */
    int64_t a, c;   /* affine: element j -> a*j + c + d */
    int nd;
    int64_t d[MAXD];
    uint64_t *S;    /* NULL when empty */
    int owned;      /* S belongs to this (temporary) map */
} dep;

typedef struct an {
    dc_program *p;
    const dc_allocator *al;
    size_t n, words;
    dep *deps;
    int failed;     /* out of memory */
    int too_big;    /* structure too large to describe: general */
    size_t bytes;
} an;

static uint64_t *new_set(an *s)
{
    uint64_t *b;
    if (s->bytes + s->words * 8 > MAX_BITSET_BYTES) {
        s->too_big = 1;
        return NULL;
    }
    b = dc_mem_calloc(s->al, s->words ? s->words : 1, sizeof(uint64_t));
    if (!b)
        s->failed = 1;
    else
        s->bytes += s->words * 8;
    return b;
}

static void set_add(an *s, uint64_t **S, int64_t u)
{
    if (u < 0 || (size_t)u >= s->n)
        return;
    if (!*S && !(*S = new_set(s)))
        return;
    (*S)[u >> 6] |= (uint64_t)1 << (u & 63);
}

static void set_union(an *s, uint64_t **S, const uint64_t *T)
{
    size_t w;
    if (!T)
        return;
    if (!*S && !(*S = new_set(s)))
        return;
    for (w = 0; w < s->words; w++)
        (*S)[w] |= T[w];
}

/* Add every coordinate an affine family touches over m elements. */
static void add_family(an *s, uint64_t **S, const dep *e, int64_t m)
{
    int64_t j;
    int k;
    for (j = 0; j < m; j++)
        for (k = 0; k < e->nd; k++)
            set_add(s, S, e->a * j + e->c + e->d[k]);
}

/* The dependency of operand o read over m elements (scalar when step 0). */
static void view_dep(an *s, dc_operand o, int64_t m, dep *out)
{
    const dep *v = &s->deps[o.val];
    memset(out, 0, sizeof *out);
    if (v->kind == DEP_CONST)
        return;
    if (v->kind == DEP_SET) {
        out->kind = DEP_SET;
        out->S = v->S; /* borrowed */
        out->owned = 0;
        return;
    }
    if (o.step == 0) {
        /* one element: a set */
        int k;
        out->kind = DEP_SET;
        out->S = NULL;
        for (k = 0; k < v->nd; k++)
            set_add(s, &out->S, v->a * o.off + v->c + v->d[k]);
        set_union(s, &out->S, v->S);
        out->owned = 1;
        return;
    }
    (void)m;
    *out = *v;
    out->owned = 0;
    out->a = v->a * o.step;
    out->c = v->a * o.off + v->c;
}

static void drop_view(an *s, dep *e)
{
    if (e->owned && e->S)
        dc_mem_free(s->al, e->S, s->words * 8);
    e->S = NULL;
    e->owned = 0;
}

static void add_d(dep *r, int64_t d, int *overflow)
{
    int k;
    for (k = 0; k < r->nd; k++)
        if (r->d[k] == d)
            return;
    if (r->nd == MAXD) {
        *overflow = 1;
        return;
    }
    r->d[r->nd++] = d;
}

/* Elementwise combination of operand maps over m elements (vector result). */
static void combine(an *s, const dep *ops, int nops, int64_t m, dep *r)
{
    int have_affine = 0, overflow = 0, k;
    memset(r, 0, sizeof *r);
    for (k = 0; k < nops; k++) {
        const dep *e = &ops[k];
        if (e->kind == DEP_CONST)
            continue;
        set_union(s, &r->S, e->S);
        if (e->kind != DEP_AFFINE)
            continue;
        if (!have_affine) {
            int q;
            have_affine = 1;
            r->a = e->a;
            r->c = e->c;
            for (q = 0; q < e->nd; q++)
                add_d(r, e->d[q], &overflow);
        } else if (e->a == r->a) {
            int q;
            for (q = 0; q < e->nd; q++)
                add_d(r, e->c - r->c + e->d[q], &overflow);
        } else {
            overflow = 1;
        }
    }
    if (overflow) {
        /* no simple element map: every element may depend on all of it */
        for (k = 0; k < nops; k++)
            if (ops[k].kind == DEP_AFFINE)
                add_family(s, &r->S, &ops[k], m);
        r->kind = DEP_SET;
        r->nd = 0;
    } else {
        r->kind = have_affine ? DEP_AFFINE : (r->S ? DEP_SET : DEP_CONST);
    }
}

static void analyze_instr(an *s, const dc_instr *in)
{
    dep *r = &s->deps[in->dst];
    const dc_value *dv = &s->p->values[in->dst];
    int cls = dc_op_info(in->op)->cls, k;
    dep ops[3];
    for (k = 0; k < in->nin; k++)
        view_dep(s, in->in[k], in->m, &ops[k]);
    if (cls == EW && dv->vec) {
        combine(s, ops, in->nin, in->m, r);
    } else {
        /* scalars, reductions, cumsum: a set */
        memset(r, 0, sizeof *r);
        for (k = 0; k < in->nin; k++) {
            const dep *e = &ops[k];
            set_union(s, &r->S, e->S);
            if (e->kind == DEP_AFFINE)
                add_family(s, &r->S, e, in->m);
        }
        r->kind = r->S ? DEP_SET : DEP_CONST;
    }
    for (k = 0; k < in->nin; k++)
        drop_view(s, &ops[k]);
}

/* ---- additive terms ---- */

typedef struct term {
    dc_operand view, view2; /* view2.val < 0: none */
    int64_t m;
    double coef;
} term;

typedef struct termlist {
    term *t;
    size_t n, cap;
} termlist;

static const dc_instr *def_of(const dc_program *p, const int32_t *def, dc_operand o)
{
    if (p->values[o.val].kind != VK_TEMP || def[o.val] < 0)
        return NULL;
    return &p->code[def[o.val]];
}

static int const_scalar(const dc_program *p, dc_operand o, double *x)
{
    const dc_value *v = &p->values[o.val];
    if (v->kind != VK_CONST || (v->vec && o.step != 0))
        return 0;
    *x = p->consts[v->index + o.off];
    return 1;
}

static int push2(an *s, termlist *L, dc_operand o, dc_operand o2, int64_t m, double coef)
{
    if (!dc_mem_grow(s->al, (void **)&L->t, &L->cap, L->n + 1, sizeof(term))) {
        s->failed = 1;
        return 0;
    }
    L->t[L->n].view = o;
    L->t[L->n].view2 = o2;
    L->t[L->n].m = m;
    L->t[L->n].coef = coef;
    L->n++;
    return 1;
}

static int push(an *s, termlist *L, dc_operand o, int64_t m, double coef)
{
    dc_operand none = {-1, 0, 0};
    return push2(s, L, o, none, m, coef);
}

/* Split the result into terms; work list instead of recursion. */
static void decompose(an *s, const int32_t *def, termlist *out)
{
    const dc_program *p = s->p;
    termlist work;
    memset(&work, 0, sizeof work);
    if (!push(s, &work, p->result, 1, 1.0))
        return;
    while (work.n && !s->failed) {
        term t = work.t[--work.n];
        const dc_instr *in;
        double k;
        if (p->values[t.view.val].kind == VK_CONST &&
            (t.view2.val < 0 || p->values[t.view2.val].kind == VK_CONST))
            continue;
        if (t.m > 1 || t.view2.val >= 0) { /* a vector family */
            push2(s, out, t.view, t.view2, t.m, t.coef);
            continue;
        }
        in = (t.view.step == 0 && t.view.off == 0) ? def_of(p, def, t.view) : NULL;
        if (in && p->values[in->dst].vec)
            in = NULL; /* element of a vector: a leaf */
        if (!in) {
            push(s, out, t.view, 1, t.coef);
            continue;
        }
        /* ORDER OP: the linear rows of opcodes.def (add, sub, neg, mul or div by a
         * constant, sum, mean, the fused sums); any other row is a leaf term */
        switch (in->op) {
        case OP_ADD:
            push(s, &work, in->in[0], 1, t.coef);
            push(s, &work, in->in[1], 1, t.coef);
            break;
        case OP_SUB:
            push(s, &work, in->in[0], 1, t.coef);
            push(s, &work, in->in[1], 1, -t.coef);
            break;
        case OP_NEG:
            push(s, &work, in->in[0], 1, -t.coef);
            break;
        case OP_MUL:
            if (const_scalar(p, in->in[0], &k))
                push(s, &work, in->in[1], 1, t.coef * k);
            else if (const_scalar(p, in->in[1], &k))
                push(s, &work, in->in[0], 1, t.coef * k);
            else
                push(s, out, t.view, 1, t.coef);
            break;
        case OP_DIV:
            if (const_scalar(p, in->in[1], &k))
                push(s, &work, in->in[0], 1, t.coef / k);
            else
                push(s, out, t.view, 1, t.coef);
            break;
        case OP_SUM:
        case OP_MEAN: {
            double c = in->op == OP_MEAN ? t.coef / (double)in->m : t.coef;
            if (in->in[0].step == 0)
                push(s, &work, in->in[0], 1, c * (double)in->m);
            else
                push(s, &work, in->in[0], in->m, c);
            break;
        }
        case OP_SUMADD:
        case OP_SUMSUB: {
            int q;
            for (q = 0; q < 2; q++) {
                double c = (q == 1 && in->op == OP_SUMSUB) ? -t.coef : t.coef;
                if (in->in[q].step == 0)
                    push(s, &work, in->in[q], 1, c * (double)in->m);
                else
                    push(s, &work, in->in[q], in->m, c);
            }
            break;
        }
        case OP_SUMMUL:
            /* sum_j A[j]*B[j]: one family whose element j is the product */
            push2(s, &work, in->in[0], in->in[1], in->m, t.coef);
            break;
        default:
            push(s, out, t.view, 1, t.coef);
            break;
        }
    }
    dc_mem_free(s->al, work.t, work.cap * sizeof(term));
}

/* The map of a term: its view, or both views combined elementwise. */
static void term_dep(an *s, const term *t, dep *out)
{
    dep two[2];
    if (t->view2.val < 0) {
        view_dep(s, t->view, t->m, out);
        return;
    }
    view_dep(s, t->view, t->m, &two[0]);
    view_dep(s, t->view2, t->m, &two[1]);
    combine(s, two, 2, t->m, out);
    out->owned = 1;
    drop_view(s, &two[0]);
    drop_view(s, &two[1]);
}

/* ---- union-find and edges ---- */

static int64_t find(int64_t *parent, int64_t u)
{
    while (parent[u] != u) {
        parent[u] = parent[parent[u]];
        u = parent[u];
    }
    return u;
}

static void unite(int64_t *parent, int64_t u, int64_t v)
{
    u = find(parent, u);
    v = find(parent, v);
    if (u != v) {
        if (u < v)
            parent[v] = u;
        else
            parent[u] = v;
    }
}

typedef struct edges {
    int64_t *e;
    size_t n, cap;
    int overflow;
} edges;

static void add_edge(an *s, edges *E, int64_t u, int64_t v)
{
    if (u == v || E->overflow)
        return;
    if (u > v) {
        int64_t t = u;
        u = v;
        v = t;
    }
    if (E->n >= MAX_EDGES) {
        E->overflow = 1;
        return;
    }
    if (!dc_mem_grow(s->al, (void **)&E->e, &E->cap, 2 * (E->n + 1), sizeof(int64_t))) {
        s->failed = 1;
        E->overflow = 1;
        return;
    }
    E->e[2 * E->n] = u;
    E->e[2 * E->n + 1] = v;
    E->n++;
}

static int cmp_edge(const void *x, const void *y)
{
    const int64_t *a = x, *b = y;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Couple the coordinates of one term (set S or affine family element j). */
static void couple_set(an *s, int64_t *parent, edges *E, const uint64_t *S, unsigned char *used,
                       size_t *count)
{
    size_t w, members = 0, i;
    int64_t first = -1;
    int64_t *list = NULL;
    for (w = 0; w < s->words; w++)
        members += (size_t)__builtin_popcountll(S[w]);
    *count = members;
    if (members > 1 && members <= MAX_TERM_MEMBERS && !E->overflow)
        list = dc_mem_alloc(s->al, members * sizeof(int64_t));
    members = 0;
    for (w = 0; w < s->words; w++) {
        uint64_t bits = S[w];
        while (bits) {
            int64_t u = (int64_t)(w * 64 + (size_t)__builtin_ctzll(bits));
            bits &= bits - 1;
            used[u] = 1;
            if (first < 0)
                first = u;
            else
                unite(parent, first, u);
            if (list)
                list[members++] = u;
        }
    }
    if (*count > 1 && !list)
        E->overflow = 1;
    if (list) {
        for (i = 0; i < members; i++) {
            size_t q;
            for (q = i + 1; q < members; q++)
                add_edge(s, E, list[i], list[q]);
        }
        dc_mem_free(s->al, list, *count * sizeof(int64_t));
    }
}

dc_status dc_structure_analyze(dc_program *p)
{
    an s;
    size_t i, n = p->n_inputs;
    int32_t *def = NULL;
    int64_t *parent = NULL;
    termlist terms;
    edges E;
    dc_structure *st = &p->st;
    int separable = 1;

    memset(&s, 0, sizeof s);
    memset(&terms, 0, sizeof terms);
    memset(&E, 0, sizeof E);
    memset(st, 0, sizeof *st);
    s.p = p;
    s.al = &p->alloc;
    s.n = n;
    s.words = (n + 63) / 64;
    st->kind = DC_STRUCT_CONSTANT;
    st->used = dc_mem_calloc(s.al, n ? n : 1, 1);
    st->group = dc_mem_alloc(s.al, (n ? n : 1) * sizeof(int64_t));
    s.deps = dc_mem_calloc(s.al, p->n_values, sizeof(dep));
    def = dc_mem_alloc(s.al, p->n_values * sizeof(int32_t));
    parent = dc_mem_alloc(s.al, (n ? n : 1) * sizeof(int64_t));
    if (!st->used || !st->group || !s.deps || !def || !parent) {
        s.failed = 1;
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        parent[i] = (int64_t)i;
        st->group[i] = -1;
    }
    for (i = 0; i < p->n_values; i++)
        def[i] = -1;
    if (n) {
        s.deps[0].kind = DEP_AFFINE;
        s.deps[0].a = 1;
        s.deps[0].nd = 1;
    }
    for (i = 0; i < p->n_code && !s.failed && !s.too_big; i++) {
        def[p->code[i].dst] = (int32_t)i;
        analyze_instr(&s, &p->code[i]);
    }
    if (!s.failed && !s.too_big)
        decompose(&s, def, &terms);
    if (s.failed)
        goto cleanup;
    if (s.too_big) {
        /* too large to describe: everything may interact */
        for (i = 0; i < n; i++) {
            st->used[i] = 1;
            st->group[i] = 0;
        }
        st->n_groups = n ? 1 : 0;
        st->kind = n ? DC_STRUCT_GENERAL : DC_STRUCT_CONSTANT;
        st->edges_too_large = 1;
        goto cleanup;
    }
    for (i = 0; i < terms.n && !s.failed; i++) {
        const term *t = &terms.t[i];
        dep e;
        term_dep(&s, t, &e);
        if (e.kind == DEP_AFFINE && !e.S) {
            int64_t j;
            int k;
            for (j = 0; j < t->m; j++) {
                int64_t u0 = e.a * j + e.c + e.d[0];
                st->used[u0] = 1;
                for (k = 1; k < e.nd; k++) {
                    int64_t u = e.a * j + e.c + e.d[k];
                    st->used[u] = 1;
                    unite(parent, u0, u);
                    add_edge(&s, &E, u0, u);
                    int q;
                    for (q = 1; q < k; q++)
                        add_edge(&s, &E, e.a * j + e.c + e.d[q], u);
                }
            }
            if (e.nd > 1)
                separable = 0;
        } else if (e.kind != DEP_CONST) {
            uint64_t *S = NULL;
            size_t count = 0;
            set_union(&s, &S, e.S);
            if (e.kind == DEP_AFFINE)
                add_family(&s, &S, &e, t->m);
            if (S) {
                couple_set(&s, parent, &E, S, st->used, &count);
                dc_mem_free(s.al, S, s.words * 8);
            }
            if (count > 1)
                separable = 0;
        }
        drop_view(&s, &e);
    }
    if (s.failed)
        goto cleanup;
    /* groups, numbered by first coordinate */
    for (i = 0; i < n; i++) {
        int64_t root;
        if (!st->used[i])
            continue;
        root = find(parent, (int64_t)i);
        if (root == (int64_t)i)
            st->group[i] = (int64_t)st->n_groups++;
        else
            st->group[i] = st->group[root];
    }
    if (E.n > 1) {
        size_t w = 1;
        qsort(E.e, E.n, 2 * sizeof(int64_t), cmp_edge);
        for (i = 1; i < E.n; i++)
            if (E.e[2 * i] != E.e[2 * (w - 1)] || E.e[2 * i + 1] != E.e[2 * (w - 1) + 1]) {
                E.e[2 * w] = E.e[2 * i];
                E.e[2 * w + 1] = E.e[2 * i + 1];
                w++;
            }
        E.n = w;
    }
    st->edges = E.e;
    st->n_edges = E.n;
    st->cap_edges = E.cap;
    st->edges_too_large = E.overflow;
    E.e = NULL;
    {
        size_t used = 0, multi = 0, big = 0;
        int chain = st->n_edges > 0 && !st->edges_too_large;
        int64_t *size = dc_mem_calloc(s.al, st->n_groups ? st->n_groups : 1, sizeof(int64_t));
        if (!size) {
            s.failed = 1;
            goto cleanup;
        }
        for (i = 0; i < n; i++)
            if (st->used[i]) {
                used++;
                size[st->group[i]]++;
            }
        for (i = 0; i < st->n_groups; i++) {
            multi += size[i] > 1;
            big += size[i] > 2;
        }
        dc_mem_free(s.al, size, (st->n_groups ? st->n_groups : 1) * sizeof(int64_t));
        for (i = 0; i < st->n_edges && chain; i++)
            chain = st->edges[2 * i + 1] == st->edges[2 * i] + 1;
        if (used == 0)
            st->kind = DC_STRUCT_CONSTANT;
        else if (separable && st->n_edges == 0 && !st->edges_too_large)
            st->kind = DC_STRUCT_SEPARABLE;
        else if (chain && (big > 0 || multi == 1))
            st->kind = DC_STRUCT_CHAINED;
        else if (st->n_groups > 1)
            st->kind = DC_STRUCT_GROUPED;
        else
            st->kind = DC_STRUCT_GENERAL;
    }
    if (st->kind == DC_STRUCT_SEPARABLE) {
        /* keep the terms for dc_separable_terms; decide identical g_j */
        int identical = 1;
        st->cap_terms = terms.n ? terms.n : 1;
        st->terms = dc_mem_alloc(s.al, st->cap_terms * sizeof(dc_term));
        if (!st->terms) {
            s.failed = 1;
            goto cleanup;
        }
        for (i = 0; i < terms.n; i++) {
            const term *t = &terms.t[i];
            dc_term *o = &st->terms[st->n_terms];
            dep e;
            term_dep(&s, t, &e);
            if (e.kind == DEP_CONST) {
                drop_view(&s, &e);
                continue;
            }
            o->view = t->view;
            o->view2 = t->view2;
            o->has2 = t->view2.val >= 0;
            o->m = (int32_t)t->m;
            o->coef = t->coef;
            if (e.kind == DEP_AFFINE) {
                o->a = e.a;
                o->c = e.c + e.d[0];
                if (!((e.a == 1 && o->c == 0) || (e.a == -1 && o->c == (int64_t)n - 1)) ||
                    t->m != (int64_t)n || !p->values[t->view.val].uniform ||
                    (o->has2 && !p->values[t->view2.val].uniform))
                    identical = 0;
            } else {
                /* a scalar term on one coordinate */
                size_t w;
                o->a = 0;
                o->c = -1;
                for (w = 0; w < s.words && o->c < 0; w++)
                    if (e.S && e.S[w])
                        o->c = (int64_t)(w * 64 + (size_t)__builtin_ctzll(e.S[w]));
                identical = 0;
            }
            drop_view(&s, &e);
            if (o->c >= 0)
                st->n_terms++;
        }
        st->identical = identical && n > 0;
    }
cleanup:
    if (s.deps) {
        for (i = 0; i < p->n_values; i++)
            if (s.deps[i].S)
                dc_mem_free(s.al, s.deps[i].S, s.words * 8);
        dc_mem_free(s.al, s.deps, p->n_values * sizeof(dep));
    }
    dc_mem_free(s.al, def, p->n_values * sizeof(int32_t));
    dc_mem_free(s.al, parent, (n ? n : 1) * sizeof(int64_t));
    dc_mem_free(s.al, terms.t, terms.cap * sizeof(term));
    dc_mem_free(s.al, E.e, E.cap * sizeof(int64_t));
    return s.failed ? DC_ERR_NOMEM : DC_OK;
}

void dc_structure_release(dc_program *p)
{
    dc_structure *st = &p->st;
    size_t n = p->n_inputs ? p->n_inputs : 1;
    dc_mem_free(&p->alloc, st->used, n);
    dc_mem_free(&p->alloc, st->group, n * sizeof(int64_t));
    dc_mem_free(&p->alloc, st->edges, st->cap_edges * sizeof(int64_t));
    dc_mem_free(&p->alloc, st->terms, st->cap_terms * sizeof(dc_term));
    memset(st, 0, sizeof *st);
}

/* ---- public queries ---- */

dc_structure_kind dc_structure_kind_of(const dc_program *p)
{
    return p ? p->st.kind : DC_STRUCT_GENERAL;
}

const char *dc_structure_kind_name(dc_structure_kind kind)
{
    switch (kind) {
    case DC_STRUCT_CONSTANT: return "constant";
    case DC_STRUCT_SEPARABLE: return "separable";
    case DC_STRUCT_CHAINED: return "chained";
    case DC_STRUCT_GROUPED: return "grouped";
    default: return "general";
    }
}

int dc_structure_identical_terms(const dc_program *p)
{
    return p ? p->st.identical : 0;
}

size_t dc_structure_groups(const dc_program *p, int64_t *group)
{
    if (!p)
        return 0;
    if (group && p->n_inputs)
        memcpy(group, p->st.group, p->n_inputs * sizeof(int64_t));
    return p->st.n_groups;
}

void dc_structure_used(const dc_program *p, unsigned char *used)
{
    if (p && used && p->n_inputs)
        memcpy(used, p->st.used, p->n_inputs);
}

dc_status dc_structure_edges(const dc_program *p, int64_t *pairs, size_t capacity, size_t *count)
{
    size_t k;
    if (!p || !count)
        return DC_ERR_ARGUMENT;
    *count = p->st.n_edges;
    if (p->st.edges_too_large)
        return DC_ERR_TOO_LARGE;
    k = capacity < p->st.n_edges ? capacity : p->st.n_edges;
    if (pairs && k)
        memcpy(pairs, p->st.edges, 2 * k * sizeof(int64_t));
    return DC_OK;
}

dc_status dc_separable_terms(const dc_program *p, dc_workspace *ws, const double *T, size_t rows,
                             size_t row_stride, double *G)
{
    size_t r, t;
    size_t n;
    dc_status st;
    if (!p || !ws || ws->program != p || (rows && (!T || !G)))
        return DC_ERR_ARGUMENT;
    n = p->n_inputs;
    if (p->st.kind != DC_STRUCT_SEPARABLE && p->st.kind != DC_STRUCT_CONSTANT)
        return DC_ERR_NOT_SEPARABLE;
    if (rows > 1 && row_stride < n)
        return DC_ERR_ARGUMENT;
    for (r = 0; r < rows; r++) {
        const double *x = T + r * row_stride;
        double *g = G + r * n;
        if ((st = dc_vm_run_slots(p, ws, x)))
            return st;
        memset(g, 0, n * sizeof(double));
        for (t = 0; t < p->st.n_terms; t++) {
            const dc_term *tm = &p->st.terms[t];
            int64_t j;
            for (j = 0; j < tm->m; j++) {
                double v = dc_vm_slot_elem(p, ws, x, tm->view, j);
                if (tm->has2)
                    v *= dc_vm_slot_elem(p, ws, x, tm->view2, j);
                g[tm->a * j + tm->c] += tm->coef * v;
            }
        }
    }
    return DC_OK;
}

/* ---- affine in one coordinate ---- */

#define AFFINE_MAX_ELEMS 4096 /* elements of all values tracked (else: not affine) */

typedef struct aff {
    double a, b; /* a*x_j + b; a NaN: not affine (or not in x_j alone) */
} aff;

static aff aff_elem(const dc_program *p, const aff *val, const size_t *start, dc_operand o,
                    int64_t i)
{
    const dc_value *v = &p->values[o.val];
    int64_t e = (int64_t)o.off + i * (int64_t)o.step;
    aff bad = {NAN, 0.0};
    if (e < 0 || e >= (int64_t)(v->len > 0 ? v->len : 1))
        return bad;
    return val[start[o.val] + (size_t)e];
}

static aff aff_op(int op, aff x, aff y)
{
    aff r = {NAN, 0.0};
    if (x.a != x.a || y.a != y.a)
        return r;
    switch (op) { /* ORDER OP: the affine rows (add, sub, neg, mul and div by a constant);
                   * any other row of a non-constant is not affine */
    case OP_ADD: r.a = x.a + y.a; r.b = x.b + y.b; break;
    case OP_SUB: r.a = x.a - y.a; r.b = x.b - y.b; break;
    case OP_NEG: r.a = -x.a; r.b = -x.b; break;
    case OP_MUL:
        if (x.a == 0.0) {
            r.a = x.b * y.a;
            r.b = x.b * y.b;
        } else if (y.a == 0.0) {
            r.a = x.a * y.b;
            r.b = x.b * y.b;
        }
        break;
    case OP_DIV:
        if (y.a == 0.0 && y.b != 0.0) {
            r.a = x.a / y.b;
            r.b = x.b / y.b;
        }
        break;
    default: break;
    }
    if (!isfinite(r.a) || !isfinite(r.b))
        r.a = NAN;
    return r;
}

/* One instruction over the affine forms of its operands' elements. */
static void aff_instr(const dc_program *p, const dc_instr *in, aff *val, const size_t *start)
{
    int cls = dc_op_info(in->op)->cls, k;
    aff *d = &val[start[in->dst]];
    int64_t i, m = in->m > 0 ? in->m : 1;
    if (cls == EW) {
        for (i = 0; i < m; i++) {
            aff x[3] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
            int constant = 1;
            for (k = 0; k < in->nin; k++) {
                x[k] = aff_elem(p, val, start, in->in[k], i);
                constant = constant && x[k].a == 0.0;
            }
            if (constant) { /* any operation of constants is a constant */
                d[i].a = 0.0;
                d[i].b = dc_scalar_op(in->op, x[0].b, x[1].b, x[2].b);
            } else {
                d[i] = aff_op(in->op, x[0], x[1]);
            }
        }
    } else if ((cls == RED && (in->op == OP_SUM || in->op == OP_MEAN)) || cls == RED2) {
        aff sum = {0.0, 0.0};
        int op = in->op == OP_SUMADD ? OP_ADD : in->op == OP_SUMSUB ? OP_SUB : OP_MUL;
        for (i = 0; i < m; i++) {
            aff x = aff_elem(p, val, start, in->in[0], i);
            if (cls == RED2)
                x = aff_op(op, x, aff_elem(p, val, start, in->in[1], i));
            sum = aff_op(OP_ADD, sum, x);
        }
        if (in->op == OP_MEAN)
            sum = aff_op(OP_DIV, sum, (aff){0.0, (double)m});
        d[0] = sum;
    } else {
        for (i = 0; i < m; i++)
            d[i].a = NAN;
    }
}

int dc_structure_affine1(const dc_program *p, size_t *j_out, double *a_out, double *b_out)
{
    size_t n, j = 0, k, used = 0, total = 0, *start;
    aff *val, res;
    int ok = 0;
    if (!p || !p->st.used || p->result.val < 0)
        return 0;
    n = p->n_inputs;
    for (k = 0; k < n; k++)
        if (p->st.used[k]) {
            j = k;
            used++;
        }
    if (used != 1)
        return 0;
    for (k = 0; k < p->n_values; k++) {
        total += (size_t)(p->values[k].len > 0 ? p->values[k].len : 1);
        if (total > AFFINE_MAX_ELEMS)
            return 0;
    }
    start = dc_mem_alloc(&p->alloc, p->n_values * sizeof(size_t));
    val = dc_mem_alloc(&p->alloc, (total ? total : 1) * sizeof(aff));
    if (start && val) {
        size_t at = 0, c;
        for (k = 0; k < p->n_values; k++) {
            const dc_value *v = &p->values[k];
            size_t len = (size_t)(v->len > 0 ? v->len : 1), e;
            start[k] = at;
            for (e = 0; e < len; e++) {
                aff *w = &val[at + e];
                w->a = NAN;
                w->b = 0.0;
                if (v->kind == VK_CONST) {
                    w->a = 0.0;
                    w->b = p->consts[v->index + (int64_t)e];
                } else if (v->kind == VK_INPUT && e == j) {
                    w->a = 1.0;
                }
            }
            at += len;
        }
        for (c = 0; c < p->n_code; c++)
            aff_instr(p, &p->code[c], val, start);
        res = aff_elem(p, val, start, p->result, 0);
        if (res.a == res.a && res.a != 0.0 && isfinite(res.b)) {
            *j_out = j;
            *a_out = res.a;
            *b_out = res.b;
            ok = 1;
        }
    }
    dc_mem_free(&p->alloc, start, p->n_values * sizeof(size_t));
    dc_mem_free(&p->alloc, val, (total ? total : 1) * sizeof(aff));
    return ok;
}
