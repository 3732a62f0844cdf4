/*
 * cmaes.c -- CMA-ES with BIPOP restarts; separable (diagonal) covariance in
 * high dimension.
 *
 * Algorithm.  The (mu/mu_w, lambda)-CMA-ES of Hansen's tutorial ("The CMA
 * Evolution Strategy: A Tutorial", 2016; update equations as in purecma.py):
 * each generation samples lambda points x_k = m + sigma * y_k, y_k ~ N(0, C)
 * (y = B D z with C = B D^2 B^T), ranks them, moves the mean to the weighted
 * recombination of the mu = lambda/2 best (positive log weights), and adapts
 * sigma by cumulative step-size adaptation (path p_s, damping d_s) and C by
 * the rank-one (path p_c, h_sigma stall) plus rank-mu update, with the
 * tutorial's negative weights for the worse half (active CMA, Jastrebski &
 * Arnold 2006; scaled by alpha_mu, alpha_mueff and alpha_posdef so that C
 * stays positive definite, as purecma's default).  The eigendecomposition
 * is lazy: every max(1, 0.5 / ((c1 + c_mu) N)) generations (purecma's gap;
 * the tutorial suggests a fifth of it), by Householder tridiagonalization
 * and implicit QL (tred2/tql2), written below and applied to contiguous
 * columns.
 * A non-positive or non-finite eigenvalue, or a condition number above 1e14,
 * ends the run (and restarts).
 *
 * Separable variant (sep-CMA-ES, Ros & Hansen 2008): C is diagonal, c1 and
 * c_mu are multiplied by (N + 2) / 3; O(N) memory and time per sample.  It is
 * used when the option diagonal = 1 or automatically above 100 free
 * dimensions (full covariance costs O(N^2) memory and O(N^3) per
 * decomposition), so the engine never holds an O(n^2) matrix for n > 100.
 *
 * Restarts (BIPOP-CMA-ES, Hansen 2009, by default; IPOP-CMA-ES, Auger &
 * Hansen 2005, with schedule = 1; BBOB results in docs/optimization.md).
 * When a run meets one of the termination tests below, a new run starts from
 * a new uniformly random mean in the unit cube (every run, the first
 * included: no privileged centre) and C = I.  IPOP: sigma = sigma0 and
 * lambda multiplied by incpopsize.  BIPOP: the regime that has spent fewer
 * evaluations runs next (the first run counts as a small one): a large run
 * as IPOP's, or a small one with lambda between the default and the last
 * large one, sigma = sigma0 10^(-2u), u uniform, and at most half the large
 * regime's evaluations (see restart()).  Small runs do not count in
 * `restarts`.  After
 * `restarts` restarts the next termination reports DC_STOP_CONVERGED; until
 * then only the budget, clock or target (the driver's) end the search.
 * lambda is capped so that the population buffers, lambda * (N + n + 4)
 * doubles, stay below 2^23, and at the budget (but at least 4).
 *
 * Bounds (the unit cube): repair and penalize, after Hansen et al. 2009 (IEEE
 * TEC, "A method for handling uncertainty...", as in pycma's BoundPenalty).
 * A point is evaluated at its projection onto [0,1]^n (so every asked point
 * is inside), but the unprojected point enters the update, ranked by
 * f(proj x) + sum_i gamma_i (x_i - proj x_i)^2 / N.  The weights start at
 * 2 * dfit, dfit the median over recent generations of the interquartile
 * range of f divided by the mean variance sigma^2 C_ii; once the mean leaves
 * the cube they are adapted per coordinate (raised while the mean is more
 * than 3 max(1, sqrt(N)/mu_eff) standard deviations outside, lowered while
 * above 5 dfit).  NaN values rank after every number (ties by index).
 *
 * Termination tests of a run (as in pycma; each leads to a restart):
 *   tolfun        best values of the last 10 + ceil(30 N / lambda) generations
 *                 and the current generation's values span less than 1e-12
 *   tolfunhist    those best values alone span less than 1e-12
 *   tolx          sigma * p_c,i and sigma * sqrt(C_ii) below 1e-12 * sigma0
 *   (a small BIPOP run also ends before it exceeds its share, above)
 *   noeffectaxis  0.1 sigma along a principal axis does not change the mean
 *   noeffectcoord 0.2 sigma sqrt(C_ii) does not change some mean coordinate
 *   conditioncov  cond(C) > 1e14 (or a non-positive eigenvalue)
 *   tolstagnation no progress in the median of the best and of the median
 *                 values over l = 100 + 100 N^1.5 / lambda generations
 *   tolupsigma    sigma / sigma0 > 1e20 * sqrt(max eig C) (divergence)
 *   flatfitness   the best and the floor(0.75 lambda)-th ranked value (from 0)
 *                 are equal for 2 generations running (pycma's tolflatfitness;
 *                 the tutorial's enlarging of sigma instead kept runs on the
 *                 plateaus of BBOB f7 until the budget ended)
 *
 * seed_point(u) (composite engines) puts the current run's mean at u.
 *
 * Options: popsize (0 = 4 + floor(3 ln N); values 1 count as 2), sigma0
 * (relative to the cube's width), restarts, incpopsize, diagonal, schedule.  Fixed
 * coordinates (lower == upper) are left out: N counts the free ones.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/eigen.h"
#include "engine/engine.h"

enum { OPT_POPSIZE, OPT_SIGMA0, OPT_RESTARTS, OPT_INCPOPSIZE, OPT_DIAGONAL, OPT_SCHEDULE,
       N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"popsize", 0, 0, 100000, 1, "initial population lambda (0 = 4 + floor(3 ln n))"},
    {"sigma0", 0.3, 1e-12, 1, 0, "initial step size, relative to the width of the bounds (0, 1]"},
    {"restarts", 9, 0, 100, 1, "restarts before reporting convergence"},
    {"incpopsize", 2, 1, 10, 0, "population growth factor at each restart"},
    {"diagonal", 0, 0, 1, 1,
     "1 = separable (diagonal) covariance; 0 = full up to 100 dimensions, diagonal above"},
    {"schedule", 0, 0, 1, 1,
     "restart schedule: 0 = BIPOP (the default: large and small populations in turn), "
     "1 = IPOP (population multiplied by incpopsize at each restart)"},
};

static const dc_engine_info info = {
    "cmaes", "CMA-ES (BIPOP)",
    "Covariance matrix adaptation evolution strategy with BIPOP restarts (runs with a "
    "doubling large population and runs with a small population and small steps in turn; "
    "IPOP as an option) and a diagonal covariance (sep-CMA-ES) above 100 dimensions.",
    "evolution strategy", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS | DC_SUPPORTS_X0};

#define TOLFUN 1e-12
#define TOLFUNHIST 1e-12
#define TOLX_FACTOR 1e-12
#define MAX_CONDITION 1e14
#define TOLUPSIGMA 1e20
#define FLAT_LIMIT 2
#define AUTO_DIAGONAL 100
#define MAX_POP_DOUBLES ((size_t)1 << 23)

/* validated options */
typedef struct settings {
    size_t popsize;
    double sigma0, incpopsize;
    int restarts, diagonal, ipop;
} settings;

