/* budget.h -- the budgets of the C tests that run every engine: a test's own
 * budget, at most the number of evaluations the engine is built for
 * (dc_engine_budget, from engines.def).  A model-based engine (bo, tpe) pays
 * for every point it has seen in each suggestion: under the sanitizers a run of
 * tens of thousands would take minutes.  Engines built for any budget get the
 * test's budget unchanged. */
#ifndef DC_TEST_BUDGET_H
#define DC_TEST_BUDGET_H

#include <stdint.h>
#include <string.h>

#include "decido.h"

/* The engine's budget class (0: any budget). */
static inline int64_t engine_budget(const char *id)
{
    size_t k;
    for (k = 0; k < dc_engine_count(); k++)
        if (strcmp(dc_engine_at(k)->id, id) == 0)
            return dc_engine_budget(k);
    return 0;
}

/* budget, at most the engine's budget class */
static inline int64_t capped_budget(const char *id, int64_t budget)
{
    int64_t cap = engine_budget(id);
    return cap > 0 && cap < budget ? cap : budget;
}

#endif
