/* registry.c -- the engines, by id (rows in engines.def). */
#include <string.h>

#include "engine/engine.h"

#define DC_ENGINE(vt, budget) extern const dc_engine_vt vt;
#include "engine/engines.def"
#undef DC_ENGINE

static const dc_engine_vt *const engines[] = {
#define DC_ENGINE(vt, budget) &vt,
#include "engine/engines.def"
#undef DC_ENGINE
};

static const int64_t budgets[] = {
#define DC_ENGINE(vt, budget) budget,
#include "engine/engines.def"
#undef DC_ENGINE
};

#define N_ENGINES (sizeof engines / sizeof engines[0])

size_t dc_engine_count(void)
{
    return N_ENGINES;
}

const dc_engine_info *dc_engine_at(size_t index)
{
    return index < N_ENGINES ? engines[index]->info : NULL;
}

int64_t dc_engine_budget(size_t index)
{
    return index < N_ENGINES ? budgets[index] : 0;
}

const char *dc_engine_default(void)
{
    const dc_engine_vt *dss = dc_engine_find("dss");
    return dss ? "dss" : engines[0]->info->id;
}

const dc_engine_vt *dc_engine_find(const char *id)
{
    size_t k;
    if (!id)
        return NULL;
    for (k = 0; k < N_ENGINES; k++)
        if (strcmp(engines[k]->info->id, id) == 0)
            return engines[k];
    return NULL;
}
