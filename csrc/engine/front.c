/*
 * front.c -- the driver's side of several objectives (front.h).
 *
 * Values are minimized inside (a maximized objective negated), as the
 * driver does for one objective; the result gives them back in their own
 * sense.  The archive (pareto.c) receives every evaluated point, is thinned
 * to its cap after each batch, and its hypervolume is measured at the run's
 * reference point: the one given, else the one derived from the archive as
 * it is (dc_pareto_reference: nadir plus a tenth of the range), so the last
 * progress report equals the result's hypervolume.  Thinning and the
 * hypervolume count their work on the run's guard: past the time limit or a
 * stop request (and the driver's grace) thinning falls back to the crowding
 * distance and the hypervolume is left unmeasured (NaN; the result's message
 * says so), so a run of many objectives ends on time whatever its front.
 *
 * The best archive: thinning removes the least contributors at the archive's
 * own reference point, which moves as the front does, and a thinned-out point
 * is forgotten, so the archive can end worse than one held earlier (ZDT1 with
 * an archive of 20, DTLZ2 and BNH with 100: benchmarks/best_front_overhead.py).
 * Each measured archive is compared with the best one so far (smaller excess
 * first, then the hypervolume at a fixed reference point: the given one, else
 * the one derived from the first archive measured at that excess) and copied
 * when better; the result is that copy when the final archive is worse.  The
 * cost: a copy of the archive when it improved, and, without a given
 * reference point, a second hypervolume per measurement.
 */
#include <math.h>
#include <string.h>

#include "engine/front.h"
#include "common/alloc.h"
#include "common/error.h"

dc_status dc_front_validate(const dc_run *run, dc_error *err)
{
    size_t k;
    if (run->n_objectives > DC_MAX_OBJECTIVES)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "at most %d objectives, got %zu",
                            DC_MAX_OBJECTIVES, run->n_objectives);
    if (run->has_target)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "a target does not apply to several objectives");
    if (run->objectives && run->program)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "give objectives or program, not both");
    if (!run->objectives && !run->objective)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "no objectives");
    for (k = 0; run->objectives && k < run->n_objectives; k++)
        if (!run->objectives[k] || dc_program_n_inputs(run->objectives[k]) != run->n)
            return dc_set_error(err, DC_ERR_ARGUMENT, k, 0,
                                "objective %zu must be a program over the %zu inputs", k, run->n);
    for (k = 0; run->reference_point && k < run->n_objectives; k++)
        if (!isfinite(run->reference_point[k]))
            return dc_set_error(err, DC_ERR_ARGUMENT, k, 0, "reference_point[%zu] must be finite",
                                k);
    return DC_OK;
}

static int maximized(const dc_front *fr, size_t k)
{
    return fr->run->maximized && fr->run->maximized[k];
}

dc_status dc_front_init(dc_front *fr, const dc_run *run, const dc_allocator *alloc,
                        dc_guard *guard)
{
    size_t k, cap = run->archive_capacity ? run->archive_capacity : DC_DEFAULT_ARCHIVE;
    memset(fr, 0, sizeof *fr);
    fr->run = run;
    fr->alloc = alloc;
    fr->n = run->n;
    fr->m = run->n_objectives;
    fr->hypervolume = NAN;
    fr->guard = guard;
    dc_archive_init(&fr->archive, alloc, fr->n, fr->m, cap, dc_thin_default(fr->m));
    fr->archive.guard = guard;
    if (run->reference_point) {
        fr->have_ref = 1;
        for (k = 0; k < fr->m; k++)
            fr->ref[k] = maximized(fr, k) ? -run->reference_point[k] : run->reference_point[k];
    }
    if (run->objectives) {
        fr->ws = dc_mem_calloc(alloc, fr->m, sizeof *fr->ws);
        if (!fr->ws)
            return DC_ERR_NOMEM;
        for (k = 0; k < fr->m; k++)
            if (!(fr->ws[k] = dc_workspace_new(run->objectives[k], alloc)))
                return DC_ERR_NOMEM;
    }
    return DC_OK;
}

