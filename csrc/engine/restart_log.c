/* restart_log.c -- restarts that agree (the rule is in engine.h). */
#include <math.h>
#include <string.h>

#include "engine/engine.h"

dc_status dc_restart_log_init(dc_restart_log *log, const dc_allocator *alloc, size_t dim)
{
    memset(log, 0, sizeof *log);
    log->alloc = alloc;
    log->dim = dim;
    log->x = dc_mem_alloc(alloc, (dim ? dim : 1) * sizeof(double));
    return log->x ? DC_OK : DC_ERR_NOMEM;
}

void dc_restart_log_free(dc_restart_log *log)
{
    if (log->x)
        dc_mem_free(log->alloc, log->x, (log->dim ? log->dim : 1) * sizeof(double));
    log->x = NULL;
}

static void take(dc_restart_log *log, double value, const double *x)
{
    log->best = value;
    memcpy(log->x, x, log->dim * sizeof(double));
    log->agree = 0;
}

int dc_restart_log_end(dc_restart_log *log, double value, const double *x)
{
    double tol;
    size_t j;
    if (!log->x)
        return 0;
    if (log->starts++ == 0 || (log->best != log->best && value == value)) {
        take(log, value, x); /* the first end, or a number after NaN */
        return 0;
    }
    tol = DC_AGREE_FTOL * (fabs(log->best) > 1.0 ? fabs(log->best) : 1.0);
    if (value < log->best - tol) { /* a better minimum: count again from it */
        take(log, value, x);
        return 0;
    }
    if (!(value <= log->best + tol)) { /* worse (or NaN) */
        log->agree = 0;
        return 0;
    }
    for (j = 0; j < log->dim; j++)
        if (!(fabs(x[j] - log->x[j]) <= DC_AGREE_XTOL)) { /* as good, elsewhere */
            log->agree = 0;
            return 0;
        }
    if (value < log->best)
        log->best = value;
    log->agree++;
    return log->agree >= DC_AGREE_RESTARTS;
}
