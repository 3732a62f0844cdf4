/* expr.h -- internals of the expression compiler and VM (not installed). */
#ifndef DC_EXPR_H
#define DC_EXPR_H

#include <stdint.h>

#include "common/alloc.h"
#include "common/error.h"
#include "decido.h"

/* ---- opcodes (rows in opcodes.def) ---- */
typedef enum dc_opcode {
#define DC_OP(e, name, nin, cls, comm, fn, range, lo, hi, adjoint) e,
#include "expr/opcodes.def"
#undef DC_OP
    OP__COUNT
} dc_opcode;

/* Classes (opcodes.def).  EWV, elementwise by an array kernel, is a row's
 * class only: dc_opinfo.cls says EW for it. */
enum { EW, RED, RED2, SCAN, EWV };

typedef struct dc_opinfo {
    const char *name;
    uint8_t nin, cls, commutative, zero_gradient;
} dc_opinfo;

const dc_opinfo *dc_op_info(int op);

/* ---- tokens and lexer ---- */
typedef enum dc_token_kind {
    TK_EOF, TK_NUMBER, TK_NAME, TK_AND, TK_OR, TK_NOT,
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT, TK_POW,
    TK_LT, TK_LE, TK_GT, TK_GE, TK_EQ, TK_NE,
    TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_COMMA, TK_COLON
} dc_token_kind;

typedef struct dc_token {
    dc_token_kind kind;
    size_t pos, len;
    double number;
} dc_token;

typedef struct dc_lexer {
    const dc_allocator *alloc;
    const char *text;
    size_t length;
    size_t cursor;
} dc_lexer;

dc_status dc_lex_next(dc_lexer *lx, dc_token *tok, dc_error *err);
const char *dc_lex_describe(dc_token_kind kind);


/* ---- syntax tree: nodes are stored children-first (post-order) ---- */
typedef enum dc_node_kind {
    ND_NUMBER, ND_NAME, ND_UNARY, ND_BINARY, ND_CALL, ND_INDEX, ND_SLICE
} dc_node_kind;

typedef struct dc_node {
    uint8_t kind;
    uint8_t op;          /* ND_UNARY / ND_BINARY: an opcode */
    int32_t a, b;        /* children; ND_INDEX: base, index; ND_SLICE: base */
    int32_t args, nargs; /* ND_CALL: arguments; ND_SLICE: start, stop, step (-1 absent) */
    size_t pos, len;     /* span of the whole node */
    size_t opos, olen;   /* operator or name token */
    double number;
} dc_node;

typedef struct dc_ast {
    dc_node *nodes;
    size_t n_nodes, cap_nodes;
    int32_t *list;
    size_t n_list, cap_list;
    int32_t root;
} dc_ast;

dc_status dc_parse(const char *text, size_t length, size_t max_depth, size_t max_nodes,
                   const dc_allocator *a, dc_ast *ast, dc_error *err);
void dc_ast_free(dc_ast *ast, const dc_allocator *a);

/* ---- program ---- */
typedef struct dc_operand {
    int32_t val;  /* value index */
    int32_t off;  /* first element */
    int32_t step; /* element step; 0 broadcasts one element */
} dc_operand;

typedef struct dc_instr {
    uint8_t op;
    uint8_t nin;
    int32_t dst;
    int32_t m; /* elements per row: output (EW, SCAN) or input (RED, RED2) */
    dc_operand in[3];
    uint32_t pos, len; /* source span */
} dc_instr;

enum { VK_INPUT, VK_CONST, VK_TEMP };

typedef struct dc_value {
    uint8_t kind;
    uint8_t active;  /* depends on the input row */
    uint8_t uniform; /* every element is the same function of its coordinates */
    uint8_t vec;     /* a vector (else a scalar) */
    int32_t len;     /* elements per row, 1 for a scalar */
    int64_t index;   /* VK_CONST: offset in consts; VK_TEMP: eval register */
    int64_t slot;    /* VK_TEMP: offset in the one-row slot area (AD, terms) */
} dc_value;

/* A term of the additive decomposition used by separable_terms. */
typedef struct dc_term {
    dc_operand view;  /* the vector (or scalar) whose elements are summed */
    dc_operand view2; /* times this one, when has2 (fused sum(A*B)) */
    int has2;
    int32_t m;        /* elements (1 for a scalar term) */
    int64_t a, c;    /* element j touches coordinate a*j + c */
    double coef;
} dc_term;

typedef struct dc_structure {
    dc_structure_kind kind;
    int identical;
    int edges_too_large;
    int64_t *group;        /* n_inputs */
    size_t n_groups;
    unsigned char *used;   /* n_inputs */
    int64_t *edges;        /* 2 * n_edges */
    size_t n_edges, cap_edges;
    dc_term *terms;        /* separable programs only */
    size_t n_terms, cap_terms;
} dc_structure;

struct dc_program {
    dc_allocator alloc;
    size_t n_inputs;
    dc_instr *code;
    size_t n_code, cap_code;
    dc_value *values;
    size_t n_values, cap_values;
    double *consts;
    size_t n_consts, cap_consts;
    dc_operand result;
    size_t n_regs;     /* eval registers */
    size_t max_len;    /* longest row any instruction reads or writes */
    size_t slot_total; /* doubles of one row of all temps */
    char **names;      /* variable names (decision context) or NULL */
    size_t n_names;
    dc_structure st;
};

/* program.c */
dc_status dc_program_verify(const dc_program *p, dc_error *err);
void dc_program_release(dc_program *p);
dc_status dc_structure_analyze(dc_program *p);
/* bound.c: dc_program_range (decido.h) */
void dc_structure_release(dc_program *p);

/* vm.c: run rows [0, rows) with the given register file layout. */
struct dc_workspace {
    dc_allocator alloc;
    const dc_program *program;
    double *regs;      /* eval registers */
    size_t regs_cap;   /* doubles */
    double *slots;     /* AD / terms: one row of every temp */
    size_t slots_cap;
    double *adj;       /* adjoints of every temp */
    size_t adj_cap;
    double *scratch;   /* 4 * max_len */
    size_t scratch_cap;
};

int dc_ws_reserve(dc_workspace *ws, double **buf, size_t *cap, size_t need);
/* Evaluate one row into the slot area (every temp kept). */
dc_status dc_vm_run_slots(const dc_program *p, dc_workspace *ws, const double *x);
/* Read element j of a view for row 0 in slot mode. */
double dc_vm_slot_elem(const dc_program *p, const dc_workspace *ws, const double *x,
                       dc_operand v, int64_t j);
double dc_scalar_op(int op, double a, double b, double c);
/* A reduction of m elements a[0], a[step], ... in the VM's order. */
double dc_vm_reduce_const(int op, const double *a, int64_t step, int64_t m);

#define DC_HARD_MAX_DEPTH 2000u

#endif
