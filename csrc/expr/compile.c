/*
 * compile.c -- the pass driver and the IR builder.
 *
 *   parse (parser.c) -> resolve + lower to SSA views (resolve.c, calling the
 *   builder below, which folds constants, rewrites powers and shares common
 *   subexpressions as it emits) -> fuse reductions -> remove dead code ->
 *   allocate registers -> verify (program.c) -> structure (structure.c).
 */
#include <math.h>
#include <string.h>

#include "expr/compile.h"
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

/* ---- post passes ---- */

static int is_full_view(const dc_program *p, dc_operand o, int32_t m)
{
    const dc_value *v = &p->values[o.val];
    return v->kind == VK_TEMP && o.off == 0 && o.step == 1 && v->len == m;
}

/* sum(A op B) for op in + - *: read A and B once, no temporary vector. */
static dc_status fuse_and_prune(dc_builder *b)
{
    dc_program *p = b->p;
    int32_t *uses = dc_mem_calloc(b->a, p->n_values, sizeof(int32_t));
    int32_t *def = dc_mem_alloc(b->a, p->n_values * sizeof(int32_t));
    size_t i, w;
    int k;
    if (!uses || !def) {
        dc_mem_free(b->a, uses, p->n_values * sizeof(int32_t));
        dc_mem_free(b->a, def, p->n_values * sizeof(int32_t));
        return oom(b);
    }
    for (i = 0; i < p->n_values; i++)
        def[i] = -1;
    for (i = 0; i < p->n_code; i++) {
        def[p->code[i].dst] = (int32_t)i;
        for (k = 0; k < p->code[i].nin; k++)
            uses[p->code[i].in[k].val]++;
    }
    uses[p->result.val]++;
    for (i = 0; i < p->n_code; i++) {
        dc_instr *in = &p->code[i];
        const dc_instr *src;
        int fused;
        if (in->op != OP_SUM || !is_full_view(p, in->in[0], in->m))
            continue;
        if (uses[in->in[0].val] != 1 || def[in->in[0].val] < 0)
            continue;
        src = &p->code[def[in->in[0].val]];
        fused = src->op == OP_ADD ? OP_SUMADD : src->op == OP_SUB ? OP_SUMSUB
              : src->op == OP_MUL ? OP_SUMMUL : -1;
        if (fused < 0)
            continue;
        uses[in->in[0].val] = 0;
        in->op = (uint8_t)fused;
        in->nin = 2;
        in->in[0] = src->in[0];
        in->in[1] = src->in[1];
        uses[in->in[0].val]++;
        uses[in->in[1].val]++;
    }
    /* remove instructions whose results nobody reads (last to first) */
    for (i = p->n_code; i-- > 0;) {
        dc_instr *in = &p->code[i];
        if (uses[in->dst] == 0) {
            for (k = 0; k < in->nin; k++)
                uses[in->in[k].val]--;
            in->op = (uint8_t)OP__COUNT; /* mark dead */
        }
    }
    for (i = 0, w = 0; i < p->n_code; i++)
        if (p->code[i].op != OP__COUNT)
            p->code[w++] = p->code[i];
    p->n_code = w;
    dc_mem_free(b->a, uses, p->n_values * sizeof(int32_t));
    dc_mem_free(b->a, def, p->n_values * sizeof(int32_t));
    return DC_OK;
}

/* Linear scan: a register holds one temp per row (max_len doubles a row).
 * An elementwise instruction may write over an operand that dies there when
 * the operand is read in place (full view); no other aliasing. */
