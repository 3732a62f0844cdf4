/*
 * counters.c -- exact window counters in a table shared between processes
 * (decido.h, dc_counters_*).
 *
 * The table lives in memory the caller owns and maps, usually a file mapped
 * MAP_SHARED by every worker process of the service, so its layout is a file
 * format:
 *
 *   offset  size  field
 *        0     8  magic "DCCNT001"
 *        8     8  uint64 n, the number of slots (>= 1)
 *       16  16*n  n slots of 16 bytes, 16-byte aligned:
 *                   +0  uint64 ident  the counter (0: the slot was never used)
 *                   +8  uint32 end    end of the counter's window, Unix seconds
 *                   +12 uint32 count  what was counted in that window
 *
 * Integers are in host byte order (little endian on every platform we build
 * for); the table is exactly 16 + 16 n bytes.
 *
 * Lookup: a counter may live in the `probes` slots from ident % n on (linear,
 * wrapping).  A check-and-increment is one 16-byte compare-and-swap of a
 * whole slot, from the value read to the new one; when the CAS fails (another
 * process or thread wrote the slot since) the whole scan starts again.  No
 * lock, no syscall: a worker killed at any instant leaves every slot either
 * before or after its write.
 *
 * Why one (ident, window) never gets two slots.  A scan reads every probed
 * slot until it meets `ident`.  If it does, that slot is the counter.  If it
 * does not, the request claims the FIRST slot that is free for its window
 * [start, end): never used, or its own window ended by `start`.  Free is
 * judged against `start`, not against the clock, so every claimer of one
 * (ident, window) judges every slot the same way; and a slot's end only
 * grows (a claim needs old end <= start < end = new end; a reset moves a
 * counter to a later window), so a slot free for a window can become live
 * but never free again.  Two claimers racing for one (ident, window) thus
 * pick the same slot unless one of them read a slot that then changed, and
 * then its CAS fails and it scans again, this time finding the ident.
 *
 * A request whose window has already ended while it was in flight (the
 * ident's slot holds a later window) is judged as the first request of its
 * own window and writes nothing: it must not reset the live counter.
 *
 * Reads: each slot is read as two 8-byte atomic loads, the (end, count) word,
 * then the ident word, then the (end, count) word again, retried until both
 * reads of that word agree.  Every write changes that word (the count grows,
 * or the end does), so agreeing reads mean no write came in between and the
 * three loads saw one value of the slot.
 *
 * Without an inline 16-byte CAS (dc_counters_lock_free() == 0) the same code
 * runs with plain loads and stores: the caller must then hold an exclusive
 * lock (shared by every process) around each call; defining DC_COUNTERS_PLAIN
 * builds that variant anywhere (test_counters_plain).  libatomic's 16-byte
 * operations are deliberately not used: where they are not inline they take
 * a lock that is local to the process, which would be wrong for a table
 * shared between processes.
 */
#include "decido.h"

#include <string.h>

#define MAGIC "DCCNT001"
#define HEADER_SIZE 16u
#define SLOT_SIZE 16u
#define COUNT_MAX (UINT32_MAX - 1u) /* counts saturate here */
#define NO_LIMIT UINT32_MAX

#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16) && defined(__SIZEOF_INT128__) && \
    !defined(DC_COUNTERS_PLAIN)
#define LOCK_FREE 1
__extension__ typedef unsigned __int128 slot_bits;
#else
#define LOCK_FREE 0
#endif

/* One slot's value: the ident word and the (end, count) word, in memory
 * order. */
typedef struct slot_value {
    uint64_t ident;
    uint64_t tail;
} slot_value;

_Static_assert(sizeof(slot_value) == SLOT_SIZE, "a slot is 16 bytes");

static uint64_t tail_of(uint32_t end, uint32_t count)
{
    unsigned char b[8];
    uint64_t tail;
    memcpy(b, &end, 4);
    memcpy(b + 4, &count, 4);
    memcpy(&tail, b, 8);
    return tail;
}

static uint32_t end_of(uint64_t tail)
{
    uint32_t end;
    memcpy(&end, &tail, 4);
    return end;
}

static uint32_t count_of(uint64_t tail)
{
    uint32_t count;
    memcpy(&count, (const unsigned char *)&tail + 4, 4);
    return count;
}

#if LOCK_FREE

static slot_value slot_load(const unsigned char *slot)
{
    const uint64_t *word = (const uint64_t *)(const void *)slot;
    slot_value v;
    for (;;) {
        uint64_t again;
        v.tail = __atomic_load_n(&word[1], __ATOMIC_ACQUIRE);
        v.ident = __atomic_load_n(&word[0], __ATOMIC_ACQUIRE);
        again = __atomic_load_n(&word[1], __ATOMIC_ACQUIRE);
        if (again == v.tail)
            return v;
    }
}

static int slot_cas(unsigned char *slot, slot_value old, slot_value new_value)
{
    slot_bits expected, desired;
    memcpy(&expected, &old, sizeof expected);
    memcpy(&desired, &new_value, sizeof desired);
    return __sync_bool_compare_and_swap((slot_bits *)(void *)slot, expected, desired);
}

#else /* the caller holds an exclusive lock */

static slot_value slot_load(const unsigned char *slot)
{
    slot_value v;
    memcpy(&v, slot, sizeof v);
    return v;
}

static int slot_cas(unsigned char *slot, slot_value old, slot_value new_value)
{
    slot_value now = slot_load(slot);
    if (now.ident != old.ident || now.tail != old.tail)
        return 0;
    memcpy(slot, &new_value, sizeof new_value);
    return 1;
}

#endif

