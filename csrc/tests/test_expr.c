/*
 * test_expr.c -- C unit tests of the expression library through decido.h.
 * Run under AddressSanitizer + UBSan in CI (make ctest-sanitize).
 *
 * The test allocator stores each block's size in a header and checks that
 * every free and realloc passes the size the block was allocated with, and
 * can be told to fail after k allocations: every out-of-memory path must
 * return DC_ERR_NOMEM and leak nothing (LeakSanitizer checks at exit).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decido.h"
#include "expr/expr.h"
#include "expr/vm.h"
#include "tests/check.h"

/* ---- checking allocator ---- */
typedef struct counting {
    long allocations, fail_after, live_blocks, size_errors;
} counting;

typedef struct header {
    size_t size;
    size_t pad;
} header;

static void *test_realloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    counting *c = ud;
    header *h = ptr ? (header *)ptr - 1 : NULL;
    if (h && h->size != old_size)
        c->size_errors++;
    if (new_size == 0) {
        if (h) {
            c->live_blocks--;
            free(h);
        }
        return NULL;
    }
    if (c->fail_after >= 0 && c->allocations >= c->fail_after)
        return NULL;
    c->allocations++;
    {
        header *nh = realloc(h, sizeof(header) + new_size);
        if (!nh)
            return NULL;
        if (!h)
            c->live_blocks++;
        nh->size = new_size;
        return nh + 1;
    }
}

static dc_program *compile_n(const char *text, int64_t n, dc_error *err)
{
    dc_options o;
    dc_program *p = NULL;
    dc_options_init(&o);
    o.n = n;
    dc_compile(text, strlen(text), &o, &p, err);
    return p;
}

static double eval_at(const char *text, int64_t n, const double *x)
{
    dc_error err;
    dc_program *p = compile_n(text, n, &err);
    dc_workspace *ws;
    double v = NAN;
    if (!p) {
        printf("  compile failed: %s: %s\n", text, err.message);
        return NAN;
    }
    ws = dc_workspace_new(p, NULL);
    if (dc_eval(p, ws, x, &v) != DC_OK)
        v = NAN;
    dc_workspace_free(ws);
    dc_program_free(p);
    return v;
}

static void test_values(void)
{
    const double x3[3] = {1.0, 2.0, 3.0};
    const double z1[1] = {0.0};
    struct {
        const char *text;
        double expect;
    } cases[] = {
        {"1 + 2 * 3", 7.0},
        {"-2**2", -4.0},
        {"2**-1", 0.5},
        {"2**3**2", 512.0},
        {"(-7) % 3", 2.0},
        {"7 % -3", -2.0},
        {"1 < 2 < 3", 1.0},
        {"3 > 2 > 2", 0.0},
        {"not 0 and 1", 1.0},
        {"0 or 0", 0.0},
        {"sum(x)", 6.0},
        {"sum(i*x)", 14.0},
        {"x[-1] - x[0]", 2.0},
        {"sum(x[::2])", 4.0},
        {"sum(x[1::2])", 2.0},
        {"sum(x[::-1] * i)", 10.0},
        {"prod(x)", 6.0},
        {"mean(x)", 2.0},
        {"norm(x[:2])", sqrt(5.0)},
        {"min(x) + max(x)", 4.0},
        {"min(1, 2, -3)", -3.0},
        {"sum(cumsum(x))", 10.0},
        {"sum(where(x > 1, x, 0))", 5.0},
        {"sum(clip(x, 1.5, 2.5))", 6.0},
        {"n", 3.0},
        {"sum(x**2)", 14.0},
        {"sum(x**3)", 36.0},
        {"sum(x**0.5)", 1.0 + sqrt(2.0) + sqrt(3.0)},
        {"sum(x**-1)", 1.0 + 0.5 + 1.0 / 3.0},
        {"atan2(1, 1) * 4", 3.141592653589793},
        {"hypot(x[0], x[1]) ** 2", 5.0},
        {"sum(x[1:] - x[:-1])", 2.0},
        {"x[n-1]", 3.0},
        {"sum(x == 2)", 1.0},
        {"sum(sign(x - 2))", 0.0},
        {"round(2.5) + round(-2.5)", 0.0},
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double v = eval_at(cases[k].text, 3, x3);
        CHECK(fabs(v - cases[k].expect) <= 1e-12 * (1.0 + fabs(cases[k].expect)),
              "%s = %.17g, expected %.17g", cases[k].text, v, cases[k].expect);
    }
    CHECK(eval_at("0 % 0", 1, z1) != eval_at("0 % 0", 1, z1), "0 %% 0 is NaN");
    CHECK(signbit(eval_at("x[0] * -1", 1, z1)), "-0.0 kept");
    CHECK(signbit(eval_at("(x[0] * -1) ** 0.5", 1, z1)) == 0, "pow(-0, .5) is +0");
    CHECK(signbit(eval_at("-0.0 ** 0.5", 1, z1)), "-0.0 ** 0.5 is -(0.0 ** 0.5)");
    CHECK(eval_at("(-1/0) ** 0.5", 1, z1) == INFINITY, "pow(-inf, .5) is +inf");
}

