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

DC_KERNEL_CLONES
static void scatter(double *adj, ptrdiff_t es, const double *c, ptrdiff_t m)
{
    ptrdiff_t j;
    if (es == 1) {
        for (j = 0; j < m; j++)
            adj[j] += c[j];
    } else if (es == 0) {
        double t = 0.0;
        for (j = 0; j < m; j++)
            t += c[j];
        adj[0] += t;
    } else {
        for (j = 0; j < m; j++)
            adj[j * es] += c[j];
    }
}

/* The operand as a contiguous array of m values (gathered or broadcast
 * into buf when its view is strided), so the loops below vectorize. */
static const double *dense(const dc_view *v, ptrdiff_t m, double *buf)
{
    ptrdiff_t j;
    if (v->es == 1)
        return v->p;
    if (v->es == 0) {
        const double s0 = v->p[0];
        for (j = 0; j < m; j++)
            buf[j] = s0;
    } else {
        for (j = 0; j < m; j++)
            buf[j] = v->p[j * v->es];
    }
    return buf;
}

/* c holds contributions; a zero adjoint contributes exactly zero, so a
 * branch that where() does not take (sqrt of a negative, say) cannot poison
 * the gradient with 0 * NaN. */
static void deliver(double *adj, ptrdiff_t es, double *c, const double *g, int red, ptrdiff_t m)
{
    ptrdiff_t j;
    if (!adj)
        return;
    if (!red)
        for (j = 0; j < m; j++)
            c[j] = g[j] == 0.0 ? 0.0 : c[j];
    scatter(adj, es, c, m);
}

/* Contributions of one instruction.  g: adjoint of the result (m values,
 * or one for a reduction); y: the result; scratch: 4 * m doubles. */
