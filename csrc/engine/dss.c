/*
 * dss.c -- Decompose-Sample-Search, the default engine.
 *
 * DSS reads the objective's structure instead of treating it as a black box.
 *
 * Separable objectives (dss_separable.c; f = c + sum_j g_j(x_j), reported by the compiler's
 * structure analysis, never guessed from the text) are solved coordinate by
 * coordinate, all coordinates at once, through DC_ASK_TERMS batches (n term
 * evaluations count as one evaluation):
 *   1. Sample: a dense grid of K points over each coordinate's interval.
 *      When every g_j is the same function on the same interval (identical
 *      terms), one batch row carries n different candidates, so the whole
 *      grid costs ceil(K / n) evaluations and the 1-D problem is solved once
 *      for every coordinate.  Otherwise row k puts the k-th grid point in
 *      every coordinate (K evaluations).
 *   2. Search: the B best local minima of each coordinate's grid are
 *      bracketed by their grid neighbours and refined by golden-section
 *      search, every bracket of every coordinate advancing by one point per
 *      round (B rows a round, or ceil(B / n) for identical terms), until the
 *      brackets are below 1e-15 of the interval.
 *   3. The best refined value of each coordinate is assembled into x and
 *      confirmed by one full evaluation; the run has converged.
 * The plan is sized to the budget; too small a budget falls back to the
 * hybrid below.
 *
 * Any other objective (chained, grouped, general, or a Python callable) gets
 * a robust global hybrid: a population search (BIPOP-CMA-ES, else L-SHADE,
 * else random search, whichever the registry has) in rounds, with the best
 * point polished by projected L-BFGS (exact AD gradients for expressions)
 * from the centre first and after each global round, until the budget ends.
 * The sub-engines run unchanged through this engine's ask/tell.  With
 * constraints a polish solves augmented-Lagrangian subproblems one after
 * another (tell_confirm), and with equalities each round also polishes from
 * random points.  Integer and discrete coordinates get a neighbourhood search
 * around the best point after each round (ask_neighbours).
 *
 * Options: grid (K, 0 = automatic), basins (B), global_share (fraction of
 * each round given to the population search).
 */
#include <math.h>
#include <string.h>

#include "engine/dss_separable.h"
#include "engine/engine.h"

enum { OPT_GRID, OPT_BASINS, OPT_GLOBAL_SHARE, OPT_NEIGHBOURS, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"grid", 0, 0, 1 << 20, 1,
     "1-D grid points per coordinate for separable objectives (0 = automatic: 4096 for "
     "identical terms, 512 otherwise, reduced to fit the budget)"},
    {"basins", 3, 1, 64, 1, "best grid minima refined per coordinate"},
    {"global_share", 0.8, 0.05, 0.99, 0,
     "share of each hybrid round given to the population search (the rest polishes)"},
    {"neighbours", 1, 0, 1, 1,
     "1 = search the neighbouring values of integer and discrete coordinates (one and two "
     "at a time) around the best point after each population round, when every coordinate "
     "is integer or discrete; 0 = off"},
};

static const dc_engine_info info = {
    "dss", "Decompose-Sample-Search",
    "Reads the objective's structure: separable objectives are solved coordinate by "
    "coordinate (dense 1-D sampling and golden-section refinement, identical coordinates "
    "solved once); anything else gets a population search with restarts polished by "
    "L-BFGS on exact gradients.",
    "structure-aware hybrid", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS | DC_SUPPORTS_X0};

enum { PH_GRID, PH_REFINE, PH_CONFIRM, PH_DONE, PH_POLISH, PH_GLOBAL, PH_NEIGHBOURS };

#define RANDOM_POLISH_MIN 20 /* (n + 1) evaluations left in the round for one more */
#define ALM_ROUNDS 20 /* constrained polish: augmented Lagrangian subproblems a round */
#define PAIRS_MAX_DISCRETE 16 /* pairs of moves up to this many integer/discrete coordinates */
#define MOVES_MAX_DIMS 100    /* mixed problems: nelder_mead's limit */

