/*
 * vm.c -- the register machine.
 *
 * Rows (population members) are run in tiles of R rows; every instruction
 * is dispatched once per tile and loops over R rows x m elements.  Operands
 * are views (pointer, row stride, element stride): the input row needs no
 * copy, slices and indices cost nothing, and step 0 broadcasts.  Registers
 * live in the caller's workspace; the program is never written.
 *
 * Reductions sum (or multiply) into sixteen interleaved lanes, element j
 * into lane j mod 16, then add the lanes in a fixed tree (dc_acc, vm.h): the
 * same order for every stride, for constants folded at compile time and for
 * fused sum(A op B), so a value never depends on how it
 * was reached.  Sixteen lanes are four independent vector chains: a sum is
 * not bound by the latency of one addition per element (four lanes were).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/vmath.h"
#include "expr/expr.h"
#include "expr/scalar.h"
#include "expr/vm.h"

#define TILE_ELEMENTS 1024u /* doubles per register per tile (8 KiB) */
#define ALIGN_DOUBLES 8u    /* 64 bytes: one cache line */


/* ---- reductions (one row) ---- */

/* Element j of a row goes to lane j mod 16 of the accumulator (vm.h); the
 * blocks a row is fed in start at multiples of 16. */
#define ACC_LOOP(OPEQ, LOAD)                                                               \
    do {                                                                                   \
        for (; i + DC_ACC_LANES <= w; i += DC_ACC_LANES) {                                 \
            dc_v4 v0, v1, v2, v3;                                                          \
            memcpy(&v0, t + i, sizeof v0);                                                 \
            memcpy(&v1, t + i + 4, sizeof v1);                                             \
            memcpy(&v2, t + i + 8, sizeof v2);                                             \
            memcpy(&v3, t + i + 12, sizeof v3);                                            \
            a0 OPEQ LOAD(v0);                                                              \
            a1 OPEQ LOAD(v1);                                                              \
            a2 OPEQ LOAD(v2);                                                              \
            a3 OPEQ LOAD(v3);                                                              \
        }                                                                                  \
    } while (0)
#define ACC_PLAIN(v) (v)
#define ACC_SQUARE(v) ((v) * (v))

/* The end of a row (w < 16 elements) as one more vector step, the missing
 * elements padded with the operation's identity: -0.0 for a sum (x + -0.0
 * is x for every x, +0.0 and -0.0 included), 1.0 for a product; a norm
 * squares its pad, and +0.0 leaves its lanes (sums of squares) as they are. */
#define ACC_TAIL(OPEQ, LOAD, PAD)                                                          \
    do {                                                                                   \
        double pad[DC_ACC_LANES];                                                          \
        int l;                                                                             \
        for (l = 0; l < DC_ACC_LANES; l++)                                                 \
            pad[l] = l < w - i ? t[i + l] : (PAD);                                         \
        t = pad;                                                                           \
        w = DC_ACC_LANES;                                                                  \
        i = 0;                                                                             \
        ACC_LOOP(OPEQ, LOAD);                                                              \
    } while (0)

DC_KERNEL_CLONES
static void acc_block(dc_acc *s, int op, const double *t, ptrdiff_t w)
{
    dc_v4 a0 = s->v[0], a1 = s->v[1], a2 = s->v[2], a3 = s->v[3];
    ptrdiff_t i = 0;
    if (op == OP_PROD) {
        ACC_LOOP(*=, ACC_PLAIN);
        if (i < w)
            ACC_TAIL(*=, ACC_PLAIN, 1.0);
    } else if (op == OP_NORM) {
        ACC_LOOP(+=, ACC_SQUARE);
        if (i < w)
            ACC_TAIL(+=, ACC_SQUARE, -0.0);
    } else {
        ACC_LOOP(+=, ACC_PLAIN);
        if (i < w)
            ACC_TAIL(+=, ACC_PLAIN, -0.0);
    }
    s->v[0] = a0;
    s->v[1] = a1;
    s->v[2] = a2;
    s->v[3] = a3;
}

