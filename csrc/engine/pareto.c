/*
 * pareto.c -- dominance, thinning, survivor selection and the archive of a
 * run with several objectives (pareto.h).
 *
 * Thinning a front (mutually non-dominated points) to `keep` of them:
 *   - points with a non-finite value go first (in index order);
 *   - DC_THIN_CROWDING: NSGA-II's crowding distance (Deb et al., IEEE TEC
 *     2002), the largest kept, the points at an objective's extremes first;
 *   - DC_THIN_HYPERVOLUME: the point of least exclusive hypervolume
 *     contribution is removed, one at a time, as SMS-EMOA's selection does
 *     (Beume, Naujoks & Emmerich, EJOR 2007); each objective's best point is
 *     kept, and the reference point is the front's own (dc_pareto_reference).
 *     2 objectives: contributions from the neighbours in f0 order, O(k) per
 *     removal.  3 and more: a contribution only grows when another point is
 *     removed, so a min-heap of possibly stale contributions is exact: the
 *     top is recomputed and removed when it is still the least (lazy greedy),
 *     which needs far fewer than k contributions per removal.
 *   Hypervolume thinning counts its work on the run's guard (engine.h); when
 *   the guard gives up, the crowding distance thins instead, so the archive
 *   and a population always end at their size.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pareto.h"

int dc_thin_default(size_t m)
{
    return m <= 3 ? DC_THIN_HYPERVOLUME : DC_THIN_CROWDING;
}

int dc_pareto_dominates(const double *a, const double *b, size_t m)
{
    size_t j;
    int better = 0;
    for (j = 0; j < m; j++) {
        if (dc_better(b[j], a[j]))
            return 0;
        better |= dc_better(a[j], b[j]);
    }
    return better;
}

int dc_cdominates(const double *a, double ea, const double *b, double eb, size_t m)
{
    if (ea != eb)
        return ea < eb;
    return dc_pareto_dominates(a, b, m);
}

void dc_pareto_reference(const double *F, size_t k, size_t m, double *ref)
{
    size_t r, j;
    for (j = 0; j < m; j++) {
        double lo = INFINITY, hi = -INFINITY;
        for (r = 0; r < k; r++) {
            double v = F[r * m + j];
            if (isfinite(v)) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
        if (lo > hi)
            ref[j] = NAN;
        else
            ref[j] = hi + (hi > lo ? 0.1 * (hi - lo) : 0.1 * fmax(1.0, fabs(hi)));
    }
}

/* ---- crowding distance ---- */



/* crowd[q] for the rows idx[0..k) of F (finite values) */
static dc_status crowding(const dc_allocator *alloc, const double *F, size_t m,
                          const size_t *idx, size_t k, double *crowd)
{
    dc_key2 *key;
    size_t q, j;
    for (q = 0; q < k; q++)
        crowd[q] = 0.0;
    if (k <= 2) {
        for (q = 0; q < k; q++)
            crowd[q] = INFINITY;
        return DC_OK;
    }
    key = dc_mem_alloc(alloc, k * sizeof *key);
    if (!key)
        return DC_ERR_NOMEM;
    for (j = 0; j < m; j++) {
        double span;
        for (q = 0; q < k; q++) {
            double v = F[idx[q] * m + j];
            key[q].a = v == v ? v : INFINITY;
            key[q].b = 0.0;
            key[q].i = q;
        }
        qsort(key, k, sizeof *key, dc_key2_cmp);
        span = key[k - 1].a - key[0].a;
        crowd[key[0].i] = crowd[key[k - 1].i] = INFINITY;
        if (!(span > 0.0) || !isfinite(span))
            continue;
        for (q = 1; q + 1 < k; q++)
            crowd[key[q].i] += (key[q + 1].a - key[q - 1].a) / span;
    }
    dc_mem_free(alloc, key, k * sizeof *key);
    return DC_OK;
}

typedef struct ckey {
    double c;
    size_t id;
} ckey;

