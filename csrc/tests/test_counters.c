/*
 * test_counters.c -- the shared counter table (dc_counters_*), under ASan +
 * UBSan in CI: single-thread semantics (limits, amounts, a new window resets,
 * a late request of an ended window, reuse of a stale slot, a full table
 * refuses, saturation, probing that wraps around, every bad argument), then
 * a race: threads in several forked processes hammer a few idents that hash
 * into the same slots of a small MAP_SHARED table, window after window; each
 * window admits exactly `limit` per ident and no ident ever holds two slots
 * for one window.
 *
 * The same source is built twice: against the library (the lock-free table
 * when the build has an inline 16-byte CAS) and, as test_counters_plain,
 * with counters.c compiled with DC_COUNTERS_PLAIN (plain loads and stores;
 * the race then runs under a process-shared mutex, as a caller must).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "decido.h"
#include "tests/check.h"

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

#define NO_LIMIT UINT32_MAX

/* ---------------------------------------------------------------- helpers */

typedef struct table {
    unsigned char *base;
    size_t size;
    uint64_t nslots;
} table;

static table table_new(uint64_t nslots)
{
    table t;
    t.nslots = nslots;
    t.size = dc_counters_size(nslots);
    t.base = aligned_alloc(16, t.size);
    if (!t.base || dc_counters_init(t.base, t.size, nslots) != DC_OK) {
        printf("cannot make a table of %llu slots\n", (unsigned long long)nslots);
        exit(2);
    }
    return t;
}

static void slot_read(const table *t, uint64_t index, uint64_t *ident, uint32_t *end,
                      uint32_t *count)
{
    const unsigned char *s = t->base + 16 + index * 16;
    memcpy(ident, s, 8);
    memcpy(end, s + 8, 4);
    memcpy(count, s + 12, 4);
}

static void slot_write(table *t, uint64_t index, uint64_t ident, uint32_t end, uint32_t count)
{
    unsigned char *s = t->base + 16 + index * 16;
    memcpy(s, &ident, 8);
    memcpy(s + 8, &end, 4);
    memcpy(s + 12, &count, 4);
}

typedef struct answer {
    dc_status status;
    int admitted;
    uint32_t used;
} answer;

static answer admit(table *t, uint64_t ident, uint32_t start, uint32_t end, uint32_t amount,
                    uint32_t limit, uint32_t probes)
{
    answer a;
    a.status = dc_counters_admit(t->base, t->size, ident, start, end, amount, limit, probes,
                                 &a.used, &a.admitted);
    return a;
}

static uint32_t peek(const table *t, uint64_t ident, uint32_t end, uint32_t probes)
{
    uint32_t count = 12345;
    dc_status st = dc_counters_peek(t->base, t->size, ident, end, probes, &count);
    CHECK(st == DC_OK, "peek: status %s", dc_status_code(st));
    return count;
}

#define CHECK_ANSWER(call, want_admitted, want_used)                                        \
    do {                                                                                   \
        answer got_ = (call);                                                              \
        CHECK(got_.status == DC_OK && got_.admitted == (want_admitted) &&                  \
                  got_.used == (want_used),                                                \
              "admit: status %s admitted %d used %lu, want %d %lu",                        \
              dc_status_code(got_.status), got_.admitted, (unsigned long)got_.used,         \
              (want_admitted), (unsigned long)(want_used));                                \
    } while (0)

/* Slots holding (ident, end), over the whole table. */
static int holders(const table *t, uint64_t ident, uint32_t end)
{
    uint64_t i, id;
    uint32_t e, c;
    int n = 0;
    for (i = 0; i < t->nslots; i++) {
        slot_read(t, i, &id, &e, &c);
        n += id == ident && e == end;
    }
    return n;
}

/* ------------------------------------------------------------- semantics */

