/*
 * ad.c -- reverse-mode automatic differentiation over the bytecode.
 *
 * The forward sweep keeps every temporary (one slot per SSA value), then the
 * reverse sweep visits instructions last to first, turning the adjoint of
 * each result into contributions to its active operands.  Contributions are
 * scattered through the operand's view, so slices and indices need no rule of
 * their own and a broadcast operand (step 0) receives the sum.
 *
 * Conventions where the derivative does not exist (documented in README):
 *   abs'(0) = 0; min/max (both forms) send the gradient to the argument they
 *   return, ties to the first; where() to the branch it returns; clip(v,lo,hi)
 *   to v when lo <= v <= hi; floor, ceil, round, sign, comparisons, and, or,
 *   not have gradient 0; d/db a**b at a == 0 is 0; atan2 and hypot at (0, 0)
 *   and norm at 0 give 0; a zero adjoint contributes exactly 0 (no 0 * NaN).
 */
#include <math.h>
#include <string.h>

#include "common/vmath.h"
#include "expr/expr.h"
#include "expr/scalar.h"
#include "expr/vm.h"

typedef struct sweep {
    const dc_program *p;
    dc_workspace *ws;
    const double *x;
    double *grad;
} sweep;

/* Adjoint storage of an operand's value (NULL when inactive). */
static double *adjoint_of(const sweep *s, dc_operand o)
{
    const dc_value *v = &s->p->values[o.val];
    if (!v->active)
        return NULL;
    if (v->kind == VK_INPUT)
        return s->grad + o.off;
    return s->ws->adj + v->slot + o.off;
}

static void scatter(double *adj, ptrdiff_t es, const double *c, ptrdiff_t m)
{
    ptrdiff_t j;
    if (!adj)
        return;
    if (es == 0) {
        double t = 0.0;
        for (j = 0; j < m; j++)
            t += c[j];
        adj[0] += t;
    } else {
        for (j = 0; j < m; j++)
            adj[j * es] += c[j];
    }
}

#define A_(j) (A.p[(j) * A.es])
#define B_(j) (B.p[(j) * B.es])
#define C_(j) (C.p[(j) * C.es])

/* Contributions of one instruction.  g: adjoint of the result (m values,
 * or one for a reduction); y: the result; c: scratch of m doubles. */
