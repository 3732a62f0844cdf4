/* opinfo.c -- opcode properties (rows in opcodes.def) and scalar semantics. */
#include <math.h>

#include "common/vmath.h"
#include "expr/expr.h"
#include "expr/scalar.h"

static const dc_opinfo op_table[OP__COUNT] = {
#define DC_OP(e, name, nin, cls, comm, zero) {name, nin, cls, comm, zero},
#include "expr/opcodes.def"
#undef DC_OP
};

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

/* The scalar meaning of an elementwise opcode (folding, reference). */
double dc_scalar_op(int op, double a, double b, double c)
{
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_MOD: return dc_mod(a, b);
    case OP_POW: return dc_pow(a, b);
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_AND: return (a != 0.0) && (b != 0.0);
    case OP_OR: return (a != 0.0) || (b != 0.0);
    case OP_ATAN2: return atan2(a, b);
    case OP_HYPOT: return hypot(a, b);
    case OP_MIN2: return dc_min2(a, b);
    case OP_MAX2: return dc_max2(a, b);
    case OP_NOT: return a == 0.0;
    case OP_NEG: return -a;
    case OP_SQRTPOW: return dc_sqrtpow(a);
    case OP_ABS: return fabs(a);
    case OP_SQRT: return sqrt(a);
    case OP_EXP: return vmath1(dc_vmath_exp, a);
    case OP_LOG: return vmath1(dc_vmath_log, a);
    case OP_LOG2: return log2(a);
    case OP_LOG10: return log10(a);
    case OP_LOG1P: return log1p(a);
    case OP_EXPM1: return expm1(a);
    case OP_SIN: return vmath1(dc_vmath_sin, a);
    case OP_COS: return vmath1(dc_vmath_cos, a);
    case OP_TAN: return tan(a);
    case OP_ASIN: return asin(a);
    case OP_ACOS: return acos(a);
    case OP_ATAN: return atan(a);
    case OP_SINH: return sinh(a);
    case OP_COSH: return cosh(a);
    case OP_TANH: return tanh(a);
    case OP_FLOOR: return floor(a);
    case OP_CEIL: return ceil(a);
    case OP_ROUND: return round(a);
    case OP_SIGN: return dc_sign(a);
    case OP_WHERE: return dc_where(a, b, c);
    case OP_CLIP: return dc_clip(a, b, c);
    default: return NAN;
    }
}
