/*
 * driver_check.c -- what a run may ask (driver_check.h): the checks of a dc_run
 * before anything is allocated, what the engine supports, and the options
 * (the engine's own and the run's, dc_run_options).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/driver_check.h"
#include "engine/front.h"
#include "common/alloc.h"
#include "common/error.h"

static const dc_option_info run_options[N_RUN_OPTIONS] = {
    {"stop_on_convergence", 1, 0, 1, 1,
     "1 = end the run (status converged) when the engine's convergence test is met or its "
     "restarts agree; 0 = start the engine again until the budget, clock or target"},
};

const dc_option_info *dc_run_options(size_t *count)
{
    if (count)
        *count = N_RUN_OPTIONS;
    return run_options;
}

/* The option named name: the engine's own (params) or the run's (run_params). */
static const dc_option_info *find_option(const dc_engine_info *info, const char *name,
                                         double *params, double *run_params, double **slot)
{
    size_t o;
    for (o = 0; o < info->n_options; o++)
        if (strcmp(name, info->options[o].name) == 0) {
            *slot = &params[o];
            return &info->options[o];
        }
    for (o = 0; o < N_RUN_OPTIONS; o++)
        if (strcmp(name, run_options[o].name) == 0) {
            *slot = &run_params[o];
            return &run_options[o];
        }
    return NULL;
}

dc_status dc_driver_read_options(const dc_engine_vt *vt, const dc_run *run, double *params,
                                 double *run_params, dc_error *err)
{
    const dc_engine_info *info = vt->info;
    size_t k, o;
    for (o = 0; o < info->n_options; o++)
        params[o] = info->options[o].default_value;
    for (o = 0; o < N_RUN_OPTIONS; o++)
        run_params[o] = run_options[o].default_value;
    for (k = 0; k < run->n_options; k++) {
        const char *name = run->option_names[k];
        double v = run->option_values[k], *slot = NULL;
        const dc_option_info *opt = name ? find_option(info, name, params, run_params, &slot)
                                         : NULL;
        if (!opt) {
            char known[200];
            size_t used = 0, q;
            known[0] = '\0';
            for (q = 0; q < info->n_options + N_RUN_OPTIONS && used < sizeof known; q++) {
                const char *known_name = q < info->n_options
                                             ? info->options[q].name
                                             : run_options[q - info->n_options].name;
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", q ? ", " : "",
                                         known_name);
            }
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "unknown option '%.40s' for engine '%s' (options: %s)",
                                name ? name : "(null)", info->id, known);
        }
        if (!(v >= opt->min_value && v <= opt->max_value))
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "option '%s' of engine '%s' must be between %g and %g, got %g",
                                opt->name, info->id, opt->min_value, opt->max_value, v);
        if (opt->integer && v != floor(v))
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "option '%s' of engine '%s' must be an integer, got %g",
                                opt->name, info->id, v);
        *slot = v;
    }
    return DC_OK;
}

/* integer and discrete coordinates, start points, constraints */
static dc_status validate_kinds(const dc_run *run, dc_error *err)
{
    size_t j, k, r;
    for (j = 0; j < run->n; j++) {
        size_t nv = run->n_values ? run->n_values[j] : 0;
        if (nv) {
            const double *v = run->values ? run->values[j] : NULL;
            if (!v)
                return dc_set_error(err, DC_ERR_ARGUMENT, j, 0, "values[%zu] is NULL", j);
            for (k = 0; k < nv; k++)
                if (!isfinite(v[k]) || (k && !(v[k] > v[k - 1])))
                    return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                        "values[%zu] must be finite and increasing", j);
        } else if (run->integer && run->integer[j] &&
                   ceil(run->lower[j]) > floor(run->upper[j])) {
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "x[%zu] is an integer but [%g, %g] holds no integer", j,
                                run->lower[j], run->upper[j]);
        }
    }
    if (run->n_x0 && !run->x0)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "x0 is NULL");
    for (r = 0; r < run->n_x0; r++)
        for (j = 0; j < run->n; j++) {
            double x = run->x0[r * run->n + j];
            size_t nv = run->n_values ? run->n_values[j] : 0;
            int ok = isfinite(x);
            if (ok && nv) {
                for (k = 0; k < nv && run->values[j][k] != x; k++)
                    ;
                ok = k < nv;
            } else if (ok) {
                ok = x >= run->lower[j] && x <= run->upper[j] &&
                     !(run->integer && run->integer[j] && x != floor(x));
            }
            if (!ok)
                return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                    "x0[%zu][%zu] = %g is not a value x[%zu] can take", r, j, x,
                                    j);
        }
    if (run->n_constraints && (!run->constraints || !run->senses))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "constraints are NULL");
    for (k = 0; k < run->n_constraints; k++) {
        if (!run->constraints[k] || dc_program_n_inputs(run->constraints[k]) != run->n)
            return dc_set_error(err, DC_ERR_ARGUMENT, k, 0,
                                "constraint %zu must be a program over the %zu inputs", k,
                                run->n);
        if ((unsigned)run->senses[k] > (unsigned)DC_CONSTRAINT_EQ)
            return dc_set_error(err, DC_ERR_ARGUMENT, k, 0, "constraint %zu: unknown sense", k);
    }
    if (run->constraint_tolerance != run->constraint_tolerance)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "constraint_tolerance is NaN");
    return DC_OK;
}

