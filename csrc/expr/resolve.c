/*
 * resolve.c -- names, shapes, indices and slices; lowers the syntax tree to
 * SSA views through the builder.  Nodes are visited in storage order, which
 * is children-first, so nothing here recurses.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr/resolve.h"

enum { EW1, EW2, EW3, MINMAX, FRED, FSCAN };
#define RED FRED
#define SCAN FSCAN

typedef struct fninfo {
    const char *name;
    int op, min_args, max_args, kind;
} fninfo;

static const fninfo functions[] = {
#define DC_FN(name, op, lo, hi, kind) {name, op, lo, hi, kind},
#include "expr/functions.def"
#undef DC_FN
};
#undef RED
#undef SCAN

#define N_FUNCTIONS (sizeof functions / sizeof functions[0])

static const char *const keywords[] = {"and", "or", "not"};

typedef struct resolver {
    dc_builder *b;
    const dc_ast *ast;
    const dc_options *opt;
    const char *text;
    dc_error *err;
    dc_ref *refs;
    int has_i;
    dc_ref iref;
} resolver;

static int name_is(const char *text, size_t pos, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(text + pos, name, len) == 0;
}

static const fninfo *find_function(const char *text, size_t pos, size_t len)
{
    size_t k;
    for (k = 0; k < N_FUNCTIONS; k++)
        if (name_is(text, pos, len, functions[k].name))
            return &functions[k];
    return NULL;
}

int dc_reserved_name(const char *s)
{
    size_t k;
    for (k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
        if (strcmp(s, keywords[k]) == 0)
            return 1;
    for (k = 0; k < N_FUNCTIONS; k++)
        if (strcmp(s, functions[k].name) == 0)
            return 1;
    return 0;
}

/* Levenshtein distance, capped (names are short; longer ones are far). */
static size_t distance(const char *s, size_t n, const char *t)
{
    size_t m = strlen(t), i, j, row[40];
    if (n >= 39 || m >= 39)
        return 99;
    for (j = 0; j <= m; j++)
        row[j] = j;
    for (i = 1; i <= n; i++) {
        size_t prev = row[0], cur;
        row[0] = i;
        for (j = 1; j <= m; j++) {
            size_t best = row[j] + 1;
            cur = row[j];
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (prev + (s[i - 1] != t[j - 1]) < best)
                best = prev + (s[i - 1] != t[j - 1]);
            row[j] = best;
            prev = cur;
        }
    }
    return row[m];
}

typedef struct suggest {
    const char *best[3];
    size_t dist[3];
    int count;
} suggest;

static void consider(suggest *sg, const char *s, size_t n, const char *cand)
{
    size_t d = distance(s, n, cand), limit = n <= 2 ? 1 : n <= 5 ? 2 : 3;
    int k, at;
    if (d > limit)
        return;
    for (k = 0; k < sg->count; k++)
        if (strcmp(sg->best[k], cand) == 0)
            return;
    at = sg->count < 3 ? sg->count++ : 3;
    if (at == 3) {
        if (d >= sg->dist[2])
            return;
        at = 2;
    }
    sg->best[at] = cand;
    sg->dist[at] = d;
    for (k = at; k > 0 && sg->dist[k] < sg->dist[k - 1]; k--) {
        const char *tb = sg->best[k];
        size_t td = sg->dist[k];
        sg->best[k] = sg->best[k - 1];
        sg->dist[k] = sg->dist[k - 1];
        sg->best[k - 1] = tb;
        sg->dist[k - 1] = td;
    }
}

static void known_names(const resolver *r, suggest *sg, const char *s, size_t n, int functions_too,
                        int values_too)
{
    size_t k;
    if (values_too) {
        if (r->opt->n > 0) {
            consider(sg, s, n, "x");
            consider(sg, s, n, "n");
            consider(sg, s, n, "i");
        }
        for (k = 0; k < r->opt->n_variables; k++)
            consider(sg, s, n, r->opt->variables[k]);
        consider(sg, s, n, "pi");
        consider(sg, s, n, "e");
    }
    if (functions_too)
        for (k = 0; k < N_FUNCTIONS; k++)
            consider(sg, s, n, functions[k].name);
}