/* strategy parameters of one run: functions of N and lambda only */
typedef struct strategy {
    size_t lam, mu;
    double *w; /* lambda weights: mu positive (sum 1), then negative ones */
    double wsum, mueff, cc, cs, c1, cmu, damps, chin;
    size_t eigen_gap, tolfun_len, stag_len;
} strategy;

typedef struct ranked {
    double v;
    size_t i;
} ranked;

typedef struct state {
    settings opt;
    strategy sp;
    const dc_allocator *alloc;
    dc_rng *rng;
    size_t n, N;      /* all and free coordinates */
    size_t *free_idx; /* N */
    int diag;         /* separable covariance */
    int64_t budget;
    /* dynamic state of the run */
    double sigma;
    double *m, *ps, *pc; /* N */
    double *C, *B, *D;   /* full: C (N*N), B (N*N: eigenvector k in row k) and D
                            (sqrt of the eigenvalues); diagonal: C and D = sqrt(C) */
    double *work, *e;    /* 3N, N */
    size_t gen, eigen_gen;
    int ended;           /* the run met a termination test */
    int flat;            /* consecutive flat generations */
    int restarts_done, done, asked_once;
    double run_best;     /* the best value of the run, at run_best_x (n, unit cube) */
    double *run_best_x;
    int stop_on_convergence; /* the run's option: stop once restarts agree */
    dc_restart_log log;  /* where the runs ended */
    /* BIPOP: the default and the large regime's lambda, evaluations spent by
     * each regime, the current run's, and whether it is a small one */
    size_t lam_default, lam_large;
    int64_t evals_large, evals_small, run_evals, run_cap;
    int small_run;
    /* per-lambda buffers (capacity lam_cap) */
    size_t lam_cap;
    double *Y, *U, *f, *fit, *wbuf, *zn2; /* zn2: |z_k|^2 = |C^(-1/2) y_k|^2 */
    ranked *order;
    /* histories of the run: best and median ranked values per generation */
    size_t hcap, hcount, hhead;
    double *hbest, *hmed, *hwork;
    /* boundary penalty */
    double *gamma;  /* N */
    int gamma_init;
    size_t pcap, pcount;
    double *phist;  /* recent interquartile ranges, newest first */
} state;

/* ---- helpers ---- */

static int rank_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (dc_better(x->v, y->v))
        return -1;
    if (dc_better(y->v, x->v))
        return 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the median (upper middle) of v[0..len), len > 0 (sorts v; no NaN inside) */
static double median_of(double *v, size_t len)
{
    qsort(v, len, sizeof(double), dbl_cmp);
    return v[len / 2];
}