/* The engines whose info has a flag, comma-separated, into buf. */
static const char *engines_with(unsigned flag, char *buf, size_t cap)
{
    size_t k, used = 0;
    buf[0] = '\0';
    for (k = 0; k < dc_engine_count() && used < cap; k++)
        if (dc_engine_at(k)->supports & flag)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? ", " : "",
                                     dc_engine_at(k)->id);
    return buf;
}

/* What the run asks of the engine beyond a box, against what it supports. */
dc_status dc_driver_check_support(const dc_engine_vt *vt, const dc_run *run, dc_error *err)
{
    char buf[200];
    size_t j;
    int discrete = 0;
    const char *what = NULL;
    unsigned flag = 0;
    for (j = 0; j < run->n; j++)
        if ((run->integer && run->integer[j]) || (run->n_values && run->n_values[j]))
            discrete = 1;
    if (run->n_objectives && !(vt->info->supports & DC_SUPPORTS_OBJECTIVES))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "engine '%s' takes one objective; engines that take several: %s",
                            vt->info->id, engines_with(DC_SUPPORTS_OBJECTIVES, buf, sizeof buf));
    if (run->n_constraints && !(vt->info->supports & DC_SUPPORTS_CONSTRAINTS)) {
        what = "constraints";
        flag = DC_SUPPORTS_CONSTRAINTS;
    } else if (discrete && !(vt->info->supports & DC_SUPPORTS_INTEGERS)) {
        what = "integer or discrete variables";
        flag = DC_SUPPORTS_INTEGERS;
    } else if (run->n_x0 && !((vt->info->supports & DC_SUPPORTS_X0) && vt->seed_point)) {
        what = "a start point (x0)";
        flag = DC_SUPPORTS_X0;
    }
    if (!what)
        return DC_OK;
    return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                        "engine '%s' cannot take %s; engines that can: %s", vt->info->id, what,
                        engines_with(flag, buf, sizeof buf));
}

dc_status dc_driver_validate(const dc_run *run, dc_error *err)
{
    size_t j;
    if (!run || run->n == 0 || !run->lower || !run->upper)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "bounds are missing or empty");
    if (run->n > (size_t)DC_MAX_DIMENSION)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "too many dimensions");
    if (run->n_objectives) {
        dc_status st = dc_front_validate(run, err);
        if (st)
            return st;
    } else if (!run->program && !run->objective) {
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "no objective");
    }
    if (run->program && dc_program_n_inputs(run->program) != run->n)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "the objective has %zu inputs but there are %zu bounds",
                            dc_program_n_inputs(run->program), run->n);
    if (run->max_evaluations <= 0)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "max_evaluations must be positive");
    if (run->time_limit != run->time_limit)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "time_limit is NaN");
    if (run->has_target && run->target != run->target)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "target is NaN");
    for (j = 0; j < run->n; j++) {
        if (!isfinite(run->lower[j]) || !isfinite(run->upper[j]))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu] must be finite, got [%g, %g]", j, run->lower[j],
                                run->upper[j]);
        if (run->lower[j] > run->upper[j])
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu]: the lower bound %g is above the upper bound %g", j,
                                run->lower[j], run->upper[j]);
        if (!isfinite(run->upper[j] - run->lower[j]))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu]: the interval is too wide to represent", j);
    }
    return validate_kinds(run, err);
}