typedef struct sub {
    const dc_engine_vt *vt;
    void *state;
    double *params;
    int live;
} sub;

typedef struct state {
    size_t n;
    const dc_problem *pbp;
    dc_problem pb;    /* copy handed to sub-engines (budget adjusted) */
    const dc_allocator *alloc;
    int phase;
    dc_dss_sep sep;   /* separable objectives (dss_separable.c) */
    size_t rows_cap;  /* the hybrid's batch buffers */
    double *U, *f, *G;
    /* hybrid */
    double share;
    sub global, polish;
    sub global2;      /* constrained problems: a second population engine */
    sub *cur;         /* the population engine of this round */
    int64_t spent, round_budget, round_spent;
    int polished_centre;
    int final;        /* the global search converged: polish once more, then done */
    double best_f;
    double *best_u;
    int have_best;
    double *seed_u;   /* a start point given by seed_point, or NULL */
    /* integer and discrete coordinates: the neighbourhood search (nb_*) */
    size_t *disc, nd;  /* the coordinates (not fixed), nd of them */
    double *inc_u, inc_f; /* the incumbent and its value (a points batch) */
    int inc_have;
    double *done_u;    /* the incumbent where the last search ended */
    int have_done;
    size_t move, n_moves; /* next move; moves in the neighbourhood */
    double *cand;      /* a row per move (every coordinate integer or discrete), else one */
    int nb_moved;      /* the incumbent moved in this search */
    int nb_complete;   /* no move improved (not cut short by the budget) */
    double *nb_start_u, nb_start_f; /* the incumbent the last search started from */
    int nb_have_start;
    int mixed;         /* real coordinates too: searched again around each move */
    int nb_stage;      /* mixed: 0 next move, 2 its point as it is, 3 then 1 searching
                          around it */
    unsigned char *move_fixed; /* mixed: fixed, integer and discrete coordinates */
    double *mv_u, mv_f; /* mixed: the best point of the move's search by value */
    int mv_have;
    int64_t mv_spent, mv_budget;
    int global_rounds; /* population rounds started */
    /* constrained polish: subproblems of the augmented Lagrangian (the driver
     * updates the multipliers when a points batch follows gradient batches) */
    double *pol_u, pol_L, pol_prev; /* the subproblem's best point, its merit; last value */
    int pol_have, alm_round, confirming;
    int random_polished; /* this round's polish from a random point was done */
} state;

/* ---- buffers ---- */

static dc_status reserve_rows(state *s, size_t rows)
{
    size_t n = s->n;
    if (rows <= s->rows_cap)
        return DC_OK;
    dc_mem_free(s->alloc, s->U, s->rows_cap * n * sizeof(double));
    dc_mem_free(s->alloc, s->G, s->rows_cap * n * sizeof(double));
    dc_mem_free(s->alloc, s->f, s->rows_cap * sizeof(double));
    s->U = dc_mem_alloc(s->alloc, rows * n * sizeof(double));
    s->G = dc_mem_alloc(s->alloc, rows * n * sizeof(double));
    s->f = dc_mem_alloc(s->alloc, rows * sizeof(double));
    s->rows_cap = rows;
    if (!s->U || !s->G || !s->f) {
        s->rows_cap = 0;
        return DC_ERR_NOMEM;
    }
    return DC_OK;
}

static void release_rows(state *s)
{
    dc_mem_free(s->alloc, s->U, s->rows_cap * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->G, s->rows_cap * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->f, s->rows_cap * sizeof(double));
    s->U = s->G = s->f = NULL;
    s->rows_cap = 0;
}


/* ---- hybrid: sub-engines ---- */

static void sub_release(state *s, sub *e)
{
    if (e->live && e->vt->release)
        e->vt->release(e->state);
    if (e->vt) {
        dc_mem_free(s->alloc, e->state, e->vt->state_size);
        dc_mem_free(s->alloc, e->params, (e->vt->info->n_options + 1) * sizeof(double));
    }
    e->state = NULL;
    e->params = NULL;
    e->live = 0;
}