void dc_front_free(dc_front *fr)
{
    size_t k;
    if (!fr->alloc)
        return;
    for (k = 0; fr->ws && k < fr->m; k++)
        dc_workspace_free(fr->ws[k]);
    dc_mem_free(fr->alloc, fr->ws, fr->m * sizeof *fr->ws);
    dc_mem_free(fr->alloc, fr->col, fr->col_cap * sizeof(double));
    dc_mem_free(fr->alloc, fr->best_X, fr->best_rows * fr->n * sizeof(double));
    dc_mem_free(fr->alloc, fr->best_F, fr->best_rows * fr->m * sizeof(double));
    dc_mem_free(fr->alloc, fr->best_E, fr->best_rows * sizeof(double));
    dc_mem_free(fr->alloc, fr->best_V, fr->best_rows * sizeof(double));
    dc_archive_free(&fr->archive);
    memset(fr, 0, sizeof *fr);
}

dc_status dc_front_eval(dc_front *fr, const double *X, size_t rows, double *F, int *abort)
{
    size_t r, k, m = fr->m;
    *abort = 0;
    if (!fr->run->objectives) {
        if (fr->run->objective(fr->run->objective_data, X, rows, fr->n, F)) {
            *abort = 1;
            return DC_OK;
        }
    } else {
        if (rows > fr->col_cap) {
            dc_mem_free(fr->alloc, fr->col, fr->col_cap * sizeof(double));
            fr->col = dc_mem_alloc(fr->alloc, rows * sizeof(double));
            fr->col_cap = fr->col ? rows : 0;
            if (!fr->col)
                return DC_ERR_NOMEM;
        }
        for (k = 0; k < m; k++) {
            dc_status st = dc_eval_many(fr->run->objectives[k], fr->ws[k], X, rows, fr->n,
                                        fr->col);
            if (st)
                return st;
            for (r = 0; r < rows; r++)
                F[r * m + k] = fr->col[r];
        }
    }
    for (k = 0; k < m; k++)
        if (maximized(fr, k))
            for (r = 0; r < rows; r++)
                F[r * m + k] = -F[r * m + k];
    return DC_OK;
}

dc_status dc_front_offer(dc_front *fr, const double *x, const double *f, double excess,
                         double max_violation)
{
    int taken;
    dc_status st = dc_archive_offer(&fr->archive, x, f, excess, max_violation, &taken);
    fr->changed |= taken;
    return st;
}

/* the reference point of the hypervolume, minimized sense */
static void reference(const dc_front *fr, double *ref)
{
    if (fr->have_ref)
        memcpy(ref, fr->ref, fr->m * sizeof(double));
    else
        dc_pareto_reference(fr->archive.F, fr->archive.size, fr->m, ref);
}