static dc_status allocate(dc_builder *b)
{
    dc_program *p = b->p;
    size_t nv = p->n_values, i, nfree = 0, nregs = 0;
    int32_t *last = dc_mem_alloc(b->a, nv * sizeof(int32_t));
    int32_t *freelist = dc_mem_alloc(b->a, (nv + 1) * sizeof(int32_t));
    int64_t slot = 0;
    int k;
    if (!last || !freelist) {
        dc_mem_free(b->a, last, nv * sizeof(int32_t));
        dc_mem_free(b->a, freelist, (nv + 1) * sizeof(int32_t));
        return oom(b);
    }
    for (i = 0; i < nv; i++)
        last[i] = -1;
    for (i = 0; i < p->n_code; i++)
        for (k = 0; k < p->code[i].nin; k++)
            last[p->code[i].in[k].val] = (int32_t)i;
    last[p->result.val] = (int32_t)p->n_code; /* read after the last instruction */
    p->max_len = 1;
    for (i = 0; i < p->n_code; i++) {
        dc_instr *in = &p->code[i];
        dc_value *d = &p->values[in->dst];
        int inplace = dc_op_info(in->op)->cls == EW;
        /* operands dying here that are read in place may give their register */
        for (k = 0; k < in->nin; k++) {
            dc_value *s = &p->values[in->in[k].val];
            if (s->kind == VK_TEMP && last[in->in[k].val] == (int32_t)i && inplace &&
                s->len == d->len && in->in[k].off == 0 &&
                in->in[k].step == (d->vec ? 1 : 0) && s->vec == d->vec && s->index >= 0) {
                int dup = 0, q;
                for (q = 0; q < k; q++)
                    dup |= in->in[q].val == in->in[k].val;
                if (!dup)
                    freelist[nfree++] = (int32_t)s->index;
                s->index = -1 - s->index; /* freed: remember as negative */
            }
        }
        d->index = nfree ? freelist[--nfree] : (int64_t)nregs++;
        d->slot = slot;
        slot += d->len;
        /* max_len bounds every row an instruction touches (AD scratch too) */
        if ((size_t)d->len > p->max_len)
            p->max_len = (size_t)d->len;
        if ((size_t)in->m > p->max_len)
            p->max_len = (size_t)in->m;
        for (k = 0; k < in->nin; k++) {
            dc_value *s = &p->values[in->in[k].val];
            if (s->kind == VK_TEMP && last[in->in[k].val] == (int32_t)i && s->index >= 0) {
                freelist[nfree++] = (int32_t)s->index;
                s->index = -1 - s->index;
            }
        }
        if (last[in->dst] < 0) /* never read (only possible for the result) */
            freelist[nfree++] = (int32_t)d->index, d->index = -1 - d->index;
    }
    for (i = 0; i < nv; i++)
        if (p->values[i].kind == VK_TEMP && p->values[i].index < 0)
            p->values[i].index = -1 - p->values[i].index;
    p->n_regs = nregs;
    p->slot_total = (size_t)slot;
    dc_mem_free(b->a, last, nv * sizeof(int32_t));
    dc_mem_free(b->a, freelist, (nv + 1) * sizeof(int32_t));
    return DC_OK;
}

/* ---- driver ---- */