static dc_status sub_start(state *s, sub *e, const char *id, int64_t budget, const double *u0)
{
    size_t k;
    dc_status st;
    sub_release(s, e);
    e->vt = dc_engine_find(id);
    if (!e->vt)
        return DC_OK;
    e->state = dc_mem_calloc(s->alloc, 1, e->vt->state_size);
    e->params = dc_mem_calloc(s->alloc, e->vt->info->n_options + 1, sizeof(double));
    if (!e->state || !e->params)
        return DC_ERR_NOMEM;
    for (k = 0; k < e->vt->info->n_options; k++)
        e->params[k] = e->vt->info->options[k].default_value;
    s->pb.budget = budget > 1 ? budget : 1;
    e->live = 1;
    if ((st = e->vt->init(e->state, &s->pb, e->params)))
        return st;
    if (u0 && e->vt->seed_point)
        return e->vt->seed_point(e->state, u0);
    return DC_OK;
}

static int64_t batch_cost(const state *s, const dc_batch *b)
{
    if (b->kind == DC_ASK_GRADIENT && !s->pbp->exact_gradient)
        return (int64_t)b->rows * (int64_t)(2 * s->n + 1);
    return (int64_t)b->rows;
}

static int better_incumbent(state *s, const double *u, double f);

static void note_best(state *s, const dc_batch *b)
{
    size_t r;
    if (b->kind == DC_ASK_TERMS)
        return;
    for (r = 0; r < b->rows; r++) {
        if (!s->have_best || dc_better(b->f[r], s->best_f)) {
            s->best_f = b->f[r];
            memcpy(s->best_u, b->U + r * s->n, s->n * sizeof(double));
            s->have_best = 1;
        }
        /* the neighbourhood's incumbent: values of points, and of gradient
         * batches without constraints (with them, a polish's values are its
         * merit function: its best point is evaluated when it ends) */
        if (s->nd && s->phase != PH_NEIGHBOURS &&
            (b->kind == DC_ASK_POINTS || !s->pbp->constrained))
            better_incumbent(s, b->U + r * s->n, b->f[r]);
    }
}

static int can_polish(const state *s)
{
    return dc_engine_find("lbfgsb") != NULL && dc_engine_find("lbfgsb")->seed_point != NULL &&
           (s->pbp->exact_gradient || s->n <= 30);
}

/* The population engine: CMA-ES, else L-SHADE, PSO or random search; on
 * constrained problems the second one (global2) is the next of that list, and
 * the two take turns (they fail on different problems:
 * benchmarks/constrained.py). */
static const char *global_id(int second)
{
    static const char *const order[] = {"cmaes", "de", "pso", "random"};
    size_t k;
    for (k = 0; k < 4; k++)
        if (dc_engine_find(order[k]) && !second--)
            return order[k];
    return "random";
}

/* ---- hybrid: integer and discrete neighbourhood ---- */

/* The cell of coordinate j of u. */
static double cell_of(const state *s, const double *u, size_t j)
{
    double L = s->pbp->levels[j], c = floor(u[j] * L);
    return c < 0.0 ? 0.0 : c > L - 1.0 ? L - 1.0 : c;
}

/* Move t of the neighbourhood applied to base into out: one coordinate a
 * cell up or down (t < 2 nd), then pairs of coordinates each a cell up or
 * down; 0 when it leaves the range. */
static int apply_move(const state *s, const double *base, size_t t, double *out)
{
    size_t q[2], k, cnt;
    int dir[2];
    memcpy(out, base, s->n * sizeof(double));
    if (t < 2 * s->nd) {
        q[0] = t / 2;
        dir[0] = t % 2 ? 1 : -1;
        cnt = 1;
    } else {
        size_t p = (t - 2 * s->nd) / 4, a = 0, b;
        dir[0] = (t - 2 * s->nd) % 2 ? 1 : -1;
        dir[1] = ((t - 2 * s->nd) / 2) % 2 ? 1 : -1;
        while (p >= s->nd - 1 - a) { /* pair p of (a, b), a < b, in order */
            p -= s->nd - 1 - a;
            a++;
        }
        b = a + 1 + p;
        q[0] = a;
        q[1] = b;
        cnt = 2;
    }
    for (k = 0; k < cnt; k++) {
        size_t j = s->disc[q[k]];
        double c = cell_of(s, base, j) + dir[k];
        if (c < 0.0 || c > s->pbp->levels[j] - 1.0)
            return 0;
        out[j] = (c + 0.5) / s->pbp->levels[j];
    }
    return 1;
}