/* x ** k with k read at run time is bit for bit x ** k with k written: the rewrites of a
 * constant exponent (products by squaring, sqrt, 1/x) are made for a variable one too */
static void test_variable_exponent_matches_literal(void)
{
    const double bases[] = {-0.708084005427033, 1.1, 0.7, -3.3, 3.141592653589793, 1e-5,
                            1e300, -0.0, 123.456};
    const double exps[] = {-1.0, 0.5, 1.0, 2.0, 3.0, 5.0, 7.0, 11.0, 13.0, 16.0, 17.0, 2.5};
    size_t i, k;
    for (i = 0; i < sizeof bases / sizeof bases[0]; i++)
        for (k = 0; k < sizeof exps / sizeof exps[0]; k++) {
            double xk[2] = {bases[i], exps[k]}, written, read;
            char text[64];
            snprintf(text, sizeof text, "x[0] ** (%.17g)", exps[k]);
            written = eval_at(text, 2, xk);
            read = eval_at("x[0] ** x[1]", 2, xk);
            CHECK(memcmp(&written, &read, sizeof read) == 0 || (written != written && read != read),
                  "%.17g ** %.17g: written %.17g, read %.17g", bases[i], exps[k], written, read);
        }
}

/* a folded sin/cos/exp/log of a constant is the VM's value at run time, bit for bit: the
 * compiler folds with the VM's kernels (libm's results differ in the last bit at times) */
static void test_folded_functions_match_run_time(void)
{
    static const char *const fns[] = {"sin", "cos", "exp", "log"};
    uint64_t state = 0x9e3779b97f4a7c15u;
    int f, k, differ = 0;
    for (f = 0; f < 4; f++)
        for (k = 0; k < 500; k++) {
            double x1[1], written, read;
            char text[64], lit[64];
            state = state * 6364136223846793005u + 1442695040888963407u;
            x1[0] = ((double)(state >> 11) / 9007199254740992.0 - 0.5) * 40.0;
            if (f == 3)
                x1[0] = fabs(x1[0]) + 1e-3;
            snprintf(lit, sizeof lit, "%s(%.17g)", fns[f], x1[0]);
            snprintf(text, sizeof text, "%s(x[0])", fns[f]);
            written = eval_at(lit, 1, x1);
            read = eval_at(text, 1, x1);
            if (memcmp(&written, &read, sizeof read) != 0 && differ++ < 5)
                printf("  %s: folded %.17g, run time %.17g\n", lit, written, read);
        }
    CHECK(differ == 0, "%d folded values differ from the VM's", differ);
}

