/*
 * parser.c -- precedence climbing to a small syntax tree.
 *
 * Precedence, lowest to highest (Python's):
 *   or < and < not < comparisons (chained) < + - < * / % < unary - + < ** < postfix
 * '**' is right-associative and its exponent is a unary expression, so
 * -x**2 == -(x**2) and 2**-1 == 0.5.  Only the parser recurses, and every
 * recursive production enters a level checked against max_depth; later passes
 * walk the node array in order (children are stored before parents).
 */
#include <string.h>

#include "expr/expr.h"

typedef struct parser {
    dc_lexer lx;
    dc_token tok;
    dc_ast *ast;
    const dc_allocator *alloc;
    dc_error *err;
    size_t depth, max_depth, max_nodes;
    int32_t *stack; /* pending call arguments */
    size_t n_stack, cap_stack;
} parser;

static dc_status parse_expr(parser *p, int32_t *out);

static dc_status advance(parser *p)
{
    return dc_lex_next(&p->lx, &p->tok, p->err);
}

static dc_status enter(parser *p)
{
    if (++p->depth > p->max_depth)
        return dc_set_error(p->err, DC_ERR_TOO_DEEP, p->tok.pos, p->tok.len,
                            "expression nested too deeply (limit %zu levels)", p->max_depth);
    return DC_OK;
}