/* 1 when the incumbent's integer and discrete cells are those where the last
 * search ended (nothing new to search around). */
static int searched(const state *s)
{
    size_t q;
    if (!s->have_done)
        return 0;
    for (q = 0; q < s->nd; q++)
        if (cell_of(s, s->inc_u, s->disc[q]) != cell_of(s, s->done_u, s->disc[q]))
            return 0;
    return 1;
}

static int better_incumbent(state *s, const double *u, double f)
{
    if (s->inc_have && !dc_better(f, s->inc_f))
        return 0;
    memcpy(s->inc_u, u, s->n * sizeof(double));
    s->inc_f = f;
    s->inc_have = 1;
    return 1;
}

/* The search ended (no move improves, or its budget is spent: then it is not
 * marked searched, and runs again next time). */
static void neighbours_done(state *s)
{
    if (s->nb_complete) {
        memcpy(s->done_u, s->inc_u, s->n * sizeof(double));
        s->have_done = 1;
    }
    memcpy(s->best_u, s->inc_u, s->n * sizeof(double)); /* the next polish starts there */
    sub_release(s, &s->polish);
}

/* Mixed problems: the moves one at a time; around each, Nelder-Mead searches
 * the real coordinates again (the integer and discrete ones held: fixed for
 * it, and set to the move's values in every row it asks) within mv_budget,
 * ranked by the feasibility rules; the first move whose best value improves
 * on the incumbent is taken and the moves start again around it. */
static dc_status ask_moves(state *s, dc_batch *b)
{
    dc_status st;
    size_t r, q;
    for (;;) {
        if (s->nb_stage == 0) {
            while (s->move < s->n_moves && !apply_move(s, s->inc_u, s->move, s->cand))
                s->move++;
            if (s->move >= s->n_moves) {
                s->nb_complete = 1; /* no move improves: the search ends */
                return DC_OK;
            }
            s->mv_have = 0;
            s->nb_stage = 2; /* first the moved point as it is */
            b->kind = DC_ASK_POINTS;
            b->U = s->cand;
            b->rows = 1;
            b->f = s->f;
            return DC_OK;
        }
        if (s->nb_stage == 3) { /* it did not improve: search the real coordinates */
            s->mv_budget = 50 * (int64_t)(s->n - s->nd + 1);
            s->mv_spent = 0;
            s->nb_stage = 1;
            s->pb.fixed = s->move_fixed; /* the search sees the real coordinates only */
            st = sub_start(s, &s->polish, "nelder_mead", s->mv_budget, s->cand);
            s->pb.fixed = s->pbp->fixed;
            if (st)
                return st;
        }
        if (s->polish.live && s->mv_spent < s->mv_budget &&
            !s->polish.vt->stop(s->polish.state)) {
            if ((st = s->polish.vt->ask(s->polish.state, b)))
                return st;
            if (b->rows) { /* the move's integer and discrete values in every row */
                if ((st = reserve_rows(s, b->rows)))
                    return st;
                memcpy(s->U, b->U, b->rows * s->n * sizeof(double));
                for (r = 0; r < b->rows; r++)
                    for (q = 0; q < s->nd; q++)
                        s->U[r * s->n + s->disc[q]] = s->cand[s->disc[q]];
                b->U = s->U;
                return DC_OK;
            }
        }
        /* the move's search ended: the first move that improves is taken */
        sub_release(s, &s->polish);
        s->nb_stage = 0;
        if (s->mv_have && better_incumbent(s, s->mv_u, s->mv_f)) {
            s->nb_moved = 1;
            s->move = 0;
        } else {
            s->move++;
        }
    }
}