static dc_status unknown(resolver *r, const dc_node *nd, int is_call)
{
    suggest sg;
    char hint[160];
    size_t used = 0;
    int k;
    memset(&sg, 0, sizeof sg);
    known_names(r, &sg, r->text + nd->opos, nd->olen, is_call, 1);
    hint[0] = '\0';
    if (sg.count) {
        used += (size_t)snprintf(hint, sizeof hint, "; did you mean ");
        for (k = 0; k < sg.count && used < sizeof hint; k++)
            used += (size_t)snprintf(hint + used, sizeof hint - used, "%s'%s'",
                                     k == 0 ? "" : k == sg.count - 1 ? " or " : ", ", sg.best[k]);
        if (used < sizeof hint)
            snprintf(hint + used, sizeof hint - used, "?");
    } else if (!is_call) {
        if (r->opt->n > 0)
            snprintf(hint, sizeof hint, "; the names here are x, n, i, pi, e");
        else if (r->opt->n_variables)
            snprintf(hint, sizeof hint, "; the names here are the variables, pi and e");
        else
            snprintf(hint, sizeof hint, "; only pi and e are defined here");
    }
    return dc_set_error(r->err, is_call ? DC_ERR_UNKNOWN_FUNCTION : DC_ERR_UNKNOWN_NAME, nd->opos,
                        nd->olen, "unknown %s '%.*s'%s", is_call ? "function" : "name",
                        (int)(nd->olen > 64 ? 64 : nd->olen), r->text + nd->opos, hint);
}

static dc_status resolve_name(resolver *r, const dc_node *nd, dc_ref *out)
{
    const char *s = r->text + nd->opos;
    size_t len = nd->olen;
    dc_builder *b = r->b;
    int64_t var = dc_build_name_index(b, s, len);
    if (var >= 0) {
        out->v.val = 0;
        out->v.off = (int32_t)var;
        out->v.step = 0;
        out->len = 1;
        out->vec = 0;
        return DC_OK;
    }
    if (r->opt->n > 0) {
        if (len == 1 && s[0] == 'x') {
            out->v.val = 0;
            out->v.off = 0;
            out->v.step = 1;
            out->len = (int32_t)r->opt->n;
            out->vec = 1;
            return DC_OK;
        }
        if (len == 1 && s[0] == 'n')
            return dc_build_scalar(b, (double)r->opt->n, out);
        if (len == 1 && s[0] == 'i') {
            if (!r->has_i) {
                double *data;
                int32_t j;
                dc_status st = dc_build_vector_const(b, (int32_t)r->opt->n, &data, &r->iref);
                if (st)
                    return st;
                for (j = 0; j < (int32_t)r->opt->n; j++)
                    data[j] = (double)(j + 1);
                b->p->values[r->iref.v.val].uniform = r->opt->n == 1;
                r->has_i = 1;
            }
            *out = r->iref;
            return DC_OK;
        }
    }
    if (name_is(r->text, nd->opos, len, "pi"))
        return dc_build_scalar(b, 3.141592653589793238462643383279502884, out);
    if (name_is(r->text, nd->opos, len, "e"))
        return dc_build_scalar(b, 2.718281828459045235360287471352662498, out);
    if (find_function(r->text, nd->opos, len))
        return dc_set_error(r->err, DC_ERR_FUNCTION_VALUE, nd->opos, len,
                            "'%.*s' is a function: call it, as in %.*s(...)", (int)len, s,
                            (int)len, s);
    return unknown(r, nd, 0);
}

