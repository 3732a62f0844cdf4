/*
 * random_search.c -- the baseline every engine must beat.
 *
 * Batches of `batch` points (or the caller's hint, dc_batch.want), uniform in
 * the box or from a scrambled Halton sequence
 * (low discrepancy: each coordinate's prime-base radical inverse, shifted by
 * a random offset modulo 1, so different seeds give different sequences).
 * It never converges: it runs until the budget, clock or target stops it.
 */
#include <math.h>
#include <string.h>

#include "engine/engine.h"

enum { OPT_BATCH, OPT_SAMPLER, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"batch", 64, 1, 65536, 1, "points per iteration"},
    {"sampler", 0, 0, 1, 1, "0 = uniform, 1 = scrambled Halton (low discrepancy)"},
};

static const dc_engine_info info = {
    "random", "Random search",
    "Uniform or low-discrepancy random sampling of the box; the baseline every engine must beat.",
    "baseline", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS};

typedef struct state {
    size_t n, batch;
    size_t rows_cap;    /* rows U and f hold: batch, or a larger hint (dc_batch.want) */
    int halton;
    uint64_t index;     /* Halton position */
    dc_rng *rng;
    const dc_allocator *alloc;
    double *U, *f, *shift;
    uint32_t *primes;
} state;

static int is_prime(uint32_t p)
{
    uint32_t d;
    if (p < 2)
        return 0;
    for (d = 2; d * d <= p; d++)
        if (p % d == 0)
            return 0;
    return 1;
}

static dc_status init(void *sp, const dc_problem *pb, const double *params)
{
    state *s = sp;
    size_t j;
    s->n = pb->n;
    s->batch = (size_t)params[OPT_BATCH];
    s->halton = params[OPT_SAMPLER] != 0.0;
    s->rng = pb->rng;
    s->alloc = pb->alloc;
    s->index = 1;
    s->U = dc_mem_calloc(pb->alloc, s->batch * s->n, sizeof(double));
    s->f = dc_mem_calloc(pb->alloc, s->batch, sizeof(double));
    s->rows_cap = s->batch;
    if (!s->U || !s->f)
        return DC_ERR_NOMEM;
    if (s->halton) {
        uint32_t p = 2;
        s->shift = dc_mem_alloc(pb->alloc, s->n * sizeof(double));
        s->primes = dc_mem_alloc(pb->alloc, s->n * sizeof(uint32_t));
        if (!s->shift || !s->primes)
            return DC_ERR_NOMEM;
        for (j = 0; j < s->n; j++) {
            while (!is_prime(p))
                p++;
            s->primes[j] = p++;
            s->shift[j] = dc_rng_uniform(s->rng);
        }
    }
    return DC_OK;
}

static double radical_inverse(uint64_t i, uint32_t base)
{
    double inv = 1.0 / base, f = inv, r = 0.0;
    while (i) {
        r += (double)(i % base) * f;
        i /= base;
        f *= inv;
    }
    return r;
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    size_t r, j, rows = b->want ? b->want : s->batch;
    if (rows > s->rows_cap) { /* the caller's hint asks for more rows than the batch */
        double *U = NULL, *f = NULL;
        size_t k;
        if (dc_mul_size(rows, s->n, &k) && dc_mul_size(k, sizeof(double), &k)) {
            U = dc_mem_calloc(s->alloc, rows * s->n, sizeof(double));
            f = dc_mem_calloc(s->alloc, rows, sizeof(double));
        }
        if (!U || !f) {
            dc_mem_free(s->alloc, U, rows * s->n * sizeof(double));
            dc_mem_free(s->alloc, f, rows * sizeof(double));
            return DC_ERR_NOMEM;
        }
        dc_mem_free(s->alloc, s->U, s->rows_cap * s->n * sizeof(double));
        dc_mem_free(s->alloc, s->f, s->rows_cap * sizeof(double));
        s->U = U;
        s->f = f;
        s->rows_cap = rows;
    }
    for (r = 0; r < rows; r++) {
        double *u = s->U + r * s->n;
        if (s->halton) {
            for (j = 0; j < s->n; j++) {
                double v = radical_inverse(s->index, s->primes[j]) + s->shift[j];
                u[j] = v >= 1.0 ? v - 1.0 : v;
            }
            s->index++;
        } else {
            for (j = 0; j < s->n; j++)
                u[j] = dc_rng_uniform(s->rng);
        }
    }
    b->kind = DC_ASK_POINTS;
    b->U = s->U;
    b->rows = rows;
    b->f = s->f;
    return DC_OK;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    (void)sp;
    (void)b;
    return DC_OK; /* the driver keeps the best point */
}

static dc_stop stop(const void *sp)
{
    (void)sp;
    return DC_STOP_NONE;
}

static void release(void *sp)
{
    state *s = sp;
    dc_mem_free(s->alloc, s->U, s->rows_cap * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->f, s->rows_cap * sizeof(double));
    dc_mem_free(s->alloc, s->shift, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->primes, s->n * sizeof(uint32_t));
}

const dc_engine_vt dc_eng_random = {&info, sizeof(state), init, ask, tell, stop, release, NULL};