static void test_layout(void)
{
    table t = table_new(3);
    uint64_t n;
    CHECK(dc_counters_size(0) == 0, "size(0)");
    CHECK(dc_counters_size(1) == 32, "size(1)");
    CHECK(dc_counters_size(65536) == 16 + 65536 * 16, "size(65536)");
    CHECK(dc_counters_size(UINT64_MAX) == 0, "size(UINT64_MAX) overflows");
    CHECK(dc_counters_size(((uint64_t)SIZE_MAX - 16) / 16 + 1) == 0, "size just too large");
    CHECK(memcmp(t.base, "DCCNT001", 8) == 0, "magic");
    memcpy(&n, t.base + 8, 8);
    CHECK(n == 3, "slot count in the header");
    CHECK(t.size == 64, "size of 3 slots");
    CHECK(dc_counters_check(t.base, t.size) == DC_OK, "fresh table checks");
    CHECK(strcmp(dc_status_code(DC_ERR_COUNTER_TABLE), "invalid_counter_table") == 0, "code");
    CHECK(dc_counters_lock_free() == 0 || dc_counters_lock_free() == 1, "lock_free is 0/1");
    free(t.base);
}

static void test_check_and_init(void)
{
    table t = table_new(4);
    unsigned char *misaligned = t.base + 8;
    uint64_t n;

    CHECK(dc_counters_check(NULL, t.size) == DC_ERR_ARGUMENT, "check NULL");
    CHECK(dc_counters_check(misaligned, t.size - 16) == DC_ERR_ARGUMENT, "check misaligned");
    CHECK(dc_counters_check(t.base, 0) == DC_ERR_COUNTER_TABLE, "check size 0");
    CHECK(dc_counters_check(t.base, 15) == DC_ERR_COUNTER_TABLE, "check size 15");
    CHECK(dc_counters_check(t.base, 16) == DC_ERR_COUNTER_TABLE, "check header only");
    CHECK(dc_counters_check(t.base, t.size - 16) == DC_ERR_COUNTER_TABLE, "check short");
    CHECK(dc_counters_check(t.base, t.size + 16) == DC_ERR_COUNTER_TABLE, "check long");
    CHECK(dc_counters_check(t.base, t.size - 1) == DC_ERR_COUNTER_TABLE, "check odd size");
    t.base[0] = 'X';
    CHECK(dc_counters_check(t.base, t.size) == DC_ERR_COUNTER_TABLE, "check bad magic");
    t.base[0] = 'D';
    n = 0;
    memcpy(t.base + 8, &n, 8);
    CHECK(dc_counters_check(t.base, t.size) == DC_ERR_COUNTER_TABLE, "check 0 slots");
    n = UINT64_MAX;
    memcpy(t.base + 8, &n, 8);
    CHECK(dc_counters_check(t.base, t.size) == DC_ERR_COUNTER_TABLE, "check huge slot count");
    n = 5;
    memcpy(t.base + 8, &n, 8);
    CHECK(dc_counters_check(t.base, t.size) == DC_ERR_COUNTER_TABLE, "check 5 slots in 4");

    CHECK(dc_counters_init(NULL, t.size, 4) == DC_ERR_ARGUMENT, "init NULL");
    CHECK(dc_counters_init(misaligned, t.size - 16, 3) == DC_ERR_ARGUMENT, "init misaligned");
    CHECK(dc_counters_init(t.base, t.size, 0) == DC_ERR_ARGUMENT, "init 0 slots");
    CHECK(dc_counters_init(t.base, t.size, 5) == DC_ERR_ARGUMENT, "init too few bytes");
    CHECK(dc_counters_init(t.base, t.size, 3) == DC_ERR_ARGUMENT, "init too many bytes");
    CHECK(dc_counters_init(t.base, t.size, UINT64_MAX) == DC_ERR_ARGUMENT, "init huge");

    /* init zeros every slot */
    memset(t.base, 0xAB, t.size);
    CHECK(dc_counters_init(t.base, t.size, 4) == DC_OK, "init");
    CHECK(dc_counters_check(t.base, t.size) == DC_OK, "checks after init");
    {
        size_t i;
        int zero = 1;
        for (i = 16; i < t.size; i++)
            zero &= t.base[i] == 0;
        CHECK(zero, "init zeros the slots");
    }
    free(t.base);
}

