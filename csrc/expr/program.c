/* program.c -- the immutable program: verifier, disassembler, accessors. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "expr/expr.h"

static dc_status bad(dc_error *err, size_t at, const char *what)
{
    return dc_set_error(err, DC_ERR_INTERNAL, 0, 0,
                        "internal error: program check failed at instruction %zu (%s)", at, what);
}

static int view_ok(const dc_program *p, dc_operand o, int64_t m, const unsigned char *defined)
{
    const dc_value *v;
    int64_t last;
    if (o.val < 0 || (size_t)o.val >= p->n_values)
        return 0;
    v = &p->values[o.val];
    if (v->kind == VK_TEMP && !defined[o.val])
        return 0;
    if (o.off < 0 || o.off >= v->len)
        return 0;
    if (o.step == 0)
        return 1;
    last = (int64_t)o.off + (m - 1) * (int64_t)o.step;
    return last >= 0 && last < v->len;
}

/* Checked once when a program is built; the VM loop trusts it. */
dc_status dc_program_verify(const dc_program *p, dc_error *err)
{
    unsigned char *defined;
    size_t i, n = p->n_values;
    dc_status st = DC_OK;
    if (n == 0 || p->values[0].kind != VK_INPUT || (size_t)p->values[0].len != p->n_inputs)
        return bad(err, 0, "input value");
    for (i = 0; i < n; i++) {
        const dc_value *v = &p->values[i];
        if (v->len < 1 && !(i == 0 && p->n_inputs == 0))
            return bad(err, 0, "value length");
        if (v->kind == VK_CONST && (v->index < 0 || (size_t)(v->index + v->len) > p->n_consts))
            return bad(err, 0, "constant range");
    }
    defined = dc_mem_calloc(&p->alloc, n, 1);
    if (!defined)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    for (i = 0; i < p->n_code && !st; i++) {
        const dc_instr *in = &p->code[i];
        const dc_opinfo *info = dc_op_info(in->op);
        const dc_value *d;
        int k;
        int64_t m = in->m;
        if (!info || in->nin != info->nin) {
            st = bad(err, i, "opcode");
            break;
        }
        if (in->dst < 0 || (size_t)in->dst >= n || defined[in->dst] ||
            p->values[in->dst].kind != VK_TEMP) {
            st = bad(err, i, "destination");
            break;
        }
        d = &p->values[in->dst];
        if (m < 1 || (info->cls == RED || info->cls == RED2 ? d->len != 1 : d->len != m) ||
            d->index < 0 || (size_t)d->index >= p->n_regs || d->slot < 0 ||
            (size_t)(d->slot + d->len) > p->slot_total || (size_t)m > p->max_len) {
            st = bad(err, i, "shape or register");
            break;
        }
        for (k = 0; k < in->nin; k++)
            if (!view_ok(p, in->in[k], m, defined))
                st = bad(err, i, "operand view");
        defined[in->dst] = 1;
    }
    if (!st && !view_ok(p, p->result, 1, defined))
        st = bad(err, p->n_code, "result");
    dc_mem_free(&p->alloc, defined, n);
    return st;
}

void dc_program_free(dc_program *p)
{
    dc_allocator a;
    size_t i;
    if (!p)
        return;
    a = p->alloc;
    dc_structure_release(p);
    if (p->names) {
        for (i = 0; i < p->n_names; i++)
            if (p->names[i])
                dc_mem_free(&a, p->names[i], strlen(p->names[i]) + 1);
        dc_mem_free(&a, p->names, p->n_names * sizeof(char *));
    }
    dc_mem_free(&a, p->code, p->cap_code * sizeof(dc_instr));
    dc_mem_free(&a, p->values, p->cap_values * sizeof(dc_value));
    dc_mem_free(&a, p->consts, p->cap_consts * sizeof(double));
    dc_mem_free(&a, p, sizeof *p);
}

size_t dc_program_n_inputs(const dc_program *p) { return p ? p->n_inputs : 0; }
size_t dc_program_n_instructions(const dc_program *p) { return p ? p->n_code : 0; }
size_t dc_program_n_registers(const dc_program *p) { return p ? p->n_regs : 0; }

/* ---- disassembler ---- */

typedef struct out {
    char *buf;
    size_t cap, used;
} out;

static void put(out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *dst = o->used < o->cap ? o->buf + o->used : NULL;
    size_t room = o->used < o->cap ? o->cap - o->used : 0;
    va_start(ap, fmt);
    n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->used += (size_t)n;
}

static void put_operand(out *o, const dc_program *p, dc_operand op, int64_t m)
{
    const dc_value *v = &p->values[op.val];
    int full = op.off == 0 && ((v->vec && op.step == 1 && m == v->len) || (!v->vec));
    switch (v->kind) {
    case VK_INPUT:
        if (p->names && op.step == 0) {
            put(o, "%s", p->names[op.off]);
            return;
        }
        put(o, "x");
        break;
    case VK_CONST:
        if (!v->vec) {
            put(o, "%.17g", p->consts[v->index]);
            return;
        }
        put(o, "k%ld", (long)op.val);
        break;
    default:
        put(o, "%%%ld", (long)op.val);
        break;
    }
    if (full && !(v->kind == VK_INPUT && op.step == 0 && v->len > 1))
        return;
    if (op.step == 0)
        put(o, "[%ld]", (long)op.off);
    else
        put(o, "[%ld:%ld:%ld]", (long)op.off, (long)(op.off + (m - 1) * op.step + (op.step > 0 ? 1 : -1)),
            (long)op.step);
}

size_t dc_program_disassemble(const dc_program *p, char *buffer, size_t capacity)
{
    out o;
    size_t i;
    o.buf = buffer;
    o.cap = capacity;
    o.used = 0;
    if (capacity)
        buffer[0] = '\0';
    if (!p)
        return 0;
    put(&o, "; %zu instructions, %zu registers, %zu constants; input ", p->n_code, p->n_regs,
        p->n_consts);
    if (p->names)
        put(&o, "(%zu variables)\n", p->n_names);
    else
        put(&o, "x[%zu]\n", p->n_inputs);
    for (i = 0; i < p->n_values; i++) {
        const dc_value *v = &p->values[i];
        if (v->kind == VK_CONST && v->vec) {
            int64_t j, shown = v->len < 4 ? v->len : 4;
            put(&o, "; k%zu = [", i);
            for (j = 0; j < shown; j++)
                put(&o, "%s%.17g", j ? ", " : "", p->consts[v->index + j]);
            put(&o, "%s] (%ld)\n", v->len > shown ? ", ..." : "", (long)v->len);
        }
    }
    for (i = 0; i < p->n_code; i++) {
        const dc_instr *in = &p->code[i];
        const dc_value *d = &p->values[in->dst];
        int k;
        put(&o, "%4zu  %-8s %%%ld", i, dc_op_info(in->op)->name, (long)in->dst);
        if (d->len > 1)
            put(&o, "[%ld]", (long)d->len);
        put(&o, " = ");
        for (k = 0; k < in->nin; k++) {
            if (k)
                put(&o, ", ");
            put_operand(&o, p, in->in[k], in->m);
        }
        put(&o, "    ; r%ld @%u\n", (long)d->index, (unsigned)in->pos);
    }
    put(&o, "return ");
    put_operand(&o, p, p->result, 1);
    put(&o, "\n");
    return o.used;
}
