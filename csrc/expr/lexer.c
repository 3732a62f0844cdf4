/* lexer.c -- tokens with byte offsets.  Never reads past text[length). */
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"

const char *dc_lex_describe(dc_token_kind kind)
{
    static const char *const names[] = {
        "end of expression", "number", "name", "'and'", "'or'", "'not'",
        "'+'", "'-'", "'*'", "'/'", "'%'", "'**'",
        "'<'", "'<='", "'>'", "'>='", "'=='", "'!='",
        "'('", "')'", "'['", "']'", "','", "':'"};
    if ((unsigned)kind >= sizeof names / sizeof names[0])
        return "token";
    return names[kind];
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_name_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_name_char(int c) { return is_name_start(c) || is_digit(c); }

static size_t skip_digits(const dc_lexer *lx, size_t i)
{
    while (i < lx->length && is_digit((unsigned char)lx->text[i]))
        i++;
    return i;
}

/* digits [. digits] [e [+-] digits]  |  . digits [e ...] */
static dc_status lex_number(dc_lexer *lx, dc_token *tok, dc_error *err)
{
    size_t start = lx->cursor, i = start, n, consumed;
    char small[64];
    char *buf = small, *end = NULL;
    double v;
    i = skip_digits(lx, i);
    if (i < lx->length && lx->text[i] == '.')
        i = skip_digits(lx, i + 1);
    if (i < lx->length && (lx->text[i] == 'e' || lx->text[i] == 'E')) {
        size_t j = i + 1;
        if (j < lx->length && (lx->text[j] == '+' || lx->text[j] == '-'))
            j++;
        if (j >= lx->length || !is_digit((unsigned char)lx->text[j]))
            return dc_set_error(err, DC_ERR_NUMBER, start, j - start,
                                "malformed number: the exponent has no digits");
        i = skip_digits(lx, j);
    }
    if (i < lx->length && (is_name_char((unsigned char)lx->text[i]) || lx->text[i] == '.'))
        return dc_set_error(err, DC_ERR_NUMBER, start, i + 1 - start,
                            "malformed number: unexpected '%c' after a number", lx->text[i]);
    n = i - start;
    if (n >= sizeof small) {
        buf = dc_mem_alloc(lx->alloc, n + 1);
        if (!buf)
            return dc_set_error(err, DC_ERR_NOMEM, start, n, "out of memory");
    }
    memcpy(buf, lx->text + start, n);
    buf[n] = '\0';
    v = strtod(buf, &end);
    consumed = (size_t)(end - buf);
    if (buf != small)
        dc_mem_free(lx->alloc, buf, n + 1);
    if (consumed != n)
        return dc_set_error(err, DC_ERR_NUMBER, start, n, "malformed number");
    tok->kind = TK_NUMBER;
    tok->pos = start;
    tok->len = n;
    tok->number = v;
    lx->cursor = i;
    return DC_OK;
}

static int keyword(const char *s, size_t n, const char *kw)
{
    return strlen(kw) == n && memcmp(s, kw, n) == 0;
}

dc_status dc_lex_next(dc_lexer *lx, dc_token *tok, dc_error *err)
{
    const char *t = lx->text;
    size_t i = lx->cursor;
    int c, next;
    while (i < lx->length && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    lx->cursor = i;
    tok->pos = i;
    tok->len = 1;
    tok->number = 0.0;
    if (i >= lx->length) {
        tok->kind = TK_EOF;
        tok->len = 0;
        return DC_OK;
    }
    c = (unsigned char)t[i];
    next = i + 1 < lx->length ? (unsigned char)t[i + 1] : -1;
    if (is_digit(c) || (c == '.' && next >= 0 && is_digit(next)))
        return lex_number(lx, tok, err);
    if (is_name_start(c)) {
        size_t j = i + 1;
        while (j < lx->length && is_name_char((unsigned char)t[j]))
            j++;
        tok->len = j - i;
        tok->kind = TK_NAME;
        if (keyword(t + i, j - i, "and"))
            tok->kind = TK_AND;
        else if (keyword(t + i, j - i, "or"))
            tok->kind = TK_OR;
        else if (keyword(t + i, j - i, "not"))
            tok->kind = TK_NOT;
        lx->cursor = j;
        return DC_OK;
    }
    lx->cursor = i + 1;
    switch (c) {
    case '+': tok->kind = TK_PLUS; return DC_OK;
    case '-': tok->kind = TK_MINUS; return DC_OK;
    case '/': tok->kind = TK_SLASH; return DC_OK;
    case '%': tok->kind = TK_PERCENT; return DC_OK;
    case '(': tok->kind = TK_LPAREN; return DC_OK;
    case ')': tok->kind = TK_RPAREN; return DC_OK;
    case '[': tok->kind = TK_LBRACKET; return DC_OK;
    case ']': tok->kind = TK_RBRACKET; return DC_OK;
    case ',': tok->kind = TK_COMMA; return DC_OK;
    case ':': tok->kind = TK_COLON; return DC_OK;
    case '*':
        if (next == '*') {
            tok->kind = TK_POW;
            tok->len = 2;
            lx->cursor = i + 2;
        } else {
            tok->kind = TK_STAR;
        }
        return DC_OK;
    case '<':
    case '>':
        tok->kind = c == '<' ? TK_LT : TK_GT;
        if (next == '=') {
            tok->kind = c == '<' ? TK_LE : TK_GE;
            tok->len = 2;
            lx->cursor = i + 2;
        }
        return DC_OK;
    case '=':
        if (next == '=') {
            tok->kind = TK_EQ;
            tok->len = 2;
            lx->cursor = i + 2;
            return DC_OK;
        }
        return dc_set_error(err, DC_ERR_SYNTAX, i, 1,
                            "'=' is not an operator: write '==' to compare");
    case '!':
        if (next == '=') {
            tok->kind = TK_NE;
            tok->len = 2;
            lx->cursor = i + 2;
            return DC_OK;
        }
        return dc_set_error(err, DC_ERR_SYNTAX, i, 1,
                            "'!' is not an operator: write 'not' (or '!=' to compare)");
    case '&':
        return dc_set_error(err, DC_ERR_BITWISE, i, next == '&' ? 2 : 1,
                            "'%s' is not an operator here: write 'and'", next == '&' ? "&&" : "&");
    case '|':
        return dc_set_error(err, DC_ERR_BITWISE, i, next == '|' ? 2 : 1,
                            "'%s' is not an operator here: write 'or'", next == '|' ? "||" : "|");
    case '^':
        return dc_set_error(err, DC_ERR_SYNTAX, i, 1,
                            "'^' is not an operator: write '**' for powers");
    default:
        break;
    }
    if (c == 0)
        return dc_set_error(err, DC_ERR_CHARACTER, i, 1, "unexpected NUL byte");
    if (c >= 0x80)
        return dc_set_error(err, DC_ERR_CHARACTER, i, 1,
                            "unexpected non-ASCII character (byte 0x%02X)", (unsigned)c);
    if (c < 0x20 || c == 0x7f)
        return dc_set_error(err, DC_ERR_CHARACTER, i, 1,
                            "unexpected control character (byte 0x%02X)", (unsigned)c);
    return dc_set_error(err, DC_ERR_CHARACTER, i, 1, "unexpected character '%c'", c);
}
