/*
 * hypervolume.c -- the hypervolume indicator, exact (decido.h, dc_hypervolume).
 *
 * The hypervolume of points f (minimized) at a reference point r is the
 * measure of the union of the boxes [f, r] over the points with f < r in
 * every objective; the others add nothing.
 *
 *   1 objective   r - min f.
 *   2 objectives  a sweep in increasing f0: each point that lowers the best
 *                 f1 so far adds the strip [f0, r0] x [f1, best]   O(n log n)
 *   3 objectives  a sweep in increasing f2 over the 2-D staircase of the
 *                 points seen so far (Beume et al., "On the complexity of
 *                 computing the hypervolume indicator", IEEE TEC 2009; the
 *                 HV3D sweep of Fonseca, Paquete & Lopez-Ibanez 2006): the
 *                 staircase's area times each slab's height.  The staircase
 *                 is kept in a Fenwick tree over the points' ranks in
 *                 (f0, f1) order, so finding a point's neighbours and
 *                 removing the points it covers cost O(log n) each:
 *                 O(n log n) in all.  A new point's added area is a sum of
 *                 non-negative rectangles (no cancellation).
 *   4..8          WFG's recursion (While, Bradstreet & Barone, IEEE TEC 2012)
 *                 with the last objective sorted worst first: point i's
 *                 exclusive volume against the points after it is its slab
 *                 depth (r_last - f_last) times the (m-1)-objective
 *                 difference between its own box and the hypervolume of the
 *                 later points limited by it (max(f_j, f_i), non-dominated
 *                 ones only); the recursion ends in the 3-D sweep.  Exact;
 *                 worst-case cost grows exponentially with m, in practice
 *                 100 points of 8 objectives take milliseconds (measured in
 *                 tests/engines/test_hypervolume.py's neighbour benchmark).
 *
 * dc_hv_contribution (pareto.h) gives each point's exclusive contribution:
 * in 2-D from its neighbours, otherwise its box minus the hypervolume of the
 * others limited by it.
 *
 * Inside a run the recursion counts its work on the run's guard (engine.h):
 * a limited point costs about one unit per point it is checked against, a
 * 3-D sweep about 16 per point; once the guard gives up (the time limit or a
 * stop request) the recursion unwinds at once and the caller reads
 * dc_guard_stopped: the value is then not the hypervolume.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/pareto.h"
#include "common/alloc.h"
#include "common/error.h"

typedef struct hv_ctx {
    const dc_allocator *alloc;
    const double *ref;
    dc_guard *guard; /* NULL: never gives up */
} hv_ctx;

/* ---- sorting helpers (qsort with a context-free key: rows of doubles) ---- */

