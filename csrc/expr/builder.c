/*
 * builder.c -- the IR builder (builder.h): values and constants, common
 * subexpressions, and elementwise operations, powers and reductions emitted
 * with constant folding and power rewrites; the variable names' table.
 * resolve.c lowers the syntax tree through it; compile.c drives the passes.
 */
#include <math.h>
#include <string.h>

#include "expr/builder.h"
#include "expr/scalar.h"

/* ---- values and constants ---- */

static dc_status oom(dc_builder *b)
{
    return dc_set_error(b->err, DC_ERR_NOMEM, b->pos, b->len, "out of memory");
}

static dc_status new_value(dc_builder *b, const dc_value *v, int32_t *out)
{
    dc_program *p = b->p;
    if (p->n_values >= (size_t)INT32_MAX - 1)
        return dc_set_error(b->err, DC_ERR_TOO_LARGE, b->pos, b->len, "program too large");
    if (!dc_mem_grow(b->a, (void **)&p->values, &p->cap_values, p->n_values + 1, sizeof *v))
        return oom(b);
    p->values[p->n_values] = *v;
    *out = (int32_t)p->n_values++;
    return DC_OK;
}

static dc_status const_block(dc_builder *b, int32_t len, int vec, double **data, dc_ref *out)
{
    dc_program *p = b->p;
    dc_value v;
    dc_status st;
    int32_t id;
    if (!dc_mem_grow(b->a, (void **)&p->consts, &p->cap_consts, p->n_consts + (size_t)len,
                     sizeof(double)))
        return oom(b);
    memset(&v, 0, sizeof v);
    v.kind = VK_CONST;
    v.vec = (uint8_t)vec;
    v.len = len;
    v.index = (int64_t)p->n_consts;
    v.uniform = 1;
    if ((st = new_value(b, &v, &id)))
        return st;
    *data = p->consts + p->n_consts;
    p->n_consts += (size_t)len;
    out->v.val = id;
    out->v.off = 0;
    out->v.step = vec ? 1 : 0;
    out->len = len;
    out->vec = (uint8_t)vec;
    return DC_OK;
}

static uint64_t bits_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

dc_status dc_build_scalar(dc_builder *b, double x, dc_ref *out)
{
    dc_status st;
    double *data = NULL;
    size_t k, mask;
    /* dedupe scalar constants by bit pattern */
    if (b->kcap == 0 || 2 * (b->kcount + 1) > b->kcap) {
        size_t ncap = b->kcap ? 2 * b->kcap : 64, i;
        int32_t *nt = dc_mem_alloc(b->a, ncap * sizeof(int32_t));
        if (!nt)
            return oom(b);
        for (i = 0; i < ncap; i++)
            nt[i] = -1;
        for (i = 0; i < b->kcap; i++) {
            int32_t id = b->ktab[i];
            if (id >= 0) {
                double y = b->p->consts[b->p->values[id].index];
                size_t j = (size_t)mix(bits_of(y)) & (ncap - 1);
                while (nt[j] >= 0)
                    j = (j + 1) & (ncap - 1);
                nt[j] = id;
            }
        }
        dc_mem_free(b->a, b->ktab, b->kcap * sizeof(int32_t));
        b->ktab = nt;
        b->kcap = ncap;
    }
    mask = b->kcap - 1;
    for (k = (size_t)mix(bits_of(x)) & mask; b->ktab[k] >= 0; k = (k + 1) & mask) {
        int32_t id = b->ktab[k];
        if (bits_of(b->p->consts[b->p->values[id].index]) == bits_of(x)) {
            out->v.val = id;
            out->v.off = 0;
            out->v.step = 0;
            out->len = 1;
            out->vec = 0;
            return DC_OK;
        }
    }
    if ((st = const_block(b, 1, 0, &data, out)))
        return st;
    data[0] = x;
    b->ktab[k] = out->v.val;
    b->kcount++;
    return DC_OK;
}

dc_status dc_build_vector_const(dc_builder *b, int32_t len, double **data, dc_ref *out)
{
    return const_block(b, len, 1, data, out);
}