static int valid_name(const char *s)
{
    size_t i;
    if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return 0;
    for (i = 1; s[i]; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_' ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return i <= 255;
}

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

/* Copy the variable names into the program and index them in the builder's
 * hash table (a duplicate is found by the same lookup): linear in the number
 * of names, so is every later lookup of a name in the text. */
static dc_status copy_names(dc_builder *b, const dc_options *opt, dc_error *err)
{
    dc_program *p = b->p;
    size_t i, cap = 16;
    if (!opt->n_variables)
        return DC_OK;
    while (cap < 2 * opt->n_variables)
        cap *= 2;
    p->names = dc_mem_calloc(&p->alloc, opt->n_variables, sizeof(char *));
    if (!p->names)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    p->n_names = opt->n_variables;
    b->ntab = dc_mem_alloc(b->a, cap * sizeof(int64_t));
    if (!b->ntab)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    b->ncap = cap;
    for (i = 0; i < cap; i++)
        b->ntab[i] = -1;
    for (i = 0; i < opt->n_variables; i++) {
        const char *s = opt->variables[i];
        size_t n, k;
        if (!valid_name(s) || dc_reserved_name(s))
            return dc_set_error(err, DC_ERR_VARIABLE, 0, 0,
                                "variable %zu ('%.64s') is not a valid name: use letters, digits "
                                "and '_', not starting with a digit, and not a keyword or "
                                "function name", i, s ? s : "(null)");
        n = strlen(s);
        for (k = (size_t)hash_name(s, n) & (cap - 1); b->ntab[k] >= 0; k = (k + 1) & (cap - 1))
            if (strcmp(p->names[b->ntab[k]], s) == 0)
                return dc_set_error(err, DC_ERR_VARIABLE, 0, 0,
                                    "variable '%.64s' is listed twice", s);
        p->names[i] = dc_mem_alloc(&p->alloc, n + 1);
        if (!p->names[i])
            return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
        memcpy(p->names[i], s, n + 1);
        b->ntab[k] = (int64_t)i;
    }
    return DC_OK;
}

void dc_options_init(dc_options *o)
{
    memset(o, 0, sizeof *o);
}

dc_status dc_compile(const char *text, size_t length, const dc_options *options,
                     dc_program **out, dc_error *error)
{
    dc_options opt;
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    const dc_allocator *a;
    dc_program *p = NULL;
    dc_builder b;
    dc_ast ast;
    dc_status st;
    dc_value input;
    int32_t input_id;

    memset(err, 0, sizeof *err);
    memset(&ast, 0, sizeof ast);
    memset(&b, 0, sizeof b);
    if (!out || (!text && length))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL argument");
    *out = NULL;
    if (options)
        opt = *options;
    else
        dc_options_init(&opt);
    if (!opt.max_length)
        opt.max_length = DC_DEFAULT_MAX_LENGTH;
    if (!opt.max_depth)
        opt.max_depth = DC_DEFAULT_MAX_DEPTH;
    if (opt.max_depth > DC_HARD_MAX_DEPTH)
        opt.max_depth = DC_HARD_MAX_DEPTH;
    if (!opt.max_instructions)
        opt.max_instructions = DC_DEFAULT_MAX_INSTRUCTIONS;
    if (opt.n < 0 || opt.n > DC_MAX_DIMENSION)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "the dimension n must be between 1 and %ld", (long)DC_MAX_DIMENSION);
    if (opt.n > 0 && opt.n_variables)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "give either a dimension n or variables, not both");
    if (opt.n_variables && !opt.variables)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL variables");
    if (opt.n_variables > (size_t)DC_MAX_DIMENSION)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "too many variables");
    a = opt.allocator ? opt.allocator : dc_mem_default();
    if (length > opt.max_length)
        return dc_set_error(err, DC_ERR_TOO_LONG, opt.max_length, length - opt.max_length,
                            "expression too long: %zu characters (limit %zu)", length,
                            opt.max_length);

    p = dc_mem_calloc(a, 1, sizeof *p);
    if (!p)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    p->alloc = *a;
    p->n_inputs = opt.n > 0 ? (size_t)opt.n : opt.n_variables;
    b.p = p;
    b.a = a;
    b.err = err;
    if ((st = copy_names(&b, &opt, err)))
        goto cleanup;

    if ((st = dc_parse(text, length, opt.max_depth, 4 * opt.max_instructions + 64, a, &ast, err)))
        goto cleanup;

    b.p = p;
    b.a = a;
    b.err = err;
    b.max_instructions = opt.max_instructions;
    memset(&input, 0, sizeof input);
    input.kind = VK_INPUT;
    input.active = 1;
    input.uniform = opt.n > 0;
    input.vec = 1;
    input.len = (int32_t)p->n_inputs;
    if ((st = new_value(&b, &input, &input_id)))
        goto cleanup;
    if ((st = dc_build_lower(&b, &ast, &opt, text, err)))
        goto cleanup;
    if ((st = fuse_and_prune(&b)) || (st = allocate(&b)))
        goto cleanup;
    if ((st = dc_program_verify(p, err)))
        goto cleanup;
    if ((st = dc_structure_analyze(p)))
        st = dc_set_error(err, st, 0, 0, "out of memory");
cleanup:
    dc_ast_free(&ast, a);
    dc_mem_free(a, b.ctab, b.ccap * sizeof(int32_t));
    dc_mem_free(a, b.ktab, b.kcap * sizeof(int32_t));
    dc_mem_free(a, b.ntab, b.ncap * sizeof(int64_t));
    if (st) {
        dc_program_free(p);
        return st;
    }
    *out = p;
    return DC_OK;
}
