/*
 * auto.c -- an engine that picks another by the problem, then forwards to it.
 *
 * At init, from the budget, the free coordinates d and their kinds (the rule is
 * docs/optimization.md's table; `bo_budget` and `bo_dims` are its thresholds):
 *   budget <= bo_budget and d <= bo_dims, several objectives -> bo
 *   several objectives                                       -> moea
 *   at least half the free coordinates categorical
 *     (integer or discrete with at most 16 values)           -> tpe
 *   budget <= bo_budget and d <= bo_dims                     -> bo
 *   otherwise                                                -> cmaes
 * (several objectives at 100 evaluations in 5 dimensions: bo's fronts on ZDT1, ZDT2,
 * DTLZ2 and BNH are larger than moea's, benchmarks/sample_efficient_mo.py)
 * The chosen engine runs with its default options; ask, tell, stop and seed_point
 * go to it, and dc_auto_chosen names it (the run's result reports it).  When the
 * driver restarts the engine (stop_on_convergence off) auto chooses again for the
 * budget that is left.
 */
#include <string.h>

#include "engine/engine.h"

enum { OPT_BO_BUDGET, OPT_BO_DIMS, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"bo_budget", 200, 0, 1e9, 1, "bo for budgets up to this many evaluations ..."},
    {"bo_dims", 20, 0, 1e6, 1, "... in up to this many free dimensions"},
};

static const dc_engine_info info = {
    "auto", "Automatic choice",
    "Chooses an engine by budget, dimension and variable kinds (bo for small budgets, tpe "
    "for mostly categorical problems, cmaes beyond; several objectives: bo for small "
    "budgets, moea beyond) and runs it; the result names the choice.",
    "auto", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS | DC_SUPPORTS_X0 | DC_SUPPORTS_OBJECTIVES};

#define CATEGORICAL_LEVELS 16

typedef struct state {
    const dc_engine_vt *vt;
    const dc_allocator *alloc;
    void *sub;
    double *params;
} state;

static const char *choose(const dc_problem *pb, const double *prm)
{
    size_t j, free_n = 0, cat = 0;
    for (j = 0; j < pb->n; j++) {
        double lv = pb->levels ? pb->levels[j] : 0.0;
        if (pb->fixed[j])
            continue;
        free_n++;
        cat += lv > 0.0 && lv <= CATEGORICAL_LEVELS;
    }
    int small = (double)pb->budget <= prm[OPT_BO_BUDGET] && (double)free_n <= prm[OPT_BO_DIMS];
    if (pb->n_objectives >= 2)
        return small ? "bo" : "moea";
    if (free_n > 0 && 2 * cat >= free_n)
        return "tpe";
    return small ? "bo" : "cmaes";
}

static dc_status init(void *sp, const dc_problem *pb, const double *prm)
{
    state *s = sp;
    size_t k;
    s->alloc = pb->alloc;
    s->vt = dc_engine_find(choose(pb, prm));
    if (!s->vt)
        return DC_ERR_ARGUMENT;
    s->params = dc_mem_calloc(s->alloc, s->vt->info->n_options + 1, sizeof(double));
    s->sub = dc_mem_calloc(s->alloc, 1, s->vt->state_size);
    if (!s->params || !s->sub)
        return DC_ERR_NOMEM;
    for (k = 0; k < s->vt->info->n_options; k++)
        s->params[k] = s->vt->info->options[k].default_value;
    return s->vt->init(s->sub, pb, s->params);
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    return s->vt->ask(s->sub, b);
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    return s->vt->tell(s->sub, b);
}

static dc_stop stop(const void *sp)
{
    const state *s = sp;
    return s->vt->stop(s->sub);
}

static void release(void *sp)
{
    state *s = sp;
    if (!s->vt)
        return;
    if (s->sub && s->vt->release)
        s->vt->release(s->sub);
    dc_mem_free(s->alloc, s->sub, s->vt->state_size);
    dc_mem_free(s->alloc, s->params, (s->vt->info->n_options + 1) * sizeof(double));
}

static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    return s->vt->seed_point ? s->vt->seed_point(s->sub, u) : DC_OK;
}

const char *dc_auto_chosen(const void *sp)
{
    const state *s = sp;
    return s->vt ? s->vt->info->id : "auto";
}

const dc_engine_vt dc_eng_auto = {&info, sizeof(state), init, ask, tell, stop, release, seed_point};