const dc_value *dc_build_value(const dc_builder *b, dc_ref r)
{
    return &b->p->values[r.v.val];
}

int dc_build_const_scalar(const dc_builder *b, dc_ref r, double *x)
{
    const dc_value *v = dc_build_value(b, r);
    if (v->kind != VK_CONST || r.vec)
        return 0;
    *x = b->p->consts[v->index + r.v.off];
    return 1;
}

/* Element j of a constant view. */
static double const_elem(const dc_builder *b, dc_ref r, int32_t j)
{
    const dc_value *v = dc_build_value(b, r);
    return b->p->consts[v->index + r.v.off + (int64_t)j * r.v.step];
}

/* ---- common subexpressions ---- */

static uint64_t hash_instr(const dc_instr *in)
{
    uint64_t h = mix((uint64_t)in->op * 1000003u + (uint64_t)(uint32_t)in->m);
    int k;
    for (k = 0; k < in->nin; k++) {
        h = mix(h ^ (uint64_t)(uint32_t)in->in[k].val);
        h = mix(h ^ ((uint64_t)(uint32_t)in->in[k].off << 1));
        h = mix(h ^ ((uint64_t)(uint32_t)in->in[k].step << 2));
    }
    return h;
}

static int same_instr(const dc_instr *x, const dc_instr *y)
{
    int k;
    if (x->op != y->op || x->m != y->m || x->nin != y->nin)
        return 0;
    for (k = 0; k < x->nin; k++)
        if (x->in[k].val != y->in[k].val || x->in[k].off != y->in[k].off ||
            x->in[k].step != y->in[k].step)
            return 0;
    return 1;
}

static dc_status cse_grow(dc_builder *b)
{
    size_t ncap = b->ccap ? 2 * b->ccap : 256, i;
    int32_t *nt = dc_mem_alloc(b->a, ncap * sizeof(int32_t));
    if (!nt)
        return oom(b);
    for (i = 0; i < ncap; i++)
        nt[i] = -1;
    for (i = 0; i < b->ccap; i++) {
        int32_t at = b->ctab[i];
        if (at >= 0) {
            size_t j = (size_t)hash_instr(&b->p->code[at]) & (ncap - 1);
            while (nt[j] >= 0)
                j = (j + 1) & (ncap - 1);
            nt[j] = at;
        }
    }
    dc_mem_free(b->a, b->ctab, b->ccap * sizeof(int32_t));
    b->ctab = nt;
    b->ccap = ncap;
    return DC_OK;
}

static int operand_less(const dc_operand *x, const dc_operand *y)
{
    if (x->val != y->val)
        return x->val < y->val;
    if (x->off != y->off)
        return x->off < y->off;
    return x->step < y->step;
}

/* Append (or find) an instruction; out gets a full view of its result. */
static dc_status emit(dc_builder *b, dc_instr *in, int vec, int32_t out_len, dc_ref *out)
{
    dc_program *p = b->p;
    const dc_opinfo *info = dc_op_info(in->op);
    dc_value v;
    dc_status st;
    size_t k, mask;
    int j;
    if (info->commutative && in->nin == 2 && operand_less(&in->in[1], &in->in[0])) {
        dc_operand t = in->in[0];
        in->in[0] = in->in[1];
        in->in[1] = t;
    }
    if (2 * (b->ccount + 1) > b->ccap && (st = cse_grow(b)))
        return st;
    mask = b->ccap - 1;
    for (k = (size_t)hash_instr(in) & mask; b->ctab[k] >= 0; k = (k + 1) & mask) {
        const dc_instr *old = &p->code[b->ctab[k]];
        if (same_instr(old, in)) {
            out->v.val = old->dst;
            out->v.off = 0;
            out->v.step = vec ? 1 : 0;
            out->len = out_len;
            out->vec = (uint8_t)vec;
            return DC_OK;
        }
    }
    if (p->n_code >= b->max_instructions)
        return dc_set_error(b->err, DC_ERR_TOO_LARGE, b->pos, b->len,
                            "program too large (limit %zu instructions)", b->max_instructions);
    memset(&v, 0, sizeof v);
    v.kind = VK_TEMP;
    v.vec = (uint8_t)vec;
    v.len = out_len;
    v.uniform = 1;
    for (j = 0; j < in->nin; j++) {
        const dc_value *src = &p->values[in->in[j].val];
        v.active |= src->active;
        v.uniform &= src->uniform;
    }
    if ((st = new_value(b, &v, &in->dst)))
        return st;
    if (!dc_mem_grow(b->a, (void **)&p->code, &p->cap_code, p->n_code + 1, sizeof *in))
        return oom(b);
    in->pos = (uint32_t)(b->pos > UINT32_MAX ? UINT32_MAX : b->pos);
    in->len = (uint32_t)(b->len > UINT32_MAX ? UINT32_MAX : b->len);
    p->code[p->n_code] = *in;
    b->ctab[k] = (int32_t)p->n_code++;
    b->ccount++;
    out->v.val = in->dst;
    out->v.off = 0;
    out->v.step = vec ? 1 : 0;
    out->len = out_len;
    out->vec = (uint8_t)vec;
    return DC_OK;
}