DC_KERNEL_CLONES
static void reverse(const sweep *s, const dc_instr *in, const double *g, const double *y,
                    double *scratch)
{
    const dc_program *p = s->p;
    dc_view V[3];
    double *adj[3] = {NULL, NULL, NULL};
    const double *a = NULL, *b = NULL, *cc = NULL;
    double *c = scratch;
    ptrdiff_t m = in->m, j;
    int cls = dc_op_info(in->op)->cls, red = cls == RED || cls == RED2, k;
    const double g0 = g[0];

    if (red && g0 == 0.0)
        return;
    for (k = 0; k < in->nin; k++) {
        dc_vm_view(p, s->x, 0, s->ws->slots, 0, in->in[k], &V[k]);
        adj[k] = adjoint_of(s, in->in[k]);
    }
    a = dense(&V[0], m, scratch + m);
    if (in->nin > 1)
        b = dense(&V[1], m, scratch + 2 * m);
    if (in->nin > 2)
        cc = dense(&V[2], m, scratch + 3 * m);

#define GJ (red ? g0 : g[j])
#define FOR(K, EXPR)                                                                       \
    do {                                                                                   \
        if (adj[K]) {                                                                      \
            for (j = 0; j < m; j++)                                                        \
                c[j] = (EXPR);                                                             \
            deliver(adj[K], V[K].es, c, g, red, m);                                        \
        }                                                                                  \
    } while (0)

    switch (in->op) { /* ORDER OP */
    case OP_ADD: case OP_SUMADD:
        FOR(0, GJ);
        FOR(1, GJ);
        break;
    case OP_SUB: case OP_SUMSUB:
        FOR(0, GJ);
        FOR(1, -GJ);
        break;
    case OP_MUL: case OP_SUMMUL:
        FOR(0, GJ * b[j]);
        FOR(1, GJ * a[j]);
        break;
    case OP_DIV:
        FOR(0, g[j] / b[j]);
        FOR(1, -g[j] * y[j] / b[j]);
        break;
    case OP_MOD:
        FOR(0, g[j]);
        FOR(1, -g[j] * floor(a[j] / b[j]));
        break;
    case OP_POW:
        FOR(0, g[j] * b[j] * pow(a[j], b[j] - 1.0));
        FOR(1, a[j] == 0.0 ? 0.0 : g[j] * y[j] * log(a[j]));
        break;
    case OP_ATAN2:
        FOR(0, (a[j] == 0.0 && b[j] == 0.0) ? 0.0 : g[j] * b[j] / (a[j] * a[j] + b[j] * b[j]));
        FOR(1, (a[j] == 0.0 && b[j] == 0.0) ? 0.0 : -g[j] * a[j] / (a[j] * a[j] + b[j] * b[j]));
        break;
    case OP_HYPOT:
        FOR(0, y[j] == 0.0 ? 0.0 : g[j] * a[j] / y[j]);
        FOR(1, y[j] == 0.0 ? 0.0 : g[j] * b[j] / y[j]);
        break;
    case OP_MIN2:
        FOR(0, dc_min_first(a[j], b[j]) ? g[j] : 0.0);
        FOR(1, dc_min_first(a[j], b[j]) ? 0.0 : g[j]);
        break;
    case OP_MAX2:
        FOR(0, dc_max_first(a[j], b[j]) ? g[j] : 0.0);
        FOR(1, dc_max_first(a[j], b[j]) ? 0.0 : g[j]);
        break;
    case OP_NEG: FOR(0, -g[j]); break;
    case OP_SQRTPOW:
    case OP_SQRT: FOR(0, g[j] * 0.5 / y[j]); break;
    case OP_ABS: FOR(0, g[j] * (a[j] > 0.0 ? 1.0 : a[j] < 0.0 ? -1.0 : a[j] == 0.0 ? 0.0 : a[j])); break;
    case OP_EXP: FOR(0, g[j] * y[j]); break;
    case OP_LOG: FOR(0, g[j] / a[j]); break;
    case OP_LOG2: FOR(0, g[j] / (a[j] * 0.69314718055994530942)); break;
    case OP_LOG10: FOR(0, g[j] / (a[j] * 2.30258509299404568402)); break;
    case OP_LOG1P: FOR(0, g[j] / (1.0 + a[j])); break;
    case OP_EXPM1: FOR(0, g[j] * (y[j] + 1.0)); break;
    case OP_SIN:
    case OP_COS:
        if (adj[0]) {
            if (in->op == OP_SIN) {
                dc_vmath_cos(a, c, (size_t)m);
                for (j = 0; j < m; j++)
                    c[j] *= g[j];
            } else {
                dc_vmath_sin(a, c, (size_t)m);
                for (j = 0; j < m; j++)
                    c[j] *= -g[j];
            }
            deliver(adj[0], V[0].es, c, g, 0, m);
        }
        break;
    case OP_TAN: FOR(0, g[j] * (1.0 + y[j] * y[j])); break;
    case OP_ASIN: FOR(0, g[j] / sqrt(1.0 - a[j] * a[j])); break;
    case OP_ACOS: FOR(0, -g[j] / sqrt(1.0 - a[j] * a[j])); break;
    case OP_ATAN: FOR(0, g[j] / (1.0 + a[j] * a[j])); break;
    case OP_SINH: FOR(0, g[j] * cosh(a[j])); break;
    case OP_COSH: FOR(0, g[j] * sinh(a[j])); break;
    case OP_TANH: FOR(0, g[j] * (1.0 - y[j] * y[j])); break;
    case OP_WHERE:
        FOR(1, a[j] != 0.0 ? g[j] : 0.0);
        FOR(2, a[j] != 0.0 ? 0.0 : g[j]);
        break;
    case OP_CLIP: {
        /* t = max2(v, lo) picks v when v >= lo (or v is NaN); then min2(t, hi) */
#define PICK_V dc_max_first(a[j], b[j])
#define T_ (PICK_V ? a[j] : b[j])
#define PICK_T dc_min_first(T_, cc[j])
        FOR(0, PICK_V && PICK_T ? g[j] : 0.0);
        FOR(1, !PICK_V && PICK_T ? g[j] : 0.0);
        FOR(2, PICK_T ? 0.0 : g[j]);
        break;
    }
    case OP_SUM: FOR(0, g0); break;
    case OP_MEAN: FOR(0, g0 / (double)m); break;
    case OP_NORM: FOR(0, y[0] == 0.0 ? 0.0 : g0 * a[j] / y[0]); break;
    case OP_PROD:
        if (adj[0]) {
            /* product of the others, without dividing (zeros are fine) */
            double run = 1.0;
            for (j = 0; j < m; j++) {
                c[j] = run;
                run *= a[j];
            }
            run = g0;
            for (j = m; j-- > 0;) {
                c[j] *= run;
                run *= a[j];
            }
            scatter(adj[0], V[0].es, c, m);
        }
        break;
    case OP_MINV:
    case OP_MAXV:
        if (adj[0]) {
            ptrdiff_t best = 0;
            double acc = a[0];
            for (j = 1; j < m; j++) {
                /* the fold keeps acc on ties and once acc is NaN */
                int keep = in->op == OP_MINV ? dc_min_first(acc, a[j]) : dc_max_first(acc, a[j]);
                if (!keep) {
                    acc = a[j];
                    best = j;
                }
            }
            for (j = 0; j < m; j++)
                c[j] = 0.0;
            c[best] = g0;
            scatter(adj[0], V[0].es, c, m);
        }
        break;
    case OP_CUMSUM:
        if (adj[0]) {
            double run = 0.0;
            for (j = m; j-- > 0;) {
                run += g[j];
                c[j] = run;
            }
            scatter(adj[0], V[0].es, c, m);
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
        !dc_ws_reserve(ws, &ws->scratch, &ws->scratch_cap, 4 * p->max_len))
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