static void test_limit_and_amounts(void)
{
    table t = table_new(16);
    answer a;
    int i;

    for (i = 1; i <= 3; i++) {
        a = admit(&t, 7, 0, 60, 1, 3, 4);
        CHECK_ANSWER(a, 1, (uint32_t)i);
    }
    a = admit(&t, 7, 0, 60, 1, 3, 4);
    CHECK_ANSWER(a, 0, 3u);
    a = admit(&t, 7, 0, 60, 1, 3, 4);
    CHECK_ANSWER(a, 0, 3u);
    CHECK(peek(&t, 7, 60, 4) == 3, "peek sees 3");
    CHECK(peek(&t, 7, 120, 4) == 0, "peek of another window");
    CHECK(peek(&t, 8, 60, 4) == 0, "peek of an unknown ident");
    CHECK(holders(&t, 7, 60) == 1, "one slot");
    {
        uint64_t id;
        uint32_t e, c;
        slot_read(&t, 7, &id, &e, &c);
        CHECK(id == 7 && e == 60 && c == 3, "home slot 7 %% 16 holds (7, 60, 3)");
    }

    /* amounts above one: refused when the total would pass the limit */
    a = admit(&t, 9, 0, 60, 2, 5, 4);
    CHECK_ANSWER(a, 1, 2u);
    a = admit(&t, 9, 0, 60, 2, 5, 4);
    CHECK_ANSWER(a, 1, 4u);
    a = admit(&t, 9, 0, 60, 2, 5, 4);
    CHECK_ANSWER(a, 0, 4u);
    a = admit(&t, 9, 0, 60, 1, 5, 4);
    CHECK_ANSWER(a, 1, 5u);
    a = admit(&t, 10, 0, 60, 6, 5, 4);
    CHECK_ANSWER(a, 0, 0u);
    CHECK(peek(&t, 10, 60, 4) == 0, "a refused first request counts nothing");

    /* limit 0 refuses everything; no limit admits everything */
    a = admit(&t, 11, 0, 60, 1, 0, 4);
    CHECK_ANSWER(a, 0, 0u);
    for (i = 1; i <= 1000; i++)
        a = admit(&t, 12, 0, 60, 3, NO_LIMIT, 4);
    CHECK_ANSWER(a, 1, 3000u);
    free(t.base);
}

static void test_windows(void)
{
    table t = table_new(16);
    answer a;
    int i;

    for (i = 0; i < 3; i++)
        admit(&t, 7, 0, 60, 1, 3, 4);
    /* a new window resets the counter in place */
    a = admit(&t, 7, 60, 120, 1, 3, 4);
    CHECK_ANSWER(a, 1, 1u);
    CHECK(holders(&t, 7, 120) == 1 && holders(&t, 7, 60) == 0, "reset in place");
    CHECK(peek(&t, 7, 60, 4) == 0, "the old window is gone");
    CHECK(peek(&t, 7, 120, 4) == 1, "the new window counts 1");

    /* a late request of the ended window: judged alone, writes nothing */
    a = admit(&t, 7, 0, 60, 2, 3, 4);
    CHECK_ANSWER(a, 1, 2u);
    a = admit(&t, 7, 0, 60, 5, 3, 4);
    CHECK_ANSWER(a, 0, 0u);
    a = admit(&t, 7, 0, 60, 5, NO_LIMIT, 4);
    CHECK_ANSWER(a, 1, 5u);
    CHECK(peek(&t, 7, 120, 4) == 1 && holders(&t, 7, 120) == 1 && holders(&t, 7, 60) == 0,
          "a late request leaves the live counter alone");

    /* windows of different lengths: an hour counter is not freed by a minute's start */
    a = admit(&t, 7 + 16, 0, 3600, 1, NO_LIMIT, 4);
    CHECK_ANSWER(a, 1, 1u);
    CHECK(holders(&t, 7 + 16, 3600) == 1, "the hour counter took the next slot");
    {
        uint64_t id;
        uint32_t e, c;
        slot_read(&t, 8, &id, &e, &c);
        CHECK(id == 7 + 16 && e == 3600, "slot 8 holds the hour counter");
    }
    free(t.base);
}

