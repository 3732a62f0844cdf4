/*
 * dss_separable.c -- DSS's solver of separable objectives (dss_separable.h;
 * the plan and its phases are described in dss.c's header).
 */
#include <math.h>
#include <string.h>

#include "engine/dss_separable.h"

#define GOLD 0.6180339887498949
#define BRACKET_TOL 1e-15
#define MAX_ROUNDS 90

typedef struct dc_dss_bracket {
    double a, b, c, d, fc, fd;
    int stage; /* 0: evaluate c, 1: evaluate d, 2: iterate */
    int active;
} dc_dss_bracket;

/* ---- plan ---- */

static size_t grid_rows(const dc_dss_sep *s)
{
    return s->identical ? (s->K + s->n - 1) / s->n : s->K;
}

static size_t round_rows(const dc_dss_sep *s)
{
    return s->identical ? (s->B + s->n - 1) / s->n : s->B;
}

/* Fit K, B and the rounds into the budget; 0 when it cannot be done well. */
static int plan(dc_dss_sep *s, int64_t budget, double grid_option)
{
    s->K = grid_option > 0 ? (size_t)grid_option : (s->identical ? 4096 : 512);
    for (;;) {
        int64_t need = (int64_t)grid_rows(s) + (int64_t)round_rows(s) * MAX_ROUNDS + 1;
        if (need <= budget)
            return 1;
        if (s->K > 16)
            s->K /= 2;
        else if (s->B > 1)
            s->B--;
        else
            return 0;
    }
}

static double grid_point(const dc_dss_sep *s, size_t k)
{
    return s->K == 1 ? 0.5 : (double)k / (double)(s->K - 1);
}

/* ---- phases ---- */

void dc_dss_sep_ask_grid(dc_dss_sep *s, dc_batch *b)
{
    size_t rows = grid_rows(s), r, j, n = s->n;
    for (r = 0; r < rows; r++)
        for (j = 0; j < n; j++) {
            size_t k = s->identical ? r * n + j : r;
            s->U[r * n + j] = grid_point(s, k < s->K ? k : s->K - 1);
        }
    b->kind = DC_ASK_TERMS;
    b->U = s->U;
    b->rows = rows;
    b->f = s->f;
    b->terms = s->G;
}

static void store_grid(dc_dss_sep *s)
{
    size_t r, j, n = s->n, k;
    size_t rows = grid_rows(s);
    for (r = 0; r < rows; r++)
        for (j = 0; j < n; j++) {
            if (s->identical) {
                k = r * n + j;
                if (k < s->K)
                    s->grid[k] = s->G[r * n + j];
            } else {
                s->grid[r * s->cols + j] = s->G[r * n + j];
            }
        }
}

static double gval(const dc_dss_sep *s, size_t k, size_t col)
{
    return s->grid[k * s->cols + col];
}

/* The B best local minima of each column's grid, bracketed by their grid
 * neighbours (kept sorted by value; NaN is worse than any number). */
static void make_brackets(dc_dss_sep *s)
{
    size_t col, k, q;
    double h = s->K > 1 ? 1.0 / (double)(s->K - 1) : 0.5;
    for (col = 0; col < s->cols; col++) {
        dc_dss_bracket *br = s->br + col * s->B;
        size_t found = 0, bestk = 0;
        for (k = 0; k < s->K; k++) {
            double v = gval(s, k, col);
            int low_left = k == 0 || !dc_better(gval(s, k - 1, col), v);
            int low_right = k + 1 == s->K || !dc_better(gval(s, k + 1, col), v);
            if (dc_better(v, gval(s, bestk, col)))
                bestk = k;
            if (v != v || !low_left || !low_right)
                continue;
            if (found == s->B && !dc_better(v, br[found - 1].fc))
                continue;
            q = found < s->B ? found++ : found - 1;
            while (q > 0 && dc_better(v, br[q - 1].fc)) {
                br[q] = br[q - 1];
                q--;
            }
            br[q].fc = v;
            br[q].c = grid_point(s, k);
        }
        if (found == 0) { /* no finite minimum: search around the best grid point */
            br[0].c = grid_point(s, bestk);
            found = 1;
        }
        s->ubest[col] = grid_point(s, bestk);
        s->gbest[col] = gval(s, bestk, col);
        for (q = 0; q < s->B; q++) {
            double centre = br[q].c;
            br[q].active = q < found;
            if (!br[q].active)
                continue;
            br[q].a = centre - h > 0.0 ? centre - h : 0.0;
            br[q].b = centre + h < 1.0 ? centre + h : 1.0;
            br[q].c = br[q].b - GOLD * (br[q].b - br[q].a);
            br[q].d = br[q].a + GOLD * (br[q].b - br[q].a);
            br[q].stage = 0;
        }
    }
}

static double trial_point(const dc_dss_bracket *br)
{
    return br->stage == 0 || br->stage == 2 ? br->c : br->d;
}

/* Row and column of dc_dss_bracket q of column col in a refine batch. */
static void slot_of(const dc_dss_sep *s, size_t col, size_t q, size_t *row, size_t *j)
{
    if (s->identical) {
        *row = q / s->n;
        *j = q % s->n;
    } else {
        *row = q;
        *j = col;
    }
}