static dc_status tell_moves(state *s, const dc_batch *b)
{
    size_t r;
    if (s->nb_stage == 2) { /* the moved point as it is */
        if (better_incumbent(s, b->U, b->f[0])) {
            s->nb_moved = 1;
            s->move = 0;
            s->nb_stage = 0;
        } else {
            s->nb_stage = 3;
        }
        return DC_OK;
    }
    s->mv_spent += (int64_t)b->rows;
    for (r = 0; r < b->rows; r++)
        if (!s->mv_have || dc_better(b->f[r], s->mv_f)) {
            memcpy(s->mv_u, b->U + r * s->n, s->n * sizeof(double));
            s->mv_f = b->f[r];
            s->mv_have = 1;
        }
    return s->polish.live ? s->polish.vt->tell(s->polish.state, b) : DC_OK;
}

/* The next batch of the neighbourhood search: every move at once (the best
 * one that improves is taken); rows = 0 when the search has ended. */
static dc_status ask_neighbours(state *s, dc_batch *b)
{
    size_t t, rows = 0;
    int64_t left = s->round_budget - s->round_spent;
    b->rows = 0;
    if (left < 1 || (!s->nb_moved && searched(s)))
        return DC_OK;
    if (s->mixed)
        return ask_moves(s, b);
    for (t = 0; t < s->n_moves && (int64_t)rows < left; t++)
        if (apply_move(s, s->inc_u, t, s->cand + rows * s->n))
            rows++;
    b->kind = DC_ASK_POINTS;
    b->U = s->cand;
    b->rows = rows;
    b->f = s->f; /* rows_cap >= n_moves (init) */
    return DC_OK;
}

static dc_status tell_neighbours(state *s, const dc_batch *b)
{
    size_t r, best = 0;
    if (s->mixed)
        return tell_moves(s, b);
    for (r = 1; r < b->rows; r++)
        if (dc_better(b->f[r], b->f[best]))
            best = r;
    if (b->rows && better_incumbent(s, b->U + best * s->n, b->f[best])) {
        s->nb_moved = 1;
    } else {
        s->nb_complete = 1; /* a local optimum: the search ends */
        s->round_spent = s->round_budget;
    }
    return DC_OK;
}

/* A uniform point of the cube (the run's generator). */
static void random_point(state *s, double *u)
{
    size_t j;
    for (j = 0; j < s->n; j++)
        u[j] = dc_rng_uniform(s->pbp->rng);
}

/* Start the next hybrid round: polish after a global round (and first of
 * all from the centre), a global round after a polish. */