static void test_stale_slots(void)
{
    table t = table_new(8);
    answer a;
    uint64_t id;
    uint32_t e, c;

    /* idents 3, 11, 19 share home slot 3 */
    admit(&t, 3, 0, 60, 1, 10, 4);
    admit(&t, 11, 0, 60, 1, 10, 4);
    slot_read(&t, 4, &id, &e, &c);
    CHECK(id == 11 && e == 60 && c == 1, "11 went to the next slot");

    /* a window that starts before 60 ends may not take their slots */
    a = admit(&t, 19, 30, 90, 1, 10, 4);
    CHECK_ANSWER(a, 1, 1u);
    slot_read(&t, 5, &id, &e, &c);
    CHECK(id == 19 && e == 90, "19 [30, 90) went past the live slots");

    /* a window starting at 60 reuses the first stale slot */
    a = admit(&t, 27, 60, 120, 4, 10, 4);
    CHECK_ANSWER(a, 1, 4u);
    slot_read(&t, 3, &id, &e, &c);
    CHECK(id == 27 && e == 120 && c == 4, "27 reused slot 3");
    CHECK(peek(&t, 3, 60, 4) == 0, "3's counter was replaced");

    /* ident 11 (slot 4, stale) comes back: its own slot is found and reset,
     * though slot 4 is not the first free one for it */
    slot_write(&t, 6, 0, 0, 0);
    a = admit(&t, 11, 60, 120, 2, 10, 4);
    CHECK_ANSWER(a, 1, 2u);
    slot_read(&t, 4, &id, &e, &c);
    CHECK(id == 11 && e == 120 && c == 2, "11 reset in its own slot");
    CHECK(holders(&t, 11, 120) == 1, "11 holds one slot");

    /* the probe sequence wraps around the end of the table */
    admit(&t, 7, 0, 60, 1, 10, 2);
    a = admit(&t, 15, 0, 60, 1, 10, 2);
    CHECK_ANSWER(a, 1, 1u);
    slot_read(&t, 0, &id, &e, &c);
    CHECK(id == 15 && e == 60, "15 wrapped around to slot 0");
    CHECK(peek(&t, 15, 60, 2) == 1, "peek wraps around too");
    free(t.base);
}

static void test_full_table(void)
{
    table t = table_new(4);
    answer a;

    /* idents 4 and 8 fill slots 0 and 1; 12 probes only those two */
    CHECK_ANSWER(admit(&t, 4, 0, 60, 1, 5, 2), 1, 1u);
    CHECK_ANSWER(admit(&t, 8, 0, 60, 1, 5, 2), 1, 1u);
    a = admit(&t, 12, 0, 60, 1, 5, 2);
    CHECK_ANSWER(a, 0, 5u);
    a = admit(&t, 12, 0, 60, 1, NO_LIMIT, 2);
    CHECK_ANSWER(a, 0, NO_LIMIT);
    CHECK(peek(&t, 12, 60, 2) == 0, "a refused ident has no count");
    CHECK(holders(&t, 12, 60) == 0, "nothing was written");
    /* the counters already there go on counting */
    CHECK_ANSWER(admit(&t, 8, 0, 60, 1, 5, 2), 1, 2u);
    /* with more probes there is room */
    CHECK_ANSWER(admit(&t, 12, 0, 60, 1, 5, 3), 1, 1u);
    /* once the window has ended, the slots are free again */
    CHECK_ANSWER(admit(&t, 16, 60, 120, 1, 5, 2), 1, 1u);
    CHECK(holders(&t, 16, 120) == 1, "16 took a stale slot");
    free(t.base);
}

static void test_saturation(void)
{
    table t = table_new(4);
    const uint32_t top = UINT32_MAX - 1;

    CHECK_ANSWER(admit(&t, 1, 0, 60, top, NO_LIMIT, 1), 1, top);
    CHECK_ANSWER(admit(&t, 1, 0, 60, top, NO_LIMIT, 1), 1, top);
    CHECK_ANSWER(admit(&t, 1, 0, 60, 1, NO_LIMIT, 1), 1, top);
    CHECK(peek(&t, 1, 60, 1) == top, "saturated at UINT32_MAX - 1");

    CHECK_ANSWER(admit(&t, 2, 0, 60, top - 2, NO_LIMIT, 1), 1, top - 2);
    CHECK_ANSWER(admit(&t, 2, 0, 60, 5, NO_LIMIT, 1), 1, top);
    /* the largest limit: exact up to it, then refused */
    CHECK_ANSWER(admit(&t, 3, 0, 60, top - 1, top, 1), 1, top - 1);
    CHECK_ANSWER(admit(&t, 3, 0, 60, 2, top, 1), 0, top - 1);
    CHECK_ANSWER(admit(&t, 3, 0, 60, 1, top, 1), 1, top);
    CHECK_ANSWER(admit(&t, 3, 0, 60, 1, top, 1), 0, top);
    /* windows at the top of the uint32 range */
    CHECK_ANSWER(admit(&t, 4, UINT32_MAX - 1, UINT32_MAX, 1, 1, 1), 1, 1u);
    CHECK_ANSWER(admit(&t, 4, UINT32_MAX - 1, UINT32_MAX, 1, 1, 1), 0, 1u);
    free(t.base);
}