static void test_errors(void)
{
    struct {
        const char *text;
        dc_status status;
        size_t position;
    } cases[] = {
        {"", DC_ERR_EMPTY, 0},
        {"   ", DC_ERR_EMPTY, 0},
        {"1 +", DC_ERR_SYNTAX, 3},
        {"(1", DC_ERR_SYNTAX, 2},
        {"1)", DC_ERR_SYNTAX, 1},
        {"x & 1", DC_ERR_BITWISE, 2},
        {"x | 1", DC_ERR_BITWISE, 2},
        {"1 = 1", DC_ERR_SYNTAX, 2},
        {"2 ^ 3", DC_ERR_SYNTAX, 2},
        {"1.2.3", DC_ERR_NUMBER, 0},
        {"1e", DC_ERR_NUMBER, 0},
        {"2x", DC_ERR_NUMBER, 0},
        {"sum(y)", DC_ERR_UNKNOWN_NAME, 4},
        {"foo(x)", DC_ERR_UNKNOWN_FUNCTION, 0},
        {"x(1)", DC_ERR_NOT_CALLABLE, 0},
        {"sin + 1", DC_ERR_FUNCTION_VALUE, 0},
        {"atan2(1)", DC_ERR_ARITY, 0},
        {"sum(x[1:] + x)", DC_ERR_SHAPE, 10},
        {"n[0]", DC_ERR_NOT_INDEXABLE, 1},
        {"x[3]", DC_ERR_INDEX, 2},
        {"x[-4]", DC_ERR_INDEX, 2},
        {"x[0.5]", DC_ERR_INDEX, 2},
        {"x[x[0]]", DC_ERR_INDEX, 2},
        {"x[1e300]", DC_ERR_INDEX, 2},
        {"sum(x[::0])", DC_ERR_SLICE, 8},
        {"sum(x[2:1])", DC_ERR_SLICE, 5},
        {"x * 2", DC_ERR_NOT_SCALAR, 0},
        {"x[]", DC_ERR_SYNTAX, 1},
        {"1 $ 2", DC_ERR_CHARACTER, 2},
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dc_error err;
        dc_program *p = compile_n(cases[k].text, 3, &err);
        CHECK(p == NULL && err.status == cases[k].status && err.position == cases[k].position,
              "'%s': status %s at %zu (%s), expected %s at %zu", cases[k].text,
              dc_status_code(err.status), err.position, err.message,
              dc_status_code(cases[k].status), cases[k].position);
        dc_program_free(p);
    }
    {
        /* NUL bytes and non-ASCII are characters errors, not string ends */
        const char text[] = {'x', '[', '0', ']', '\0', '+', '1'};
        dc_options o;
        dc_program *p = NULL;
        dc_error err;
        dc_options_init(&o);
        o.n = 2;
        CHECK(dc_compile(text, sizeof text, &o, &p, &err) == DC_ERR_CHARACTER &&
                  err.position == 4,
              "NUL byte: %s at %zu", dc_status_code(err.status), err.position);
        dc_program_free(p);
    }
}

static char *repeat(const char *head, const char *unit, size_t count, const char *tail)
{
    size_t hu = strlen(head), uu = strlen(unit), tu = strlen(tail), k;
    char *s = malloc(hu + uu * count + tu + 1), *w = s;
    if (!s)
        return NULL;
    memcpy(w, head, hu);
    w += hu;
    for (k = 0; k < count; k++, w += uu)
        memcpy(w, unit, uu);
    memcpy(w, tail, tu + 1);
    return s;
}

static void test_limits(void)
{
    struct {
        const char *head, *unit;
        size_t count;
        const char *tail;
        dc_status status;
    } cases[] = {
        {"", "(", 100000, "1", DC_ERR_TOO_DEEP},
        {"", "-", 100000, "1", DC_ERR_TOO_DEEP},
        {"", "not ", 100000, "1", DC_ERR_TOO_DEEP},
        {"1", "**1", 100000, "", DC_ERR_TOO_DEEP},
        {"1", "+x[0]", 70000, "", DC_ERR_TOO_LARGE},
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *text = repeat(cases[k].head, cases[k].unit, cases[k].count, cases[k].tail);
        dc_options o;
        dc_program *p = NULL;
        dc_error err;
        dc_status st;
        dc_options_init(&o);
        o.n = 3;
        o.max_length = 10000000;
        st = dc_compile(text, strlen(text), &o, &p, &err);
        CHECK(st == cases[k].status, "pathological %s x%zu: got %s (%s)", cases[k].unit,
              cases[k].count, dc_status_code(st), err.message);
        dc_program_free(p);
        /* and with the default length limit */
        st = dc_compile(text, strlen(text), NULL, &p, &err);
        CHECK(st == DC_ERR_TOO_LONG, "default length limit: %s", dc_status_code(st));
        free(text);
    }
    {
        /* a long left-deep sum within limits compiles and evaluates (no recursion) */
        char *text = repeat("x[0]", "+x[1]", 3000, "");
        dc_options o;
        dc_program *p = NULL;
        dc_error err;
        double x[2] = {1.0, 2.0}, v = 0;
        dc_options_init(&o);
        o.n = 2;
        o.max_length = 100000;
        CHECK(dc_compile(text, strlen(text), &o, &p, &err) == DC_OK, "long sum: %s",
              err.message);
        if (p) {
            dc_workspace *ws = dc_workspace_new(p, NULL);
            dc_eval(p, ws, x, &v);
            CHECK(v == 6001.0, "long sum = %g", v);
            dc_workspace_free(ws);
        }
        dc_program_free(p);
        free(text);
    }
}