static double clamp01(double v)
{
    if (!(v >= 0.0))
        return 0.0; /* also NaN */
    return v > 1.0 ? 1.0 : v;
}

static double *alloc_doubles(const dc_allocator *a, size_t count)
{
    return dc_mem_calloc(a, count ? count : 1, sizeof(double));
}

static void free_doubles(const dc_allocator *a, double *p, size_t count)
{
    dc_mem_free(a, p, (count ? count : 1) * sizeof(double));
}

/* history ring: index q = 0 is the newest entry */
static double hist_at(const double *h, const state *s, size_t q)
{
    return h[(s->hhead + s->hcap - q) % s->hcap];
}

/* ---- runs ---- */

static size_t cap_lambda(const state *s, size_t lam)
{
    size_t per = s->N + s->n + 4, lim = MAX_POP_DOUBLES / per;
    int64_t b = s->budget < 4 ? 4 : s->budget;
    if ((int64_t)lim > b)
        lim = (size_t)b;
    if (lim < 2)
        lim = 2;
    if (lam > lim)
        lam = lim;
    return lam < 2 ? 2 : lam;
}

static void free_lambda_buffers(state *s)
{
    size_t L = s->lam_cap;
    if (!L)
        return;
    free_doubles(s->alloc, s->Y, L * s->N);
    free_doubles(s->alloc, s->U, L * s->n);
    free_doubles(s->alloc, s->f, L);
    free_doubles(s->alloc, s->fit, L);
    free_doubles(s->alloc, s->wbuf, L);
    free_doubles(s->alloc, s->zn2, L);
    dc_mem_free(s->alloc, s->order, L * sizeof(ranked));
    s->Y = s->U = s->f = s->fit = s->wbuf = s->zn2 = NULL;
    s->order = NULL;
    s->lam_cap = 0;
}

static dc_status reserve_lambda(state *s, size_t lam)
{
    if (lam <= s->lam_cap)
        return DC_OK;
    free_lambda_buffers(s);
    s->lam_cap = lam;
    s->Y = alloc_doubles(s->alloc, lam * s->N);
    s->U = alloc_doubles(s->alloc, lam * s->n);
    s->f = alloc_doubles(s->alloc, lam);
    s->fit = alloc_doubles(s->alloc, lam);
    s->wbuf = alloc_doubles(s->alloc, lam);
    s->zn2 = alloc_doubles(s->alloc, lam);
    s->order = dc_mem_calloc(s->alloc, lam, sizeof(ranked));
    if (!s->Y || !s->U || !s->f || !s->fit || !s->wbuf || !s->zn2 || !s->order)
        return DC_ERR_NOMEM;
    return DC_OK;
}

/* the strategy parameters for N and lambda (tutorial, Table 1) */
static void set_strategy(state *s, size_t lam)
{
    strategy *p = &s->sp;
    double N = (double)s->N, sw = 0.0, sw2 = 0.0, sn = 0.0, sn2 = 0.0, gap, mueffneg, aneg;
    size_t i;
    p->lam = lam;
    p->mu = lam / 2;
    p->w = s->wbuf;
    for (i = 0; i < lam; i++) {
        double w = log(((double)lam + 1.0) / 2.0) - log((double)i + 1.0);
        p->w[i] = w;
        if (w > 0) {
            sw += w;
            sw2 += w * w;
        } else {
            sn -= w;
            sn2 += w * w;
        }
    }
    p->mueff = sw * sw / sw2;
    mueffneg = sn2 > 0 ? sn * sn / sn2 : 0.0;
    p->cc = (4.0 + p->mueff / N) / (N + 4.0 + 2.0 * p->mueff / N);
    p->cs = (p->mueff + 2.0) / (N + p->mueff + 5.0);
    p->c1 = 2.0 / ((N + 1.3) * (N + 1.3) + p->mueff);
    p->cmu = 2.0 * (p->mueff - 2.0 + 1.0 / p->mueff) / ((N + 2.0) * (N + 2.0) + p->mueff);
    if (s->diag) { /* sep-CMA-ES: faster learning of the diagonal */
        p->c1 *= (N + 2.0) / 3.0;
        p->cmu *= (N + 2.0) / 3.0;
        if (p->c1 > 0.9)
            p->c1 = 0.9;
    }
    if (p->cmu > 1.0 - p->c1)
        p->cmu = 1.0 - p->c1;
    /* weights: positive ones sum to 1; negative ones (active CMA, tutorial
     * eq. 53) sum to -min(alpha_mu, alpha_mueff, alpha_posdef) */
    aneg = fmin(1.0 + p->c1 / p->cmu, 1.0 + 2.0 * mueffneg / (p->mueff + 2.0));
    aneg = fmin(aneg, (1.0 - p->c1 - p->cmu) / (N * p->cmu));
    p->wsum = 1.0;
    for (i = 0; i < lam; i++) {
        if (p->w[i] > 0)
            p->w[i] /= sw;
        else
            p->w[i] = sn > 0 ? p->w[i] * aneg / sn : 0.0;
        if (p->w[i] < 0)
            p->wsum += p->w[i];
    }
    p->damps = 1.0 + 2.0 * fmax(0.0, sqrt((p->mueff - 1.0) / (N + 1.0)) - 1.0) + p->cs;
    p->chin = sqrt(N) * (1.0 - 1.0 / (4.0 * N) + 1.0 / (21.0 * N * N));
    gap = 0.5 / ((p->c1 + p->cmu) * N); /* purecma's lazy gap */
    p->eigen_gap = gap < 1.0 ? 1 : (size_t)gap;
    p->tolfun_len = 10 + (size_t)ceil(30.0 * N / (double)lam);
    p->stag_len = 100 + (size_t)(100.0 * pow(N, 1.5) / (double)lam);
}

