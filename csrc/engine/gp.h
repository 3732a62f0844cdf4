/*
 * gp.h -- a Gaussian process for the model-based engines (gp.c).
 *
 * Zero-mean GP on standardized targets with a Matern-5/2 ARD kernel
 *   k(x, x') = sf2 (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r),  r^2 = sum_i (x_i - x'_i)^2 / l_i^2
 * plus noise sn2 on the diagonal.  Hyperparameters theta = (log l_1..l_d, log sf2,
 * log sn2) maximize the log marginal likelihood plus a log-normal prior on the
 * lengthscales centred at sqrt2 + log(d)/2 (sd sqrt3: the dimension-scaled prior
 * of Hvarfner, Hellsten and Nardi, ICML 2024), within bounds, by a projected
 * L-BFGS with analytic gradients (O(n^3) an evaluation: Cholesky and K^{-1}).
 * Inputs should lie in about [0, 1]^d.  Not thread-safe (scratch buffers).
 */
#ifndef DC_GP_H
#define DC_GP_H

#include "common/alloc.h"
#include "common/rng.h"

typedef struct dc_gp {
    const dc_allocator *alloc;
    size_t d, cap, n;   /* dimensions, capacity (points), points in the model */
    double *X;          /* cap x d */
    double *y;          /* cap: standardized targets */
    double *L;          /* cap x cap: Cholesky factor of K + sn2 I */
    double *alpha;      /* cap: K^{-1} y */
    double *theta;      /* d + 2 */
    double *inv_l2;     /* d: 1 / l_i^2 */
    double sf2, sn2;
    double ymean, ystd; /* the standardization of the raw targets */
    double *U;          /* cap x cap scratch (L^{-T} rows, K^{-1}) */
    double *kv, *work;  /* cap; max(cap, d) */
    double *fit;        /* scratch for the fit: (d + 2) * 28 */
} dc_gp;

dc_status dc_gp_init(dc_gp *gp, const dc_allocator *alloc, size_t d, size_t cap);
void dc_gp_free(dc_gp *gp); /* safe on a zeroed gp */
/* The default hyperparameters (lengthscales at the prior's mode, sf2 1, sn2 1e-4). */
void dc_gp_default_theta(dc_gp *gp);
/* The data: n <= cap points X (n x d) and raw values y (finite), standardized here. */
void dc_gp_set_data(dc_gp *gp, const double *X, const double *y, size_t n);
/* Fit the hyperparameters: L-BFGS from the current theta, then from `restarts`
 * random starts, each with at most max_evals evaluations; the best is kept and the
 * model factored.  -1 when no factorization succeeded (then the model is unusable). */
int dc_gp_fit(dc_gp *gp, dc_rng *rng, int restarts, int max_evals);
/* dc_gp_fit with its costs split: the warm start from theta with at most max_evals
 * evaluations (0: the objective there only) on all points, each random restart with
 * at most restart_evals on the first `sub` points only (an evaluation costs O(n^3):
 * half the points, an eighth of the time), judged against the warm start on all.  The
 * best is kept and the model factored; -1 as dc_gp_fit. */
int dc_gp_fit_sub(dc_gp *gp, dc_rng *rng, int restarts, int max_evals, int restart_evals,
                  size_t sub);
/* Factor the model at the current theta (adding jitter when needed); -1 on failure. */
int dc_gp_factor(dc_gp *gp);
/* The negative log marginal likelihood of the standardized targets at the factored
 * model's theta (without the lengthscale prior). */
double dc_gp_nll(const dc_gp *gp);
/* The posterior mean and variance (standardized units) at x. */
void dc_gp_predict(dc_gp *gp, const double *x, double *mean, double *var);
/* Append x with the standardized value ys to the factored model (Kriging believer
 * when ys is the mean there).  -1 when full or not positive definite. */
int dc_gp_append(dc_gp *gp, const double *x, double ys);

/* log EI for minimization at standardized mean/variance below the incumbent
 * `best` (standardized), computed stably for large negative z. */
double dc_log_ei(double mean, double var, double best);
/* log P(value <= threshold) for a normal of that mean and variance. */
double dc_log_prob_below(double mean, double var, double threshold);

#endif