static void test_out_of_memory(void)
{
    const char *texts[] = {
        "10*n + sum(x**2 - 10*cos(2*pi*x))",
        "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)",
        "sum((x[::2]-x[1::2])**2) + prod(cos(x/sqrt(i))) + sum(cumsum(x)) + norm(x)**2",
        "y + foo",
    };
    size_t t;
    for (t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        long k;
        int reached_ok = 0;
        for (k = 0; k < 400 && !reached_ok; k++) {
            counting c = {0, k, 0, 0};
            dc_allocator a = {test_realloc, &c};
            dc_options o;
            dc_program *p = NULL;
            dc_error err;
            dc_status st;
            dc_options_init(&o);
            o.n = 6;
            o.allocator = &a;
            st = dc_compile(texts[t], strlen(texts[t]), &o, &p, &err);
            CHECK(st == DC_OK || st == DC_ERR_NOMEM || st == DC_ERR_UNKNOWN_NAME,
                  "%s with %ld allocations: %s", texts[t], k, dc_status_code(st));
            if (st == DC_OK) {
                double x[6] = {1, 2, 3, 4, 5, 6}, g[6], v;
                long j;
                reached_ok = 1;
                /* workspaces: fail at each allocation too */
                for (j = 0; j < 8; j++) {
                    dc_workspace *ws;
                    c.fail_after = c.allocations + j;
                    ws = dc_workspace_new(p, &a);
                    if (ws) {
                        dc_status s1 = dc_eval(p, ws, x, &v);
                        dc_status s2 = dc_gradient(p, ws, x, &v, g);
                        CHECK((s1 == DC_OK || s1 == DC_ERR_NOMEM) &&
                                  (s2 == DC_OK || s2 == DC_ERR_NOMEM),
                              "eval/gradient under OOM: %s %s", dc_status_code(s1),
                              dc_status_code(s2));
                    }
                    dc_workspace_free(ws);
                }
                dc_program_free(p);
            } else if (st == DC_ERR_UNKNOWN_NAME) {
                reached_ok = 1;
            }
            CHECK(c.live_blocks == 0 && c.size_errors == 0,
                  "%s (fail after %ld): %ld blocks leaked, %ld size errors", texts[t], k,
                  c.live_blocks, c.size_errors);
        }
        CHECK(reached_ok, "%s never compiled within 400 allocations", texts[t]);
    }
}

static void test_gradient_and_structure(void)
{
    dc_error err;
    dc_program *p = compile_n("sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", 4, &err);
    dc_workspace *ws = dc_workspace_new(p, NULL);
    double x[4] = {0.5, -1.0, 2.0, 0.25}, g[4], v, h = 1e-6;
    int64_t pairs[8];
    size_t count = 0, j;
    CHECK(dc_structure_kind_of(p) == DC_STRUCT_CHAINED, "rosenbrock is chained");
    CHECK(dc_structure_edges(p, pairs, 4, &count) == DC_OK && count == 3 && pairs[0] == 0 &&
              pairs[1] == 1 && pairs[5] == 3,
          "rosenbrock edges");
    dc_gradient(p, ws, x, &v, g);
    for (j = 0; j < 4; j++) {
        double xp[4], xm[4], fp, fm;
        memcpy(xp, x, sizeof x);
        memcpy(xm, x, sizeof x);
        xp[j] += h;
        xm[j] -= h;
        dc_eval(p, ws, xp, &fp);
        dc_eval(p, ws, xm, &fm);
        CHECK(fabs((fp - fm) / (2 * h) - g[j]) < 1e-4 * (1 + fabs(g[j])),
              "rosenbrock d/dx%zu: AD %.10g vs FD %.10g", j, g[j], (fp - fm) / (2 * h));
    }
    dc_workspace_free(ws);
    dc_program_free(p);

    p = compile_n("10*n + sum(x**2 - 10*cos(2*pi*x))", 5, &err);
    CHECK(dc_structure_kind_of(p) == DC_STRUCT_SEPARABLE && dc_structure_identical_terms(p),
          "rastrigin separable with identical terms");
    dc_program_free(p);
    p = compile_n("sum(i*x**2)", 5, &err);
    CHECK(dc_structure_kind_of(p) == DC_STRUCT_SEPARABLE && !dc_structure_identical_terms(p),
          "sum(i*x**2) separable, not identical");
    dc_program_free(p);
    p = compile_n("sum(x)**2", 5, &err);
    CHECK(dc_structure_kind_of(p) == DC_STRUCT_GENERAL, "sum(x)**2 general");
    dc_program_free(p);
    p = compile_n("sum((x[::2]-x[1::2])**2)", 6, &err);
    CHECK(dc_structure_kind_of(p) == DC_STRUCT_GROUPED, "pairs grouped");
    dc_program_free(p);
}