static void init_instr(dc_instr *in, int op, int nin)
{
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op;
    in->nin = (uint8_t)nin;
}

/* ---- elementwise, with folding and power rewrites ---- */

dc_status dc_build_ew(dc_builder *b, int op, const dc_ref *args, int nin, dc_ref *out)
{
    dc_instr in;
    int32_t len = 1;
    int vec = 0, all_const = 1, j;
    for (j = 0; j < nin; j++) {
        if (args[j].vec) {
            if (vec && args[j].len != len)
                return dc_set_error(b->err, DC_ERR_SHAPE, b->pos, b->len,
                                    "vector lengths differ: %ld and %ld",
                                    (long)len, (long)args[j].len);
            vec = 1;
            len = args[j].len;
        }
        if (dc_build_value(b, args[j])->kind != VK_CONST)
            all_const = 0;
    }
    if (all_const) {
        double *data;
        dc_status st;
        int32_t e;
        if (!vec) {
            double x[3] = {0, 0, 0};
            for (j = 0; j < nin; j++)
                x[j] = const_elem(b, args[j], 0);
            return dc_build_scalar(b, dc_scalar_op(op, x[0], x[1], x[2]), out);
        }
        {
            dc_ref keep[3];
            for (j = 0; j < nin; j++)
                keep[j] = args[j];
            if ((st = dc_build_vector_const(b, len, &data, out)))
                return st;
            for (e = 0; e < len; e++) {
                double x[3] = {0, 0, 0};
                for (j = 0; j < nin; j++)
                    x[j] = const_elem(b, keep[j], keep[j].vec ? e : 0);
                data[e] = dc_scalar_op(op, x[0], x[1], x[2]);
            }
            /* a constant vector whose elements are all equal is uniform */
            for (e = 1; e < len; e++)
                if (bits_of(data[e]) != bits_of(data[0]))
                    break;
            b->p->values[out->v.val].uniform = (uint8_t)(e == len);
        }
        return DC_OK;
    }
    init_instr(&in, op, nin);
    in.m = len;
    for (j = 0; j < nin; j++)
        in.in[j] = args[j].v;
    return emit(b, &in, vec, len, out);
}

dc_status dc_build_pow(dc_builder *b, dc_ref base, dc_ref exponent, dc_ref *out)
{
    double k;
    dc_ref args[2];
    args[0] = base;
    args[1] = exponent;
    /* the rewrites apply to constant bases too, so a folded power rounds
     * exactly as the same power computed at run time; dc_pow (scalar.h) makes the
     * same ones for an exponent known only at run time */
    if (dc_build_const_scalar(b, exponent, &k)) {
        if (k == 1.0) {
            *out = base;
            return DC_OK;
        }
        if (k == 0.5)
            return dc_build_ew(b, OP_SQRTPOW, &base, 1, out);
        if (k == -1.0) {
            dc_status st = dc_build_scalar(b, 1.0, &args[0]);
            args[1] = base;
            return st ? st : dc_build_ew(b, OP_DIV, args, 2, out);
        }
        if (k >= 2.0 && k <= 16.0 && k == floor(k)) {
            /* exponentiation by squaring; the squares are shared by CSE */
            unsigned e = (unsigned)k;
            dc_ref acc, sq = base;
            int have = 0;
            dc_status st;
            while (e) {
                if (e & 1u) {
                    if (!have) {
                        acc = sq;
                        have = 1;
                    } else {
                        args[0] = acc;
                        args[1] = sq;
                        if ((st = dc_build_ew(b, OP_MUL, args, 2, &acc)))
                            return st;
                    }
                }
                e >>= 1;
                if (e) {
                    args[0] = sq;
                    args[1] = sq;
                    if ((st = dc_build_ew(b, OP_MUL, args, 2, &sq)))
                        return st;
                }
            }
            *out = acc;
            return DC_OK;
        }
    }
    return dc_build_ew(b, OP_POW, args, 2, out);
}