static void test_bad_arguments(void)
{
    table t = table_new(4);
    uint32_t used = 77, count = 77;
    int admitted = 77;
    dc_status st;

#define BAD_ADMIT(want, base, size, ident, start, end, amount, probes)                       \
    do {                                                                                   \
        used = 77;                                                                         \
        admitted = 77;                                                                     \
        st = dc_counters_admit(base, size, ident, start, end, amount, 10, probes, &used,   \
                               &admitted);                                                 \
        CHECK(st == (want) && used == 0 && admitted == 0, "bad admit (line %d): %s",        \
              __LINE__, dc_status_code(st));                                               \
    } while (0)

    BAD_ADMIT(DC_ERR_ARGUMENT, NULL, t.size, 1, 0, 60, 1, 1);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base + 8, t.size - 16, 1, 0, 60, 1, 1);
    BAD_ADMIT(DC_ERR_COUNTER_TABLE, t.base, t.size - 16, 1, 0, 60, 1, 1);
    BAD_ADMIT(DC_ERR_COUNTER_TABLE, t.base, 8, 1, 0, 60, 1, 1);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base, t.size, 0, 0, 60, 1, 1);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base, t.size, 1, 60, 60, 1, 1);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base, t.size, 1, 61, 60, 1, 1);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base, t.size, 1, 0, 60, 0, 1);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base, t.size, 1, 0, 60, UINT32_MAX, 1);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base, t.size, 1, 0, 60, 1, 0);
    BAD_ADMIT(DC_ERR_ARGUMENT, t.base, t.size, 1, 0, 60, 1, 5);
    st = dc_counters_admit(t.base, t.size, 1, 0, 60, 1, 10, 1, NULL, &admitted);
    CHECK(st == DC_ERR_ARGUMENT, "admit without used_out");
    st = dc_counters_admit(t.base, t.size, 1, 0, 60, 1, 10, 1, &used, NULL);
    CHECK(st == DC_ERR_ARGUMENT, "admit without admitted_out");
    t.base[3] = 'x';
    BAD_ADMIT(DC_ERR_COUNTER_TABLE, t.base, t.size, 1, 0, 60, 1, 1);
    t.base[3] = 'N';
    CHECK(dc_counters_check(t.base, t.size) == DC_OK, "header restored");

#define BAD_PEEK(want, base, size, ident, end, probes)                                        \
    do {                                                                                   \
        count = 77;                                                                        \
        st = dc_counters_peek(base, size, ident, end, probes, &count);                     \
        CHECK(st == (want) && count == 0, "bad peek (line %d): %s", __LINE__,               \
              dc_status_code(st));                                                         \
    } while (0)

    BAD_PEEK(DC_ERR_ARGUMENT, NULL, t.size, 1, 60, 1);
    BAD_PEEK(DC_ERR_ARGUMENT, t.base + 8, t.size - 16, 1, 60, 1);
    BAD_PEEK(DC_ERR_COUNTER_TABLE, t.base, t.size + 16, 1, 60, 1);
    BAD_PEEK(DC_ERR_ARGUMENT, t.base, t.size, 0, 60, 1);
    BAD_PEEK(DC_ERR_ARGUMENT, t.base, t.size, 1, 0, 1);
    BAD_PEEK(DC_ERR_ARGUMENT, t.base, t.size, 1, 60, 0);
    BAD_PEEK(DC_ERR_ARGUMENT, t.base, t.size, 1, 60, 5);
    CHECK(dc_counters_peek(t.base, t.size, 1, 60, 1, NULL) == DC_ERR_ARGUMENT, "peek NULL out");
    {
        size_t i;
        int zero = 1;
        for (i = 16; i < t.size; i++)
            zero &= t.base[i] == 0;
        CHECK(zero, "no bad call wrote a slot");
    }