int dc_key2_cmp(const void *pa, const void *pb)
{
    const dc_key2 *x = pa, *y = pb;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* ---- 2 objectives ---- */

/* P: k rows of stride s, every point strictly inside the reference box */
static dc_status hv2(const hv_ctx *c, const double *P, size_t k, size_t s, double *out)
{
    dc_key2 *key;
    double best, vol = 0.0;
    size_t i;
    if (k == 0) {
        *out = 0.0;
        return DC_OK;
    }
    key = dc_mem_alloc(c->alloc, k * sizeof *key);
    if (!key)
        return DC_ERR_NOMEM;
    for (i = 0; i < k; i++) {
        key[i].a = P[i * s];
        key[i].b = P[i * s + 1];
        key[i].i = i;
    }
    qsort(key, k, sizeof *key, dc_key2_cmp);
    best = c->ref[1];
    for (i = 0; i < k; i++)
        if (key[i].b < best) {
            vol += (c->ref[0] - key[i].a) * (best - key[i].b);
            best = key[i].b;
        }
    dc_mem_free(c->alloc, key, k * sizeof *key);
    *out = vol;
    return DC_OK;
}

/* ---- 3 objectives: the sweep over a Fenwick-tree staircase ---- */

typedef struct fenwick {
    int *t; /* 1-based counts */
    size_t n, top; /* top: the largest power of two <= n */
} fenwick;

static void fw_add(fenwick *f, size_t i, int v) /* i 0-based */
{
    for (i++; i <= f->n; i += i & (~i + 1))
        f->t[i] += v;
}

static size_t fw_prefix(const fenwick *f, size_t i) /* active among ranks < i */
{
    size_t s = 0;
    for (; i > 0; i -= i & (~i + 1))
        s += (size_t)f->t[i];
    return s;
}

static size_t fw_kth(const fenwick *f, size_t k) /* 0-based rank of the k-th active (k >= 1) */
{
    size_t pos = 0, step;
    for (step = f->top; step; step >>= 1)
        if (pos + step <= f->n && (size_t)f->t[pos + step] < k) {
            pos += step;
            k -= (size_t)f->t[pos];
        }
    return pos;
}

typedef struct key3 {
    double z;
    size_t i;
} key3;

static int key3_cmp(const void *pa, const void *pb)
{
    const key3 *x = pa, *y = pb;
    if (x->z != y->z)
        return x->z < y->z ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

#define NONE ((size_t)-1)

/* the staircase's active neighbours of rank r (not active itself) */
static size_t pred_of(const fenwick *f, size_t r)
{
    size_t c = fw_prefix(f, r);
    return c ? fw_kth(f, c) : NONE;
}

static size_t succ_of(const fenwick *f, size_t r, size_t total)
{
    size_t c = fw_prefix(f, r + 1);
    return c < total ? fw_kth(f, c + 1) : NONE;
}

static dc_status hv3(const hv_ctx *c, const double *P, size_t k, size_t s, double *out)
{
    dc_key2 *xy = NULL;
    key3 *zk = NULL;
    size_t *rank_of = NULL, i, active = 0;
    fenwick fw;
    double area = 0.0, vol = 0.0, rx = c->ref[0], ry = c->ref[1];
    dc_status st = DC_ERR_NOMEM;
    memset(&fw, 0, sizeof fw);
    if (k == 0 || dc_guard_spend(c->guard, 16 * (uint64_t)k)) {
        *out = 0.0;
        return DC_OK;
    }
    xy = dc_mem_alloc(c->alloc, k * sizeof *xy);
    zk = dc_mem_alloc(c->alloc, k * sizeof *zk);
    rank_of = dc_mem_alloc(c->alloc, k * sizeof *rank_of);
    fw.t = dc_mem_calloc(c->alloc, k + 1, sizeof *fw.t);
    if (!xy || !zk || !rank_of || !fw.t)
        goto done;
    fw.n = k;
    for (fw.top = 1; fw.top * 2 <= k; fw.top *= 2)
        ;
    for (i = 0; i < k; i++) {
        xy[i].a = P[i * s];
        xy[i].b = P[i * s + 1];
        xy[i].i = i;
        zk[i].z = P[i * s + 2];
        zk[i].i = i;
    }
    qsort(xy, k, sizeof *xy, dc_key2_cmp); /* xy[rank] */
    qsort(zk, k, sizeof *zk, key3_cmp);
    for (i = 0; i < k; i++)
        rank_of[xy[i].i] = i;
    for (i = 0; i < k; i++) {
        size_t r = rank_of[zk[i].i], q, t;
        double xp = xy[r].a, yp = xy[r].b, top, add = 0.0;
        if (i > 0)
            vol += area * (zk[i].z - zk[i - 1].z);
        q = pred_of(&fw, r);
        if (q != NONE && xy[q].b <= yp)
            continue; /* covered in (f0, f1) by a point of smaller or equal f2 */
        top = q != NONE ? xy[q].b : ry;
        /* the points it covers: later ranks with f1 >= yp */
        t = succ_of(&fw, r, active);
        while (t != NONE && xy[t].b >= yp) {
            size_t next;
            add += (xy[t].a - xp) * (top - yp);
            xp = xy[t].a;
            top = xy[t].b;
            fw_add(&fw, t, -1);
            active--;
            next = succ_of(&fw, t, active);
            t = next;
        }
        add += ((t != NONE ? xy[t].a : rx) - xp) * (top - yp);
        area += add;
        fw_add(&fw, r, 1);
        active++;
    }
    vol += area * (c->ref[2] - zk[k - 1].z);
    *out = vol;
    st = DC_OK;
done:
    dc_mem_free(c->alloc, xy, k * sizeof *xy);
    dc_mem_free(c->alloc, zk, k * sizeof *zk);
    dc_mem_free(c->alloc, rank_of, k * sizeof *rank_of);
    dc_mem_free(c->alloc, fw.t, (k + 1) * sizeof *fw.t);
    return st;
}

/* ---- 4..8 objectives: WFG with the last objective sorted ---- */

static dc_status hv_rows(const hv_ctx *c, const double *P, size_t k, size_t s, size_t m,
                         double *out);

static int weakly_dominates(const double *a, const double *b, size_t m)
{
    size_t j;
    for (j = 0; j < m; j++)
        if (a[j] > b[j])
            return 0;
    return 1;
}

typedef struct keyl {
    double last;
    size_t i;
} keyl;

static int keyl_cmp(const void *pa, const void *pb) /* worst (largest) first */
{
    const keyl *x = pa, *y = pb;
    if (x->last != y->last)
        return x->last > y->last ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static dc_status wfg(const hv_ctx *c, const double *P, size_t k, size_t s, size_t m,
                     double *out)
{
    keyl *order;
    double *S = NULL, *L = NULL, vol = 0.0;
    size_t i, j, q, d = m - 1;
    dc_status st = DC_ERR_NOMEM;
    order = dc_mem_alloc(c->alloc, k * sizeof *order);
    S = dc_mem_alloc(c->alloc, k * m * sizeof(double));
    L = dc_mem_alloc(c->alloc, k * d * sizeof(double));
    if (!order || !S || !L)
        goto done;
    for (i = 0; i < k; i++) {
        order[i].last = P[i * s + d];
        order[i].i = i;
    }
    qsort(order, k, sizeof *order, keyl_cmp);
    for (i = 0; i < k; i++)
        memcpy(S + i * m, P + order[i].i * s, m * sizeof(double));
    for (i = 0; i < k; i++) {
        const double *p = S + i * m;
        double incl = 1.0, sub;
        size_t nl = 0;
        for (j = 0; j < d; j++)
            incl *= c->ref[j] - p[j];
        /* the later points limited by p, non-dominated ones only */
        for (q = i + 1; q < k; q++) {
            double *row = L + nl * d; /* the candidate, in the free slot */
            size_t w, keep = 1, kept = 0;
            if (dc_guard_spend(c->guard, nl + 1))
                break;
            for (j = 0; j < d; j++)
                row[j] = S[q * m + j] > p[j] ? S[q * m + j] : p[j];
            for (w = 0; w < nl && keep; w++)
                keep = !weakly_dominates(L + w * d, row, d);
            if (!keep)
                continue;
            for (w = 0; w < nl; w++) /* keep the ones the candidate does not cover */
                if (!weakly_dominates(row, L + w * d, d)) {
                    if (kept != w)
                        memcpy(L + kept * d, L + w * d, d * sizeof(double));
                    kept++;
                }
            if (kept != nl)
                memmove(L + kept * d, row, d * sizeof(double));
            nl = kept + 1;
        }
        if (dc_guard_stopped(c->guard))
            break; /* gave up: the caller reads the guard */
        if ((st = hv_rows(c, L, nl, d, d, &sub)))
            goto done;
        vol += (c->ref[d] - p[d]) * (incl - sub);
    }
    *out = vol;
    st = DC_OK;
done:
    dc_mem_free(c->alloc, order, k * sizeof *order);
    dc_mem_free(c->alloc, S, k * m * sizeof(double));
    dc_mem_free(c->alloc, L, k * d * sizeof(double));
    return st;
}

/* P: k rows of stride s, m objectives, every point strictly inside the box */
static dc_status hv_rows(const hv_ctx *c, const double *P, size_t k, size_t s, size_t m,
                         double *out)
{
    size_t i;
    if (k == 0) {
        *out = 0.0;
        return DC_OK;
    }
    if (m == 1) {
        double lo = P[0];
        for (i = 1; i < k; i++)
            lo = P[i * s] < lo ? P[i * s] : lo;
        *out = c->ref[0] - lo;
        return DC_OK;
    }
    if (m == 2)
        return hv2(c, P, k, s, out);
    if (m == 3)
        return hv3(c, P, k, s, out);
    return wfg(c, P, k, s, m, out);
}

/* ---- the public entry and the contributions ---- */

/* the rows of F strictly inside the reference box (NaN never is), packed into *P */
static size_t inside_rows(const double *F, size_t rows, size_t m, const double *ref, double *P)
{
    size_t r, j, k = 0;
    for (r = 0; r < rows; r++) {
        const double *f = F + r * m;
        for (j = 0; j < m && f[j] < ref[j]; j++)
            ;
        if (j == m)
            memcpy(P + (k++) * m, f, m * sizeof(double));
    }
    return k;
}

dc_status dc_hv_compute(const dc_allocator *alloc, dc_guard *guard, const double *F,
                        size_t rows, size_t m, const double *ref, double *out)
{
    hv_ctx c;
    double *P;
    size_t k;
    dc_status st;
    c.alloc = alloc ? alloc : dc_mem_default();
    c.ref = ref;
    c.guard = guard;
    *out = 0.0;
    if (rows == 0)
        return DC_OK;
    P = dc_mem_alloc(c.alloc, rows * m * sizeof(double));
    if (!P)
        return DC_ERR_NOMEM;
    k = inside_rows(F, rows, m, ref, P);
    st = hv_rows(&c, P, k, m, m, out);
    dc_mem_free(c.alloc, P, rows * m * sizeof(double));
    return st;
}

static double hv_now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the guard's check of dc_hypervolume_within: the clock past its end */
static int past_end(void *data)
{
    const double *end = data;
    return hv_now() >= *end;
}

dc_status dc_hypervolume(const double *F, size_t rows, size_t m, const double *ref,
                         const dc_allocator *alloc, double *out, dc_error *error)
{
    return dc_hypervolume_within(F, rows, m, ref, 0.0, alloc, out, error);
}

dc_status dc_hypervolume_within(const double *F, size_t rows, size_t m, const double *ref,
                                double time_limit, const dc_allocator *alloc, double *out,
                                dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    dc_guard guard;
    double end;
    size_t j, total;
    memset(err, 0, sizeof *err);
    if (!out)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL output");
    *out = NAN;
    if (m < 1 || m > DC_MAX_OBJECTIVES)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "the hypervolume takes 1 to %d objectives, got %zu",
                            DC_MAX_OBJECTIVES, m);
    if (!ref || (rows && !F) || !dc_mul_size(rows, m, &total) ||
        !dc_mul_size(total, sizeof(double), &total))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL or oversized points");
    for (j = 0; j < m; j++)
        if (!isfinite(ref[j]))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "reference_point[%zu] must be finite", j);
    memset(&guard, 0, sizeof guard);
    guard.check = past_end;
    guard.data = &end;
    end = hv_now() + time_limit;
    if (dc_hv_compute(alloc, time_limit > 0 ? &guard : NULL, F, rows, m, ref, out))
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    if (guard.gave_up)
        *out = NAN;
    return DC_OK;
}

/* Point i's exclusive contribution among the k rows of P (stride m, each
 * strictly inside the box): its box less the hypervolume of the others
 * limited by it.  L: scratch of (k - 1) x m. */
dc_status dc_hv_contribution(const dc_allocator *alloc, dc_guard *guard, const double *P,
                             size_t k, size_t m, const double *ref, size_t i, double *L,
                             double *out)
{
    hv_ctx c;
    const double *p = P + i * m;
    double incl = 1.0, sub;
    size_t q, j, nl = 0;
    dc_status st;
    c.alloc = alloc;
    c.ref = ref;
    c.guard = guard;
    for (j = 0; j < m; j++)
        incl *= ref[j] - p[j];
    for (q = 0; q < k; q++) {
        if (q == i)
            continue;
        for (j = 0; j < m; j++)
            L[nl * m + j] = P[q * m + j] > p[j] ? P[q * m + j] : p[j];
        nl++;
    }
    if ((st = hv_rows(&c, L, nl, m, m, &sub)))
        return st;
    *out = incl - sub;
    if (*out < 0.0)
        *out = 0.0; /* rounding of a covered point */
    return DC_OK;
}

/* ---- 3 objectives: one point's contribution by a sweep with early exit ----
 *
 * The others limited by p (max(q, p)) cover part of p's box; sweeping them in
 * increasing f2 (the rows come sorted), the uncovered area of p's (f0, f1)
 * rectangle times each slab's height is p's exclusive volume.  The limited
 * points' staircase is kept in a small sorted array: points limited into
 * p's corner collapse onto it, so it stays short, and once a limited point
 * is p's corner itself nothing is left uncovered and the sweep ends. */
double dc_hv_contribution3(const double *P, size_t k, const unsigned char *alive,
                           const double *ref, size_t i, double *sx, double *sy)
{
    const double *p = P + 3 * i;
    double box = (ref[0] - p[0]) * (ref[1] - p[1]), cov = 0.0, vol = 0.0, z = p[2];
    size_t q, s = 0;
    int past = 0;
    for (q = 0; q < k; q++) {
        double x, y, top, xp, add = 0.0;
        size_t pos, t;
        if (q == i) {
            past = 1;
            continue;
        }
        if (!alive[q])
            continue;
        if (past && P[3 * q + 2] > z) {
            vol += (box - cov) * (P[3 * q + 2] - z);
            z = P[3 * q + 2];
        }
        x = P[3 * q] > p[0] ? P[3 * q] : p[0];
        y = P[3 * q + 1] > p[1] ? P[3 * q + 1] : p[1];
        for (pos = 0; pos < s && (sx[pos] < x || (sx[pos] == x && sy[pos] < y)); pos++)
            ;
        if ((pos > 0 && sy[pos - 1] <= y) || (pos < s && sx[pos] == x && sy[pos] == y))
            continue; /* covered already */
        top = pos > 0 ? sy[pos - 1] : ref[1];
        xp = x;
        for (t = pos; t < s && sy[t] >= y; t++) {
            add += (sx[t] - xp) * (top - y);
            xp = sx[t];
            top = sy[t];
        }
        add += ((t < s ? sx[t] : ref[0]) - xp) * (top - y);
        cov += add;
        if (t != pos + 1) { /* entries pos..t-1 go, one comes in */
            memmove(sx + pos + 1, sx + t, (s - t) * sizeof(double));
            memmove(sy + pos + 1, sy + t, (s - t) * sizeof(double));
            s = s + pos + 1 - t;
        }
        sx[pos] = x;
        sy[pos] = y;
        if (s == 1 && x == p[0] && y == p[1]) {
            if (!past)
                return 0.0; /* covered from below p's own height: nothing exclusive */
            return vol;
        }
    }
    return vol + (box - cov) * (ref[2] - z);
}
