/*
 * test_constraints.c -- dc_compile_constraint (good and hostile texts) and the
 * driver's constraint layer, integer and discrete coordinates and start
 * points on every engine, including allocation failures (run it under the
 * ASan/UBSan build: make ctest-sanitize).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decido.h"
#include "tests/budget.h"
#include "tests/check.h"
#include "tests/failing_alloc.h"

static dc_program *compile_x(const char *text, size_t n)
{
    dc_options opt;
    dc_program *p = NULL;
    dc_error err;
    dc_options_init(&opt);
    opt.n = (int64_t)n;
    if (dc_compile(text, strlen(text), &opt, &p, &err))
        printf("  compile %s: %s\n", text, err.message);
    return p;
}

static dc_status constraint(const char *text, size_t n, dc_program **p, dc_constraint_info *ci,
                            dc_error *err)
{
    dc_options opt;
    dc_options_init(&opt);
    opt.n = (int64_t)n;
    *p = NULL;
    return dc_compile_constraint(text, strlen(text), &opt, p, ci, err);
}

static void test_compile(void)
{
    static const struct {
        const char *text;
        dc_constraint_sense sense;
        size_t name_len;
        double at_ones; /* g = lhs - rhs at x = (1, 1) */
    } good[] = {
        {"x[0] + x[1] <= 1", DC_CONSTRAINT_LE, 0, 1.0},
        {"budget: sum(x) >= 3", DC_CONSTRAINT_GE, 6, -1.0},
        {"  eq :x[0]*x[1]==(2)", DC_CONSTRAINT_EQ, 2, -1.0},
        {"min(x[0], x[1] <= 2) <= 1", DC_CONSTRAINT_LE, 0, 0.0}, /* inside a call */
        {"sum(x[0:2]) <= n", DC_CONSTRAINT_LE, 0, 0.0},
    };
    static const struct {
        const char *text;
        dc_status status;
        size_t position;
    } bad[] = {
        {"x[0] + x[1]", DC_ERR_SYNTAX, 0},
        {"", DC_ERR_SYNTAX, 0},
        {"name:", DC_ERR_SYNTAX, 5},
        {"x[0] <= x[1] <= 1", DC_ERR_SYNTAX, 13},
        {"x[0] < 1", DC_ERR_SYNTAX, 5},
        {"x[0] > 1", DC_ERR_SYNTAX, 5},
        {"x[0] != 1", DC_ERR_SYNTAX, 5},
        {"x[0] <= 1 or x[1] >= 0", DC_ERR_SYNTAX, 10},
        {"not x[0] <= 1", DC_ERR_SYNTAX, 0},
        {"<= 1", DC_ERR_EMPTY, 0},
        {"x[0] ==", DC_ERR_EMPTY, 5},
        {"x[0] <= q", DC_ERR_UNKNOWN_NAME, 8},
        {"c: foo(x[0]) >= 1", DC_ERR_UNKNOWN_FUNCTION, 3},
        {"x[9] <= 1", DC_ERR_INDEX, 2},
        {"x <= 1", DC_ERR_NOT_SCALAR, 0},
        {"x[0] <= (1", DC_ERR_SYNTAX, 8},
        {"x[0] <= 1)", DC_ERR_SYNTAX, 9},
        {"x[0] <= 1 $", DC_ERR_CHARACTER, 10},
        {"a: b: x[0] <= 1", DC_ERR_SYNTAX, 4},
    };
    size_t k;
    for (k = 0; k < sizeof good / sizeof good[0]; k++) {
        dc_program *p;
        dc_constraint_info ci;
        dc_error err;
        double x[2] = {1, 1}, g = NAN;
        dc_status st = constraint(good[k].text, 2, &p, &ci, &err);
        CHECK(st == DC_OK, "'%s' refused: %s", good[k].text, err.message);
        if (st)
            continue;
        CHECK(ci.sense == good[k].sense && ci.name_len == good[k].name_len,
              "'%s': sense %d name %zu", good[k].text, (int)ci.sense, ci.name_len);
        {
            dc_workspace *ws = dc_workspace_new(p, NULL);
            CHECK(ws && dc_eval(p, ws, x, &g) == DC_OK && g == good[k].at_ones,
                  "'%s': g(1, 1) = %g", good[k].text, g);
            dc_workspace_free(ws);
        }
        dc_program_free(p);
    }
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        dc_program *p;
        dc_constraint_info ci;
        dc_error err;
        dc_status st = constraint(bad[k].text, 2, &p, &ci, &err);
        CHECK(st == bad[k].status && err.position == bad[k].position && p == NULL,
              "'%s': status %s at %zu (%s)", bad[k].text, dc_status_code(st), err.position,
              err.message);
        CHECK(err.position + err.length <= strlen(bad[k].text) + 1, "'%s': span out of text",
              bad[k].text);
    }
}

