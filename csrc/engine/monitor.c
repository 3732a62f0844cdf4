/*
 * monitor.c -- progress and cancellation shared between a run and other
 * threads (decido.h, dc_monitor).
 *
 * One writer (the driver of the run that claimed the monitor), any number of
 * readers.  The stop flag is a release/acquire flag.  The snapshot is a
 * sequence lock: the writer makes seq odd, stores the fields, makes it even
 * again; a reader copies the fields and retries when seq was odd or moved,
 * so a snapshot always comes from one publication.  Every field is an atomic
 * (doubles as their bit patterns), so a retried read is never a data race.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "engine/engine.h"

_Static_assert(sizeof(double) == sizeof(uint64_t), "double must be 64 bits");

struct dc_monitor {
    dc_allocator alloc;
    atomic_int stop;          /* set once, never cleared */
    atomic_int busy;          /* claimed by a run (dc_monitor_begin) */
    _Atomic uint64_t seq;     /* odd while the writer is mid-publication */
    _Atomic int64_t evaluations, iterations;
    _Atomic uint64_t best, elapsed; /* bit patterns of doubles */
    atomic_int running;
    _Atomic uint64_t hypervolume; /* bit pattern of a double */
    _Atomic int64_t front_size;
    double next_hv;               /* the writer's own: set by dc_monitor_front */
    int64_t next_front;
};

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

dc_monitor *dc_monitor_new(const dc_allocator *allocator)
{
    const dc_allocator *a = allocator ? allocator : dc_mem_default();
    dc_monitor *m = dc_mem_alloc(a, sizeof *m);
    if (!m)
        return NULL;
    m->alloc = *a;
    atomic_init(&m->stop, 0);
    atomic_init(&m->busy, 0);
    atomic_init(&m->seq, 0);
    atomic_init(&m->evaluations, 0);
    atomic_init(&m->iterations, 0);
    atomic_init(&m->best, bits_of(NAN));
    atomic_init(&m->elapsed, bits_of(0.0));
    atomic_init(&m->running, 0);
    atomic_init(&m->hypervolume, bits_of(NAN));
    atomic_init(&m->front_size, 0);
    m->next_hv = NAN;
    m->next_front = 0;
    return m;
}

void dc_monitor_free(dc_monitor *m)
{
    dc_allocator a;
    if (!m)
        return;
    a = m->alloc;
    dc_mem_free(&a, m, sizeof *m);
}

void dc_monitor_request_stop(dc_monitor *m)
{
    if (m)
        atomic_store_explicit(&m->stop, 1, memory_order_release);
}

int dc_monitor_stop_requested(const dc_monitor *m)
{
    /* atomic loads take a non-const pointer in some C libraries */
    dc_monitor *w = (dc_monitor *)(uintptr_t)m;
    return w ? atomic_load_explicit(&w->stop, memory_order_acquire) : 0;
}

void dc_monitor_read(const dc_monitor *m, dc_monitor_snapshot *out)
{
    dc_monitor *w = (dc_monitor *)(uintptr_t)m;
    dc_monitor_snapshot s;
    uint64_t s1, s2;
    memset(&s, 0, sizeof s);
    s.best = NAN;
    s.hypervolume = NAN;
    if (!w) {
        if (out)
            *out = s;
        return;
    }
    do {
        s1 = atomic_load_explicit(&w->seq, memory_order_acquire);
        s.evaluations = atomic_load_explicit(&w->evaluations, memory_order_relaxed);
        s.iterations = atomic_load_explicit(&w->iterations, memory_order_relaxed);
        s.best = double_of(atomic_load_explicit(&w->best, memory_order_relaxed));
        s.elapsed = double_of(atomic_load_explicit(&w->elapsed, memory_order_relaxed));
        s.running = atomic_load_explicit(&w->running, memory_order_relaxed);
        s.hypervolume = double_of(atomic_load_explicit(&w->hypervolume, memory_order_relaxed));
        s.front_size = atomic_load_explicit(&w->front_size, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        s2 = atomic_load_explicit(&w->seq, memory_order_relaxed);
    } while ((s1 & 1u) || s1 != s2); /* the writer's window is a few stores */
    if (out)
        *out = s;
}

/* ---- the driver's side (engine.h) ---- */

int dc_monitor_begin(dc_monitor *m)
{
    if (atomic_exchange_explicit(&m->busy, 1, memory_order_acq_rel))
        return 0;
    m->next_hv = NAN;
    m->next_front = 0;
    dc_monitor_publish(m, 0, 0, NAN, 0.0, 1);
    return 1;
}

void dc_monitor_publish(dc_monitor *m, int64_t evaluations, int64_t iterations, double best,
                        double elapsed, int running)
{
    uint64_t s = atomic_load_explicit(&m->seq, memory_order_relaxed);
    atomic_store_explicit(&m->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&m->evaluations, evaluations, memory_order_relaxed);
    atomic_store_explicit(&m->iterations, iterations, memory_order_relaxed);
    atomic_store_explicit(&m->best, bits_of(best), memory_order_relaxed);
    atomic_store_explicit(&m->elapsed, bits_of(elapsed), memory_order_relaxed);
    atomic_store_explicit(&m->running, running, memory_order_relaxed);
    atomic_store_explicit(&m->hypervolume, bits_of(m->next_hv), memory_order_relaxed);
    atomic_store_explicit(&m->front_size, m->next_front, memory_order_relaxed);
    atomic_store_explicit(&m->seq, s + 2, memory_order_release);
}

void dc_monitor_front(dc_monitor *m, double hypervolume, int64_t front_size)
{
    m->next_hv = hypervolume;
    m->next_front = front_size;
}

void dc_monitor_end(dc_monitor *m, int64_t evaluations, int64_t iterations, double best,
                    double elapsed)
{
    dc_monitor_publish(m, evaluations, iterations, best, elapsed, 0);
    atomic_store_explicit(&m->busy, 0, memory_order_release);
}