/* Reductions over the input row read n elements with no temporary of that
 * length: the reverse sweep's scratch must still hold them. */
static void test_gradient_of_input_reductions(void)
{
    const char *texts[] = {"sum(x)", "prod(x)", "norm(x)", "min(x)", "max(x)", "mean(x)",
                           "sum(x*x)", "x[0] * sum(x[::-1])"};
    size_t t, j;
    double x[40], g[40], v;
    for (j = 0; j < 40; j++)
        x[j] = 1.0 + 0.01 * (double)j;
    for (t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        dc_error err;
        dc_program *p = compile_n(texts[t], 40, &err);
        dc_workspace *ws = dc_workspace_new(p, NULL);
        CHECK(p && dc_gradient(p, ws, x, &v, g) == DC_OK, "gradient of %s", texts[t]);
        dc_workspace_free(ws);
        dc_program_free(p);
    }
}

/* dc_structure_affine1: exactly a*x_j + b in one coordinate, nothing else */
static void test_affine_in_one_coordinate(void)
{
    static const struct {
        const char *text;
        size_t j;
        double a, b;
    } yes[] = {{"x[1]", 1, 1.0, 0.0},           {"2*x[1] - 1", 1, 2.0, -1.0},
               {"-x[0] + 3", 0, -1.0, 3.0},      {"(x[2] - 1)/4", 2, 0.25, -0.25},
               {"sum(x[1:2]) * 3", 1, 3.0, 0.0}, {"x[0] + sqrt(4)", 0, 1.0, 2.0},
               {"mean(x[3:4] + 1)", 3, 1.0, 1.0}};
    static const char *const no[] = {"x[0]**2", "x[0]*x[0]", "x[0] + x[1]", "abs(x[0])",
                                     "1/x[0]", "x[0] - x[0]", "3", "sum(x)", "sin(x[0])",
                                     "x[0] * 0"};
    size_t t, j;
    double a, b;
    for (t = 0; t < sizeof yes / sizeof yes[0]; t++) {
        dc_error err;
        dc_program *p = compile_n(yes[t].text, 4, &err);
        CHECK(p && dc_structure_affine1(p, &j, &a, &b) == 1 && j == yes[t].j &&
                  fabs(a - yes[t].a) < 1e-15 && fabs(b - yes[t].b) < 1e-15,
              "%s is affine in x[%zu]", yes[t].text, yes[t].j);
        dc_program_free(p);
    }
    for (t = 0; t < sizeof no / sizeof no[0]; t++) {
        dc_error err;
        dc_program *p = compile_n(no[t], 4, &err);
        CHECK(p && dc_structure_affine1(p, &j, &a, &b) == 0, "%s is not affine in one "
              "coordinate", no[t]);
        dc_program_free(p);
    }
    CHECK(dc_structure_affine1(NULL, &j, &a, &b) == 0, "NULL program");
}


/* Every elementwise row of opcodes.def: the VM's kernel (dc_vm_exec, vm.c) and
 * the scalar meaning (dc_scalar_op, opinfo.c: folding) give the same bits on
 * every element, also with broadcast operands, so a row added to the table
 * without its case in either switch fails here. */