static int ckey_asc(const void *pa, const void *pb) /* smaller first, then lower id */
{
    const ckey *x = pa, *y = pb;
    if (x->c != y->c)
        return x->c < y->c ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int ckey_desc(const void *pa, const void *pb) /* larger first, then lower id */
{
    const ckey *x = pa, *y = pb;
    if (x->c != y->c)
        return x->c > y->c ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static dc_status thin_crowding(const dc_allocator *alloc, const double *F, size_t m,
                               size_t *idx, size_t k)
{
    double *crowd = dc_mem_alloc(alloc, k * sizeof(double));
    ckey *key = dc_mem_alloc(alloc, k * sizeof *key);
    size_t q;
    dc_status st = DC_ERR_NOMEM;
    if (crowd && key && !(st = crowding(alloc, F, m, idx, k, crowd))) {
        for (q = 0; q < k; q++) {
            key[q].c = crowd[q];
            key[q].id = idx[q];
        }
        qsort(key, k, sizeof *key, ckey_desc);
        for (q = 0; q < k; q++)
            idx[q] = key[q].id;
    }
    dc_mem_free(alloc, crowd, k * sizeof(double));
    dc_mem_free(alloc, key, k * sizeof *key);
    return st;
}

/* ---- hypervolume contributions ---- */

/* 2 objectives: sorted by f0, remove the least (x_next - x) (y_prev - y);
 * *gave_up = 1 (idx untouched) when the guard gave up */
static dc_status thin_hv2(const dc_allocator *alloc, dc_guard *guard, const double *F,
                          size_t *idx, size_t k, size_t keep, int *gave_up)
{
    dc_key2 *key = dc_mem_alloc(alloc, k * sizeof *key);
    size_t *prev = dc_mem_alloc(alloc, k * sizeof(size_t)), *next = dc_mem_alloc(alloc, k * sizeof(size_t));
    double *c = dc_mem_alloc(alloc, k * sizeof(double));
    size_t *order = dc_mem_alloc(alloc, k * sizeof(size_t));
    size_t q, alive = k, w = 0, head;
    dc_status st = DC_ERR_NOMEM;
    if (!key || !prev || !next || !c || !order)
        goto done;
    for (q = 0; q < k; q++) { /* sort by (f0, f1) */
        key[q].a = F[idx[q] * 2];
        key[q].b = F[idx[q] * 2 + 1];
        key[q].i = q;
    }
    qsort(key, k, sizeof *key, dc_key2_cmp);
    for (q = 0; q < k; q++) {
        order[q] = key[q].i; /* position in idx of the q-th point in f0 order */
        prev[q] = q ? q - 1 : (size_t)-1;
        next[q] = q + 1 < k ? q + 1 : (size_t)-1;
    }
#define X0(p) F[idx[order[p]] * 2]
#define Y0(p) F[idx[order[p]] * 2 + 1]
    for (q = 0; q < k; q++)
        c[q] = (prev[q] == (size_t)-1 || next[q] == (size_t)-1)
                   ? INFINITY
                   : (X0(next[q]) - X0(q)) * (Y0(prev[q]) - Y0(q));
    head = 0;
    while (alive > keep) {
        size_t p = (size_t)-1, r;
        if (dc_guard_spend(guard, alive)) {
            *gave_up = 1;
            st = DC_OK;
            goto done;
        }
        for (r = head; r != (size_t)-1; r = next[r])
            if (p == (size_t)-1 || c[r] < c[p])
                p = r;
        if (prev[p] != (size_t)-1)
            next[prev[p]] = next[p];
        else
            head = next[p];
        if (next[p] != (size_t)-1)
            prev[next[p]] = prev[p];
        for (r = 0; r < 2; r++) {
            size_t u = r ? next[p] : prev[p];
            if (u != (size_t)-1 && prev[u] != (size_t)-1 && next[u] != (size_t)-1)
                c[u] = (X0(next[u]) - X0(u)) * (Y0(prev[u]) - Y0(u));
        }
        c[p] = NAN; /* removed */
        alive--;
    }
#undef X0
#undef Y0
    /* survivors first, in f0 order; then the removed ones */
    for (q = head; q != (size_t)-1; q = next[q])
        key[w++].i = idx[order[q]];
    for (q = 0; q < k; q++)
        if (c[q] != c[q])
            key[w++].i = idx[order[q]];
    for (q = 0; q < k; q++)
        idx[q] = key[q].i;
    st = DC_OK;
done:
    dc_mem_free(alloc, key, k * sizeof *key);
    dc_mem_free(alloc, prev, k * sizeof(size_t));
    dc_mem_free(alloc, next, k * sizeof(size_t));
    dc_mem_free(alloc, c, k * sizeof(double));
    dc_mem_free(alloc, order, k * sizeof(size_t));
    return st;
}

/* min-heap of (contribution, position) */
static int heap_less(const ckey *a, const ckey *b)
{
    return a->c < b->c || (a->c == b->c && a->id < b->id);
}

static void heap_push(ckey *h, size_t *len, ckey v)
{
    size_t i = (*len)++;
    while (i > 0 && heap_less(&v, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static ckey heap_pop(ckey *h, size_t *len)
{
    ckey top = h[0], last = h[--(*len)];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, s = i;
        const ckey *best = &last;
        if (l < *len && heap_less(&h[l], best)) {
            s = l;
            best = &h[l];
        }
        if (l + 1 < *len && heap_less(&h[l + 1], best))
            s = l + 1;
        if (s == i)
            break;
        h[i] = h[s];
        i = s;
    }
    if (*len)
        h[i] = last;
    return top;
}

/* the contribution of position p among the alive rows of A (k x m, the
 * front's rows in increasing last objective when m == 3); S: scratch of
 * k x m doubles */
static dc_status contribution_of(const dc_allocator *alloc, dc_guard *guard, const double *A,
                                 size_t m, const unsigned char *alive, size_t k,
                                 const double *ref, size_t p, double *S, double *out)
{
    size_t q, na = 0, at = 0;
    if (m == 3) {
        dc_guard_spend(guard, k);
        *out = dc_hv_contribution3(A, k, alive, ref, p, S, S + k);
        return DC_OK;
    }
    for (q = 0; q < k; q++)
        if (alive[q]) {
            if (q == p)
                at = na;
            memcpy(S + (na++) * m, A + q * m, m * sizeof(double));
        }
    return dc_hv_contribution(alloc, guard, S, na, m, ref, at, S + k * m, out);
}

/* *gave_up = 1 (idx holds the same rows, reordered) when the guard gave up */
static dc_status thin_hv(const dc_allocator *alloc, dc_guard *guard, const double *F, size_t m,
                         size_t *idx, size_t k, size_t keep, int *gave_up)
{
    double *A = dc_mem_alloc(alloc, k * m * sizeof(double));
    double *S = dc_mem_alloc(alloc, 2 * k * m * sizeof(double));
    double ref[DC_MAX_OBJECTIVES];
    size_t best[DC_MAX_OBJECTIVES]; /* each objective's best row: never removed */
    unsigned char *alive = dc_mem_alloc(alloc, k);
    ckey *heap = dc_mem_alloc(alloc, k * sizeof *heap);
    size_t *tmp = dc_mem_alloc(alloc, k * sizeof(size_t));
    size_t q, j, len = 0, left = k, w = 0;
    dc_status st = DC_ERR_NOMEM;
    if (!A || !S || !alive || !heap || !tmp)
        goto done;
    for (q = 0; q < k; q++) { /* in increasing last objective (the 3-D sweep's order) */
        heap[q].c = F[idx[q] * m + m - 1];
        heap[q].id = idx[q];
    }
    qsort(heap, k, sizeof *heap, ckey_asc);
    for (q = 0; q < k; q++) {
        idx[q] = heap[q].id;
        memcpy(A + q * m, F + idx[q] * m, m * sizeof(double));
    }
    dc_pareto_reference(A, k, m, ref);
    memset(alive, 1, k);
    for (j = 0; j < m; j++) {
        size_t r;
        best[j] = 0;
        for (r = 1; r < k; r++)
            if (A[r * m + j] < A[best[j] * m + j])
                best[j] = r;
    }
    for (q = 0; q < k; q++) {
        ckey e;
        int extreme = 0;
        for (j = 0; j < m && !extreme; j++)
            extreme = best[j] == q;
        if (extreme)
            continue; /* never removed */
        e.id = q;
        if ((st = contribution_of(alloc, guard, A, m, alive, k, ref, q, S, &e.c)))
            goto done;
        if (dc_guard_stopped(guard))
            break;
        heap_push(heap, &len, e);
    }
    while (left > keep && len > 0 && !dc_guard_stopped(guard)) {
        ckey e = heap_pop(heap, &len);
        double c;
        if ((st = contribution_of(alloc, guard, A, m, alive, k, ref, e.id, S, &c)))
            goto done;
        if (dc_guard_stopped(guard))
            break;
        if (len > 0 && c > heap[0].c) {
            e.c = c; /* stale: it grew; back in its place */
            heap_push(heap, &len, e);
            continue;
        }
        alive[e.id] = 0;
        left--;
    }
    if (dc_guard_stopped(guard)) {
        *gave_up = 1; /* idx: the rows in increasing last objective */
        st = DC_OK;
        goto done;
    }
    for (q = 0; q < k; q++)
        if (alive[q])
            tmp[w++] = idx[q];
    for (q = 0; q < k; q++)
        if (!alive[q])
            tmp[w++] = idx[q];
    memcpy(idx, tmp, k * sizeof(size_t));
    st = DC_OK;
done:
    dc_mem_free(alloc, A, k * m * sizeof(double));
    dc_mem_free(alloc, S, 2 * k * m * sizeof(double));
    dc_mem_free(alloc, alive, k);
    dc_mem_free(alloc, heap, k * sizeof *heap);
    dc_mem_free(alloc, tmp, k * sizeof(size_t));
    return st;
}

dc_status dc_pareto_thin(const dc_allocator *alloc, dc_guard *guard, const double *F,
                         size_t m, size_t *idx, size_t k, size_t keep, int rule)
{
    size_t q, j, finite = 0;
    int gave_up = 0;
    dc_status st;
    if (keep >= k)
        return DC_OK;
    /* points with a non-finite value last (stable) */
    for (q = 0; q < k; q++) {
        for (j = 0; j < m && isfinite(F[idx[q] * m + j]); j++)
            ;
        if (j == m) {
            size_t t = idx[q], r;
            for (r = q; r > finite; r--)
                idx[r] = idx[r - 1];
            idx[finite++] = t;
        }
    }
    if (finite <= keep)
        return DC_OK;
    if (rule == DC_THIN_CROWDING || keep < m)
        return thin_crowding(alloc, F, m, idx, finite);
    st = m == 2 ? thin_hv2(alloc, guard, F, idx, finite, keep, &gave_up)
                : thin_hv(alloc, guard, F, m, idx, finite, keep, &gave_up);
    if (!st && gave_up)
        st = thin_crowding(alloc, F, m, idx, finite);
    return st;
}

/* ---- survivors: non-dominated sorting, front by front ---- */

/* The guard gave up while sorting a level: the unsorted points (front[0..nf),
 * then rest[0..nr)) fill the survivors from taken on. */
static void fill_unsorted(const size_t *front, size_t nf, const size_t *rest, size_t nr,
                          size_t taken, size_t keep, int level, size_t *out, int *rank,
                          double *crowd)
{
    size_t q;
    for (q = 0; taken < keep && q < nf + nr; q++, taken++) {
        out[taken] = q < nf ? front[q] : rest[q - nf];
        rank[taken] = level;
        crowd[taken] = 0.0;
    }
}

dc_status dc_pareto_select(const dc_allocator *alloc, dc_guard *guard, const double *F,
                           const double *E, size_t k, size_t m, size_t keep, int rule,
                           size_t *out, int *rank, double *crowd)
{
    size_t *rest = dc_mem_alloc(alloc, k * sizeof(size_t));
    size_t *front = dc_mem_alloc(alloc, k * sizeof(size_t));
    size_t nr = k, taken = 0, q, p;
    int level = 0;
    dc_status st = DC_ERR_NOMEM;
    if (!rest || !front)
        goto done;
    if (keep > k)
        keep = k;
    for (q = 0; q < k; q++)
        rest[q] = q;
    st = DC_OK;
    while (taken < keep) {
        size_t nf = 0, w = 0, use;
        for (q = 0; q < nr; q++) {
            size_t a = rest[q];
            int dominated = 0;
            if (dc_guard_spend(guard, nr)) { /* the run is ending: no more sorting */
                memmove(rest + w, rest + q, (nr - q) * sizeof(size_t));
                fill_unsorted(front, nf, rest, w + nr - q, taken, keep, level, out, rank,
                              crowd);
                goto done;
            }
            for (p = 0; p < nr && !dominated; p++)
                dominated = p != q && dc_cdominates(F + rest[p] * m, E[rest[p]], F + a * m,
                                                    E[a], m);
            if (dominated)
                rest[w++] = a;
            else
                front[nf++] = a;
        }
        nr = w;
        use = nf;
        if (taken + nf > keep) {
            if ((st = dc_pareto_thin(alloc, guard, F, m, front, nf, keep - taken, rule)))
                goto done;
            use = keep - taken;
        }
        if ((st = crowding(alloc, F, m, front, use, crowd + taken)))
            goto done;
        for (q = 0; q < use; q++) {
            out[taken + q] = front[q];
            rank[taken + q] = level;
        }
        taken += use;
        level++;
    }
done:
    dc_mem_free(alloc, rest, k * sizeof(size_t));
    dc_mem_free(alloc, front, k * sizeof(size_t));
    return st;
}

/* ---- the archive ---- */

dc_status dc_archive_init(dc_archive *a, const dc_allocator *alloc, size_t n, size_t m,
                          size_t cap, int rule)
{
    memset(a, 0, sizeof *a);
    a->alloc = alloc;
    a->n = n;
    a->m = m;
    a->cap = cap;
    a->rule = rule;
    return DC_OK;
}

void dc_archive_free(dc_archive *a)
{
    if (!a->alloc)
        return;
    dc_mem_free(a->alloc, a->X, a->rows * a->n * sizeof(double));
    dc_mem_free(a->alloc, a->F, a->rows * a->m * sizeof(double));
    dc_mem_free(a->alloc, a->E, a->rows * sizeof(double));
    dc_mem_free(a->alloc, a->V, a->rows * sizeof(double));
    dc_mem_free(a->alloc, a->idx, a->rows * sizeof(size_t));
    memset(a, 0, sizeof *a);
}

static int grow(dc_archive *a)
{
    size_t rows = a->rows ? 2 * a->rows : 2 * a->cap + 16;
    double *X = dc_mem_alloc(a->alloc, rows * a->n * sizeof(double));
    double *F = dc_mem_alloc(a->alloc, rows * a->m * sizeof(double));
    double *E = dc_mem_alloc(a->alloc, rows * sizeof(double));
    double *V = dc_mem_alloc(a->alloc, rows * sizeof(double));
    size_t *idx = dc_mem_alloc(a->alloc, rows * sizeof(size_t));
    if (!X || !F || !E || !V || !idx) {
        dc_mem_free(a->alloc, X, rows * a->n * sizeof(double));
        dc_mem_free(a->alloc, F, rows * a->m * sizeof(double));
        dc_mem_free(a->alloc, E, rows * sizeof(double));
        dc_mem_free(a->alloc, V, rows * sizeof(double));
        dc_mem_free(a->alloc, idx, rows * sizeof(size_t));
        return 0;
    }
    if (a->size) {
        memcpy(X, a->X, a->size * a->n * sizeof(double));
        memcpy(F, a->F, a->size * a->m * sizeof(double));
        memcpy(E, a->E, a->size * sizeof(double));
        memcpy(V, a->V, a->size * sizeof(double));
    }
    dc_mem_free(a->alloc, a->X, a->rows * a->n * sizeof(double));
    dc_mem_free(a->alloc, a->F, a->rows * a->m * sizeof(double));
    dc_mem_free(a->alloc, a->E, a->rows * sizeof(double));
    dc_mem_free(a->alloc, a->V, a->rows * sizeof(double));
    dc_mem_free(a->alloc, a->idx, a->rows * sizeof(size_t));
    a->X = X;
    a->F = F;
    a->E = E;
    a->V = V;
    a->idx = idx;
    a->rows = rows;
    return 1;
}

static void move_row(dc_archive *a, size_t to, size_t from)
{
    memcpy(a->X + to * a->n, a->X + from * a->n, a->n * sizeof(double));
    memcpy(a->F + to * a->m, a->F + from * a->m, a->m * sizeof(double));
    a->E[to] = a->E[from];
    a->V[to] = a->V[from];
}

dc_status dc_archive_offer(dc_archive *a, const double *x, const double *f, double excess,
                           double max_violation, int *taken)
{
    size_t q, w = 0, j, m = a->m;
    *taken = 0;
    for (q = 0; q < a->size; q++) { /* dominated, or equal to a member: refused */
        const double *g = a->F + q * m;
        if (a->E[q] < excess)
            return DC_OK;
        if (a->E[q] == excess) {
            for (j = 0; j < m && !dc_better(f[j], g[j]); j++)
                ;
            if (j == m)
                return DC_OK;
        }
    }
    for (q = 0; q < a->size; q++) /* drop the members it dominates */
        if (!dc_cdominates(f, excess, a->F + q * m, a->E[q], m)) {
            if (w != q)
                move_row(a, w, q);
            w++;
        }
    a->size = w;
    if (a->size == a->rows && !grow(a))
        return DC_ERR_NOMEM;
    memcpy(a->X + a->size * a->n, x, a->n * sizeof(double));
    memcpy(a->F + a->size * m, f, m * sizeof(double));
    a->E[a->size] = excess;
    a->V[a->size] = max_violation;
    a->size++;
    *taken = 1;
    return DC_OK;
}

static int index_cmp(const void *pa, const void *pb)
{
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    return x < y ? -1 : x > y;
}

dc_status dc_archive_thin(dc_archive *a)
{
    size_t q, w;
    dc_status st;
    if (a->size <= a->cap)
        return DC_OK;
    for (q = 0; q < a->size; q++)
        a->idx[q] = q;
    if ((st = dc_pareto_thin(a->alloc, a->guard, a->F, a->m, a->idx, a->size, a->cap,
                             a->rule)))
        return st;
    /* the survivors, compacted in their original order */
    qsort(a->idx, a->cap, sizeof *a->idx, index_cmp);
    for (w = 0; w < a->cap; w++)
        if (a->idx[w] != w)
            move_row(a, w, a->idx[w]);
    a->size = w;
    return DC_OK;
}