/* copy the archive as the best one */
static dc_status take_best(dc_front *fr)
{
    const dc_archive *a = &fr->archive;
    size_t n = fr->n, m = fr->m;
    if (a->size > fr->best_rows) {
        size_t rows = a->size > fr->archive.cap ? a->size : fr->archive.cap;
        dc_mem_free(fr->alloc, fr->best_X, fr->best_rows * n * sizeof(double));
        dc_mem_free(fr->alloc, fr->best_F, fr->best_rows * m * sizeof(double));
        dc_mem_free(fr->alloc, fr->best_E, fr->best_rows * sizeof(double));
        dc_mem_free(fr->alloc, fr->best_V, fr->best_rows * sizeof(double));
        fr->best_X = dc_mem_alloc(fr->alloc, rows * n * sizeof(double));
        fr->best_F = dc_mem_alloc(fr->alloc, rows * m * sizeof(double));
        fr->best_E = dc_mem_alloc(fr->alloc, rows * sizeof(double));
        fr->best_V = dc_mem_alloc(fr->alloc, rows * sizeof(double));
        fr->best_rows = rows;
        if (!fr->best_X || !fr->best_F || !fr->best_E || !fr->best_V) {
            dc_mem_free(fr->alloc, fr->best_X, rows * n * sizeof(double));
            dc_mem_free(fr->alloc, fr->best_F, rows * m * sizeof(double));
            dc_mem_free(fr->alloc, fr->best_E, rows * sizeof(double));
            dc_mem_free(fr->alloc, fr->best_V, rows * sizeof(double));
            fr->best_X = fr->best_F = fr->best_E = fr->best_V = NULL;
            fr->best_rows = 0;
            fr->have_best = 0;
            return DC_ERR_NOMEM;
        }
    }
    memcpy(fr->best_X, a->X, a->size * n * sizeof(double));
    memcpy(fr->best_F, a->F, a->size * m * sizeof(double));
    memcpy(fr->best_E, a->E, a->size * sizeof(double));
    memcpy(fr->best_V, a->V, a->size * sizeof(double));
    fr->best_size = a->size;
    fr->best_excess = fr->cur_excess;
    fr->best_hv = fr->cur_hv;
    fr->best_evals = fr->evals;
    fr->have_best = 1;
    return DC_OK;
}

/* The archive just measured (its hypervolume at ref, the run's reference
 * point) against the best one: cur_* measured at the fixed reference point,
 * and the archive copied when it is better. */
static dc_status keep_best(dc_front *fr, const double *ref)
{
    const dc_archive *a = &fr->archive;
    double e = a->E[0]; /* every member's: constrained domination leaves one excess */
    fr->cur_valid = 0;
    if (fr->have_best && e > fr->best_excess)
        return DC_OK; /* worse whatever its hypervolume */
    if (!fr->have_best || e < fr->best_excess) {
        /* a new excess: the fixed reference point is the given one or this archive's */
        if (!fr->have_ref)
            memcpy(fr->fref, ref, fr->m * sizeof(double));
        fr->cur_hv = fr->hypervolume;
    } else if (fr->have_ref) {
        fr->cur_hv = fr->hypervolume; /* measured at the given point already */
    } else {
        dc_status st = dc_hv_compute(fr->alloc, fr->guard, a->F, a->size, fr->m, fr->fref,
                                     &fr->cur_hv);
        if (st || dc_guard_stopped(fr->guard))
            return st;
    }
    fr->cur_excess = e;
    fr->cur_valid = 1;
    if (fr->have_best && e == fr->best_excess && !(fr->cur_hv > fr->best_hv))
        return DC_OK;
    return take_best(fr);
}

dc_status dc_front_measure(dc_front *fr, int measure)
{
    double ref[DC_MAX_OBJECTIVES];
    size_t k;
    dc_status st = dc_archive_thin(&fr->archive);
    if (st || !measure || (fr->measured && !fr->changed))
        return st;
    fr->measured = 1;
    fr->changed = 0;
    fr->unmeasured = 0;
    fr->cur_valid = 0;
    reference(fr, ref);
    for (k = 0; k < fr->m; k++)
        if (ref[k] != ref[k]) {
            fr->hypervolume = fr->archive.size ? 0.0 : NAN; /* no finite value yet */
            return DC_OK;
        }
    st = dc_hv_compute(fr->alloc, fr->guard, fr->archive.F, fr->archive.size, fr->m, ref,
                       &fr->hypervolume);
    if (!st && dc_guard_stopped(fr->guard)) {
        fr->hypervolume = NAN;
        fr->unmeasured = 1;
    }
    if (st || fr->unmeasured || !fr->archive.size)
        return st;
    return keep_best(fr, ref);
}

/* The best archive back in place of a worse final one (the measurements say
 * so); its hypervolume at the run's reference point. */
