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

/* The operands of one instruction in the reverse sweep. */
typedef struct operands {
    dc_view V[3];
    double *adj[3];           /* NULL when inactive */
    const double *a, *b, *c;  /* dense operand values (m each) */
} operands;

/* The rows whose adjoint column is OWN (opcodes.def). */
static void reverse_own(int op, const operands *o, const double *g, ptrdiff_t m, double *contrib)
{
    const double *a = o->a, g0 = g[0];
    ptrdiff_t j;
    if (!o->adj[0])
        return;
    switch (op) { /* ORDER OP: rows with adjoint OWN */
    case OP_SIN:
    case OP_COS:
        /* the vector kernels: cos for sin', sin for cos' */
        if (op == OP_SIN) {
            dc_vmath_cos(a, contrib, (size_t)m);
            for (j = 0; j < m; j++)
                contrib[j] *= g[j];
        } else {
            dc_vmath_sin(a, contrib, (size_t)m);
            for (j = 0; j < m; j++)
                contrib[j] *= -g[j];
        }
        deliver(o->adj[0], o->V[0].es, contrib, g, 0, m);
        break;
    case OP_PROD: {
        /* product of the others, without dividing (zeros are fine) */
        double run = 1.0;
        for (j = 0; j < m; j++) {
            contrib[j] = run;
            run *= a[j];
        }
        run = g0;
        for (j = m; j-- > 0;) {
            contrib[j] *= run;
            run *= a[j];
        }
        scatter(o->adj[0], o->V[0].es, contrib, m);
        break;
    }
    case OP_MINV:
    case OP_MAXV: {
        ptrdiff_t best = 0;
        double acc = a[0];
        for (j = 1; j < m; j++) {
            /* the fold keeps acc on ties and once acc is NaN */
            int keep = op == OP_MINV ? dc_min_first(acc, a[j]) : dc_max_first(acc, a[j]);
            if (!keep) {
                acc = a[j];
                best = j;
            }
        }
        for (j = 0; j < m; j++)
            contrib[j] = 0.0;
        contrib[best] = g0;
        scatter(o->adj[0], o->V[0].es, contrib, m);
        break;
    }
    case OP_CUMSUM: {
        double run = 0.0;
        for (j = m; j-- > 0;) {
            run += g[j];
            contrib[j] = run;
        }
        scatter(o->adj[0], o->V[0].es, contrib, m);
        break;
    }
    default:
        break; /* a row marked OWN without its case here: test_expr.c fails */
    }
}

/* The adjoint column of opcodes.def: operand K's contributions, element by
 * element, from g (the result's adjoint), y (the result), the operands a, b, c
 * and m; a reduction's g and y are its one scalar (red, constant per row). */
#define BIND1 const double a = o.a[j]; (void)a
#define BIND2 BIND1; const double b = o.b[j]; (void)b
#define BIND3 BIND2; const double c = o.c[j]; (void)c
#define RULE(K, BIND, EXPR)                                                                \
    do {                                                                                   \
        if (o.adj[K]) {                                                                    \
            for (j = 0; j < m; j++) {                                                      \
                const double g = red ? g0 : gv[j], y = red ? yv[0] : yv[j];                \
                BIND;                                                                      \
                (void)g;                                                                   \
                (void)y;                                                                   \
                contrib[j] = (EXPR);                                                       \
            }                                                                              \
            deliver(o.adj[K], o.V[K].es, contrib, gv, red, m);                             \
        }                                                                                  \
    } while (0)
#define D1(r0) RULE(0, BIND1, r0)
#define D2(r0, r1) RULE(0, BIND2, r0); RULE(1, BIND2, r1)
#define D3(r0, r1, r2) RULE(0, BIND3, r0); RULE(1, BIND3, r1); RULE(2, BIND3, r2)
#define NONE
#define OWN reverse_own(in->op, &o, gv, m, contrib)

/* Contributions of one instruction.  gv: adjoint of the result (m values,
 * or one for a reduction); yv: the result; scratch: 4 * m doubles. */
DC_KERNEL_CLONES
static void reverse(const sweep *s, const dc_instr *in, const double *gv, const double *yv,
                    double *scratch)
{
    const dc_program *p = s->p;
    operands o;
    double *contrib = scratch;
    ptrdiff_t m = in->m, j;
    int cls = dc_op_info(in->op)->cls, k;
    const double g0 = gv[0];

    if ((cls == RED || cls == RED2) && g0 == 0.0)
        return;
    memset(&o, 0, sizeof o);
    for (k = 0; k < in->nin; k++) {
        dc_vm_view(p, s->x, 0, s->ws->slots, 0, in->in[k], &o.V[k]);
        o.adj[k] = adjoint_of(s, in->in[k]);
    }
    o.a = dense(&o.V[0], m, scratch + m);
    if (in->nin > 1)
        o.b = dense(&o.V[1], m, scratch + 2 * m);
    if (in->nin > 2)
        o.c = dense(&o.V[2], m, scratch + 3 * m);

    switch (in->op) {
#define DC_OP(e, name, nin, cls_, comm, fn, range, lo, hi, adjoint)                        \
    case e: {                                                                              \
        const int red = cls_ == RED || cls_ == RED2;                                       \
        (void)red;                                                                         \
        adjoint;                                                                           \
        break;                                                                             \
    }
#include "expr/opcodes.def"
#undef DC_OP
    default:
        break;
    }
}
#undef BIND1
#undef BIND2
#undef BIND3
#undef RULE
#undef D1
#undef D2
#undef D3
#undef NONE
#undef OWN

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
