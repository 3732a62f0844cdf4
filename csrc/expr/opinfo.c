/* opinfo.c -- opcode properties (rows in opcodes.def) and scalar semantics. */
#include <math.h>

#include "common/vmath.h"
#include "expr/expr.h"
#include "expr/scalar.h"

#define NONE 1
#define OWN 0
#define D1(...) 0
#define D2(...) 0
#define D3(...) 0
static const dc_opinfo op_table[OP__COUNT] = {
#define DC_OP(e, name, nin, cls, comm, fn, range, lo, hi, adjoint) \
    {name, nin, cls == EWV ? EW : cls, comm, adjoint},
#include "expr/opcodes.def"
#undef DC_OP
};
#undef NONE
#undef OWN
#undef D1
#undef D2
#undef D3

const dc_opinfo *dc_op_info(int op)
{
    return (op >= 0 && op < OP__COUNT) ? &op_table[op] : NULL;
}

/* sin, cos, exp and log of one value by the VM's own kernels (not libm's, which may
 * differ in the last bit), so a folded constant is what the VM computes at run time */
static double vmath1(void (*kernel)(const double *, double *, size_t), double a)
{
    double y;
    kernel(&a, &y, 1);
    return y;
}

/* The scalar meaning of an elementwise opcode (folding, reference): the fn
 * column of its row; NaN for a reduction or a scan. */
#define SCALAR_EW_1(fn) fn(a)
#define SCALAR_EW_2(fn) fn(a, b)
#define SCALAR_EW_3(fn) fn(a, b, c)
#define SCALAR_EWV_1(fn) vmath1(fn, a)
#define SCALAR_RED_1(fn) NAN
#define SCALAR_RED2_2(fn) NAN
#define SCALAR_SCAN_1(fn) NAN
double dc_scalar_op(int op, double a, double b, double c)
{
    switch (op) {
#define DC_OP(e, name, nin, cls, comm, fn, range, lo, hi, adjoint) \
    case e: return SCALAR_##cls##_##nin(fn);
#include "expr/opcodes.def"
#undef DC_OP
    default: return NAN;
    }
}
