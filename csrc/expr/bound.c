/*
 * bound.c -- the range of a program over a box, by interval arithmetic.
 *
 * One pass over the code with an interval [lo, hi] per element of every
 * value (the slot layout of the one-row evaluation).  Every rule encloses
 * what the VM can compute for any point of the box: results of + - * /
 * (correctly rounded, and rounding is monotone) move one ulp outward,
 * results of library functions by WIDEN relative (about 20 ulp, far more
 * than the 4 ulp of the vector sin/cos/exp/log), sums by their worst-case
 * rounding error, and an operation without a rule here (tan, pow with an
 * exponent known only at run time, ...) gives (-inf, inf).  x*x with
 * both operands the same view is a square (never negative), which is what
 * makes sums of squares bounded below by 0.  The range is loose in general
 * (dependencies between operands are ignored) but never wrong; a NaN
 * anywhere widens to (-inf, inf).
 *
 * The driver uses the lower end as a proven floor of the objective: a run
 * whose best value is within a tolerance of it cannot improve meaningfully
 * (docs/optimization.md, Convergence).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "expr/expr.h"

#define WIDEN 4.5e-15

typedef struct ival {
    double lo, hi;
} ival;

static const ival FULL = {-INFINITY, INFINITY};

/* One correctly rounded operation (+ - * /): outward by one ulp. */
static ival rounded(double lo, double hi)
{
    ival r;
    if (lo != lo || hi != hi || lo > hi)
        return FULL;
    r.lo = nextafter(lo, -INFINITY);
    r.hi = nextafter(hi, INFINITY);
    return r;
}

/* A library function: outward by WIDEN relative plus the smallest
 * subnormal; NaN -> FULL. */
static ival out(double lo, double hi)
{
    ival r;
    if (lo != lo || hi != hi || lo > hi)
        return FULL;
    r.lo = lo - (fabs(lo) * WIDEN + DBL_TRUE_MIN);
    r.hi = hi + (fabs(hi) * WIDEN + DBL_TRUE_MIN);
    return r;
}

static ival exact(double lo, double hi)
{
    ival r;
    if (lo != lo || hi != hi || lo > hi)
        return FULL;
    r.lo = lo;
    r.hi = hi;
    return r;
}

static ival mul(ival a, ival b, int same)
{
    double p[4], lo, hi;
    int k;
    if (same) {
        if (a.lo >= 0.0)
            return rounded(a.lo * a.lo, a.hi * a.hi);
        if (a.hi <= 0.0)
            return rounded(a.hi * a.hi, a.lo * a.lo);
        return rounded(0.0, fmax(a.lo * a.lo, a.hi * a.hi));
    }
    p[0] = a.lo * b.lo;
    p[1] = a.lo * b.hi;
    p[2] = a.hi * b.lo;
    p[3] = a.hi * b.hi;
    lo = hi = p[0];
    for (k = 1; k < 4; k++) {
        if (p[k] != p[k]) /* inf * 0 */
            return FULL;
        lo = fmin(lo, p[k]);
        hi = fmax(hi, p[k]);
    }
    return rounded(lo, hi);
}

static ival divide(ival a, ival b)
{
    ival inv;
    if (b.lo <= 0.0 && b.hi >= 0.0)
        return FULL;
    inv.lo = 1.0 / b.hi;
    inv.hi = 1.0 / b.lo;
    return mul(a, rounded(inv.lo, inv.hi), 0);
}

static ival absval(ival a)
{
    if (a.lo >= 0.0)
        return a;
    if (a.hi <= 0.0)
        return exact(-a.hi, -a.lo);
    return exact(0.0, fmax(-a.lo, a.hi));
}

/* The range column of opcodes.def. */
enum { IV_UP, IV_UPX, IV_DOWN, IV_DOWNX, IV_EVEN, IV_EVENX, IV_CONST, IV_CONSTX, IV_ANY, IV_OWN };

typedef struct range_rule {
    int kind;
    double lo, hi;
} range_rule;

static const range_rule rules[OP__COUNT] = {
#define DC_OP(e, name, nin, cls, comm, fn, range, lo, hi, adjoint) {IV_##range, lo, hi},
#include "expr/opcodes.def"
#undef DC_OP
};