static dc_status start_run(state *s, size_t lam)
{
    size_t i, N = s->N;
    dc_status st;
    if ((st = reserve_lambda(s, lam)))
        return st;
    set_strategy(s, lam);
    s->run_best = NAN;
    s->sigma = s->opt.sigma0;
    for (i = 0; i < N; i++) {
        s->m[i] = dc_rng_uniform(s->rng);
        s->ps[i] = s->pc[i] = 0.0;
        s->D[i] = 1.0;
        s->gamma[i] = 0.0;
    }
    if (s->diag) {
        for (i = 0; i < N; i++)
            s->C[i] = 1.0;
    } else {
        memset(s->C, 0, N * N * sizeof(double));
        memset(s->B, 0, N * N * sizeof(double));
        for (i = 0; i < N; i++)
            s->C[i * N + i] = s->B[i * N + i] = 1.0;
    }
    s->gen = s->eigen_gen = 0;
    s->ended = 0;
    s->flat = 0;
    s->hcount = s->hhead = 0;
    s->gamma_init = 0;
    s->pcount = 0;
    s->run_evals = 0;
    s->run_cap = 0;
    return DC_OK;
}

/* The next run after a termination.  IPOP: lambda times incpopsize.  BIPOP
 * (Hansen 2009): the regime that has spent fewer evaluations goes next (the
 * first run, of default lambda, counts as a small one); a large run
 * multiplies the large regime's lambda by incpopsize, a small run draws
 * u ~ U(0,1) and takes lambda = lam_default (lam_large / lam_default)^(u^2)
 * with lam_large the last large run's (as pycma), sigma = sigma0 10^(-2u),
 * and ends before it spends half of the large regime's evaluations (as
 * pycma's maxiter for small runs). */
static dc_status restart(state *s)
{
    size_t lam;
    if (s->small_run)
        s->evals_small += s->run_evals;
    else
        s->evals_large += s->run_evals;
    s->small_run = !s->opt.ipop && s->evals_small < s->evals_large;
    if (!s->small_run) {
        lam = (size_t)floor((double)s->lam_large * s->opt.incpopsize + 0.5);
        s->lam_large = cap_lambda(s, lam);
        return start_run(s, s->lam_large);
    }
    {
        double u = dc_rng_uniform(s->rng);
        double ratio = (double)s->lam_large / (double)s->lam_default;
        dc_status st;
        lam = (size_t)floor((double)s->lam_default * pow(ratio > 1.0 ? ratio : 1.0, u * u));
        if ((st = start_run(s, cap_lambda(s, lam))))
            return st;
        s->sigma = s->opt.sigma0 * pow(10.0, -2.0 * u);
        s->run_cap = s->evals_large / 2;
    }
    return DC_OK;
}