static void test_every_elementwise_row_runs_as_its_scalar_meaning(void)
{
    enum { M = 37 };
    double in[3][M], out[M];
    int op, k, j, rows = 0;
    for (k = 0; k < 3; k++)
        for (j = 0; j < M; j++)
            in[k][j] = 0.05 + 0.9 * (double)((j * 7 + k * 13) % M) / M - (k == 1 && j % 5 == 0 ? 0.5 : 0.0);
    for (op = 0; op < OP__COUNT; op++) {
        const dc_opinfo *info = dc_op_info(op);
        int bcast;
        if (info->cls != EW)
            continue;
        rows++;
        for (bcast = 0; bcast < 2; bcast++) {
            dc_instr ins;
            dc_view v[3];
            int bad = 0;
            memset(&ins, 0, sizeof ins);
            ins.op = (uint8_t)op;
            ins.nin = info->nin;
            ins.m = M;
            for (k = 0; k < 3; k++) {
                v[k].p = in[k];
                v[k].rs = 0;
                v[k].es = bcast && k == 1 ? 0 : 1; /* the second operand broadcast */
            }
            for (j = 0; j < M; j++)
                out[j] = -12345.0;
            dc_vm_exec(&ins, out, 1, v);
            for (j = 0; j < M; j++) {
                double a = in[0][j], b = in[1][bcast ? 0 : j], c = in[2][j];
                double want = dc_scalar_op(op, a, b, info->nin > 2 ? c : 0.0);
                bad += !(memcmp(&want, &out[j], sizeof want) == 0 || (isnan(want) && isnan(out[j])));
            }
            CHECK(bad == 0, "opcode %s (broadcast %d): %d elements differ from dc_scalar_op",
                  info->name, bcast, bad);
        }
    }
    CHECK(rows > 40, "only %d elementwise rows", rows);
}

/* The rows of opcodes.def as the test reads them: the range column by name. */
static const struct {
    const char *name, *range;
} rows[OP__COUNT] = {
#define DC_OP(e, name, nin, cls, comm, fn, range, lo, hi, adjoint) {name, #range},
#include "expr/opcodes.def"
#undef DC_OP
};

/* An expression in x[0..2] for every opcode; the table must cover every row. */
static const struct {
    int op;
    const char *text;
} row_cases[] = {
    {OP_ADD, "x[0] + x[1]"},       {OP_SUB, "x[0] - x[1]"},        {OP_MUL, "x[0] * x[1]"},
    {OP_DIV, "x[0] / x[1]"},       {OP_MOD, "x[1] % x[0]"},        {OP_POW, "x[0] ** x[1]"},
    {OP_LT, "x[0] < x[1]"},        {OP_LE, "x[0] <= x[1]"},        {OP_GT, "x[0] > x[1]"},
    {OP_GE, "x[0] >= x[1]"},       {OP_EQ, "x[0] == x[1]"},        {OP_NE, "x[0] != x[1]"},
    {OP_AND, "x[0] and x[1]"},     {OP_OR, "x[0] or x[1]"},        {OP_ATAN2, "atan2(x[0], x[1])"},
    {OP_HYPOT, "hypot(x[0], x[1])"}, {OP_MIN2, "min(x[0], x[1])"}, {OP_MAX2, "max(x[0], x[1])"},
    {OP_NOT, "not x[0]"},          {OP_NEG, "-x[0]"},              {OP_SQRTPOW, "x[0] ** 0.5"},
    {OP_ABS, "abs(x[0] - x[1])"},  {OP_SQRT, "sqrt(x[0])"},        {OP_EXP, "exp(x[0])"},
    {OP_LOG, "log(x[0])"},         {OP_LOG2, "log2(x[0])"},        {OP_LOG10, "log10(x[0])"},
    {OP_LOG1P, "log1p(x[0])"},     {OP_EXPM1, "expm1(x[0])"},      {OP_SIN, "sin(x[0])"},
    {OP_COS, "cos(x[0])"},         {OP_TAN, "tan(x[0])"},          {OP_ASIN, "asin(x[0])"},
    {OP_ACOS, "acos(x[0])"},       {OP_ATAN, "atan(x[0])"},        {OP_SINH, "sinh(x[0])"},
    {OP_COSH, "cosh(x[0])"},       {OP_TANH, "tanh(x[0])"},        {OP_FLOOR, "floor(x[0])"},
    {OP_CEIL, "ceil(x[0])"},       {OP_ROUND, "round(x[0])"},      {OP_SIGN, "sign(x[0])"},
    {OP_WHERE, "where(x[0] < 0.5, x[1], x[2])"},                   {OP_CLIP, "clip(x[0], x[1], x[2])"},
    {OP_SUM, "sum(x)"},            {OP_PROD, "prod(x)"},           {OP_MEAN, "mean(x)"},
    {OP_NORM, "norm(x)"},          {OP_MINV, "min(x)"},            {OP_MAXV, "max(x)"},
    {OP_SUMADD, "sum(x + x**2)"},  {OP_SUMSUB, "sum(x - x**2)"},   {OP_SUMMUL, "sum(x * sin(x))"},
    {OP_CUMSUM, "sum(cumsum(x) * x)"},
};