int dc_counters_lock_free(void)
{
    return LOCK_FREE;
}

size_t dc_counters_size(uint64_t nslots)
{
    if (nslots == 0 || nslots > (SIZE_MAX - HEADER_SIZE) / SLOT_SIZE)
        return 0;
    return HEADER_SIZE + (size_t)nslots * SLOT_SIZE;
}

static int misaligned(const void *base)
{
    return ((uintptr_t)base % SLOT_SIZE) != 0;
}

dc_status dc_counters_init(void *base, size_t size, uint64_t nslots)
{
    size_t need = dc_counters_size(nslots);
    if (!base || misaligned(base) || need == 0 || size != need)
        return DC_ERR_ARGUMENT;
    memset((unsigned char *)base + HEADER_SIZE, 0, size - HEADER_SIZE);
    memcpy(base, MAGIC, 8);
    memcpy((unsigned char *)base + 8, &nslots, 8);
    return DC_OK;
}

dc_status dc_counters_check(const void *base, size_t size)
{
    uint64_t nslots;
    if (!base || misaligned(base))
        return DC_ERR_ARGUMENT;
    if (size < HEADER_SIZE || memcmp(base, MAGIC, 8) != 0)
        return DC_ERR_COUNTER_TABLE;
    memcpy(&nslots, (const unsigned char *)base + 8, 8);
    if (dc_counters_size(nslots) == 0 || dc_counters_size(nslots) != size)
        return DC_ERR_COUNTER_TABLE;
    return DC_OK;
}

/* The checks shared by admit and peek; *nslots from the header. */
static dc_status check_call(const void *base, size_t size, uint64_t ident, uint32_t probes,
                            uint64_t *nslots)
{
    dc_status st = dc_counters_check(base, size);
    if (st != DC_OK)
        return st;
    memcpy(nslots, (const unsigned char *)base + 8, 8);
    if (ident == 0 || probes == 0 || probes > *nslots)
        return DC_ERR_ARGUMENT;
    return DC_OK;
}

/* Byte offset of the probe-th slot from home (home, probe < nslots: no
 * wrap-around of home + probe). */
static size_t slot_offset(uint64_t home, uint64_t probe, uint64_t nslots)
{
    return HEADER_SIZE + (size_t)((home + probe) % nslots) * SLOT_SIZE;
}

dc_status dc_counters_admit(void *base, size_t size, uint64_t ident, uint32_t start,
                            uint32_t end, uint32_t amount, uint32_t limit, uint32_t probes,
                            uint32_t *used_out, int *admitted_out)
{
    unsigned char *table = base;
    uint64_t nslots, home, p;
    dc_status st;
    if (!used_out || !admitted_out)
        return DC_ERR_ARGUMENT;
    *used_out = 0;
    *admitted_out = 0;
    st = check_call(base, size, ident, probes, &nslots);
    if (st != DC_OK)
        return st;
    if (start >= end || amount == 0 || amount > COUNT_MAX)
        return DC_ERR_ARGUMENT;
    home = ident % nslots;

    for (;;) {
        unsigned char *target = NULL;
        slot_value old = {0, 0}, new_value;
        uint32_t used = 0;
        uint64_t total;
        int own = 0;

        for (p = 0; p < probes; p++) {
            unsigned char *slot = table + slot_offset(home, p, nslots);
            slot_value v = slot_load(slot);
            if (v.ident == ident) {
                target = slot;
                old = v;
                own = 1;
                break;
            }
            if (!target && (v.ident == 0 || end_of(v.tail) <= start)) {
                target = slot; /* the first slot free for this window */
                old = v;
            }
        }
        if (!target) { /* every probed slot is another live counter: refuse */
            *used_out = limit;
            return DC_OK;
        }
        if (own) {
            uint32_t slot_end = end_of(old.tail);
            if (slot_end > end) {
                /* the window ended while the request was in flight; its
                 * counter is gone: judge it alone, write nothing */
                if (limit == NO_LIMIT || amount <= limit) {
                    *used_out = amount;
                    *admitted_out = 1;
                }
                return DC_OK;
            }
            if (slot_end == end)
                used = count_of(old.tail); /* else an older window: reset */
        }
        total = (uint64_t)used + amount;
        if (limit != NO_LIMIT && total > limit) {
            *used_out = used;
            return DC_OK;
        }
        if (total > COUNT_MAX)
            total = COUNT_MAX;
        if (own && end_of(old.tail) == end && total == used) {
            *used_out = used; /* saturated, no limit: nothing to write */
            *admitted_out = 1;
            return DC_OK;
        }
        new_value.ident = ident;
        new_value.tail = tail_of(end, (uint32_t)total);
        if (slot_cas(target, old, new_value)) {
            *used_out = (uint32_t)total;
            *admitted_out = 1;
            return DC_OK;
        }
    }
}

dc_status dc_counters_peek(const void *base, size_t size, uint64_t ident, uint32_t end,
                           uint32_t probes, uint32_t *count_out)
{
    const unsigned char *table = base;
    uint64_t nslots, home, p;
    dc_status st;
    if (!count_out)
        return DC_ERR_ARGUMENT;
    *count_out = 0;
    st = check_call(base, size, ident, probes, &nslots);
    if (st != DC_OK)
        return st;
    if (end == 0)
        return DC_ERR_ARGUMENT;
    home = ident % nslots;
    for (p = 0; p < probes; p++) {
        slot_value v = slot_load(table + slot_offset(home, p, nslots));
        if (v.ident == ident) {
            if (end_of(v.tail) == end)
                *count_out = count_of(v.tail);
            break;
        }
    }
    return DC_OK;
}