static dc_status init(void *sp, const dc_problem *pb, const double *params)
{
    state *s = sp;
    size_t j, N = 0, lam, hcap;
    s->alloc = pb->alloc;
    s->rng = pb->rng;
    s->n = pb->n;
    s->budget = pb->budget;
    s->opt.popsize = (size_t)params[OPT_POPSIZE];
    s->opt.sigma0 = params[OPT_SIGMA0];
    s->opt.restarts = (int)params[OPT_RESTARTS];
    s->stop_on_convergence = pb->stop_on_convergence;
    s->opt.incpopsize = params[OPT_INCPOPSIZE];
    s->opt.diagonal = params[OPT_DIAGONAL] != 0.0;
    s->opt.ipop = params[OPT_SCHEDULE] != 0.0;
    for (j = 0; j < s->n; j++)
        N += !(pb->fixed && pb->fixed[j]);
    s->N = N;
    s->diag = s->opt.diagonal || N > AUTO_DIAGONAL;
    s->free_idx = dc_mem_calloc(s->alloc, N ? N : 1, sizeof(size_t));
    if (!s->free_idx)
        return DC_ERR_NOMEM;
    for (j = 0, N = 0; j < s->n; j++)
        if (!(pb->fixed && pb->fixed[j]))
            s->free_idx[N++] = j;
    if (N == 0) { /* nothing to search: one point, then done */
        s->lam_cap = 1;
        s->U = alloc_doubles(s->alloc, s->n);
        s->f = alloc_doubles(s->alloc, 1);
        return s->U && s->f ? DC_OK : DC_ERR_NOMEM;
    }
    s->m = alloc_doubles(s->alloc, N);
    s->ps = alloc_doubles(s->alloc, N);
    s->pc = alloc_doubles(s->alloc, N);
    s->D = alloc_doubles(s->alloc, N);
    s->C = alloc_doubles(s->alloc, s->diag ? N : N * N);
    s->B = s->diag ? NULL : alloc_doubles(s->alloc, N * N);
    s->work = alloc_doubles(s->alloc, 3 * N);
    s->e = alloc_doubles(s->alloc, N);
    s->gamma = alloc_doubles(s->alloc, N);
    if (!s->m || !s->ps || !s->pc || !s->D || !s->C || (!s->diag && !s->B) || !s->work ||
        !s->e || !s->gamma)
        return DC_ERR_NOMEM;
    lam = s->opt.popsize ? s->opt.popsize : 4 + (size_t)floor(3.0 * log((double)N));
    lam = cap_lambda(s, lam);
    if (reserve_lambda(s, lam))
        return DC_ERR_NOMEM;
    /* histories sized for the first (smallest) lambda: later runs need less */
    set_strategy(s, lam);
    hcap = 2 * s->sp.stag_len + 2;
    if ((int64_t)hcap > s->budget / (int64_t)lam + 2)
        hcap = (size_t)(s->budget / (int64_t)lam + 2);
    if (hcap < s->sp.tolfun_len + 1)
        hcap = s->sp.tolfun_len + 1;
    s->hcap = hcap;
    s->pcap = 21 + 3 * N / lam;
    s->hbest = alloc_doubles(s->alloc, hcap);
    s->hmed = alloc_doubles(s->alloc, hcap);
    s->hwork = alloc_doubles(s->alloc, hcap > s->pcap ? hcap : s->pcap);
    s->phist = alloc_doubles(s->alloc, s->pcap);
    s->run_best_x = alloc_doubles(s->alloc, s->n);
    if (!s->hbest || !s->hmed || !s->hwork || !s->phist || !s->run_best_x ||
        dc_restart_log_init(&s->log, s->alloc, s->n))
        return DC_ERR_NOMEM;
    s->lam_default = s->lam_large = lam;
    /* BIPOP counts the first run (default lambda) in the small regime, as
     * pycma does: a large run comes next */
    s->small_run = !s->opt.ipop;
    return start_run(s, lam);
}

/* ---- ask ---- */

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    size_t k, i, n = s->n, N = s->N, lam;
    b->kind = DC_ASK_POINTS;
    if (N == 0) {
        for (i = 0; i < n; i++)
            s->U[i] = 0.5;
        b->U = s->U;
        b->rows = 1;
        b->f = s->f;
        s->asked_once = 1;
        return DC_OK;
    }
    lam = s->sp.lam;
    for (k = 0; k < lam; k++) {
        double *y = s->Y + k * N, *u = s->U + k * n, *z = s->work;
        double zz = 0.0;
        for (i = 0; i < N; i++) {
            z[i] = dc_rng_normal(s->rng);
            zz += z[i] * z[i];
        }
        s->zn2[k] = zz;
        if (s->diag) {
            for (i = 0; i < N; i++)
                y[i] = s->D[i] * z[i];
        } else {
            size_t q;
            for (i = 0; i < N; i++)
                y[i] = 0.0;
            for (q = 0; q < N; q++) { /* y = sum_q D_q z_q b_q */
                const double *bq = s->B + q * N;
                double a = s->D[q] * z[q];
                for (i = 0; i < N; i++)
                    y[i] += a * bq[i];
            }
        }
        for (i = 0; i < n; i++)
            u[i] = 0.5; /* fixed coordinates: the driver ignores them */
        for (i = 0; i < N; i++)
            u[s->free_idx[i]] = clamp01(s->m[i] + s->sigma * y[i]);
    }
    b->U = s->U;
    b->rows = lam;
    b->f = s->f;
    return DC_OK;
}

/* ---- tell ---- */

/* pycma's BoundPenalty.update: track the interquartile range of f per unit
 * variance; initialize and adapt the coordinate weights gamma. */
