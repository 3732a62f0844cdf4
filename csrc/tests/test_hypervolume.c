/*
 * test_hypervolume.c -- dc_hypervolume against hand-computed cases and an
 * independent brute force (inclusion-exclusion over every subset of a few
 * points), for 1 to 8 objectives; the archive and the thinning of
 * engine/pareto.c (non-dominated, capped, extremes kept); argument errors;
 * dc_hypervolume_within giving up on a front it cannot measure in time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/rng.h"
#include "decido.h"
#include "engine/pareto.h"
#include "tests/check.h"

static double hv(const double *F, size_t rows, size_t m, const double *ref)
{
    double out = -1.0;
    dc_error err;
    dc_status st = dc_hypervolume(F, rows, m, ref, NULL, &out, &err);
    CHECK(st == DC_OK, "dc_hypervolume: %s", err.message);
    return out;
}

/* inclusion-exclusion: sum over subsets of (-1)^(|S|+1) vol(box(max S)) */
static double brute(const double *F, size_t rows, size_t m, const double *ref)
{
    double total = 0.0;
    unsigned long set, full = 1ul << rows;
    for (set = 1; set < full; set++) {
        double corner[DC_MAX_OBJECTIVES], vol = 1.0;
        size_t r, j;
        int count = 0;
        for (j = 0; j < m; j++)
            corner[j] = -INFINITY;
        for (r = 0; r < rows; r++)
            if (set >> r & 1u) {
                count++;
                for (j = 0; j < m; j++)
                    corner[j] = fmax(corner[j], F[r * m + j]);
            }
        for (j = 0; j < m; j++)
            vol *= fmax(0.0, ref[j] - corner[j]);
        total += (count & 1) ? vol : -vol;
    }
    return total;
}

static void hand_cases(void)
{
    double ref2[2] = {3, 3}, ref3[3] = {1, 1, 1}, ref1[1] = {5};
    double two[6] = {1, 2, 2, 1, 2.5, 2.5}; /* the third is dominated */
    double three[9] = {0, 0, 0.5, 0.5, 0.5, 0, 0.5, 0.5, 0.5};
    double outside[4] = {3, 0, 0, 3}; /* on the reference's faces: nothing */
    double nan_row[4] = {NAN, 0, 1, 1};
    double one[3] = {4, 2, 7};
    CHECK(hv(two, 3, 2, ref2) == 3.0, "2-D staircase: %g", hv(two, 3, 2, ref2));
    CHECK(fabs(hv(three, 3, 3, ref3) - 0.625) < 1e-15, "3-D: %.17g", hv(three, 3, 3, ref3));
    CHECK(hv(outside, 2, 2, ref2) == 0.0, "points on the faces add nothing");
    CHECK(hv(nan_row, 2, 2, ref2) == 4.0, "a NaN row adds nothing: %g", hv(nan_row, 2, 2, ref2));
    CHECK(hv(one, 3, 1, ref1) == 3.0, "1 objective: %g", hv(one, 3, 1, ref1));
    CHECK(hv(NULL, 0, 2, ref2) == 0.0, "no points");
}

static void random_cases(void)
{
    dc_rng rng;
    size_t m, trial;
    dc_rng_seed(&rng, 42);
    for (m = 1; m <= DC_MAX_OBJECTIVES; m++)
        for (trial = 0; trial < 40; trial++) {
            double F[10 * DC_MAX_OBJECTIVES], ref[DC_MAX_OBJECTIVES];
            size_t rows = 1 + (size_t)dc_rng_below(&rng, 10), r, j;
            for (j = 0; j < m; j++)
                ref[j] = 1.0;
            for (r = 0; r < rows; r++) {
                double norm = 0.0;
                for (j = 0; j < m; j++) {
                    /* on a sphere (a front), some beyond the reference, some repeated */
                    F[r * m + j] = dc_rng_uniform(&rng);
                    norm += F[r * m + j] * F[r * m + j];
                }
                for (j = 0; j < m; j++)
                    F[r * m + j] = trial % 3 ? F[r * m + j] / sqrt(norm) : F[r * m + j];
                if (r > 0 && dc_rng_below(&rng, 5) == 0)
                    memcpy(F + r * m, F + (r - 1) * m, m * sizeof(double));
                if (trial % 4 == 1) /* coarse values: ties in every objective */
                    for (j = 0; j < m; j++)
                        F[r * m + j] = floor(F[r * m + j] * 4.0) / 4.0;
            }
            {
                double got = hv(F, rows, m, ref), want = brute(F, rows, m, ref);
                CHECK(fabs(got - want) <= 1e-12 * fmax(1e-300, fabs(want)) + 1e-15,
                      "m=%zu rows=%zu: %.17g vs brute force %.17g", m, rows, got, want);
            }
        }
}

