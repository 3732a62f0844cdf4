/* builder.h -- the IR builder (builder.c): resolve.c lowers a syntax tree
 * through it, compile.c sets it up and runs the passes after it. */
#ifndef DC_BUILDER_H
#define DC_BUILDER_H

#include "expr/expr.h"

/* A lowered subexpression: a view of a value and its shape. */
typedef struct dc_ref {
    dc_operand v;
    int32_t len; /* elements (1 for a scalar) */
    uint8_t vec; /* vector (else scalar) */
} dc_ref;

typedef struct dc_builder {
    dc_program *p;
    const dc_allocator *a;
    dc_error *err;
    size_t max_instructions;
    size_t pos, len;       /* source span of what is being emitted (errors, spans) */
    int32_t *ctab;         /* CSE: instruction indices, open addressing */
    size_t ccap, ccount;
    int32_t *ktab;         /* scalar constants by bit pattern */
    size_t kcap, kcount;
    int64_t *ntab;         /* variable names: indices into p->names, open addressing */
    size_t ncap;
} dc_builder;

dc_status dc_build_scalar(dc_builder *b, double x, dc_ref *out);
dc_status dc_build_vector_const(dc_builder *b, int32_t len, double **data, dc_ref *out);
dc_status dc_build_ew(dc_builder *b, int op, const dc_ref *args, int nin, dc_ref *out);
dc_status dc_build_pow(dc_builder *b, dc_ref base, dc_ref exponent, dc_ref *out);
dc_status dc_build_reduce(dc_builder *b, int op, dc_ref arg, dc_ref *out);
const dc_value *dc_build_value(const dc_builder *b, dc_ref r);
int dc_build_const_scalar(const dc_builder *b, dc_ref r, double *x);

/* The program's input value (first value; uniform when x has a dimension n). */
dc_status dc_build_input(dc_builder *b, int uniform);

/* The variable names' table: sized for count names (0 when out of memory),
 * then p->names[index] inserted one by one. */
int dc_build_name_table(dc_builder *b, size_t count);
void dc_build_name_insert(dc_builder *b, size_t index);
/* The index of the variable named by the len bytes at s, or -1 (a hash
 * lookup: compiling N names stays linear in N). */
int64_t dc_build_name_index(const dc_builder *b, const char *s, size_t len);

#endif