#undef BAD_ADMIT
#undef BAD_PEEK
    free(t.base);
}

/* ------------------------------------------------------------------ race */

#define NSLOTS 64
#define PROBES 16
#define PROCS 4
#define THREADS 4
#define IDENTS 12
#define ROUNDS 400    /* lock-free: windows, each opening with 12 claim races */
#define ROUNDS_LOCKED 40
#define ATTEMPTS 24  /* per thread, ident and round */
#define LIMIT 150    /* of PROCS * THREADS * ATTEMPTS = 384 attempts per ident and round */
#define WINDOW 60

/* Everything the processes share, in one MAP_SHARED mapping. */
typedef struct shared {
    pthread_barrier_t barrier;  /* every worker thread + the parent */
    pthread_mutex_t mutex;      /* process-shared; used when the table is not lock-free */
    int use_mutex;
    int rounds;
    atomic_ullong admitted[ROUNDS][IDENTS];
    atomic_ullong bad_answers;
    _Alignas(16) unsigned char table[16 + NSLOTS * 16];
} shared;

/* Round r's idents: all of them hash to slots 0..2 (12 idents and 3 foreign
 * live counters in 16 probes: the table never refuses).  Idents 0-3 are the same
 * in every round (their slots are reset window after window); the others
 * change every round, so they claim slots left stale by others. */
static uint64_t race_ident(int round, int k)
{
    uint64_t base = (uint64_t)(k % 3) + (uint64_t)NSLOTS * (uint64_t)(k + 1);
    if (k >= 4)
        base += (uint64_t)NSLOTS * 1000u * (uint64_t)(round % 5);
    return base;
}

typedef struct worker {
    shared *sh;
    int id;
} worker;

static void *race_thread(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    size_t size = sizeof sh->table;
    int round, rep, j;
    for (round = 0; round < sh->rounds; round++) {
        uint32_t start = (uint32_t)(1000 + round * WINDOW), end = start + WINDOW;
        pthread_barrier_wait(&sh->barrier);
        for (rep = 0; rep < ATTEMPTS; rep++) {
            for (j = 0; j < IDENTS; j++) {
                /* half the threads go forwards, half backwards */
                int k = (w->id % 2) ? IDENTS - 1 - j : j;
                uint32_t used = 0;
                int admitted = 0;
                dc_status st;
                if (sh->use_mutex)
                    pthread_mutex_lock(&sh->mutex);
                st = dc_counters_admit(sh->table, size, race_ident(round, k), start, end, 1,
                                       LIMIT, PROBES, &used, &admitted);
                if (sh->use_mutex)
                    pthread_mutex_unlock(&sh->mutex);
                if (st != DC_OK || (admitted && (used < 1 || used > LIMIT)) ||
                    (!admitted && used != LIMIT))
                    atomic_fetch_add(&sh->bad_answers, 1);
                if (admitted)
                    atomic_fetch_add(&sh->admitted[round][k], 1);
            }
        }
        pthread_barrier_wait(&sh->barrier);
    }
    return NULL;
}