/* The rows whose range column is OWN (opcodes.def). */
static ival own(int op, ival x, ival y, ival z, int same)
{
    switch (op) { /* ORDER OP: elementwise rows with range OWN */
    case OP_ADD: return rounded(x.lo + y.lo, x.hi + y.hi);
    case OP_SUB: return rounded(x.lo - y.hi, x.hi - y.lo);
    case OP_MUL: return mul(x, y, same);
    case OP_DIV: return divide(x, y);
    case OP_MOD: return y.lo > 0.0 ? exact(0.0, y.hi) : y.hi < 0.0 ? exact(y.lo, 0.0) : FULL;
    case OP_HYPOT: {
        ival p = absval(x), q = absval(y); /* increasing in |A| and in |B| */
        return out(hypot(p.lo, q.lo), hypot(p.hi, q.hi));
    }
    case OP_MIN2: return exact(fmin(x.lo, y.lo), fmin(x.hi, y.hi));
    case OP_MAX2: return exact(fmax(x.lo, y.lo), fmax(x.hi, y.hi));
    case OP_WHERE: return exact(fmin(y.lo, z.lo), fmax(y.hi, z.hi));
    case OP_CLIP: return exact(fmin(fmax(x.lo, y.lo), z.lo), fmin(fmax(x.hi, y.hi), z.hi));
    default: return FULL; /* a row marked OWN without its case here: test_expr.c fails */
    }
}

/* fn of one operand at v, the VM's scalar meaning */
static double f1(int op, double v)
{
    return dc_scalar_op(op, v, 0.0, 0.0);
}

/* [lo, hi] as computed (ex: exact) or widened by the rounding of a libm call */
static ival ends(int ex, double lo, double hi)
{
    return ex ? exact(lo, hi) : out(lo, hi);
}

/* One elementwise instruction's element from its operands' elements. */
static ival elementwise(int op, const ival *a, int same)
{
    const range_rule *r = &rules[op];
    ival x = a[0], m;
    int ex = 0;
    switch (r->kind) {
    case IV_UPX: ex = 1; /* fall through */
    case IV_UP:
        if (x.hi < r->lo || x.lo > r->hi)
            return FULL;
        return ends(ex, f1(op, fmax(x.lo, r->lo)), f1(op, fmin(x.hi, r->hi)));
    case IV_DOWNX: ex = 1; /* fall through */
    case IV_DOWN:
        if (x.hi < r->lo || x.lo > r->hi)
            return FULL;
        return ends(ex, f1(op, fmin(x.hi, r->hi)), f1(op, fmax(x.lo, r->lo)));
    case IV_EVENX: ex = 1; /* fall through */
    case IV_EVEN:
        m = absval(x);
        return ends(ex, f1(op, m.lo), f1(op, m.hi));
    case IV_CONSTX: ex = 1; /* fall through */
    case IV_CONST: return ends(ex, r->lo, r->hi);
    case IV_OWN: return own(op, a[0], a[1], a[2], same);
    default: return FULL; /* ANY: pow with a run-time exponent, tan */
    }
}

typedef struct ranges {
    const dc_program *p;
    const double *box_lo, *box_hi;
    double *lo, *hi; /* slot_total each */
} ranges;

static ival element(const ranges *g, dc_operand o, int64_t j)
{
    const dc_value *v = &g->p->values[o.val];
    int64_t e = o.off + j * o.step;
    switch (v->kind) {
    case VK_INPUT: return exact(g->box_lo[e], g->box_hi[e]);
    case VK_CONST: return exact(g->p->consts[v->index + e], g->p->consts[v->index + e]);
    default: return exact(g->lo[v->slot + e], g->hi[v->slot + e]);
    }
}

static int same_view(dc_operand a, dc_operand b)
{
    return a.val == b.val && a.off == b.off && a.step == b.step;
}

/* A sum of m intervals in any order: each end widened by its worst rounding
 * error, m eps times the sum of the magnitudes of its terms. */
static ival sum_close(double lo, double hi, double mag_lo, double mag_hi, int64_t m)
{
    double e = (double)m * DBL_EPSILON;
    return exact(lo - (e * mag_lo + DBL_TRUE_MIN), hi + (e * mag_hi + DBL_TRUE_MIN));
}

