/*
 * constraint.c -- compile a constraint "[name:] lhs <= rhs" (or >=, ==).
 *
 * The text is lexed once to find its shape: an optional "name :" prefix and
 * exactly one comparison at the top level (outside brackets and calls).
 * Anything else is refused with the position of the fault: no comparison,
 * a chain (a <= b <= c), a strict or != comparison, and/or/not at the top
 * level, a bracket never closed or closing nothing.  The two sides are then compiled as ONE program "(lhs)-(rhs)" in the
 * caller's context (same variables as the objective), so a constraint costs
 * one evaluation and one reverse sweep; errors of that compile are mapped
 * back to positions in the caller's text.
 */
#include <string.h>

#include "expr/expr.h"

static int is_comparison(dc_token_kind k)
{
    return k == TK_LT || k == TK_LE || k == TK_GT || k == TK_GE || k == TK_EQ || k == TK_NE;
}

/* a position in the combined text "(" lhs ")-(" rhs ")" -> the caller's text */
static size_t map_back(size_t p, size_t lhs_pos, size_t lhs_len, size_t rhs_pos,
                       size_t rhs_len, size_t op_pos)
{
    if (p >= 1 && p <= lhs_len)
        return lhs_pos + (p - 1);
    if (p >= lhs_len + 4 && p <= lhs_len + 4 + rhs_len)
        return rhs_pos + (p - (lhs_len + 4));
    return op_pos;
}

dc_status dc_compile_constraint(const char *text, size_t length, const dc_options *options,
                                dc_program **out, dc_constraint_info *info, dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    dc_options opt;
    const dc_allocator *a;
    dc_lexer lx;
    dc_token tok, first, second;
    dc_status st;
    size_t depth = 0, count = 0, ntok = 0, body = 0, lhs_len, rhs_pos, rhs_len, total, limit;
    dc_token op, open;
    char *buf;

    memset(err, 0, sizeof *err);
    memset(&op, 0, sizeof op);
    memset(&open, 0, sizeof open);
    memset(&first, 0, sizeof first);
    memset(&second, 0, sizeof second);
    if (!out || !info || (!text && length))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL argument");
    *out = NULL;
    memset(info, 0, sizeof *info);
    dc_options_init(&opt);
    opt = options ? *options : opt;
    limit = opt.max_length ? opt.max_length : DC_DEFAULT_MAX_LENGTH;
    if (length > limit)
        return dc_set_error(err, DC_ERR_TOO_LONG, limit, length - limit,
                            "constraint too long: %zu characters (limit %zu)", length, limit);
    a = opt.allocator ? opt.allocator : dc_mem_default();
    lx.alloc = a;
    lx.text = text;
    lx.length = length;
    lx.cursor = 0;
    for (;;) {
        if ((st = dc_lex_next(&lx, &tok, err)))
            return st;
        if (tok.kind == TK_EOF)
            break;
        if (ntok == 0)
            first = tok;
        else if (ntok == 1)
            second = tok;
        ntok++;
        if (ntok == 2 && first.kind == TK_NAME && second.kind == TK_COLON) {
            info->name_pos = first.pos;
            info->name_len = first.len;
            body = second.pos + second.len;
            continue;
        }
        if (tok.kind == TK_LPAREN || tok.kind == TK_LBRACKET) {
            if (depth++ == 0)
                open = tok;
        } else if (tok.kind == TK_RPAREN || tok.kind == TK_RBRACKET) {
            if (depth == 0)
                return dc_set_error(err, DC_ERR_SYNTAX, tok.pos, tok.len,
                                    "%s closes no bracket", dc_lex_describe(tok.kind));
            depth--;
        } else if (depth == 0 && (tok.kind == TK_AND || tok.kind == TK_OR || tok.kind == TK_NOT)) {
            return dc_set_error(err, DC_ERR_SYNTAX, tok.pos, tok.len,
                                "a constraint is one comparison: %s is not allowed outside "
                                "brackets (write one constraint per condition)",
                                dc_lex_describe(tok.kind));
        } else if (depth == 0 && is_comparison(tok.kind)) {
            if (++count > 1)
                return dc_set_error(err, DC_ERR_SYNTAX, tok.pos, tok.len,
                                    "a constraint is one comparison: chained comparisons are "
                                    "not allowed (write one constraint per comparison)");
            op = tok;
            if (tok.kind == TK_LT || tok.kind == TK_GT)
                return dc_set_error(err, DC_ERR_SYNTAX, tok.pos, tok.len,
                                    "a constraint compares with <=, >= or ==, not %s",
                                    dc_lex_describe(tok.kind));
            if (tok.kind == TK_NE)
                return dc_set_error(err, DC_ERR_SYNTAX, tok.pos, tok.len,
                                    "a constraint compares with <=, >= or ==, not '!='");
        }
    }
    if (depth)
        return dc_set_error(err, DC_ERR_SYNTAX, open.pos, open.len, "%s is never closed",
                            dc_lex_describe(open.kind));
    if (count == 0)
        return dc_set_error(err, DC_ERR_SYNTAX, body, length > body ? length - body : 0,
                            "a constraint must be one comparison: lhs <= rhs, lhs >= rhs or "
                            "lhs == rhs");
    info->sense = op.kind == TK_LE ? DC_CONSTRAINT_LE
                  : op.kind == TK_GE ? DC_CONSTRAINT_GE
                                     : DC_CONSTRAINT_EQ;
    info->op_pos = op.pos;
    info->op_len = op.len;
    lhs_len = op.pos - body;
    rhs_pos = op.pos + op.len;
    rhs_len = length - rhs_pos;
    total = lhs_len + rhs_len + 5;
    buf = dc_mem_alloc(a, total);
    if (!buf)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    buf[0] = '(';
    memcpy(buf + 1, text + body, lhs_len);
    memcpy(buf + 1 + lhs_len, ")-(", 3);
    memcpy(buf + 4 + lhs_len, text + rhs_pos, rhs_len);
    buf[4 + lhs_len + rhs_len] = ')';
    opt.max_length = limit + 5;
    st = dc_compile(buf, total, &opt, out, err);
    dc_mem_free(a, buf, total);
    if (st) {
        size_t p = err->position, e = err->position + err->length;
        size_t mp = map_back(p, body, lhs_len, rhs_pos, rhs_len, op.pos);
        size_t me = e > p ? map_back(e, body, lhs_len, rhs_pos, rhs_len, op.pos) : mp;
        if (st == DC_ERR_EMPTY || (st == DC_ERR_SYNTAX && (p == lhs_len + 1 || p == total - 1)))
            return dc_set_error(err, DC_ERR_EMPTY, op.pos, op.len,
                                "a side of the comparison is empty");
        err->position = mp;
        err->length = me >= mp ? me - mp : 0;
        return st;
    }
    return DC_OK;
}
