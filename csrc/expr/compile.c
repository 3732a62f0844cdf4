/*
 * compile.c -- the pass driver.
 *
 *   parse (parser.c) -> resolve + lower to SSA views (resolve.c, through the
 *   builder, builder.c, which folds constants, rewrites powers and shares
 *   common subexpressions as it emits) -> fuse reductions -> remove dead
 *   code -> allocate registers -> verify (program.c) -> structure
 *   (structure.c).
 */
#include <string.h>

#include "expr/builder.h"
#include "expr/resolve.h"

static dc_status oom(dc_builder *b)
{
    return dc_set_error(b->err, DC_ERR_NOMEM, b->pos, b->len, "out of memory");
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

/* Copy the variable names into the program and index them in the builder's
 * name table (a duplicate is found by the same lookup): linear in the number
 * of names, so is every later lookup of a name in the text. */
static dc_status copy_names(dc_builder *b, const dc_options *opt, dc_error *err)
{
    dc_program *p = b->p;
    size_t i;
    if (!opt->n_variables)
        return DC_OK;
    p->names = dc_mem_calloc(&p->alloc, opt->n_variables, sizeof(char *));
    if (!p->names)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    p->n_names = opt->n_variables;
    if (!dc_build_name_table(b, opt->n_variables))
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    for (i = 0; i < opt->n_variables; i++) {
        const char *s = opt->variables[i];
        size_t n;
        if (!valid_name(s) || dc_reserved_name(s))
            return dc_set_error(err, DC_ERR_VARIABLE, 0, 0,
                                "variable %zu ('%.64s') is not a valid name: use letters, digits "
                                "and '_', not starting with a digit, and not a keyword or "
                                "function name", i, s ? s : "(null)");
        n = strlen(s);
        if (dc_build_name_index(b, s, n) >= 0)
            return dc_set_error(err, DC_ERR_VARIABLE, 0, 0,
                                "variable '%.64s' is listed twice", s);
        p->names[i] = dc_mem_alloc(&p->alloc, n + 1);
        if (!p->names[i])
            return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
        memcpy(p->names[i], s, n + 1);
        dc_build_name_insert(b, i);
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
    if ((st = dc_build_input(&b, opt.n > 0)))
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
