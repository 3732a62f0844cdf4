/* alloc.h -- every allocation of the library goes through a dc_allocator. */
#ifndef DC_ALLOC_H
#define DC_ALLOC_H

#include "decido.h"

/* The allocator used when the caller passes NULL (wraps realloc/free). */
const dc_allocator *dc_mem_default(void);

void *dc_mem_alloc(const dc_allocator *a, size_t size);
void *dc_mem_calloc(const dc_allocator *a, size_t count, size_t size);
void dc_mem_free(const dc_allocator *a, void *ptr, size_t size);
/* Grow *ptr (holding *cap elements of elem bytes) to hold at least need
 * elements; doubles the capacity.  Overflow-checked; 0 on failure (the old
 * block is untouched). */
int dc_mem_grow(const dc_allocator *a, void **ptr, size_t *cap, size_t need, size_t elem);
/* a * b without overflow: 0 on overflow, else 1 and *out = a * b. */
int dc_mul_size(size_t a, size_t b, size_t *out);

/* An arena: buffers that live and die together (a run's) in one block.  The
 * owner lists its buffers in one function of dc_arena_take calls and runs it
 * twice: on a zeroed arena, which only counts (every take returns NULL), then
 * after dc_arena_open, which allocates the counted bytes zeroed, where each
 * take carves its slice (aligned for any type; NULL for 0 elements).
 * dc_arena_close frees the block once. */
typedef struct dc_arena {
    unsigned char *base; /* NULL while counting */
    size_t size, used;   /* bytes */
    int overflow;        /* a size did not fit in size_t */
} dc_arena;

void *dc_arena_take(dc_arena *a, size_t count, size_t elem);
/* 0 on overflow or when the allocation fails (the arena is then empty). */
int dc_arena_open(dc_arena *a, const dc_allocator *alloc);
void dc_arena_close(dc_arena *a, const dc_allocator *alloc);

#endif