static dc_status resolve_call(resolver *r, const dc_node *nd, dc_ref *out)
{
    const fninfo *fn = find_function(r->text, nd->opos, nd->olen);
    const int32_t *argn = r->ast->list + nd->args;
    dc_ref args[3];
    int k;
    if (!fn) {
        dc_ref dummy;
        dc_error saved = *r->err;
        /* a known value called like a function */
        dc_status st = resolve_name(r, nd, &dummy);
        if (st == DC_OK)
            return dc_set_error(r->err, DC_ERR_NOT_CALLABLE, nd->opos, nd->olen,
                                "'%.*s' is not a function", (int)nd->olen, r->text + nd->opos);
        if (st == DC_ERR_NOMEM)
            return st;
        *r->err = saved;
        return unknown(r, nd, 1);
    }
    if (nd->nargs < fn->min_args || nd->nargs > fn->max_args) {
        if (fn->min_args == fn->max_args)
            return dc_set_error(r->err, DC_ERR_ARITY, nd->pos, nd->len,
                                "%s() takes %d argument%s, got %d", fn->name, fn->min_args,
                                fn->min_args == 1 ? "" : "s", (int)nd->nargs);
        return dc_set_error(r->err, DC_ERR_ARITY, nd->pos, nd->len,
                            "%s() takes %d to %d arguments, got %d", fn->name, fn->min_args,
                            fn->max_args, (int)nd->nargs);
    }
    r->b->pos = nd->pos;
    r->b->len = nd->len;
    switch (fn->kind) {
    case MINMAX:
        if (nd->nargs == 1)
            return dc_build_reduce(r->b, fn->op, r->refs[argn[0]], out);
        *out = r->refs[argn[0]];
        for (k = 1; k < nd->nargs; k++) {
            dc_status st;
            args[0] = *out;
            args[1] = r->refs[argn[k]];
            if ((st = dc_build_ew(r->b, fn->op == OP_MINV ? OP_MIN2 : OP_MAX2, args, 2, out)))
                return st;
        }
        return DC_OK;
    case FRED:
    case FSCAN:
        return dc_build_reduce(r->b, fn->op, r->refs[argn[0]], out);
    default:
        for (k = 0; k < nd->nargs; k++)
            args[k] = r->refs[argn[k]];
        return dc_build_ew(r->b, fn->op, args, (int)nd->nargs, out);
    }
}

/* A constant integer from a subscript part; clamps huge values to +-limit. */
static dc_status const_integer(resolver *r, int32_t node, int64_t limit, dc_status code,
                               const char *what, int64_t *out)
{
    const dc_node *nd = &r->ast->nodes[node];
    double v;
    if (!dc_build_const_scalar(r->b, r->refs[node], &v))
        return dc_set_error(r->err, code, nd->pos, nd->len,
                            "the %s must be a constant integer (not depending on x)", what);
    if (v != floor(v) || !isfinite(v))
        return dc_set_error(r->err, code, nd->pos, nd->len, "the %s must be an integer, got %.17g",
                            what, v);
    if (v > (double)limit)
        v = (double)limit;
    if (v < -(double)limit)
        v = -(double)limit;
    *out = (int64_t)v;
    return DC_OK;
}

static dc_status resolve_index(resolver *r, const dc_node *nd, dc_ref *out)
{
    dc_ref base = r->refs[nd->a];
    const dc_node *ix = &r->ast->nodes[nd->b];
    int64_t k, big = (int64_t)base.len + 1;
    double v;
    dc_status st;
    if (!base.vec)
        return dc_set_error(r->err, DC_ERR_NOT_INDEXABLE, nd->opos, nd->olen,
                            "only vectors can be indexed; this value is a scalar");
    if ((st = const_integer(r, nd->b, big, DC_ERR_INDEX, "index", &k)))
        return st;
    if (k < -(int64_t)base.len || k >= (int64_t)base.len) {
        dc_build_const_scalar(r->b, r->refs[nd->b], &v);
        return dc_set_error(r->err, DC_ERR_INDEX, ix->pos, ix->len,
                            "index %.17g is out of range for a vector of length %ld", v,
                            (long)base.len);
    }
    if (k < 0)
        k += base.len;
    out->v.val = base.v.val;
    out->v.off = (int32_t)(base.v.off + k * base.v.step);
    out->v.step = 0;
    out->len = 1;
    out->vec = 0;
    return DC_OK;
}