static dc_status next_round(state *s)
{
    int64_t left = s->pbp->budget - s->spent;
    int prev = s->phase, idle = prev == PH_NEIGHBOURS && !s->nb_moved;
    if (left < 1)
        left = 1;
    if (prev == PH_POLISH && s->pbp->constrained && s->pbp->equalities && s->global_rounds &&
        !s->random_polished && !s->final) {
        /* equality constraints: a second polish from a uniform random point
         * (the population rounds hardly reach a thin feasible set; local
         * solves from new points find its other basins) */
        s->random_polished = 1;
        random_point(s, s->pol_u);
        s->round_spent = 0;
        s->round_budget = left / 5 > 0 ? left / 5 : left;
        s->pol_have = 0;
        s->alm_round = 0;
        return sub_start(s, &s->polish, "lbfgsb", s->round_budget, s->pol_u);
    }
    if (s->nd && s->have_best && s->global_rounds &&
        (prev == PH_POLISH || (prev == PH_GLOBAL && !can_polish(s)))) {
        /* integer and discrete coordinates: search around the best point */
        s->phase = PH_NEIGHBOURS;
        s->round_spent = 0;
        s->round_budget = left / 4 > 0 ? left / 4 : left;
        if (!s->nb_have_start || s->inc_f != s->nb_start_f ||
            memcmp(s->inc_u, s->nb_start_u, s->n * sizeof(double)) != 0)
            s->move = 0; /* a new incumbent: its moves from the first; else go on */
        memcpy(s->nb_start_u, s->inc_u, s->n * sizeof(double));
        s->nb_start_f = s->inc_f;
        s->nb_have_start = 1;
        s->nb_moved = 0;
        s->nb_complete = 0;
        s->nb_stage = 0;
        return DC_OK;
    }
    if (s->final && (prev == PH_POLISH || idle || !can_polish(s) || !s->have_best)) {
        s->phase = PH_DONE; /* converged: the global search's last best is polished */
        return DC_OK;
    }
    s->round_spent = 0;
    if (prev != PH_POLISH && !idle && can_polish(s) && (s->have_best || !s->polished_centre)) {
        /* a fifth of what is left; the first polish (from the centre) of an
         * unconstrained problem a twentieth: on black-box multimodal problems
         * (finite differences) a longer one only takes from the population
         * search (BBOB: docs/optimization.md) */
        int64_t part = 5;
        if (!s->polished_centre) {
            size_t j;
            for (j = 0; j < s->n; j++)
                s->best_u[j] = 0.5;
            s->polished_centre = 1;
            if (!s->pbp->constrained)
                part = 20;
        }
        s->phase = PH_POLISH;
        s->pol_have = 0;
        s->alm_round = 0;
        s->round_budget = left / part > 0 ? left / part : left;
        return sub_start(s, &s->polish, "lbfgsb", s->round_budget, s->best_u);
    }
    sub_release(s, &s->polish);
    s->phase = PH_GLOBAL;
    s->global_rounds++;
    s->random_polished = 0;
    s->round_budget = (int64_t)(s->share * (double)left);
    if (s->pbp->constrained) { /* two engines in turn, each half a round */
        int second = s->cur == &s->global;
        s->cur = second ? &s->global2 : &s->global;
        s->round_budget = s->round_budget / 2 > 0 ? s->round_budget / 2 : left;
        if (!s->cur->live)
            return sub_start(s, s->cur, global_id(second),
                             (int64_t)(0.5 * s->share * (double)s->pbp->budget), s->seed_u);
        return DC_OK;
    }
    s->cur = &s->global;
    if (s->round_budget < 1)
        s->round_budget = left;
    if (!s->global.live) /* the population engine keeps its state across rounds */
        return sub_start(s, &s->global, global_id(0),
                         (int64_t)(s->share * (double)s->pbp->budget), s->seed_u);
    return DC_OK;
}

/* ---- vtable ---- */