static void acc_init(dc_acc *s, int op)
{
    double one = op == OP_PROD ? 1.0 : 0.0;
    int k;
    for (k = 0; k < 4; k++) {
        dc_v4 v = {one, one, one, one};
        s->v[k] = v;
    }
}

/* Lanes 0-3 + 4-7 and 8-11 + 12-15, their sum, then (l0 + l1) + (l2 + l3). */
static double acc_finish(const dc_acc *s, int op, int64_t m)
{
    double l[4], acc;
    if (op == OP_PROD) {
        dc_v4 v = (s->v[0] * s->v[1]) * (s->v[2] * s->v[3]);
        memcpy(l, &v, sizeof l);
        return (l[0] * l[1]) * (l[2] * l[3]);
    }
    {
        dc_v4 v = (s->v[0] + s->v[1]) + (s->v[2] + s->v[3]);
        memcpy(l, &v, sizeof l);
    }
    acc = (l[0] + l[1]) + (l[2] + l[3]);
    return op == OP_MEAN ? acc / (double)m : op == OP_NORM ? sqrt(acc) : acc;
}

enum { RED_BLOCK = 128 }; /* a multiple of DC_ACC_LANES */

/* One row of a reduction (the RED rows of opcodes.def; acc_block, acc_init
 * and acc_finish above tell the sums' and the product's lanes apart). */
DC_KERNEL_CLONES
double dc_vm_reduce_row(int op, const double *a, ptrdiff_t es, int64_t m)
{
    double acc;
    int64_t j;
    switch (op) { /* ORDER OP: RED rows */
    case OP_SUM:
    case OP_MEAN:
    case OP_NORM:
    case OP_PROD: {
        dc_acc s;
        acc_init(&s, op);
        if (es == 1) {
            acc_block(&s, op, a, (ptrdiff_t)m);
        } else {
            double blk[RED_BLOCK];
            for (j = 0; j < m; j += RED_BLOCK) {
                ptrdiff_t w = m - j < RED_BLOCK ? (ptrdiff_t)(m - j) : RED_BLOCK, i;
                for (i = 0; i < w; i++)
                    blk[i] = a[(j + i) * es];
                acc_block(&s, op, blk, w);
            }
        }
        return acc_finish(&s, op, m);
    }
    case OP_MINV:
        acc = a[0];
        for (j = 1; j < m; j++)
            acc = dc_min2(acc, a[j * es]);
        return acc;
    case OP_MAXV:
        acc = a[0];
        for (j = 1; j < m; j++)
            acc = dc_max2(acc, a[j * es]);
        return acc;
    default:
        return NAN;
    }
}

double dc_vm_reduce_const(int op, const double *a, int64_t step, int64_t m)
{
    return dc_vm_reduce_row(op, a, (ptrdiff_t)step, m);
}

/* sum_j fn(a[j], b[j]), fn the row's elementwise operation (RED2 rows of
 * opcodes.def): the elementwise values a block at a time, summed as OP_SUM
 * sums */
#define FUSED_BLOCK(F)                                                                     \
    do {                                                                                   \
        if (ea == 1 && eb == 1)                                                            \
            for (i = 0; i < w; i++) blk[i] = F(a[i], b[i]);                                \
        else if (ea == 1 && eb == 0)                                                       \
            for (i = 0; i < w; i++) blk[i] = F(a[i], bv);                                  \
        else if (ea == 0 && eb == 1)                                                       \
            for (i = 0; i < w; i++) blk[i] = F(av, b[i]);                                  \
        else                                                                               \
            for (i = 0; i < w; i++) blk[i] = F(a[i * ea], b[i * eb]);                      \
    } while (0)
#define FUSED_EW_1(fn)
#define FUSED_EW_2(fn)
#define FUSED_EW_3(fn)
#define FUSED_EWV_1(fn)
#define FUSED_RED_1(fn)
#define FUSED_SCAN_1(fn)
#define FUSED_RED2_2(fn) FUSED_BLOCK(fn)

