/* failing_alloc.h -- an allocator for the C tests that fails every request
 * after the first fail_after ones and counts the blocks still live, so a test
 * can check that every allocation failure is reported and leaks nothing. */
#ifndef DC_TEST_FAILING_ALLOC_H
#define DC_TEST_FAILING_ALLOC_H

#include <stdlib.h>

typedef struct counting {
    long allocations, fail_after, live;
} counting;

static void *failing_realloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    counting *c = ud;
    (void)old_size;
    if (new_size == 0) {
        if (ptr)
            c->live--;
        free(ptr);
        return NULL;
    }
    if (c->allocations >= c->fail_after)
        return NULL;
    c->allocations++;
    {
        void *q = realloc(ptr, new_size);
        if (q && !ptr)
            c->live++;
        return q;
    }
}

#endif