dc_status dc_build_reduce(dc_builder *b, int op, dc_ref arg, dc_ref *out)
{
    dc_instr in;
    if (!arg.vec) {
        if (op == OP_NORM)
            return dc_build_ew(b, OP_ABS, &arg, 1, out);
        *out = arg; /* sum, prod, mean, min, max, cumsum of a scalar */
        return DC_OK;
    }
    if (dc_build_value(b, arg)->kind == VK_CONST) {
        /* fold with the VM's own reduction order */
        double acc = 0.0;
        int32_t j;
        if (op == OP_CUMSUM) {
            double *data;
            dc_ref keep = arg;
            dc_status st = dc_build_vector_const(b, arg.len, &data, out);
            if (st)
                return st;
            for (j = 0; j < keep.len; j++)
                data[j] = acc += const_elem(b, keep, j);
            return DC_OK;
        }
        acc = dc_vm_reduce_const(op, b->p->consts + dc_build_value(b, arg)->index + arg.v.off,
                                 arg.v.step, arg.len);
        return dc_build_scalar(b, acc, out);
    }
    init_instr(&in, op, 1);
    in.m = arg.len;
    in.in[0] = arg.v;
    if (op == OP_CUMSUM)
        return emit(b, &in, 1, arg.len, out);
    return emit(b, &in, 0, 1, out);
}

/* ---- variable names ---- */

/* FNV-1a over a name's bytes, mixed: the variable table's hash. */
static uint64_t hash_name(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i;
    for (i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return mix(h);
}

int64_t dc_build_name_index(const dc_builder *b, const char *s, size_t len)
{
    size_t k, mask = b->ncap - 1;
    if (!b->ncap)
        return -1;
    for (k = (size_t)hash_name(s, len) & mask; b->ntab[k] >= 0; k = (k + 1) & mask) {
        const char *name = b->p->names[b->ntab[k]];
        if (strncmp(name, s, len) == 0 && name[len] == '\0')
            return b->ntab[k];
    }
    return -1;
}

int dc_build_name_table(dc_builder *b, size_t count)
{
    size_t i, cap = 16;
    while (cap < 2 * count)
        cap *= 2;
    b->ntab = dc_mem_alloc(b->a, cap * sizeof(int64_t));
    if (!b->ntab)
        return 0;
    b->ncap = cap;
    for (i = 0; i < cap; i++)
        b->ntab[i] = -1;
    return 1;
}

void dc_build_name_insert(dc_builder *b, size_t index)
{
    const char *s = b->p->names[index];
    size_t k, mask = b->ncap - 1;
    for (k = (size_t)hash_name(s, strlen(s)) & mask; b->ntab[k] >= 0; k = (k + 1) & mask)
        ;
    b->ntab[k] = (int64_t)index;
}

/* The program's input: the vector x (uniform: every element alike, x of
 * dimension n) or the named variables. */
dc_status dc_build_input(dc_builder *b, int uniform)
{
    dc_value input;
    int32_t id;
    memset(&input, 0, sizeof input);
    input.kind = VK_INPUT;
    input.active = 1;
    input.uniform = (uint8_t)uniform;
    input.vec = 1;
    input.len = (int32_t)b->p->n_inputs;
    return new_value(b, &input, &id);
}