/* the 3-D sweep's contributions against the general ones (box less the others) */
static void contributions3(void)
{
    dc_rng rng;
    size_t trial;
    dc_rng_seed(&rng, 9);
    for (trial = 0; trial < 60; trial++) {
        double P[40 * 3], L[40 * 3], sx[40], sy[40], ref[3] = {1.2, 1.1, 1.3};
        unsigned char alive[40];
        size_t k = 1 + (size_t)dc_rng_below(&rng, 40), q, i;
        for (q = 0; q < k; q++) {
            double a = dc_rng_uniform(&rng), b = dc_rng_uniform(&rng);
            P[3 * q] = trial % 2 ? floor(a * 5) / 5 : a;
            P[3 * q + 1] = trial % 2 ? floor(b * 5) / 5 : b;
            P[3 * q + 2] = trial % 3 ? 1.0 - 0.5 * (a + b) : dc_rng_uniform(&rng);
            alive[q] = 1;
        }
        for (q = 1; q < k; q++) /* increasing third objective */
            for (i = q; i > 0 && P[3 * i + 2] < P[3 * (i - 1) + 2]; i--) {
                double t[3];
                memcpy(t, P + 3 * i, sizeof t);
                memcpy(P + 3 * i, P + 3 * (i - 1), sizeof t);
                memcpy(P + 3 * (i - 1), t, sizeof t);
            }
        for (i = 0; i < k; i++) {
            double want, got = dc_hv_contribution3(P, k, alive, ref, i, sx, sy);
            CHECK(dc_hv_contribution(dc_mem_default(), NULL, P, k, 3, ref, i, L, &want) == DC_OK,
                  "contribution");
            CHECK(fabs(got - want) <= 1e-12, "trial %zu point %zu: %.17g vs %.17g", trial, i,
                  got, want);
        }
    }
}

static void errors(void)
{
    double F[2] = {0, 0}, ref[2] = {1, NAN}, out;
    dc_error err;
    CHECK(dc_hypervolume(F, 1, 9, ref, NULL, &out, &err) == DC_ERR_ARGUMENT, "9 objectives");
    CHECK(dc_hypervolume(F, 1, 0, ref, NULL, &out, &err) == DC_ERR_ARGUMENT, "0 objectives");
    CHECK(dc_hypervolume(F, 1, 2, ref, NULL, &out, &err) == DC_ERR_ARGUMENT &&
              err.position == 1, "a NaN reference");
    CHECK(dc_hypervolume(F, 1, 2, NULL, NULL, &out, &err) == DC_ERR_ARGUMENT, "no reference");
}

/* dc_hypervolume_within: 600 points of 8 objectives on the simplex (none
 * dominates another; WFG takes hours) give NaN once the limit passes; a small
 * front is measured exactly within its limit */
static void within_a_time_limit(void)
{
    size_t rows = 600, m = 8, r, j;
    double *F = malloc(rows * m * sizeof(double)), ref[8], out, t;
    struct timespec ts;
    dc_error err;
    CHECK(F != NULL, "F");
    if (!F)
        return;
    for (r = 0; r < rows; r++) {
        double s = 0.0;
        for (j = 0; j < m; j++)
            s += F[r * m + j] = 0.1 + fmod((double)(r + 1) * (0.6180339887 + 0.1 * (double)j),
                                            1.0);
        for (j = 0; j < m; j++)
            F[r * m + j] /= s;
    }
    for (j = 0; j < m; j++)
        ref[j] = 1.0;
    timespec_get(&ts, TIME_UTC);
    t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    CHECK(dc_hypervolume_within(F, rows, m, ref, 0.2, NULL, &out, &err) == DC_OK, "%s",
          err.message);
    timespec_get(&ts, TIME_UTC);
    t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - t;
    CHECK(isnan(out) && t < 1.2, "gave up after %.3f s (%g)", t, out);
    CHECK(dc_hypervolume_within(F, 2, m, ref, 5.0, NULL, &out, &err) == DC_OK && !isnan(out) &&
              out > 0.0,
          "two points measured: %g", out);
    free(F);
}