/* Random token soup: never a crash or leak (ASan), spans within the text. */
static void test_hostile(void)
{
    static const char *const tok[] = {"x[0]", "x[1]", "n", "<=", ">=", "==", "<", "!=", ":",
                                      "c", "(", ")", "[", "]", "and", "not", "+", "-", "*",
                                      "1e308", "nan", "sum(x)", ",", " ", "\x01", "**", "0:1"};
    uint64_t s = 12345;
    int round, bad_spans = 0, compiled = 0;
    for (round = 0; round < 20000; round++) {
        char text[256];
        size_t len = 0, t, count;
        dc_program *p;
        dc_constraint_info ci;
        dc_error err;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        count = (size_t)(s >> 59) + 1;
        for (t = 0; t < count; t++) {
            const char *w;
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            w = tok[(s >> 33) % (sizeof tok / sizeof tok[0])];
            if (len + strlen(w) >= sizeof text)
                break;
            memcpy(text + len, w, strlen(w));
            len += strlen(w);
        }
        text[len] = '\0';
        if (constraint(text, 2, &p, &ci, &err) == DC_OK) {
            compiled++;
            if (ci.op_pos + ci.op_len > len)
                bad_spans++;
            dc_program_free(p);
        } else if (err.position + err.length > len + 1) {
            bad_spans++;
        }
    }
    CHECK(bad_spans == 0, "%d spans outside the text", bad_spans);
    CHECK(compiled > 0, "no random text compiled");
}

typedef struct setup {
    double lo[3], hi[3];
    unsigned char integer[3];
    const double *values[3];
    size_t n_values[3];
    const dc_program *cons[2];
    dc_constraint_sense senses[2];
    double x0[3];
} setup;

static dc_status run(const char *engine, const dc_program *obj, setup *su, size_t n,
                     size_t m, int with_x0, int64_t budget, const dc_allocator *a,
                     dc_result *res)
{
    dc_run r;
    dc_error err;
    dc_status st;
    dc_run_init(&r);
    r.n = n;
    r.lower = su->lo;
    r.upper = su->hi;
    r.program = obj;
    r.max_evaluations = budget;
    r.seed = 7;
    r.integer = su->integer;
    r.values = su->values;
    r.n_values = su->n_values;
    r.constraints = su->cons;
    r.senses = su->senses;
    r.n_constraints = m;
    r.allocator = a;
    if (with_x0) {
        r.x0 = su->x0;
        r.n_x0 = 1;
    }
    st = dc_optimize(engine, &r, res, &err);
    if (st && st != DC_ERR_NOMEM)
        printf("  %s: %s\n", engine, err.message);
    return st;
}