static void race_process(shared *sh, int proc)
{
    pthread_t threads[THREADS];
    worker workers[THREADS];
    int i;
    alarm(120);
    for (i = 0; i < THREADS; i++) {
        workers[i].sh = sh;
        workers[i].id = proc * THREADS + i;
        if (pthread_create(&threads[i], NULL, race_thread, &workers[i]) != 0)
            _exit(3);
    }
    for (i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
}

/* Before each round: foreign counters of a short window ending half-way
 * through the round's window, in the first two slots (from 0 on) that are
 * free for the round.  They are live for the whole round although they end
 * during it: a claimer that judged "free" against its own clock rather than
 * its window's start would take them late in the round, after others had
 * claimed elsewhere. */
static void short_counters(table *t, uint32_t start)
{
    uint64_t i, id;
    uint32_t e, c;
    int placed = 0;
    for (i = 0; i < t->nslots && placed < 2; i++) {
        slot_read(t, i, &id, &e, &c);
        if (id == 0 || e <= start) {
            slot_write(t, i, i + NSLOTS * 777, start + WINDOW / 2, 1);
            placed++;
        }
    }
}

static void test_race(int use_mutex)
{
    shared *sh;
    pid_t pids[PROCS];
    pthread_barrierattr_t battr;
    pthread_mutexattr_t mattr;
    table t;
    int p, round, k, status;

    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        printf("mmap failed\n");
        exit(2);
    }
    memset(sh, 0, sizeof *sh);
    pthread_barrierattr_init(&battr);
    pthread_barrierattr_setpshared(&battr, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->barrier, &battr, PROCS * THREADS + 1);
    pthread_mutexattr_init(&mattr);
    pthread_mutexattr_setpshared(&mattr, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&sh->mutex, &mattr);
    sh->use_mutex = use_mutex;
    sh->rounds = use_mutex ? ROUNDS_LOCKED : ROUNDS;
    for (round = 0; round < ROUNDS; round++)
        for (k = 0; k < IDENTS; k++)
            atomic_init(&sh->admitted[round][k], 0);
    atomic_init(&sh->bad_answers, 0);
    t.base = sh->table;
    t.size = sizeof sh->table;
    t.nslots = NSLOTS;
    CHECK(dc_counters_init(t.base, t.size, NSLOTS) == DC_OK, "race: init");
    /* foreign counters among the probed slots: a live one (a long window
     * ending far ahead), one ending exactly when the first round starts
     * (free) and an older one (free) */
    slot_write(&t, 3, 3 + NSLOTS * 999, 1000 + ROUNDS * WINDOW + 3600, 9);
    slot_write(&t, 5, 5 + NSLOTS * 999, 1000, 9);
    slot_write(&t, 7, 7 + NSLOTS * 999, 500, 9);

    for (p = 0; p < PROCS; p++) {
        pids[p] = fork();
        if (pids[p] < 0) {
            printf("fork failed\n");
            exit(2);
        }
        if (pids[p] == 0) {
            race_process(sh, p);
            _exit(0);
        }
    }
    alarm(120);
    for (round = 0; round < sh->rounds; round++) {
        uint32_t end = (uint32_t)(1000 + round * WINDOW + WINDOW);
        int exact = 1, single = 1;
        short_counters(&t, end - WINDOW);
        pthread_barrier_wait(&sh->barrier); /* start */
        pthread_barrier_wait(&sh->barrier); /* every worker is done with the round */
        for (k = 0; k < IDENTS; k++) {
            uint64_t ident = race_ident(round, k);
            unsigned long long got = atomic_load(&sh->admitted[round][k]);
            if (got != LIMIT || peek(&t, ident, end, PROBES) != LIMIT) {
                exact = 0;
                printf("round %d ident %d: admitted %llu, count %lu, want %d\n", round, k, got,
                       (unsigned long)peek(&t, ident, end, PROBES), LIMIT);
            }
            if (holders(&t, ident, end) != 1) {
                single = 0;
                printf("round %d ident %d holds %d slots\n", round, k,
                       holders(&t, ident, end));
            }
        }
        CHECK(exact, "round %d: exactly %d admitted per ident", round, LIMIT);
        CHECK(single, "round %d: one slot per ident and window", round);
        CHECK(holders(&t, 3 + NSLOTS * 999, 1000 + ROUNDS * WINDOW + 3600) == 1,
              "round %d: the live foreign counter is untouched", round);
    }
    for (p = 0; p < PROCS; p++) {
        CHECK(waitpid(pids[p], &status, 0) == pids[p] && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "worker process %d exited cleanly", p);
    }
    alarm(0);
    CHECK(atomic_load(&sh->bad_answers) == 0, "race: %llu bad answers",
          (unsigned long long)atomic_load(&sh->bad_answers));
    pthread_barrier_destroy(&sh->barrier);
    pthread_mutex_destroy(&sh->mutex);
    pthread_barrierattr_destroy(&battr);
    pthread_mutexattr_destroy(&mattr);
    munmap(sh, sizeof *sh);
}

int main(void)
{
    int lock_free = dc_counters_lock_free();
    test_layout();
    test_check_and_init();
    test_limit_and_amounts();
    test_windows();
    test_stale_slots();
    test_full_table();
    test_saturation();
    test_bad_arguments();
    /* lock-free when the build can; else under a lock, as callers must */
    test_race(!lock_free);
    printf("test_counters (%s): %d passed, %d failed\n", lock_free ? "lock-free" : "locked",
           passed, failed);
    return failed ? 1 : 0;
}