/* the archive keeps only non-dominated points, at most cap after thinning,
 * and each objective's best point */
static void archive(size_t m, int rule)
{
    dc_archive a;
    dc_rng rng;
    size_t r, q, p, j;
    double best[DC_MAX_OBJECTIVES];
    dc_rng_seed(&rng, 7);
    dc_archive_init(&a, dc_mem_default(), 1, m, 20, rule);
    for (j = 0; j < m; j++)
        best[j] = INFINITY;
    for (r = 0; r < 2000; r++) {
        double f[DC_MAX_OBJECTIVES], x = (double)r, norm = 0.0;
        int taken;
        for (j = 0; j < m; j++) {
            f[j] = dc_rng_uniform(&rng);
            norm += f[j] * f[j];
        }
        for (j = 0; j < m; j++)
            f[j] /= sqrt(norm) * (1.0 + 0.1 * dc_rng_uniform(&rng));
        for (j = 0; j < m; j++)
            best[j] = fmin(best[j], f[j]);
        CHECK(dc_archive_offer(&a, &x, f, 0.0, 0.0, &taken) == DC_OK, "offer");
        if (r % 50 == 49)
            CHECK(dc_archive_thin(&a) == DC_OK && a.size <= a.cap, "thin to the cap");
    }
    for (p = 0; p < a.size; p++)
        for (q = 0; q < a.size; q++)
            CHECK(p == q || !dc_pareto_dominates(a.F + q * m, a.F + p * m, m),
                  "archive member %zu dominated by %zu", p, q);
    for (j = 0; j < m && rule == DC_THIN_HYPERVOLUME; j++) {
        int found = 0;
        for (p = 0; p < a.size; p++)
            found |= a.F[p * m + j] == best[j];
        CHECK(found, "objective %zu's best point kept", j);
    }
    dc_archive_free(&a);
}

static void constrained_archive(void)
{
    dc_archive a;
    double x = 0, f1[2] = {0, 0}, f2[2] = {1, 1}, f3[2] = {2, 0}, f4[2] = {0, 2};
    int taken;
    dc_archive_init(&a, dc_mem_default(), 1, 2, 10, DC_THIN_HYPERVOLUME);
    dc_archive_offer(&a, &x, f1, 2.0, 2.0, &taken);
    CHECK(taken && a.size == 1, "the first infeasible point enters");
    dc_archive_offer(&a, &x, f2, 1.0, 1.0, &taken);
    CHECK(taken && a.size == 1 && a.E[0] == 1.0, "less violation replaces it");
    dc_archive_offer(&a, &x, f3, 0.0, 0.0, &taken);
    dc_archive_offer(&a, &x, f4, 0.0, 0.0, &taken);
    CHECK(a.size == 2 && a.E[0] == 0.0 && a.E[1] == 0.0, "feasible points replace the rest");
    dc_archive_offer(&a, &x, f1, 0.5, 0.5, &taken);
    CHECK(!taken && a.size == 2, "an infeasible point never enters beside feasible ones");
    dc_archive_free(&a);
}

static void archives(void)
{
    size_t m;
    for (m = 2; m <= 4; m++) {
        if (m <= 3) /* the rule's default range (4 works, slowly under ASan) */
            archive(m, DC_THIN_HYPERVOLUME);
        archive(m, DC_THIN_CROWDING);
    }
}

TEST_MAIN("test_hypervolume",
          TEST(hand_cases),
          TEST(random_cases),
          TEST(errors),
          TEST(within_a_time_limit),
          TEST(contributions3),
          TEST(archives),
          TEST(constrained_archive))
