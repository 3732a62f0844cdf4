/*
 * dss_separable.h -- DSS's solver of separable objectives (dss_separable.c):
 * f = c + sum_j g_j(x_j) solved coordinate by coordinate, every coordinate at
 * once, through DC_ASK_TERMS batches.  Sample a grid of K points over each
 * coordinate, bracket the B best local minima of each by their grid
 * neighbours, refine every bracket by golden-section search one point a round,
 * then confirm the assembled point with one full evaluation.  With identical
 * terms one batch row carries n candidates and the 1-D problem is solved once.
 */
#ifndef DC_DSS_SEPARABLE_H
#define DC_DSS_SEPARABLE_H

#include "engine/engine.h"

typedef struct dc_dss_sep {
    size_t n;
    int identical;      /* every g_j the same function: one column for all */
    size_t K, B, cols;  /* grid points, brackets a column; cols: 1 when identical, else n */
    double *grid;       /* K x cols values */
    struct dc_dss_bracket *br; /* B x cols */
    double *ubest, *gbest; /* per column */
    int rounds;
    size_t rows;        /* the batch buffers' rows */
    double *U, *f, *G;  /* the batches (rows x n, rows, rows x n) */
} dc_dss_sep;

/* Fit K (grid_option, 0 = automatic) and B (basins) into the budget and
 * allocate; *planned = 0 when the budget is too small to do it well (nothing
 * is allocated then). */
dc_status dc_dss_sep_init(dc_dss_sep *s, const dc_problem *pb, size_t basins,
                          double grid_option, const dc_allocator *alloc, int *planned);
void dc_dss_sep_ask_grid(dc_dss_sep *s, dc_batch *b);
void dc_dss_sep_tell_grid(dc_dss_sep *s);
void dc_dss_sep_ask_refine(dc_dss_sep *s, dc_batch *b);
int dc_dss_sep_tell_refine(dc_dss_sep *s); /* 1 when refining is over */
void dc_dss_sep_ask_confirm(dc_dss_sep *s, dc_batch *b);
void dc_dss_sep_free(dc_dss_sep *s, const dc_allocator *alloc); /* safe on a zeroed one */

#endif
