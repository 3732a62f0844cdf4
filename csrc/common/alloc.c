/* alloc.c -- the allocator hook and checked growth. */
#include "common/alloc.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *default_realloc(void *userdata, void *ptr, size_t old_size, size_t new_size)
{
    (void)userdata;
    (void)old_size;
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, new_size);
}

static const dc_allocator default_allocator = {default_realloc, NULL};

const dc_allocator *dc_mem_default(void)
{
    return &default_allocator;
}

int dc_mul_size(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > SIZE_MAX / b)
        return 0;
    *out = a * b;
    return 1;
}

void *dc_mem_alloc(const dc_allocator *a, size_t size)
{
    if (size == 0)
        size = 1;
    return a->realloc(a->userdata, NULL, 0, size);
}

void *dc_mem_calloc(const dc_allocator *a, size_t count, size_t size)
{
    size_t total;
    void *p;
    if (!dc_mul_size(count, size, &total))
        return NULL;
    p = dc_mem_alloc(a, total);
    if (p)
        memset(p, 0, total == 0 ? 1 : total);
    return p;
}

void dc_mem_free(const dc_allocator *a, void *ptr, size_t size)
{
    if (ptr)
        a->realloc(a->userdata, ptr, size == 0 ? 1 : size, 0);
}

int dc_mem_grow(const dc_allocator *a, void **ptr, size_t *cap, size_t need, size_t elem)
{
    size_t newcap, oldbytes, newbytes;
    void *p;
    if (need <= *cap)
        return 1;
    newcap = *cap < 8 ? 8 : *cap;
    while (newcap < need) {
        if (newcap > SIZE_MAX / 2)
            return 0;
        newcap *= 2;
    }
    if (!dc_mul_size(newcap, elem, &newbytes) || !dc_mul_size(*cap, elem, &oldbytes))
        return 0;
    p = a->realloc(a->userdata, *ptr, *ptr ? (oldbytes ? oldbytes : 1) : 0, newbytes);
    if (!p)
        return 0;
    *ptr = p;
    *cap = newcap;
    return 1;
}

enum { ARENA_ALIGN = _Alignof(max_align_t) };

void *dc_arena_take(dc_arena *a, size_t count, size_t elem)
{
    size_t bytes, start = a->used;
    if (count == 0)
        return NULL;
    if (!dc_mul_size(count, elem, &bytes) || bytes > SIZE_MAX - ARENA_ALIGN ||
        start > SIZE_MAX - ARENA_ALIGN - bytes) {
        a->overflow = 1;
        return NULL;
    }
    a->used = start + (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (!a->base)
        return NULL;
    return a->base + start;
}

int dc_arena_open(dc_arena *a, const dc_allocator *alloc)
{
    size_t size = a->used;
    if (a->overflow)
        return 0;
    a->base = size ? dc_mem_calloc(alloc, 1, size) : NULL;
    if (size && !a->base)
        return 0;
    a->size = size;
    a->used = 0;
    return 1;
}

void dc_arena_close(dc_arena *a, const dc_allocator *alloc)
{
    dc_mem_free(alloc, a->base, a->size);
    memset(a, 0, sizeof *a);
}