static void test_engines(void)
{
    static const double sizes[4] = {0.25, 0.5, 1.0, 2.0};
    dc_program *obj = compile_x("(x[0] - 0.3)**2 + (x[1] - 0.7)**2 + x[2]", 3);
    dc_program *c0, *c1;
    dc_constraint_info ci;
    dc_error err;
    size_t k;
    CHECK(constraint("x[0] + x[1] <= 0.5", 3, &c0, &ci, &err) == DC_OK, "%s", err.message);
    CHECK(constraint("x[2] >= 0.9", 3, &c1, &ci, &err) == DC_OK, "%s", err.message);
    for (k = 0; k < dc_engine_count(); k++) {
        const dc_engine_info *info = dc_engine_at(k);
        setup su;
        dc_result res, again;
        long fail_after;
        memset(&su, 0, sizeof su);
        su.lo[0] = su.lo[1] = -1;
        su.hi[0] = su.hi[1] = 1;
        su.lo[2] = 0;
        su.hi[2] = 3; /* x[2]: discrete {0.25, 0.5, 1, 2} */
        su.values[2] = sizes;
        su.n_values[2] = 4;
        su.cons[0] = c0;
        su.cons[1] = c1;
        su.senses[0] = DC_CONSTRAINT_LE;
        su.senses[1] = DC_CONSTRAINT_GE;
        su.x0[0] = su.x0[1] = 0.0;
        su.x0[2] = 2.0;
        if (!(info->supports & DC_SUPPORTS_INTEGERS)) {
            CHECK(run(info->id, obj, &su, 3, 2, 0, 2000, NULL, &res) == DC_ERR_ARGUMENT,
                  "%s took a discrete coordinate", info->id);
            su.n_values[2] = 0; /* a real x[2] for engines without integers */
        }
        if (run(info->id, obj, &su, 3, 2, (info->supports & DC_SUPPORTS_X0) != 0,
                capped_budget(info->id, 3000), NULL, &res) == DC_OK) {
            CHECK(res.feasible && res.max_violation <= 1e-6 && res.n_g == 2,
                  "%s: infeasible (%g)", info->id, res.max_violation);
            CHECK(res.x[0] + res.x[1] <= 0.5 + 1e-6 && res.x[2] >= 0.9 - 1e-6,
                  "%s: x = %g %g %g", info->id, res.x[0], res.x[1], res.x[2]);
            if (su.n_values[2])
                CHECK(res.x[2] == 1.0, "%s: x[2] = %g not the discrete 1", info->id, res.x[2]);
            if (run(info->id, obj, &su, 3, 2, (info->supports & DC_SUPPORTS_X0) != 0,
                    capped_budget(info->id, 3000), NULL, &again) == DC_OK) {
                CHECK(memcmp(res.x, again.x, 3 * sizeof(double)) == 0 && res.fun == again.fun,
                      "%s: a replay differs", info->id);
                dc_result_free(&again);
            }
            dc_result_free(&res);
        } else {
            CHECK(0, "%s refused a constrained run", info->id);
        }
        /* x0 refused by an engine that cannot start from a point */
        if (!(info->supports & DC_SUPPORTS_X0))
            CHECK(run(info->id, obj, &su, 3, 2, 1, 100, NULL, &res) == DC_ERR_ARGUMENT,
                  "%s took x0", info->id);
        /* every allocation failure is reported and leaks nothing */
        for (fail_after = 0; fail_after < 40; fail_after++) {
            counting cnt = {0, fail_after, 0};
            dc_allocator a = {failing_realloc, &cnt};
            dc_status st = run(info->id, obj, &su, 3, 2, 0, capped_budget(info->id, 300), &a,
                               &res);
            if (st == DC_OK)
                dc_result_free(&res);
            CHECK(st == DC_OK || st == DC_ERR_NOMEM, "%s: %s", info->id, dc_status_code(st));
            CHECK(cnt.live == 0, "%s: %ld blocks leaked after failure %ld", info->id, cnt.live,
                  fail_after);
        }
    }
    dc_program_free(obj);
    dc_program_free(c0);
    dc_program_free(c1);
}