/* Python's slice semantics (PySlice_AdjustIndices). */
static dc_status resolve_slice(resolver *r, const dc_node *nd, dc_ref *out)
{
    dc_ref base = r->refs[nd->a];
    const int32_t *part = r->ast->list + nd->args;
    int64_t len = base.len, big = len + 1, start, stop, step = 1, count;
    dc_status st;
    if (!base.vec)
        return dc_set_error(r->err, DC_ERR_NOT_INDEXABLE, nd->opos, nd->olen,
                            "only vectors can be sliced; this value is a scalar");
    if (part[2] >= 0) {
        if ((st = const_integer(r, part[2], big, DC_ERR_SLICE, "slice step", &step)))
            return st;
        if (step == 0)
            return dc_set_error(r->err, DC_ERR_SLICE, r->ast->nodes[part[2]].pos,
                                r->ast->nodes[part[2]].len, "the slice step cannot be zero");
    }
    if (part[0] >= 0) {
        if ((st = const_integer(r, part[0], big, DC_ERR_SLICE, "slice start", &start)))
            return st;
        if (start < 0)
            start = start + len < 0 ? (step < 0 ? -1 : 0) : start + len;
        else if (start >= len)
            start = step < 0 ? len - 1 : len;
    } else {
        start = step < 0 ? len - 1 : 0;
    }
    if (part[1] >= 0) {
        if ((st = const_integer(r, part[1], big, DC_ERR_SLICE, "slice stop", &stop)))
            return st;
        if (stop < 0)
            stop = stop + len < 0 ? (step < 0 ? -1 : 0) : stop + len;
        else if (stop >= len)
            stop = step < 0 ? len - 1 : len;
    } else {
        stop = step < 0 ? -1 : len;
    }
    if (step > 0)
        count = stop > start ? (stop - start - 1) / step + 1 : 0;
    else
        count = start > stop ? (start - stop - 1) / (-step) + 1 : 0;
    if (count <= 0)
        return dc_set_error(r->err, DC_ERR_SLICE, nd->opos, nd->olen,
                            "the slice selects no elements of a vector of length %ld", (long)len);
    out->v.val = base.v.val;
    out->v.off = (int32_t)(base.v.off + start * base.v.step);
    out->v.step = count == 1 ? 1 : (int32_t)(step * base.v.step);
    out->len = (int32_t)count;
    out->vec = 1;
    return DC_OK;
}

static dc_status resolve_node(resolver *r, const dc_node *nd, dc_ref *out)
{
    dc_ref args[2];
    dc_builder *b = r->b;
    b->pos = nd->opos;
    b->len = nd->olen;
    switch (nd->kind) {
    case ND_NUMBER:
        return dc_build_scalar(b, nd->number, out);
    case ND_NAME:
        return resolve_name(r, nd, out);
    case ND_UNARY:
        args[0] = r->refs[nd->a];
        return dc_build_ew(b, nd->op, args, 1, out);
    case ND_BINARY:
        args[0] = r->refs[nd->a];
        args[1] = r->refs[nd->b];
        if (nd->op == OP_POW)
            return dc_build_pow(b, args[0], args[1], out);
        return dc_build_ew(b, nd->op, args, 2, out);
    case ND_CALL:
        return resolve_call(r, nd, out);
    case ND_INDEX:
        return resolve_index(r, nd, out);
    case ND_SLICE:
        return resolve_slice(r, nd, out);
    default:
        return dc_set_error(r->err, DC_ERR_INTERNAL, nd->pos, nd->len, "unknown node kind");
    }
}

dc_status dc_build_lower(dc_builder *b, const dc_ast *ast, const dc_options *opt,
                         const char *text, dc_error *err)
{
    resolver r;
    dc_status st = DC_OK;
    size_t k;
    const dc_node *root;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.ast = ast;
    r.opt = opt;
    r.text = text;
    r.err = err;
    r.refs = dc_mem_alloc(b->a, (ast->n_nodes ? ast->n_nodes : 1) * sizeof(dc_ref));
    if (!r.refs)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    for (k = 0; k < ast->n_nodes && !st; k++)
        st = resolve_node(&r, &ast->nodes[k], &r.refs[k]);
    if (!st) {
        root = &ast->nodes[ast->root];
        if (r.refs[ast->root].vec)
            st = dc_set_error(err, DC_ERR_NOT_SCALAR, root->pos, root->len,
                              "the expression is a vector of length %ld; an objective must be "
                              "a scalar (reduce it with sum, mean, norm, min or max)",
                              (long)r.refs[ast->root].len);
        else
            b->p->result = r.refs[ast->root].v;
    }
    dc_mem_free(b->a, r.refs, (ast->n_nodes ? ast->n_nodes : 1) * sizeof(dc_ref));
    return st;
}