DC_KERNEL_CLONES
static double fused_row(int op, const double *a0, ptrdiff_t ea, const double *b0, ptrdiff_t eb,
                        ptrdiff_t m)
{
    double blk[RED_BLOCK], av = a0[0], bv = b0[0];
    dc_acc s;
    ptrdiff_t j, i;
    acc_init(&s, OP_SUM);
    for (j = 0; j < m; j += RED_BLOCK) {
        ptrdiff_t w = m - j < RED_BLOCK ? m - j : RED_BLOCK;
        const double *a = a0 + j * ea, *b = b0 + j * eb;
        switch (op) {
#define DC_OP(e, name, nin, cls, comm, fn, range, lo, hi, adjoint) \
        case e: FUSED_##cls##_##nin(fn); break;
#include "expr/opcodes.def"
#undef DC_OP
        default: break;
        }
        acc_block(&s, OP_SUM, blk, w);
    }
    return acc_finish(&s, OP_SUM, m);
}

/* ---- elementwise kernels ---- */

/* Apply F over R rows x m elements.  Operands broadcast with element stride
 * 0; rows packed with stride m in the destination. */
#define EW2(F)                                                                             \
    do {                                                                                   \
        for (r = 0; r < R; r++) {                                                          \
            const double *a = A->p + r * A->rs, *b = B->p + r * B->rs;                     \
            double *d = D + r * m;                                                         \
            ptrdiff_t ea = A->es, eb = B->es, j;                                           \
            if (ea == 1 && eb == 1)                                                        \
                for (j = 0; j < m; j++) d[j] = F(a[j], b[j]);                              \
            else if (ea == 1 && eb == 0) {                                                 \
                const double bv = b[0];                                                    \
                for (j = 0; j < m; j++) d[j] = F(a[j], bv);                                \
            } else if (ea == 0 && eb == 1) {                                               \
                const double av = a[0];                                                    \
                for (j = 0; j < m; j++) d[j] = F(av, b[j]);                                \
            } else                                                                         \
                for (j = 0; j < m; j++) d[j] = F(a[j * ea], b[j * eb]);                    \
        }                                                                                  \
    } while (0)

#define EW1(F)                                                                             \
    do {                                                                                   \
        for (r = 0; r < R; r++) {                                                          \
            const double *a = A->p + r * A->rs;                                            \
            double *d = D + r * m;                                                         \
            ptrdiff_t ea = A->es, j;                                                       \
            if (ea == 1)                                                                   \
                for (j = 0; j < m; j++) d[j] = F(a[j]);                                    \
            else                                                                           \
                for (j = 0; j < m; j++) d[j] = F(a[j * ea]);                               \
        }                                                                                  \
    } while (0)

#define EW3(F)                                                                             \
    do {                                                                                   \
        for (r = 0; r < R; r++) {                                                          \
            const double *a = A->p + r * A->rs, *b = B->p + r * B->rs, *c = C->p + r * C->rs; \
            double *d = D + r * m;                                                         \
            ptrdiff_t j;                                                                   \
            for (j = 0; j < m; j++) d[j] = F(a[j * A->es], b[j * B->es], c[j * C->es]);    \
        }                                                                                  \
    } while (0)

/* An array kernel (EWV rows) over R rows; a strided operand is gathered into
 * the destination first. */
static void vector_math(void (*kernel)(const double *, double *, size_t), double *D, ptrdiff_t m,
                        ptrdiff_t R, const dc_view *A)
{
    ptrdiff_t r, j;
    for (r = 0; r < R; r++) {
        const double *a = A->p + r * A->rs;
        double *d = D + r * m;
        if (A->es != 1) {
            for (j = 0; j < m; j++)
                d[j] = a[j * A->es];
            a = d;
        }
        kernel(a, d, (size_t)m);
    }
}

/* The kernel of each class (opcodes.def), from the row's fn. */
#define KERNEL_EW_1(fn) EW1(fn)
#define KERNEL_EW_2(fn) EW2(fn)
#define KERNEL_EW_3(fn) EW3(fn)
#define KERNEL_EWV_1(fn) vector_math(fn, D, m, R, A)
#define KERNEL_RED_1(fn)                                                                   \
    for (r = 0; r < R; r++)                                                                \
        D[r] = dc_vm_reduce_row(in->op, A->p + r * A->rs, A->es, m)