static dc_status add_node(parser *p, const dc_node *nd, int32_t *out)
{
    dc_ast *t = p->ast;
    if (t->n_nodes >= p->max_nodes)
        return dc_set_error(p->err, DC_ERR_TOO_LARGE, nd->pos, nd->len,
                            "expression too large (limit %zu nodes)", p->max_nodes);
    if (!dc_mem_grow(p->alloc, (void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof *nd))
        return dc_set_error(p->err, DC_ERR_NOMEM, nd->pos, nd->len, "out of memory");
    t->nodes[t->n_nodes] = *nd;
    *out = (int32_t)t->n_nodes++;
    return DC_OK;
}

static dc_node blank(dc_node_kind kind, size_t pos, size_t len)
{
    dc_node nd;
    memset(&nd, 0, sizeof nd);
    nd.kind = (uint8_t)kind;
    nd.a = nd.b = -1;
    nd.args = -1;
    nd.pos = nd.opos = pos;
    nd.len = nd.olen = len;
    return nd;
}

static size_t span_end(const parser *p, int32_t node)
{
    const dc_node *nd = &p->ast->nodes[node];
    return nd->pos + nd->len;
}

static dc_status binary(parser *p, int op, size_t opos, size_t olen, int32_t a, int32_t b,
                        int32_t *out)
{
    dc_node nd = blank(ND_BINARY, p->ast->nodes[a].pos, 0);
    nd.len = span_end(p, b) - nd.pos;
    nd.op = (uint8_t)op;
    nd.a = a;
    nd.b = b;
    nd.opos = opos;
    nd.olen = olen;
    return add_node(p, &nd, out);
}

static dc_status expect(parser *p, dc_token_kind kind, const char *what, size_t open_pos)
{
    if (p->tok.kind != kind) {
        if (p->tok.kind == TK_EOF)
            return dc_set_error(p->err, DC_ERR_SYNTAX, p->tok.pos, 0,
                                "expected %s to close the bracket at position %zu, "
                                "found the end of the expression", what, open_pos);
        return dc_set_error(p->err, DC_ERR_SYNTAX, p->tok.pos, p->tok.len,
                            "expected %s, found %s", what, dc_lex_describe(p->tok.kind));
    }
    return advance(p);
}

static dc_status push_arg(parser *p, int32_t node)
{
    if (!dc_mem_grow(p->alloc, (void **)&p->stack, &p->cap_stack, p->n_stack + 1, sizeof(int32_t)))
        return dc_set_error(p->err, DC_ERR_NOMEM, p->tok.pos, 0, "out of memory");
    p->stack[p->n_stack++] = node;
    return DC_OK;
}

/* Move the top n entries of the argument stack to the permanent list. */
static dc_status commit_args(parser *p, size_t n, int32_t *first)
{
    dc_ast *t = p->ast;
    if (!dc_mem_grow(p->alloc, (void **)&t->list, &t->cap_list, t->n_list + n + 1, sizeof(int32_t)))
        return dc_set_error(p->err, DC_ERR_NOMEM, p->tok.pos, 0, "out of memory");
    *first = (int32_t)t->n_list;
    if (n)
        memcpy(t->list + t->n_list, p->stack + p->n_stack - n, n * sizeof(int32_t));
    t->n_list += n;
    p->n_stack -= n;
    return DC_OK;
}

static dc_status parse_call(parser *p, dc_token name, int32_t *out)
{
    dc_status st;
    size_t nargs = 0, open = p->tok.pos;
    dc_node nd;
    if ((st = advance(p)))
        return st;
    if (p->tok.kind != TK_RPAREN) {
        for (;;) {
            int32_t arg;
            if ((st = parse_expr(p, &arg)) || (st = push_arg(p, arg)))
                return st;
            nargs++;
            if (p->tok.kind != TK_COMMA)
                break;
            if ((st = advance(p)))
                return st;
        }
    }
    nd = blank(ND_CALL, name.pos, 0);
    nd.opos = name.pos;
    nd.olen = name.len;
    nd.nargs = (int32_t)nargs;
    nd.len = p->tok.pos + p->tok.len - name.pos;
    if ((st = expect(p, TK_RPAREN, "')' or ','", open)))
        return st;
    if ((st = commit_args(p, nargs, &nd.args)))
        return st;
    return add_node(p, &nd, out);
}

static dc_status parse_atom(parser *p, int32_t *out)
{
    dc_status st;
    dc_token t = p->tok;
    dc_node nd;
    switch (t.kind) {
    case TK_NUMBER:
        nd = blank(ND_NUMBER, t.pos, t.len);
        nd.number = t.number;
        if ((st = advance(p)))
            return st;
        return add_node(p, &nd, out);
    case TK_NAME:
        if ((st = advance(p)))
            return st;
        if (p->tok.kind == TK_LPAREN)
            return parse_call(p, t, out);
        nd = blank(ND_NAME, t.pos, t.len);
        return add_node(p, &nd, out);
    case TK_LPAREN:
        if ((st = advance(p)) || (st = parse_expr(p, out)))
            return st;
        return expect(p, TK_RPAREN, "')'", t.pos);
    case TK_EOF:
        return dc_set_error(p->err, DC_ERR_SYNTAX, t.pos, 0,
                            "unexpected end of the expression: an operand is missing");
    case TK_RPAREN:
    case TK_RBRACKET:
        return dc_set_error(p->err, DC_ERR_SYNTAX, t.pos, t.len, "unmatched %s",
                            dc_lex_describe(t.kind));
    default:
        return dc_set_error(p->err, DC_ERR_SYNTAX, t.pos, t.len,
                            "expected an operand, found %s", dc_lex_describe(t.kind));
    }
}

/* base '[' index ']'  |  base '[' [start] ':' [stop] [':' [step]] ']' */
static dc_status parse_subscript(parser *p, int32_t base, int32_t *out)
{
    dc_status st;
    size_t open = p->tok.pos;
    int32_t part[3] = {-1, -1, -1};
    int is_slice = 0;
    dc_node nd;
    if ((st = advance(p)))
        return st;
    if (p->tok.kind == TK_RBRACKET)
        return dc_set_error(p->err, DC_ERR_SYNTAX, open, p->tok.pos + 1 - open,
                            "empty subscript: write an index x[k] or a slice x[a:b]");
    if (p->tok.kind != TK_COLON && (st = parse_expr(p, &part[0])))
        return st;
    if (p->tok.kind == TK_COLON) {
        is_slice = 1;
        if ((st = advance(p)))
            return st;
        if (p->tok.kind != TK_COLON && p->tok.kind != TK_RBRACKET && (st = parse_expr(p, &part[1])))
            return st;
        if (p->tok.kind == TK_COLON) {
            if ((st = advance(p)))
                return st;
            if (p->tok.kind != TK_RBRACKET && (st = parse_expr(p, &part[2])))
                return st;
        }
    }
    nd = blank(is_slice ? ND_SLICE : ND_INDEX, p->ast->nodes[base].pos, 0);
    nd.len = p->tok.pos + p->tok.len - nd.pos;
    nd.opos = open;
    nd.olen = p->tok.pos + p->tok.len - open;
    nd.a = base;
    if ((st = expect(p, TK_RBRACKET, "']'", open)))
        return st;
    if (!is_slice) {
        nd.b = part[0];
        return add_node(p, &nd, out);
    }
    {
        int k;
        for (k = 0; k < 3; k++)
            if ((st = push_arg(p, part[k])))
                return st;
    }
    nd.nargs = 3;
    if ((st = commit_args(p, 3, &nd.args)))
        return st;
    return add_node(p, &nd, out);
}

static dc_status parse_postfix(parser *p, int32_t *out)
{
    dc_status st = parse_atom(p, out);
    while (!st && p->tok.kind == TK_LBRACKET)
        st = parse_subscript(p, *out, out);
    return st;
}

static dc_status parse_unary(parser *p, int32_t *out);

static dc_status parse_power(parser *p, int32_t *out)
{
    dc_status st;
    int32_t base, exponent;
    dc_token op;
    if ((st = parse_postfix(p, &base)))
        return st;
    if (p->tok.kind != TK_POW) {
        *out = base;
        return DC_OK;
    }
    op = p->tok;
    if ((st = enter(p)) || (st = advance(p)) || (st = parse_unary(p, &exponent)))
        return st;
    p->depth--;
    return binary(p, OP_POW, op.pos, op.len, base, exponent, out);
}

static dc_status parse_unary(parser *p, int32_t *out)
{
    dc_status st;
    dc_token op = p->tok;
    int32_t operand;
    dc_node nd;
    if (op.kind != TK_MINUS && op.kind != TK_PLUS)
        return parse_power(p, out);
    if ((st = enter(p)) || (st = advance(p)) || (st = parse_unary(p, &operand)))
        return st;
    p->depth--;
    if (op.kind == TK_PLUS) {
        *out = operand;
        return DC_OK;
    }
    nd = blank(ND_UNARY, op.pos, span_end(p, operand) - op.pos);
    nd.op = OP_NEG;
    nd.olen = op.len;
    nd.a = operand;
    return add_node(p, &nd, out);
}

static int binary_op_of(dc_token_kind k, int level)
{
    if (level == 0)
        return k == TK_PLUS ? OP_ADD : k == TK_MINUS ? OP_SUB : -1;
    if (level == 1)
        return k == TK_STAR ? OP_MUL : k == TK_SLASH ? OP_DIV : k == TK_PERCENT ? OP_MOD : -1;
    switch (k) {
    case TK_LT: return OP_LT;
    case TK_LE: return OP_LE;
    case TK_GT: return OP_GT;
    case TK_GE: return OP_GE;
    case TK_EQ: return OP_EQ;
    case TK_NE: return OP_NE;
    default: return -1;
    }
}

/* level 1: * / %  over unary */
static dc_status parse_term(parser *p, int32_t *out)
{
    dc_status st = parse_unary(p, out);
    int op;
    while (!st && (op = binary_op_of(p->tok.kind, 1)) >= 0) {
        dc_token t = p->tok;
        int32_t rhs;
        if ((st = advance(p)) || (st = parse_unary(p, &rhs)))
            return st;
        st = binary(p, op, t.pos, t.len, *out, rhs, out);
    }
    return st;
}

static dc_status parse_arith(parser *p, int32_t *out)
{
    dc_status st = parse_term(p, out);
    int op;
    while (!st && (op = binary_op_of(p->tok.kind, 0)) >= 0) {
        dc_token t = p->tok;
        int32_t rhs;
        if ((st = advance(p)) || (st = parse_term(p, &rhs)))
            return st;
        st = binary(p, op, t.pos, t.len, *out, rhs, out);
    }
    return st;
}

/* a < b <= c  ->  (a < b) and (b <= c), b computed once */
static dc_status parse_comparison(parser *p, int32_t *out)
{
    dc_status st;
    int32_t prev, result = -1;
    int op;
    if ((st = parse_arith(p, &prev)))
        return st;
    while ((op = binary_op_of(p->tok.kind, 2)) >= 0) {
        dc_token t = p->tok;
        int32_t rhs, cmp;
        if ((st = advance(p)) || (st = parse_arith(p, &rhs)) ||
            (st = binary(p, op, t.pos, t.len, prev, rhs, &cmp)))
            return st;
        if (result < 0)
            result = cmp;
        else if ((st = binary(p, OP_AND, t.pos, t.len, result, cmp, &result)))
            return st;
        prev = rhs;
    }
    *out = result < 0 ? prev : result;
    return DC_OK;
}

static dc_status parse_not(parser *p, int32_t *out)
{
    dc_status st;
    dc_token op = p->tok;
    int32_t operand;
    dc_node nd;
    if (op.kind != TK_NOT)
        return parse_comparison(p, out);
    if ((st = enter(p)) || (st = advance(p)) || (st = parse_not(p, &operand)))
        return st;
    p->depth--;
    nd = blank(ND_UNARY, op.pos, span_end(p, operand) - op.pos);
    nd.op = OP_NOT;
    nd.olen = op.len;
    nd.a = operand;
    return add_node(p, &nd, out);
}

static dc_status parse_and(parser *p, int32_t *out)
{
    dc_status st = parse_not(p, out);
    while (!st && p->tok.kind == TK_AND) {
        dc_token t = p->tok;
        int32_t rhs;
        if ((st = advance(p)) || (st = parse_not(p, &rhs)))
            return st;
        st = binary(p, OP_AND, t.pos, t.len, *out, rhs, out);
    }
    return st;
}

static dc_status parse_expr(parser *p, int32_t *out)
{
    dc_status st;
    if ((st = enter(p)) || (st = parse_and(p, out)))
        return st;
    while (p->tok.kind == TK_OR) {
        dc_token t = p->tok;
        int32_t rhs;
        if ((st = advance(p)) || (st = parse_and(p, &rhs)) ||
            (st = binary(p, OP_OR, t.pos, t.len, *out, rhs, out)))
            return st;
    }
    p->depth--;
    return DC_OK;
}

dc_status dc_parse(const char *text, size_t length, size_t max_depth, size_t max_nodes,
                   const dc_allocator *a, dc_ast *ast, dc_error *err)
{
    parser p;
    dc_status st;
    memset(ast, 0, sizeof *ast);
    ast->root = -1;
    memset(&p, 0, sizeof p);
    p.lx.alloc = a;
    p.lx.text = text;
    p.lx.length = length;
    p.ast = ast;
    p.alloc = a;
    p.err = err;
    p.max_depth = max_depth;
    p.max_nodes = max_nodes;
    if ((st = advance(&p)))
        goto cleanup;
    if (p.tok.kind == TK_EOF) {
        st = dc_set_error(err, DC_ERR_EMPTY, 0, 0, "the expression is empty");
        goto cleanup;
    }
    if ((st = parse_expr(&p, &ast->root)))
        goto cleanup;
    if (p.tok.kind != TK_EOF) {
        st = p.tok.kind == TK_RPAREN || p.tok.kind == TK_RBRACKET
                 ? dc_set_error(err, DC_ERR_SYNTAX, p.tok.pos, p.tok.len, "unmatched %s",
                                dc_lex_describe(p.tok.kind))
                 : dc_set_error(err, DC_ERR_SYNTAX, p.tok.pos, p.tok.len,
                                "unexpected %s after a complete expression (missing operator?)",
                                dc_lex_describe(p.tok.kind));
    }
cleanup:
    dc_mem_free(a, p.stack, p.cap_stack * sizeof(int32_t));
    if (st)
        dc_ast_free(ast, a);
    return st;
}

void dc_ast_free(dc_ast *ast, const dc_allocator *a)
{
    dc_mem_free(a, ast->nodes, ast->cap_nodes * sizeof(dc_node));
    dc_mem_free(a, ast->list, ast->cap_list * sizeof(int32_t));
    memset(ast, 0, sizeof *ast);
    ast->root = -1;
}