static void update_penalty(state *s)
{
    size_t N = s->N, lam = s->sp.lam, k, i, cnt = 0, l1, lo, hi;
    double *v = s->fit, meanvar = 0.0, val, dfit, damp, thr;
    int outside = 0;
    for (k = 0; k < lam; k++)
        if (isfinite(s->f[k]))
            v[cnt++] = s->f[k];
    for (i = 0; i < N; i++) {
        double var = s->sigma * s->sigma * (s->diag ? s->C[i] : s->C[i * N + i]);
        double dm = s->m[i] - clamp01(s->m[i]);
        meanvar += var;
        s->work[i] = var > 0 ? dm / sqrt(var) : 0.0;
        outside |= dm != 0.0;
    }
    meanvar /= (double)N;
    if (cnt >= 2) {
        qsort(v, cnt, sizeof(double), dbl_cmp);
        l1 = cnt + 1;
        hi = 3 * l1 / 4 < cnt ? 3 * l1 / 4 : cnt - 1;
        lo = l1 / 4;
        val = (v[hi] - v[lo]) / meanvar;
        if (isfinite(val) && val > 0) {
            size_t lim = 21 + 3 * N / lam;
            if (s->pcount < (lim < s->pcap ? lim : s->pcap))
                s->pcount++;
            memmove(s->phist + 1, s->phist, (s->pcount - 1) * sizeof(double));
            s->phist[0] = val;
        }
    }
    if (s->pcount == 0) {
        if (!s->gamma_init)
            for (i = 0; i < N; i++)
                s->gamma[i] = 1.0; /* no scale known yet: pycma's crude start */
        return;
    }
    memcpy(s->hwork, s->phist, s->pcount * sizeof(double));
    dfit = median_of(s->hwork, s->pcount);
    if (!s->gamma_init) {
        for (i = 0; i < N; i++)
            s->gamma[i] = 2.0 * dfit;
        s->gamma_init = outside;
        if (!outside)
            return;
    }
    damp = fmin(1.0, s->sp.mueff / 10.0 / (double)N);
    thr = 3.0 * fmax(1.0, sqrt((double)N) / s->sp.mueff);
    for (i = 0; i < N; i++) {
        double ed = fabs(s->work[i]) - thr;
        if (ed > 0)
            s->gamma[i] *= pow(exp(tanh(ed / 3.0) / 2.0), damp);
        if (s->gamma[i] > 5.0 * dfit)
            s->gamma[i] *= exp(-damp / 3.0);
    }
}

static void push_history(state *s, double best, double med)
{
    if (!(best == best))
        best = INFINITY;
    if (!(med == med))
        med = INFINITY;
    s->hhead = (s->hhead + 1) % s->hcap;
    s->hbest[s->hhead] = best;
    s->hmed[s->hhead] = med;
    if (s->hcount < s->hcap)
        s->hcount++;
}

/* median of history entries q in [q0, q0 + len) (newest = 0) */
static double hist_median(state *s, const double *h, size_t q0, size_t len)
{
    size_t q;
    for (q = 0; q < len; q++)
        s->hwork[q] = hist_at(h, s, q0 + q);
    return median_of(s->hwork, len);
}