static dc_status restore_best(dc_front *fr)
{
    dc_archive *a = &fr->archive;
    double ref[DC_MAX_OBJECTIVES], hv;
    dc_status st;
    if (!fr->have_best || !fr->cur_valid || fr->unmeasured ||
        !(fr->cur_excess > fr->best_excess ||
          (fr->cur_excess == fr->best_excess && fr->cur_hv < fr->best_hv)))
        return DC_OK;
    if (fr->have_ref) {
        hv = fr->best_hv;
    } else {
        dc_pareto_reference(fr->best_F, fr->best_size, fr->m, ref);
        st = dc_hv_compute(fr->alloc, fr->guard, fr->best_F, fr->best_size, fr->m, ref, &hv);
        if (st || dc_guard_stopped(fr->guard))
            return st; /* the run is ending: the final archive, measured */
    }
    /* the archive held best_size rows once, so it has room for them */
    memcpy(a->X, fr->best_X, fr->best_size * fr->n * sizeof(double));
    memcpy(a->F, fr->best_F, fr->best_size * fr->m * sizeof(double));
    memcpy(a->E, fr->best_E, fr->best_size * sizeof(double));
    memcpy(a->V, fr->best_V, fr->best_size * sizeof(double));
    a->size = fr->best_size;
    fr->final_hv = fr->cur_excess == fr->best_excess ? fr->cur_hv : NAN;
    fr->hypervolume = hv;
    fr->cur_excess = fr->best_excess;
    fr->cur_hv = fr->best_hv;
    fr->restored = 1;
    return DC_OK;
}

dc_status dc_front_result(dc_front *fr, dc_result *res)
{
    const dc_archive *a = &fr->archive;
    size_t q, k, n = fr->n, m = fr->m, rows = a->size ? a->size : 1;
    double ref[DC_MAX_OBJECTIVES];
    dc_status st = dc_front_measure(fr, 1);
    if (st || (st = restore_best(fr)))
        return st;
    rows = a->size ? a->size : 1;
    res->n_objectives = m;
    res->n_pareto = a->size; /* before the arrays: dc_front_result_free reads it */
    res->pareto_x = dc_mem_alloc(&res->alloc, rows * n * sizeof(double));
    res->pareto_f = dc_mem_alloc(&res->alloc, rows * m * sizeof(double));
    res->pareto_violation = dc_mem_alloc(&res->alloc, rows * sizeof(double));
    res->pareto_feasible = dc_mem_alloc(&res->alloc, rows);
    if (!res->pareto_x || !res->pareto_f || !res->pareto_violation || !res->pareto_feasible)
        return DC_ERR_NOMEM;
    for (q = 0; q < a->size; q++) {
        memcpy(res->pareto_x + q * n, a->X + q * n, n * sizeof(double));
        for (k = 0; k < m; k++) {
            double v = a->F[q * m + k];
            res->pareto_f[q * m + k] = maximized(fr, k) ? -v : v;
        }
        res->pareto_violation[q] = a->V[q];
        res->pareto_feasible[q] = a->E[q] == 0.0;
    }
    reference(fr, ref);
    for (k = 0; k < m; k++)
        res->reference_point[k] = maximized(fr, k) ? -ref[k] : ref[k];
    res->hypervolume = fr->hypervolume;
    return DC_OK;
}

void dc_front_result_free(dc_result *res)
{
    size_t rows = res->n_pareto ? res->n_pareto : 1;
    if (!res->n_objectives)
        return;
    dc_mem_free(&res->alloc, res->pareto_x, rows * res->n * sizeof(double));
    dc_mem_free(&res->alloc, res->pareto_f, rows * res->n_objectives * sizeof(double));
    dc_mem_free(&res->alloc, res->pareto_violation, rows * sizeof(double));
    dc_mem_free(&res->alloc, res->pareto_feasible, rows);
    res->pareto_x = res->pareto_f = res->pareto_violation = NULL;
    res->pareto_feasible = NULL;
    res->n_pareto = 0;
}