static void test_bad_runs(void)
{
    dc_program *obj = compile_x("x[0] + x[1]", 2);
    dc_program *c3 = compile_x("x[0] + x[1] + x[2]", 3);
    setup su;
    dc_result res;
    memset(&su, 0, sizeof su);
    su.hi[0] = su.hi[1] = 1;
    su.lo[1] = 0.2;
    su.hi[1] = 0.8;
    su.integer[1] = 1; /* [0.2, 0.8] holds no integer */
    CHECK(run("de", obj, &su, 2, 0, 0, 100, NULL, &res) == DC_ERR_ARGUMENT, "empty integers");
    su.integer[1] = 0;
    su.x0[0] = 2; /* outside */
    CHECK(run("de", obj, &su, 2, 0, 1, 100, NULL, &res) == DC_ERR_ARGUMENT, "x0 outside");
    su.x0[0] = 0.5;
    su.x0[1] = 0.5;
    CHECK(run("de", obj, &su, 2, 0, 1, 100, NULL, &res) == DC_OK, "x0 inside");
    dc_result_free(&res);
    su.cons[0] = c3; /* three inputs for a two-input run */
    CHECK(run("de", obj, &su, 2, 1, 0, 100, NULL, &res) == DC_ERR_ARGUMENT, "constraint size");
    dc_program_free(obj);
    dc_program_free(c3);
}

/* dss's phases: a polish of Lagrangian subproblems and polishes from random
 * points (an equality), the neighbourhood of integer coordinates; feasible,
 * replayed, and every allocation failure reported without leaks */
static void test_dss_phases(void)
{
    dc_program *obj_eq = compile_x("(x[0] - 0.3)**2 + (x[1] - 0.7)**2 + x[2]", 3);
    dc_program *obj_int = compile_x("sum((x - 2.4)**2)", 3);
    dc_program *eq, *cap;
    dc_constraint_info ci;
    dc_error err;
    int which;
    CHECK(constraint("x[0]*x[1] == 0.1", 3, &eq, &ci, &err) == DC_OK, "%s", err.message);
    CHECK(constraint("x[0] + x[1] + x[2] <= 5", 3, &cap, &ci, &err) == DC_OK, "%s",
          err.message);
    for (which = 0; which < 2; which++) {
        const dc_program *obj = which ? obj_int : obj_eq;
        setup su;
        dc_result res, again;
        long fail_after;
        size_t j;
        memset(&su, 0, sizeof su);
        for (j = 0; j < 3; j++) {
            su.lo[j] = which ? 0 : -1;
            su.hi[j] = which ? 5 : 1;
            su.integer[j] = (unsigned char)which;
        }
        su.cons[0] = which ? cap : eq;
        su.senses[0] = which ? DC_CONSTRAINT_LE : DC_CONSTRAINT_EQ;
        if (run("dss", obj, &su, 3, 1, 0, 3000, NULL, &res) == DC_OK) {
            CHECK(res.feasible, "dss phases %d: infeasible (%g)", which, res.max_violation);
            if (which) /* two 2s and a 1: 0.16 + 0.16 + 1.96 */
                CHECK(fabs(res.fun - 2.28) < 1e-12, "dss integers: %g", res.fun);
            if (run("dss", obj, &su, 3, 1, 0, 3000, NULL, &again) == DC_OK) {
                CHECK(memcmp(res.x, again.x, 3 * sizeof(double)) == 0 && res.fun == again.fun,
                      "dss phases %d: a replay differs", which);
                dc_result_free(&again);
            }
            dc_result_free(&res);
        } else {
            CHECK(0, "dss phases %d refused", which);
        }
        for (fail_after = 0; fail_after < 60; fail_after++) {
            counting cnt = {0, fail_after, 0};
            dc_allocator a = {failing_realloc, &cnt};
            dc_status st = run("dss", obj, &su, 3, 1, 0, 1500, &a, &res);
            if (st == DC_OK)
                dc_result_free(&res);
            CHECK(st == DC_OK || st == DC_ERR_NOMEM, "dss phases: %s", dc_status_code(st));
            CHECK(cnt.live == 0, "dss phases %d: %ld blocks leaked after failure %ld", which,
                  cnt.live, fail_after);
        }
    }
    dc_program_free(obj_eq);
    dc_program_free(obj_int);
    dc_program_free(eq);
    dc_program_free(cap);
}

TEST_MAIN("test_constraints",
          TEST(test_dss_phases),
          TEST(test_compile),
          TEST(test_hostile),
          TEST(test_engines),
          TEST(test_bad_runs))