#define KERNEL_RED2_2(fn)                                                                  \
    for (r = 0; r < R; r++)                                                                \
        D[r] = fused_row(in->op, A->p + r * A->rs, A->es, B->p + r * B->rs, B->es, m)
#define KERNEL_SCAN_1(fn)                                                                  \
    for (r = 0; r < R; r++) {                                                              \
        const double *a = A->p + r * A->rs;                                                \
        double *d = D + r * m, acc = 0.0;                                                  \
        ptrdiff_t j;                                                                       \
        for (j = 0; j < m; j++)                                                            \
            d[j] = acc = fn(acc, a[j * A->es]);                                            \
    }

/* Run one instruction over a tile.  D: destination rows (stride m). */
DC_KERNEL_CLONES
void dc_vm_exec(const dc_instr *in, double *D, ptrdiff_t R, const dc_view *ops)
{
    const dc_view *A = &ops[0], *B = &ops[1], *C = &ops[2];
    ptrdiff_t m = in->m, r;
    dc_view flat[3];
    int cls = dc_op_info(in->op)->cls, k;

    if (cls == EW && R > 1) {
        /* rows packed back to back: run the tile as one long row */
        int ok = 1;
        for (k = 0; k < in->nin; k++) {
            if (m == 1) {
                flat[k].p = ops[k].p;
                flat[k].es = ops[k].rs;
                flat[k].rs = 0;
            } else if ((ops[k].es == 1 && ops[k].rs == m) || (ops[k].es == 0 && ops[k].rs == 0)) {
                flat[k] = ops[k];
            } else {
                ok = 0;
            }
        }
        if (ok) {
            A = &flat[0];
            B = &flat[1];
            C = &flat[2];
            m *= R;
            R = 1;
        }
    }
    switch (in->op) {
#define DC_OP(e, name, nin, cls, comm, fn, range, lo, hi, adjoint) \
    case e: KERNEL_##cls##_##nin(fn); break;
#include "expr/opcodes.def"
#undef DC_OP
    default: break;
    }
}

/* ---- drivers ---- */

int dc_ws_reserve(dc_workspace *ws, double **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 1;
    {
        size_t bytes;
        double *nb;
        if (!dc_mul_size(need, sizeof(double), &bytes))
            return 0;
        nb = dc_mem_alloc(&ws->alloc, bytes);
        if (!nb)
            return 0;
        dc_mem_free(&ws->alloc, *buf, *cap * sizeof(double));
        *buf = nb;
        *cap = need;
    }
    return 1;
}

dc_workspace *dc_workspace_new(const dc_program *program, const dc_allocator *allocator)
{
    const dc_allocator *a = allocator ? allocator : dc_mem_default();
    dc_workspace *ws;
    if (!program)
        return NULL;
    ws = dc_mem_calloc(a, 1, sizeof *ws);
    if (!ws)
        return NULL;
    ws->alloc = *a;
    ws->program = program;
    return ws;
}

void dc_workspace_free(dc_workspace *ws)
{
    dc_allocator a;
    if (!ws)
        return;
    a = ws->alloc;
    dc_mem_free(&a, ws->regs, ws->regs_cap * sizeof(double));
    dc_mem_free(&a, ws->slots, ws->slots_cap * sizeof(double));
    dc_mem_free(&a, ws->adj, ws->adj_cap * sizeof(double));
    dc_mem_free(&a, ws->scratch, ws->scratch_cap * sizeof(double));
    dc_mem_free(&a, ws, sizeof *ws);
}

/* Resolve an operand to a view.  temps/reg_size: eval registers (rows of
 * stride value.len) or, when reg_size == 0, the one-row slot area. */