static dc_status init(void *sp, const dc_problem *pb, const double *params)
{
    state *s = sp;
    dc_status st;
    int planned;
    s->n = pb->n;
    s->pbp = pb;
    s->pb = *pb;
    s->alloc = pb->alloc;
    s->share = params[OPT_GLOBAL_SHARE];
    s->best_u = dc_mem_alloc(s->alloc, s->n * sizeof(double));
    if (!s->best_u)
        return DC_ERR_NOMEM;
    if ((st = dc_dss_sep_init(&s->sep, pb, (size_t)params[OPT_BASINS], params[OPT_GRID],
                              s->alloc, &planned)))
        return st;
    if (planned) {
        s->phase = PH_GRID;
        return DC_OK;
    }
    if (pb->levels && params[OPT_NEIGHBOURS] != 0.0) {
        /* every coordinate integer or discrete (with real ones too, a move
         * would need the real ones re-solved: not searched) */
        size_t j;
        s->disc = dc_mem_alloc(s->alloc, s->n * sizeof(size_t));
        if (!s->disc)
            return DC_ERR_NOMEM;
        for (j = 0; j < s->n; j++) {
            if (pb->levels[j] > 1.0)
                s->disc[s->nd++] = j;
            else if (pb->levels[j] == 0.0 && !(pb->fixed && pb->fixed[j]))
                s->mixed = 1;
        }
        if (s->mixed && (!dc_engine_find("nelder_mead") || s->n > MOVES_MAX_DIMS))
            s->nd = 0; /* mixed, and no local search for the moves: no neighbourhood */
    }
    if (s->nd) {
        size_t j;
        s->n_moves = 2 * s->nd;
        if (s->nd >= 2 && s->nd <= PAIRS_MAX_DISCRETE)
            s->n_moves += 2 * s->nd * (s->nd - 1); /* 4 per pair */
        s->inc_u = dc_mem_alloc(s->alloc, s->n * sizeof(double));
        s->done_u = dc_mem_alloc(s->alloc, s->n * sizeof(double));
        s->cand = dc_mem_alloc(s->alloc, s->n_moves * s->n * sizeof(double));
        s->mv_u = dc_mem_alloc(s->alloc, s->n * sizeof(double));
        s->move_fixed = dc_mem_alloc(s->alloc, s->n);
        s->nb_start_u = dc_mem_alloc(s->alloc, s->n * sizeof(double));
        if (!s->inc_u || !s->done_u || !s->cand || !s->mv_u || !s->move_fixed || !s->nb_start_u ||
            reserve_rows(s, s->n_moves))
            return DC_ERR_NOMEM;
        for (j = 0; j < s->n; j++)
            s->move_fixed[j] = (pb->fixed && pb->fixed[j]) || pb->levels[j] > 0.0;
    }
    if (pb->constrained) {
        s->pol_u = dc_mem_alloc(s->alloc, s->n * sizeof(double));
        if (!s->pol_u || reserve_rows(s, 1))
            return DC_ERR_NOMEM;
    }
    s->phase = -1;
    return next_round(s);
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    dc_status st;
    switch (s->phase) {
    case PH_GRID:
        dc_dss_sep_ask_grid(&s->sep, b);
        return DC_OK;
    case PH_REFINE:
        dc_dss_sep_ask_refine(&s->sep, b);
        return DC_OK;
    case PH_CONFIRM:
        dc_dss_sep_ask_confirm(&s->sep, b);
        return DC_OK;
    case PH_DONE:
        b->rows = 0;
        return DC_OK;
    default:
        break;
    }
    /* hybrid: hand over to the current sub-engine; when its round's budget
     * is spent or it has converged, start the next round */
    {
        int tries;
        for (tries = 0; tries < 8; tries++) {
            sub *e = s->phase == PH_POLISH ? &s->polish : s->cur;
            if (s->phase == PH_NEIGHBOURS) {
                if ((st = ask_neighbours(s, b)))
                    return st;
                if (b->rows)
                    return DC_OK;
                neighbours_done(s);
                if ((st = next_round(s)))
                    return st;
                if (s->phase == PH_DONE)
                    break;
                continue;
            }
            if (e->live && s->round_spent < s->round_budget && !e->vt->stop(e->state)) {
                if ((st = e->vt->ask(e->state, b)))
                    return st;
                if (b->rows)
                    return DC_OK;
            }
            if (e == &s->polish && e->live && s->pol_have && s->pbp->constrained &&
                ((s->round_spent < s->round_budget && s->alm_round < ALM_ROUNDS) || s->nd)) {
                /* a subproblem converged: its point's value (new multipliers),
                 * then the next subproblem from there (tell); with integer or
                 * discrete coordinates also when the round's budget ended, for
                 * the neighbourhood's incumbent */
                sub_release(s, e);
                s->confirming = 1;
                b->kind = DC_ASK_POINTS;
                b->U = s->pol_u;
                b->rows = 1;
                b->f = s->f;
                return DC_OK;
            }
            if (e != &s->polish && e->live && e->vt->stop(e->state)) {
                /* done for good: a fresh one next round, or (its restarts
                 * agree and the run stops on convergence) a last polish */
                s->final = s->pb.stop_on_convergence;
                sub_release(s, e);
            }
            if ((st = next_round(s)))
                return st;
            if (s->phase == PH_DONE)
                break;
        }
        b->rows = 0; /* nothing left to try */
        return DC_OK;
    }
}

/* The value of a converged subproblem's point: the polish ends when it did not
 * improve on the last one, else the next subproblem starts there with the
 * round's budget left. */