void dc_dss_sep_ask_refine(dc_dss_sep *s, dc_batch *b)
{
    size_t rows = round_rows(s), r, j, col, q, n = s->n;
    for (r = 0; r < rows; r++)
        for (j = 0; j < n; j++)
            s->U[r * n + j] = s->ubest[s->identical ? 0 : j];
    for (col = 0; col < s->cols; col++)
        for (q = 0; q < s->B; q++) {
            const dc_dss_bracket *br = s->br + col * s->B + q;
            if (!br->active)
                continue;
            slot_of(s, col, q, &r, &j);
            s->U[r * n + j] = trial_point(br);
        }
    b->kind = DC_ASK_TERMS;
    b->U = s->U;
    b->rows = rows;
    b->f = s->f;
    b->terms = s->G;
}

/* Golden section: stage 0 took c, stage 1 took d, then one point a round. */
static int tell_refine(dc_dss_sep *s)
{
    size_t col, q, r, j;
    int open = 0;
    for (col = 0; col < s->cols; col++)
        for (q = 0; q < s->B; q++) {
            dc_dss_bracket *br = s->br + col * s->B + q;
            double v;
            if (!br->active)
                continue;
            slot_of(s, col, q, &r, &j);
            v = s->G[r * s->n + j];
            /* the point just evaluated may be the column's best */
            if (dc_better(v, s->gbest[col])) {
                s->gbest[col] = v;
                s->ubest[col] = trial_point(br);
            }
            if (br->stage == 0) {
                br->fc = v;
                br->stage = 1;
            } else if (br->stage == 1) {
                br->fd = v;
                br->stage = 3;
            } else if (br->stage == 2) {
                br->fc = v; /* the new c */
                br->stage = 3;
            } else {
                br->fd = v; /* the new d */
                br->stage = 3;
            }
            open = 1;
            if (br->stage != 3)
                continue;
            if (br->b - br->a < BRACKET_TOL) {
                br->active = 0;
                continue;
            }
            /* shrink and pick the next point to evaluate */
            if (!dc_better(br->fd, br->fc)) { /* minimum in [a, d] */
                br->b = br->d;
                br->d = br->c;
                br->fd = br->fc;
                br->c = br->b - GOLD * (br->b - br->a);
                br->stage = 2;
            } else { /* minimum in [c, b] */
                br->a = br->c;
                br->c = br->d;
                br->fc = br->fd;
                br->d = br->a + GOLD * (br->b - br->a);
                br->stage = 4;
            }
        }
    return open;
}

void dc_dss_sep_ask_confirm(dc_dss_sep *s, dc_batch *b)
{
    size_t j;
    for (j = 0; j < s->n; j++)
        s->U[j] = s->ubest[s->identical ? 0 : j];
    b->kind = DC_ASK_POINTS;
    b->U = s->U;
    b->rows = 1;
    b->f = s->f;
}

/* ---- the solver ---- */

dc_status dc_dss_sep_init(dc_dss_sep *s, const dc_problem *pb, size_t basins,
                          double grid_option, const dc_allocator *alloc, int *planned)
{
    size_t n = pb->n;
    s->n = n;
    s->B = basins;
    s->identical = pb->identical_terms && n > 1;
    *planned = pb->separable && plan(s, pb->budget, grid_option);
    if (!*planned)
        return DC_OK;
    s->rows = grid_rows(s) > round_rows(s) ? grid_rows(s) : round_rows(s);
    s->cols = s->identical ? 1 : n;
    s->grid = dc_mem_alloc(alloc, s->K * s->cols * sizeof(double));
    s->br = dc_mem_calloc(alloc, s->B * s->cols, sizeof(dc_dss_bracket));
    s->ubest = dc_mem_alloc(alloc, s->cols * sizeof(double));
    s->gbest = dc_mem_alloc(alloc, s->cols * sizeof(double));
    if (!s->grid || !s->br || !s->ubest || !s->gbest)
        return DC_ERR_NOMEM;
    s->U = dc_mem_alloc(alloc, s->rows * n * sizeof(double));
    s->G = dc_mem_alloc(alloc, s->rows * n * sizeof(double));
    s->f = dc_mem_alloc(alloc, s->rows * sizeof(double));
    if (!s->U || !s->G || !s->f)
        return DC_ERR_NOMEM;
    return DC_OK;
}

/* The grid is in: bracket the minima, refining starts. */
void dc_dss_sep_tell_grid(dc_dss_sep *s)
{
    store_grid(s);
    make_brackets(s);
    s->rounds = 0;
}

int dc_dss_sep_tell_refine(dc_dss_sep *s)
{
    return !tell_refine(s) || ++s->rounds >= MAX_ROUNDS;
}

void dc_dss_sep_free(dc_dss_sep *s, const dc_allocator *alloc)
{
    dc_mem_free(alloc, s->grid, s->K * s->cols * sizeof(double));
    dc_mem_free(alloc, s->br, s->B * s->cols * sizeof(dc_dss_bracket));
    dc_mem_free(alloc, s->ubest, s->cols * sizeof(double));
    dc_mem_free(alloc, s->gbest, s->cols * sizeof(double));
    dc_mem_free(alloc, s->U, s->rows * s->n * sizeof(double));
    dc_mem_free(alloc, s->G, s->rows * s->n * sizeof(double));
    dc_mem_free(alloc, s->f, s->rows * sizeof(double));
}