void dc_vm_view(const dc_program *p, const double *x, ptrdiff_t x_rs, const double *temps,
                size_t reg_size, dc_operand o, dc_view *v)
{
    const dc_value *val = &p->values[o.val];
    const double *base;
    switch (val->kind) {
    case VK_INPUT:
        base = x;
        v->rs = x_rs;
        break;
    case VK_CONST:
        base = p->consts + val->index;
        v->rs = 0;
        break;
    default:
        base = reg_size ? temps + (size_t)val->index * reg_size : temps + val->slot;
        v->rs = val->len;
        break;
    }
    v->p = base + o.off;
    v->es = o.step;
}

static dc_status check_call(const dc_program *p, dc_workspace *ws)
{
    if (!p || !ws || ws->program != p)
        return DC_ERR_ARGUMENT;
    return DC_OK;
}

dc_status dc_eval_many(const dc_program *p, dc_workspace *ws, const double *X, size_t rows,
                       size_t row_stride, double *out)
{
    size_t tile, reg_size, r0, i;
    double *regs;
    dc_status st = check_call(p, ws);
    if (st)
        return st;
    if (rows == 0)
        return DC_OK;
    if (!out || (p->n_inputs && !X) || (rows > 1 && row_stride < p->n_inputs))
        return DC_ERR_ARGUMENT;
    tile = TILE_ELEMENTS / p->max_len;
    if (tile < 1)
        tile = 1;
    if (tile > rows)
        tile = rows;
    /* registers start on 64-byte boundaries: a vector load or store never
     * splits a cache line */
    reg_size = (tile * p->max_len + ALIGN_DOUBLES - 1) / ALIGN_DOUBLES * ALIGN_DOUBLES;
    {
        size_t need;
        if (!dc_mul_size(reg_size, p->n_regs ? p->n_regs : 1, &need) ||
            need > SIZE_MAX - ALIGN_DOUBLES ||
            !dc_ws_reserve(ws, &ws->regs, &ws->regs_cap, need + ALIGN_DOUBLES))
            return DC_ERR_NOMEM;
        regs = ws->regs + (ALIGN_DOUBLES - ((uintptr_t)ws->regs / sizeof(double)) % ALIGN_DOUBLES) % ALIGN_DOUBLES;
    }
    for (r0 = 0; r0 < rows; r0 += tile) {
        size_t R = rows - r0 < tile ? rows - r0 : tile;
        const double *x = X ? X + r0 * row_stride : NULL;
        dc_view res;
        for (i = 0; i < p->n_code; i++) {
            const dc_instr *in = &p->code[i];
            dc_view ops[3];
            int k;
            for (k = 0; k < in->nin; k++)
                dc_vm_view(p, x, (ptrdiff_t)row_stride, regs, reg_size, in->in[k], &ops[k]);
            dc_vm_exec(in, regs + (size_t)p->values[in->dst].index * reg_size, (ptrdiff_t)R, ops);
        }
        dc_vm_view(p, x, (ptrdiff_t)row_stride, regs, reg_size, p->result, &res);
        for (i = 0; i < R; i++)
            out[r0 + i] = res.p[(ptrdiff_t)i * res.rs];
    }
    return DC_OK;
}

dc_status dc_eval(const dc_program *p, dc_workspace *ws, const double *x, double *value)
{
    return dc_eval_many(p, ws, x, 1, p ? p->n_inputs : 0, value);
}

dc_status dc_vm_run_slots(const dc_program *p, dc_workspace *ws, const double *x)
{
    size_t i;
    if (!dc_ws_reserve(ws, &ws->slots, &ws->slots_cap, p->slot_total ? p->slot_total : 1))
        return DC_ERR_NOMEM;
    for (i = 0; i < p->n_code; i++) {
        const dc_instr *in = &p->code[i];
        dc_view ops[3];
        int k;
        for (k = 0; k < in->nin; k++)
            dc_vm_view(p, x, 0, ws->slots, 0, in->in[k], &ops[k]);
        dc_vm_exec(in, ws->slots + p->values[in->dst].slot, 1, ops);
    }
    return DC_OK;
}

double dc_vm_slot_elem(const dc_program *p, const dc_workspace *ws, const double *x,
                       dc_operand o, int64_t j)
{
    dc_view v;
    dc_vm_view(p, x, 0, ws->slots, 0, o, &v);
    return v.p[j * v.es];
}
