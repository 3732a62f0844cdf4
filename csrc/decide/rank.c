/*
 * rank.c -- competition ranks of decision scores (DESIGN.md §4, docs/decisions.md
 * rule 2).
 *
 * The order is a stable sort of the scores, best first: the key is -score when
 * higher is better, else the score; NaN keys sort after every number (+inf
 * included) and tie with each other.  Neighbours in that order tie when their
 * keys differ by at most rel_tol times the largest finite |score| (equal
 * infinities tie: inf - inf is NaN, which is not above the tolerance); a NaN
 * starts a group after a number.  Each group then takes input order, and every
 * member gets the group's first position + 1 as rank (1, 2, 2, 4).
 *
 * Only comparisons and one subtraction per neighbour pair: the result is the
 * same, bit for bit, as any other exact implementation of these rules.  No
 * allocation: the caller passes the output arrays, and rank doubles as the
 * merge sort's scratch until the ranks are written.
 */
#include "decido.h"

#include <math.h>

/* Strict order of two options: "a before b". */
typedef int (*before_fn)(const double *score, int higher, int64_t a, int64_t b);

static double key_of(const double *score, int higher, int64_t i)
{
    return higher ? -score[i] : score[i];
}

static int before_by_key(const double *score, int higher, int64_t a, int64_t b)
{
    double ka = key_of(score, higher, a), kb = key_of(score, higher, b);
    if (isnan(ka)) {
        return 0;
    }
    return isnan(kb) || ka < kb;
}

static int before_by_index(const double *score, int higher, int64_t a, int64_t b)
{
    (void)score;
    (void)higher;
    return a < b;
}

#define INSERTION_RUN 16

/* Stable sort of v[0..n) by before(); tmp holds n entries of scratch. */
static void merge_sort(int64_t *v, int64_t *tmp, size_t n, before_fn before,
                       const double *score, int higher)
{
    /* insertion sort on runs of INSERTION_RUN, then bottom-up merges */
    for (size_t lo = 0; lo < n; lo += INSERTION_RUN) {
        size_t hi = lo + INSERTION_RUN < n ? lo + INSERTION_RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            int64_t x = v[i];
            size_t j = i;
            while (j > lo && before(score, higher, x, v[j - 1])) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    }
    int64_t *src = v, *dst = tmp;
    for (size_t width = INSERTION_RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                /* take from the right only when strictly before: stable */
                dst[k++] = before(score, higher, src[j], src[i]) ? src[j++] : src[i++];
            }
            while (i < mid) {
                dst[k++] = src[i++];
            }
            while (j < hi) {
                dst[k++] = src[j++];
            }
        }
        int64_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != v) {
        for (size_t i = 0; i < n; i++) {
            v[i] = src[i];
        }
    }
}

dc_status dc_rank_competition(const double *score, size_t n, int higher_is_better,
                              double rel_tol, int64_t *order, int64_t *rank)
{
    if (n == 0) {
        return DC_OK;
    }
    if (score == NULL || order == NULL || rank == NULL || (uint64_t)n > (uint64_t)INT64_MAX) {
        return DC_ERR_ARGUMENT;
    }
    int higher = higher_is_better != 0;
    double max_abs = 0.0;
    int any_finite = 0;
    for (size_t i = 0; i < n; i++) {
        order[i] = (int64_t)i;
        if (isfinite(score[i])) {
            double a = fabs(score[i]);
            if (!any_finite || a > max_abs) {
                max_abs = a;
            }
            any_finite = 1;
        }
    }
    double tol = any_finite ? rel_tol * max_abs : 0.0;
    merge_sort(order, rank, n, before_by_key, score, higher);

    /* groups of neighbours within tol; each group back to input order */
    size_t start = 0;
    for (size_t p = 1; p <= n; p++) {
        int new_group = 1;
        if (p < n) {
            double ka = key_of(score, higher, order[p - 1]);
            double kb = key_of(score, higher, order[p]);
            new_group = isnan(kb) ? !isnan(ka) : kb - ka > tol;
        }
        if (!new_group) {
            continue;
        }
        if (p - start > 1) {
            merge_sort(order + start, rank + start, p - start, before_by_index, score, higher);
        }
        for (size_t q = start; q < p; q++) {
            rank[q] = (int64_t)start + 1;
        }
        start = p;
    }
    return DC_OK;
}