static void reverse(const sweep *s, const dc_instr *in, const double *g, const double *y,
                    double *c)
{
    const dc_program *p = s->p;
    dc_view A, B, C;
    double *da = NULL, *db = NULL, *dc_ = NULL;
    ptrdiff_t m = in->m, j;
    int red = dc_op_info(in->op)->cls == RED || dc_op_info(in->op)->cls == RED2;
    double g0 = g[0];

    dc_vm_view(p, s->x, 0, s->ws->slots, 0, in->in[0], &A);
    da = adjoint_of(s, in->in[0]);
    if (in->nin > 1) {
        dc_vm_view(p, s->x, 0, s->ws->slots, 0, in->in[1], &B);
        db = adjoint_of(s, in->in[1]);
    }
    if (in->nin > 2) {
        dc_vm_view(p, s->x, 0, s->ws->slots, 0, in->in[2], &C);
        dc_ = adjoint_of(s, in->in[2]);
    }
#define GJ (red ? g0 : g[j])
    /* A zero adjoint contributes exactly zero, so a branch that where()
     * does not take (sqrt of a negative, say) cannot poison the gradient. */
#define FOR_X(D, V, EXPR) do { if (D) { for (j = 0; j < m; j++) c[j] = GJ == 0.0 ? 0.0 : (EXPR); scatter(D, V.es, c, m); } } while (0)
#define FOR_A(EXPR) FOR_X(da, A, EXPR)
#define FOR_B(EXPR) FOR_X(db, B, EXPR)
#define FOR_C(EXPR) FOR_X(dc_, C, EXPR)

    switch (in->op) { /* ORDER OP */
    case OP_ADD: case OP_SUMADD:
        FOR_A(GJ);
        FOR_B(GJ);
        break;
    case OP_SUB: case OP_SUMSUB:
        FOR_A(GJ);
        FOR_B(-GJ);
        break;
    case OP_MUL: case OP_SUMMUL:
        FOR_A(GJ * B_(j));
        FOR_B(GJ * A_(j));
        break;
    case OP_DIV:
        FOR_A(g[j] / B_(j));
        FOR_B(-g[j] * y[j] / B_(j));
        break;
    case OP_MOD:
        FOR_A(g[j]);
        FOR_B(-g[j] * floor(A_(j) / B_(j)));
        break;
    case OP_POW:
        FOR_A(g[j] * B_(j) * pow(A_(j), B_(j) - 1.0));
        FOR_B(A_(j) == 0.0 ? 0.0 : g[j] * y[j] * log(A_(j)));
        break;
    case OP_ATAN2:
        FOR_A((A_(j) == 0.0 && B_(j) == 0.0) ? 0.0
              : g[j] * B_(j) / (A_(j) * A_(j) + B_(j) * B_(j)));
        FOR_B((A_(j) == 0.0 && B_(j) == 0.0) ? 0.0
              : -g[j] * A_(j) / (A_(j) * A_(j) + B_(j) * B_(j)));
        break;
    case OP_HYPOT:
        FOR_A(y[j] == 0.0 ? 0.0 : g[j] * A_(j) / y[j]);
        FOR_B(y[j] == 0.0 ? 0.0 : g[j] * B_(j) / y[j]);
        break;
    case OP_MIN2:
        FOR_A((A_(j) <= B_(j) || A_(j) != A_(j)) ? g[j] : 0.0);
        FOR_B((A_(j) <= B_(j) || A_(j) != A_(j)) ? 0.0 : g[j]);
        break;
    case OP_MAX2:
        FOR_A((A_(j) >= B_(j) || A_(j) != A_(j)) ? g[j] : 0.0);
        FOR_B((A_(j) >= B_(j) || A_(j) != A_(j)) ? 0.0 : g[j]);
        break;
    case OP_NEG: FOR_A(-g[j]); break;
    case OP_SQRTPOW:
    case OP_SQRT: FOR_A(g[j] * 0.5 / y[j]); break;
    case OP_ABS: FOR_A(g[j] * dc_sign(A_(j))); break;
    case OP_EXP: FOR_A(g[j] * y[j]); break;
    case OP_LOG: FOR_A(g[j] / A_(j)); break;
    case OP_LOG2: FOR_A(g[j] / (A_(j) * 0.69314718055994530942)); break;
    case OP_LOG10: FOR_A(g[j] / (A_(j) * 2.30258509299404568402)); break;
    case OP_LOG1P: FOR_A(g[j] / (1.0 + A_(j))); break;
    case OP_EXPM1: FOR_A(g[j] * (y[j] + 1.0)); break;
    case OP_SIN:
    case OP_COS:
        if (da) {
            for (j = 0; j < m; j++)
                c[j] = A_(j);
            if (in->op == OP_SIN) {
                dc_vmath_cos(c, c, (size_t)m);
                for (j = 0; j < m; j++)
                    c[j] = g[j] == 0.0 ? 0.0 : c[j] * g[j];
            } else {
                dc_vmath_sin(c, c, (size_t)m);
                for (j = 0; j < m; j++)
                    c[j] = g[j] == 0.0 ? 0.0 : c[j] * -g[j];
            }
            scatter(da, A.es, c, m);
        }
        break;
    case OP_TAN: FOR_A(g[j] * (1.0 + y[j] * y[j])); break;
    case OP_ASIN: FOR_A(g[j] / sqrt(1.0 - A_(j) * A_(j))); break;
    case OP_ACOS: FOR_A(-g[j] / sqrt(1.0 - A_(j) * A_(j))); break;
    case OP_ATAN: FOR_A(g[j] / (1.0 + A_(j) * A_(j))); break;
    case OP_SINH: FOR_A(g[j] * cosh(A_(j))); break;
    case OP_COSH: FOR_A(g[j] * sinh(A_(j))); break;
    case OP_TANH: FOR_A(g[j] * (1.0 - y[j] * y[j])); break;
    case OP_WHERE:
        FOR_B(A_(j) != 0.0 ? g[j] : 0.0);
        FOR_C(A_(j) != 0.0 ? 0.0 : g[j]);
        break;
    case OP_CLIP: {
        /* t = max2(v, lo) picks v when v >= lo (or v is NaN); then min2(t, hi) */
#define PICK_V(j) (A_(j) >= B_(j) || A_(j) != A_(j))
#define T_(j) (PICK_V(j) ? A_(j) : B_(j))
#define PICK_T(j) (T_(j) <= C_(j) || T_(j) != T_(j))
        FOR_A(PICK_V(j) && PICK_T(j) ? g[j] : 0.0);
        FOR_B(!PICK_V(j) && PICK_T(j) ? g[j] : 0.0);
        FOR_C(PICK_T(j) ? 0.0 : g[j]);
        break;
    }
    case OP_SUM: FOR_A(g0); break;
    case OP_MEAN: FOR_A(g0 / (double)m); break;
    case OP_NORM: FOR_A(y[0] == 0.0 ? 0.0 : g0 * A_(j) / y[0]); break;
    case OP_PROD:
        if (da && g0 != 0.0) {
            /* product of the others, without dividing (zeros are fine) */
            double run = 1.0;
            for (j = 0; j < m; j++) {
                c[j] = run;
                run *= A_(j);
            }
            run = g0;
            for (j = m; j-- > 0;) {
                c[j] *= run;
                run *= A_(j);
            }
            scatter(da, A.es, c, m);
        }
        break;
    case OP_MINV:
    case OP_MAXV:
        if (da) {
            ptrdiff_t best = 0;
            double acc = A_(0);
            for (j = 1; j < m; j++) {
                double v = A_(j);
                /* the fold keeps acc on ties and once acc is NaN */
                int keep = in->op == OP_MINV ? (acc <= v || acc != acc) : (acc >= v || acc != acc);
                if (!keep) {
                    acc = v;
                    best = j;
                }
            }
            for (j = 0; j < m; j++)
                c[j] = 0.0;
            c[best] = g0;
            scatter(da, A.es, c, m);
        }
        break;
    case OP_CUMSUM:
        if (da) {
            double run = 0.0;
            for (j = m; j-- > 0;) {
                run += g[j];
                c[j] = run;
            }
            scatter(da, A.es, c, m);
        }
        break;
    default:
        break; /* zero gradient: comparisons, logic, floor, ceil, round, sign */
    }
}