static dc_status tell_confirm(state *s, const dc_batch *b)
{
    double f = b->f[0];
    int same = s->alm_round > 0 && !dc_better(f, s->pol_prev - 1e-9 * (1.0 + fabs(f)));
    s->confirming = 0;
    s->pol_prev = f;
    s->alm_round++;
    s->pol_have = 0;
    if (same && s->random_polished &&
        s->round_budget - s->round_spent >= RANDOM_POLISH_MIN * (int64_t)(s->n + 1)) {
        /* polishes from random points: another one while the round lasts */
        random_point(s, s->pol_u);
        s->alm_round = 0;
        return sub_start(s, &s->polish, "lbfgsb", s->round_budget - s->round_spent, s->pol_u);
    }
    if (same || s->round_spent >= s->round_budget || s->alm_round >= ALM_ROUNDS)
        return DC_OK; /* the polish is done (its sub-engine is released) */
    return sub_start(s, &s->polish, "lbfgsb", s->round_budget - s->round_spent, b->U);
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    size_t r;
    switch (s->phase) {
    case PH_GRID:
        dc_dss_sep_tell_grid(&s->sep);
        s->phase = PH_REFINE;
        return DC_OK;
    case PH_REFINE:
        if (dc_dss_sep_tell_refine(&s->sep))
            s->phase = PH_CONFIRM;
        return DC_OK;
    case PH_CONFIRM:
        s->phase = PH_DONE;
        return DC_OK;
    default:
        break;
    }
    {
        sub *e = s->phase == PH_POLISH ? &s->polish : s->cur;
        int64_t cost = batch_cost(s, b);
        s->spent += cost;
        s->round_spent += cost;
        note_best(s, b);
        if (s->phase == PH_NEIGHBOURS)
            return tell_neighbours(s, b);
        if (s->confirming)
            return tell_confirm(s, b);
        if (s->phase == PH_POLISH && s->pbp->constrained)
            for (r = 0; r < b->rows; r++)
                if (!s->pol_have || dc_better(b->f[r], s->pol_L)) {
                    memcpy(s->pol_u, b->U + r * s->n, s->n * sizeof(double));
                    s->pol_L = b->f[r];
                    s->pol_have = 1;
                }
        return e->live ? e->vt->tell(e->state, b) : DC_OK;
    }
}

static dc_stop stop(const void *sp)
{
    const state *s = sp;
    return s->phase == PH_DONE ? DC_STOP_CONVERGED : DC_STOP_NONE;
}

static void release(void *sp)
{
    state *s = sp;
    sub_release(s, &s->global);
    sub_release(s, &s->global2);
    sub_release(s, &s->polish);
    release_rows(s);
    dc_dss_sep_free(&s->sep, s->alloc);
    dc_mem_free(s->alloc, s->best_u, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->seed_u, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->disc, s->n * sizeof(size_t));
    dc_mem_free(s->alloc, s->inc_u, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->done_u, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->cand, s->n_moves * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->pol_u, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->mv_u, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->move_fixed, s->n);
    dc_mem_free(s->alloc, s->nb_start_u, s->n * sizeof(double));
}

/* A start point: the hybrid's first polish starts there instead of the
 * centre, and the population search takes it in.  The separable plan
 * ignores it (it samples every coordinate's whole interval anyway). */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    if (s->phase != PH_POLISH && s->phase != PH_GLOBAL)
        return DC_OK;
    if (!s->seed_u && !(s->seed_u = dc_mem_alloc(s->alloc, s->n * sizeof(double))))
        return DC_ERR_NOMEM;
    memcpy(s->seed_u, u, s->n * sizeof(double));
    memcpy(s->best_u, u, s->n * sizeof(double));
    if (s->phase == PH_POLISH && s->polish.live && s->polish.vt->seed_point)
        return s->polish.vt->seed_point(s->polish.state, u);
    if (s->phase == PH_GLOBAL && s->cur->live && s->cur->vt->seed_point)
        return s->cur->vt->seed_point(s->cur->state, u);
    return DC_OK;
}

const dc_engine_vt dc_eng_dss = {&info, sizeof(state), init, ask, tell, stop, release, seed_point};