/* ORDER OP, checked: every row of opcodes.def, compiled from an expression,
 * gives a number (the VM's kernel), a gradient equal to central differences
 * (the adjoint rule, or its own case in ad.c) and a range over a small box
 * that holds the values at points of the box and is finite unless the row
 * says ANY (the range rule, or its own case in bound.c).  A row whose OWN
 * case is missing in ad.c or bound.c, or in the VM's reductions, fails here. */
static void test_every_row_through_vm_gradient_and_bounds(void)
{
    static const double x0[3] = {0.37, 0.61, 0.45};
    int covered[OP__COUNT] = {0};
    size_t t;
    int op;
    for (t = 0; t < sizeof row_cases / sizeof row_cases[0]; t++) {
        const char *text = row_cases[t].text;
        dc_error err;
        dc_program *p = compile_n(text, 3, &err);
        dc_workspace *ws = p ? dc_workspace_new(p, NULL) : NULL;
        double v = NAN, gv = NAN, grad[3], lo[3], hi[3], flo = NAN, fhi = NAN, x[3];
        size_t i;
        int k, s, has = 0, bad_grad = 0, outside = 0;
        if (!p || !ws) {
            CHECK(0, "%s does not compile", text);
            dc_workspace_free(ws);
            dc_program_free(p);
            continue;
        }
        for (i = 0; i < p->n_code; i++)
            has |= p->code[i].op == row_cases[t].op;
        CHECK(has, "%s has no %s instruction", text, rows[row_cases[t].op].name);
        covered[row_cases[t].op] = has;
        CHECK(dc_eval(p, ws, x0, &v) == DC_OK && !isnan(v), "%s: the VM gives %g", text, v);
        CHECK(dc_gradient(p, ws, x0, &gv, grad) == DC_OK && gv == v, "%s: gradient's value %g, "
              "eval %g", text, gv, v);
        for (k = 0; k < 3; k++) {
            const double h = 1e-6;
            double up, down, fd;
            memcpy(x, x0, sizeof x);
            x[k] = x0[k] + h;
            dc_eval(p, ws, x, &up);
            x[k] = x0[k] - h;
            dc_eval(p, ws, x, &down);
            fd = (up - down) / (2.0 * h);
            if (!(fabs(grad[k] - fd) <= 1e-6 * (1.0 + fabs(fd)))) {
                printf("  %s: d/dx[%d] %.17g by AD, %.17g by differences\n", text, k, grad[k], fd);
                bad_grad++;
            }
        }
        CHECK(bad_grad == 0, "%s: the gradient differs from central differences", text);
        for (k = 0; k < 3; k++) {
            lo[k] = x0[k] - 0.01;
            hi[k] = x0[k] + 0.01;
        }
        CHECK(dc_program_range(p, lo, hi, NULL, &flo, &fhi) == DC_OK, "%s: range", text);
        CHECK(strcmp(rows[row_cases[t].op].range, "ANY") == 0 || (isfinite(flo) && isfinite(fhi)),
              "%s: range [%g, %g] over the box (rule %s)", text, flo, fhi,
              rows[row_cases[t].op].range);
        for (s = 0; s < 27; s++) {
            double fs;
            for (k = 0; k < 3; k++) /* the corners, the faces' centres and the centre */
                x[k] = lo[k] + (hi[k] - lo[k]) * 0.5 * (double)((s / (k == 0 ? 1 : k == 1 ? 3 : 9)) % 3);
            dc_eval(p, ws, x, &fs);
            outside += !(fs >= flo && fs <= fhi);
        }
        CHECK(outside == 0, "%s: %d points of the box outside [%g, %g]", text, outside, flo, fhi);
        dc_workspace_free(ws);
        dc_program_free(p);
    }
    for (op = 0; op < OP__COUNT; op++)
        CHECK(covered[op], "opcode %s: no expression in row_cases compiles to it", rows[op].name);
}

TEST_MAIN("test_expr",
          TEST(test_every_elementwise_row_runs_as_its_scalar_meaning),
          TEST(test_every_row_through_vm_gradient_and_bounds),
          TEST(test_affine_in_one_coordinate),
          TEST(test_gradient_of_input_reductions),
          TEST(test_values),
          TEST(test_variable_exponent_matches_literal),
          TEST(test_folded_functions_match_run_time),
          TEST(test_errors),
          TEST(test_limits),
          TEST(test_out_of_memory),
          TEST(test_gradient_and_structure))