dc_status dc_gradient(const dc_program *p, dc_workspace *ws, const double *x, double *value,
                      double *grad)
{
    sweep s;
    size_t i;
    dc_status st;
    double *res_adj;
    if (!p || !ws || ws->program != p || !value || (p->n_inputs && (!x || !grad)))
        return DC_ERR_ARGUMENT;
    if ((st = dc_vm_run_slots(p, ws, x)))
        return st;
    if (!dc_ws_reserve(ws, &ws->adj, &ws->adj_cap, p->slot_total ? p->slot_total : 1) ||
        !dc_ws_reserve(ws, &ws->scratch, &ws->scratch_cap, p->max_len))
        return DC_ERR_NOMEM;
    *value = dc_vm_slot_elem(p, ws, x, p->result, 0);
    if (p->n_inputs)
        memset(grad, 0, p->n_inputs * sizeof(double));
    memset(ws->adj, 0, (p->slot_total ? p->slot_total : 1) * sizeof(double));
    s.p = p;
    s.ws = ws;
    s.x = x;
    s.grad = grad;
    res_adj = adjoint_of(&s, p->result);
    if (res_adj)
        res_adj[0] += 1.0;
    for (i = p->n_code; i-- > 0;) {
        const dc_instr *in = &p->code[i];
        const dc_value *d = &p->values[in->dst];
        if (!d->active || dc_op_info(in->op)->zero_gradient)
            continue;
        reverse(&s, in, ws->adj + d->slot, ws->slots + d->slot, ws->scratch);
    }
    return DC_OK;
}