/* A reduction (the RED and RED2 rows of opcodes.def). */
static ival reduce(const ranges *g, const dc_instr *in)
{
    double lo = 0.0, hi = 0.0, mag_lo = 0.0, mag_hi = 0.0;
    ival acc, t;
    int64_t j, m = in->m;
    int op = in->op, same = in->nin == 2 && same_view(in->in[0], in->in[1]);
    switch (op) { /* ORDER OP: RED rows; the others are sums */
    case OP_PROD:
        acc = exact(1.0, 1.0);
        for (j = 0; j < m; j++)
            acc = mul(acc, element(g, in->in[0], j), 0);
        return acc;
    case OP_MINV:
    case OP_MAXV:
        acc = element(g, in->in[0], 0);
        for (j = 1; j < m; j++) {
            t = element(g, in->in[0], j);
            acc = op == OP_MINV ? exact(fmin(acc.lo, t.lo), fmin(acc.hi, t.hi))
                                : exact(fmax(acc.lo, t.lo), fmax(acc.hi, t.hi));
        }
        return acc;
    default:
        break;
    }
    for (j = 0; j < m; j++) {
        ival a[3];
        a[0] = element(g, in->in[0], j);
        if (op == OP_SUMADD || op == OP_SUMSUB || op == OP_SUMMUL) {
            a[1] = element(g, in->in[1], j);
            t = own(op == OP_SUMADD ? OP_ADD : op == OP_SUMSUB ? OP_SUB : OP_MUL, a[0], a[1], a[1],
                    same);
        } else if (op == OP_NORM) {
            t = mul(a[0], a[0], 1);
        } else {
            t = a[0];
        }
        lo += t.lo;
        hi += t.hi;
        mag_lo += fabs(t.lo);
        mag_hi += fabs(t.hi);
    }
    acc = sum_close(lo, hi, mag_lo, mag_hi, m);
    if (op == OP_MEAN)
        return rounded(acc.lo / (double)m, acc.hi / (double)m);
    if (op == OP_NORM)
        return acc.hi < 0.0 ? FULL : out(sqrt(fmax(acc.lo, 0.0)), sqrt(acc.hi));
    return acc;
}

static void run(ranges *g)
{
    const dc_program *p = g->p;
    size_t i;
    for (i = 0; i < p->n_code; i++) {
        const dc_instr *in = &p->code[i];
        const dc_value *d = &p->values[in->dst];
        double *lo = g->lo + d->slot, *hi = g->hi + d->slot;
        int cls = dc_op_info(in->op)->cls, k;
        int64_t j;
        ival r;
        if (cls == RED || cls == RED2) {
            r = reduce(g, in);
            lo[0] = r.lo;
            hi[0] = r.hi;
        } else if (cls == SCAN) { /* cumsum: prefix sums */
            double sl = 0.0, sh = 0.0, mag_lo = 0.0, mag_hi = 0.0;
            for (j = 0; j < in->m; j++) {
                ival a = element(g, in->in[0], j);
                sl += a.lo;
                sh += a.hi;
                mag_lo += fabs(a.lo);
                mag_hi += fabs(a.hi);
                r = sum_close(sl, sh, mag_lo, mag_hi, j + 1);
                lo[j] = r.lo;
                hi[j] = r.hi;
            }
        } else {
            int same = in->nin == 2 && same_view(in->in[0], in->in[1]);
            for (j = 0; j < in->m; j++) {
                ival a[3] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
                for (k = 0; k < in->nin; k++)
                    a[k] = element(g, in->in[k], j);
                r = elementwise(in->op, a, same);
                lo[j] = r.lo;
                hi[j] = r.hi;
            }
        }
    }
}

dc_status dc_program_range(const dc_program *p, const double *lo, const double *hi,
                           const dc_allocator *alloc, double *f_lo, double *f_hi)
{
    const dc_allocator *a = alloc ? alloc : dc_mem_default();
    size_t n = p->slot_total ? p->slot_total : 1;
    ranges g;
    ival r;
    g.p = p;
    g.box_lo = lo;
    g.box_hi = hi;
    g.lo = dc_mem_alloc(a, n * sizeof(double));
    g.hi = dc_mem_alloc(a, n * sizeof(double));
    if (!g.lo || !g.hi) {
        dc_mem_free(a, g.lo, n * sizeof(double));
        dc_mem_free(a, g.hi, n * sizeof(double));
        return DC_ERR_NOMEM;
    }
    run(&g);
    r = element(&g, p->result, 0);
    *f_lo = r.lo;
    *f_hi = r.hi;
    dc_mem_free(a, g.lo, n * sizeof(double));
    dc_mem_free(a, g.hi, n * sizeof(double));
    return DC_OK;
}