/* the run's termination tests (after the update of generation s->gen) */
static int run_ended(state *s)
{
    const strategy *p = &s->sp;
    size_t N = s->N, i, q, lam = p->lam;
    double tolx = TOLX_FACTOR * s->opt.sigma0, maxd = 0.0;
    int small = 1;
    if (!isfinite(s->sigma) || s->sigma <= 0.0)
        return 1;
    /* BIPOP: a small run ends before it spends half the large regime's total */
    if (s->run_cap > 0 && s->run_evals + (int64_t)lam > s->run_cap)
        return 1;
    for (i = 0; i < N; i++) {
        if (!isfinite(s->m[i]))
            return 1;
        if (s->D[i] > maxd)
            maxd = s->D[i];
    }
    /* tolfun */
    if (s->hcount >= p->tolfun_len) {
        double lo = INFINITY, hi = -INFINITY;
        for (q = 0; q < p->tolfun_len; q++) {
            double v = hist_at(s->hbest, s, q);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
        if (hi - lo < TOLFUNHIST ||
            (hi - lo < TOLFUN && s->fit[s->order[lam - 1].i] - s->fit[s->order[0].i] < TOLFUN))
            return 1;
    }
    /* tolx */
    for (i = 0; i < N && small; i++) {
        double cii = s->diag ? s->C[i] : s->C[i * N + i];
        small = s->sigma * fabs(s->pc[i]) < tolx && s->sigma * sqrt(cii) < tolx;
    }
    if (small)
        return 1;
    /* noeffectaxis, noeffectcoord */
    {
        size_t ax = s->gen % N;
        int no_effect = 1;
        for (i = 0; i < N && no_effect; i++) {
            double step = s->diag ? (i == ax ? 0.1 * s->sigma * s->D[i] : 0.0)
                                  : 0.1 * s->sigma * s->D[ax] * s->B[ax * N + i];
            no_effect = s->m[i] == s->m[i] + step;
        }
        if (no_effect)
            return 1;
        for (i = 0; i < N; i++) {
            double cii = s->diag ? s->C[i] : s->C[i * N + i];
            if (s->m[i] == s->m[i] + 0.2 * s->sigma * sqrt(cii))
                return 1;
        }
    }
    /* tolupsigma */
    if (s->sigma / s->opt.sigma0 > TOLUPSIGMA * maxd)
        return 1;
    /* flat fitness */
    if (s->flat >= FLAT_LIMIT)
        return 1;
    /* tolstagnation: checked every l/50 generations (the medians cost O(l)) */
    {
        size_t l = p->stag_len, every = l / 50 ? l / 50 : 1;
        if (s->gen > (size_t)((double)N * (5.0 + 100.0 / (double)lam)) && s->hcount > 100 &&
            s->hcount > 2 * l && s->gen % every == 0) {
            if (hist_median(s, s->hmed, 0, l) >= hist_median(s, s->hmed, l, l) &&
                hist_median(s, s->hbest, 0, l) >= hist_median(s, s->hbest, l, l))
                return 1;
        }
    }
    return 0;
}

/* eigendecomposition of C into B, D; 0 on success, -1 when the run must end */
static int update_eigen(state *s)
{
    size_t N = s->N, i, j;
    double dmin = INFINITY, dmax = 0.0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s->B[i * N + j] = i <= j ? s->C[i * N + j] : s->C[j * N + i];
    if (dc_eigen_sym((long)N, s->B, s->D, s->e))
        return -1;
    for (i = 0; i < N; i++) {
        if (!(s->D[i] > 0.0) || !isfinite(s->D[i]))
            return -1;
        dmin = fmin(dmin, s->D[i]);
        dmax = fmax(dmax, s->D[i]);
    }
    for (i = 0; i < N; i++)
        s->D[i] = sqrt(s->D[i]);
    return dmax / dmin > MAX_CONDITION ? -1 : 0;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    const strategy *p = &s->sp;
    size_t N = s->N, lam = p->lam, mu = p->mu, k, i, j, r;
    double *yw = s->work, *zw = s->work + N, *t = s->work + 2 * N;
    double psn = 0.0, hsig, decay, sq_cs, sq_cc;
    dc_status st;
    (void)b;
    if (N == 0) {
        s->done = 1;
        return DC_OK;
    }
    s->run_evals += (int64_t)lam;
    /* rank by f(proj x) + boundary penalty of the unprojected x */
    update_penalty(s);
    for (k = 0; k < lam; k++) {
        const double *y = s->Y + k * N;
        double pen = 0.0;
        for (i = 0; i < N; i++) {
            double x = s->m[i] + s->sigma * y[i], d = x - clamp01(x);
            pen += s->gamma[i] * d * d;
        }
        s->fit[k] = s->f[k] + pen / (double)N;
        if (dc_better(s->f[k], s->run_best)) {
            s->run_best = s->f[k];
            memcpy(s->run_best_x, s->U + k * s->n, s->n * sizeof(double));
        }
        s->order[k].v = s->fit[k];
        s->order[k].i = k;
    }
    qsort(s->order, lam, sizeof(ranked), rank_cmp);
    push_history(s, s->order[0].v, s->order[lam / 2].v);

    /* mean */
    memset(yw, 0, N * sizeof(double));
    for (r = 0; r < mu; r++) {
        const double *y = s->Y + s->order[r].i * N;
        for (i = 0; i < N; i++)
            yw[i] += p->w[r] * y[i];
    }
    for (i = 0; i < N; i++)
        s->m[i] += s->sigma * yw[i];
    /* zw = C^(-1/2) yw */
    if (s->diag) {
        for (i = 0; i < N; i++)
            zw[i] = yw[i] / s->D[i];
    } else {
        for (i = 0; i < N; i++)
            zw[i] = 0.0;
        for (j = 0; j < N; j++) { /* zw = sum_j (b_j . yw / D_j) b_j */
            const double *bj = s->B + j * N;
            double acc = 0.0;
            for (i = 0; i < N; i++)
                acc += bj[i] * yw[i];
            acc /= s->D[j];
            for (i = 0; i < N; i++)
                zw[i] += acc * bj[i];
        }
    }
    /* evolution paths */
    sq_cs = sqrt(p->cs * (2.0 - p->cs) * p->mueff);
    for (i = 0; i < N; i++) {
        s->ps[i] = (1.0 - p->cs) * s->ps[i] + sq_cs * zw[i];
        psn += s->ps[i] * s->ps[i];
    }
    s->gen++;
    hsig = psn / (double)N / (1.0 - pow(1.0 - p->cs, 2.0 * (double)s->gen)) <
                   2.0 + 4.0 / ((double)N + 1.0)
               ? 1.0
               : 0.0;
    sq_cc = hsig * sqrt(p->cc * (2.0 - p->cc) * p->mueff);
    for (i = 0; i < N; i++)
        s->pc[i] = (1.0 - p->cc) * s->pc[i] + sq_cc * yw[i];
    /* covariance: rank-one + rank-mu with active (negative) weights; a
     * negative weight is rescaled by N / |C^(-1/2) y|^2 (tutorial eq. 46) */
    decay = 1.0 + p->c1 * (1.0 - hsig) * p->cc * (2.0 - p->cc) - p->c1 - p->cmu * p->wsum;
    if (s->diag) {
        for (i = 0; i < N; i++)
            t[i] = 0.0;
        for (r = 0; r < lam; r++) {
            const double *y = s->Y + s->order[r].i * N;
            double wr = p->w[r];
            if (wr == 0.0)
                continue;
            if (wr < 0.0)
                wr *= (double)N / fmax(s->zn2[s->order[r].i], 1e-300);
            for (i = 0; i < N; i++)
                t[i] += wr * y[i] * y[i];
        }
        for (i = 0; i < N; i++) {
            s->C[i] = decay * s->C[i] + p->c1 * s->pc[i] * s->pc[i] + p->cmu * t[i];
            s->D[i] = sqrt(s->C[i]);
        }
    } else {
        for (i = 0; i < N; i++)
            for (j = i; j < N; j++)
                s->C[i * N + j] = decay * s->C[i * N + j] + p->c1 * s->pc[i] * s->pc[j];
        for (r = 0; r < lam; r++) {
            const double *y = s->Y + s->order[r].i * N;
            double wr = p->w[r];
            if (wr == 0.0)
                continue;
            if (wr < 0.0)
                wr *= (double)N / fmax(s->zn2[s->order[r].i], 1e-300);
            wr *= p->cmu;
            for (i = 0; i < N; i++) {
                double ai = wr * y[i];
                double *row = s->C + i * N;
                for (j = i; j < N; j++)
                    row[j] += ai * y[j];
            }
        }
        for (i = 0; i < N; i++)
            for (j = 0; j < i; j++)
                s->C[i * N + j] = s->C[j * N + i];
    }
    /* step size (CSA), exponent capped at 1 as in pycma */
    s->sigma *= exp(fmin(1.0, (p->cs / p->damps) * (sqrt(psn) / p->chin - 1.0)));
    /* flat fitness (pycma's tolflatfitness): count generations whose best
     * ranked value equals the floor(0.75 lambda)-th */
    {
        size_t q = (size_t)(0.75 * (double)lam);
        double a = s->order[0].v, z = s->order[q < lam ? q : lam - 1].v;
        if (a == z || (a != a && z != z))
            s->flat++;
        else
            s->flat = 0;
    }
    /* lazy eigendecomposition */
    if (s->diag) {
        double dmin = INFINITY, dmax = 0.0;
        for (i = 0; i < N; i++) {
            if (!(s->C[i] > 0.0) || !isfinite(s->C[i]))
                s->ended = 1;
            dmin = fmin(dmin, s->C[i]);
            dmax = fmax(dmax, s->C[i]);
        }
        if (!s->ended && dmax / dmin > MAX_CONDITION)
            s->ended = 1;
    } else if (s->gen - s->eigen_gen >= p->eigen_gap) {
        s->eigen_gen = s->gen;
        if (update_eigen(s))
            s->ended = 1;
    }
    if (!s->ended)
        s->ended = run_ended(s);
    if (s->ended) {
        int agreed =
            dc_restart_log_end(&s->log, s->run_best, s->run_best_x) && s->stop_on_convergence;
        if (agreed || s->restarts_done >= s->opt.restarts) {
            s->done = 1;
            return DC_OK;
        }
        s->restarts_done++;
        if ((st = restart(s)))
            return st;
        if (s->small_run)
            s->restarts_done--; /* BIPOP: only large runs count as restarts */
        return DC_OK;
    }
    return DC_OK;
}

static dc_stop stop(const void *sp)
{
    const state *s = sp;
    return s->done ? DC_STOP_CONVERGED : DC_STOP_NONE;
}

static void release(void *sp)
{
    state *s = sp;
    size_t N = s->N;
    const dc_allocator *a = s->alloc;
    if (!a)
        return;
    if (N == 0) {
        free_doubles(a, s->U, s->n);
        free_doubles(a, s->f, 1);
    } else {
        free_lambda_buffers(s);
    }
    dc_mem_free(a, s->free_idx, (N ? N : 1) * sizeof(size_t));
    free_doubles(a, s->m, N);
    free_doubles(a, s->ps, N);
    free_doubles(a, s->pc, N);
    free_doubles(a, s->D, N);
    free_doubles(a, s->C, s->diag ? N : N * N);
    free_doubles(a, s->B, N * N);
    free_doubles(a, s->work, 3 * N);
    free_doubles(a, s->e, N);
    free_doubles(a, s->gamma, N);
    free_doubles(a, s->hbest, s->hcap);
    free_doubles(a, s->hmed, s->hcap);
    free_doubles(a, s->hwork, s->hcap > s->pcap ? s->hcap : s->pcap);
    free_doubles(a, s->phist, s->pcap);
    free_doubles(a, s->run_best_x, s->n);
    dc_restart_log_free(&s->log);
}

/* a start point (composite engines): the mean of the current run */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t i;
    for (i = 0; i < s->N; i++)
        s->m[i] = clamp01(u[s->free_idx[i]]);
    return DC_OK;
}

const dc_engine_vt dc_eng_cmaes = {&info, sizeof(state), init,    ask,
                                   tell,  stop,          release, seed_point};
