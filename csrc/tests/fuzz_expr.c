/*
 * fuzz_expr.c -- fuzz target for the decido C library: compiler, VM, AD,
 * disassembler and structure queries, through the public API only.
 *
 * INPUT FORMAT (both modes)
 *   An input is 4 option bytes followed by the expression text:
 *     byte 0  context: (b0 % 12) 0..4 optimization with n = 1,2,3,7,64;
 *             5 decision {a,b,price}; 6 decision with 8 variables (some
 *             shadow x, pi, n); 7 constant; 8 duplicate variables; 9 an
 *             invalid variable list or dimension (chosen by byte 3);
 *             10 optimization n = 1000; 11 optimization n = 5.
 *     byte 1  mode: (b1 % 16) 0 tiny limits (depth 3, 5 instructions,
 *             length 20); 1 compile with an allocator that fails after k
 *             allocations; 2 the workspace allocator fails after k % 16;
 *             3 big limits (length 2,000,000, depth 100,000 -- clamped by
 *             the library -- 1,048,576 instructions); 4 the library's own
 *             malloc; 5 out-of-memory sweep (short texts: compile failing
 *             at every allocation in turn); 6 both allocators fail;
 *             7..15 normal limits with a counting allocator.
 *     bytes 2, 3  k = b2 + 256 * (b3 % 4) for the failing allocator; also
 *             seed the input rows (with the whole input).
 *   Shorter inputs are padded with the option bytes {0, 7, 0, 0}.
 *
 *   For a program that compiles, it runs dc_eval, dc_eval_many (rows that
 *   include NaN, +-inf, +-DBL_MAX, subnormals, -0.0; a padded row stride;
 *   sometimes enough rows for several tiles), dc_gradient on every row,
 *   dc_program_disassemble (NULL, 1-byte, 16-byte, 4096-byte and exact
 *   buffers), dc_structure_groups / edges / used / kind / identical terms,
 *   and dc_separable_terms.  Then it frees everything.
 *
 *   Invariants checked (a violation is a failure):
 *     - a failed compile sets error.status == the returned status, a
 *       non-empty NUL-terminated message, position + length <= text length,
 *       and leaves *out NULL; a successful one respects max_instructions;
 *     - compiling is deterministic (same status, error, listing; sometimes
 *       checked by compiling again, also with a NULL error record);
 *     - dc_eval is deterministic (same bits on repeat); dc_eval of a row
 *       equals dc_eval_many's value for that row bit for bit (or both NaN);
 *       dc_gradient's value equals dc_eval's (or both NaN);
 *     - inputs the structure calls unused do not change the value (set to
 *       NaN / -inf) and get a zero gradient and a zero separable term;
 *     - for separable programs f(x) - sum_j G[j] is the same constant on
 *       every row of modest inputs (loose tolerance);
 *     - evaluation calls return DC_OK (or DC_ERR_NOMEM when the workspace
 *       allocator was told to fail);
 *     - the disassembler keeps snprintf semantics;
 *     - structure answers are self-consistent (group ids canonical, used[j]
 *       == (group[j] != -1), edges sorted with u < v < n inside one group,
 *       no edges for constant/separable programs);
 *     - with the counting allocator: no block leaks once everything is
 *       freed, every free/realloc passes the block's true size, and an
 *       allocation failure during a compile that otherwise succeeds yields
 *       DC_ERR_NOMEM.
 *   Crashes, leaks and undefined behaviour are caught by the sanitizers.
 *
 * MODE 1: libFuzzer (needs clang)
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -fno-sanitize-recover=all -DDECIDO_LIBFUZZER -Icsrc/include -Icsrc \
 *     csrc/common/[a-z]*.c csrc/expr/[a-z]*.c csrc/tests/fuzz_expr.c -lm \
 *     -o fuzz_expr_lf
 *   ./fuzz_expr_lf -max_len=4096 -max_total_time=300 NEWCORPUS csrc/tests/corpus
 *   An invariant violation calls abort(), so libFuzzer saves the input.
 *
 * MODE 2: standalone (any C11 compiler; this is the CI smoke test)
 *   cmake -S . -B build -DDECIDO_C_TESTS=ON -DDECIDO_SANITIZE=ON ...
 *   build/csrc/fuzz_expr --runs 100000 --seed 1 [--verbose] [--print] [files...]
 *   (--verbose times each pathological input; --print shows every
 *   generated input with its compile status.)
 *   Each named file is run first as one raw input (same format as above,
 *   e.g. a libFuzzer crash file or csrc/tests/corpus/NAME) and joins the
 *   mutation pool.  Then N generated inputs run: random expressions from the
 *   grammar, byte-level mutations of those and of built-in seeds, and a few
 *   pathological inputs (100,000 nested parentheses / unary minuses / 'not',
 *   1 MB texts, a 100,000-term sum, long '**' chains, huge indices, ...).
 *   Everything is deterministic given --seed (splitmix64, no global state).
 *   The last line is "fuzz_expr: N passed, F failed"; the exit status is 0
 *   when F == 0.  A failure prints the whole input escaped as a C string:
 *   write those bytes to a file and pass the file to reproduce it.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decido.h"

#define HEADER_SIZE 4
#define MAX_ROWS 37
#define SWEEP_MAX_TEXT 64
#define SWEEP_MAX_STEPS 160

/* ------------------------------------------------------------------ */
/* Counting (and optionally failing) allocator.                       */
/* ------------------------------------------------------------------ */

/* Each block carries a 16-byte header: its size and a magic word, so a free
 * or realloc with the wrong old_size, or of a foreign pointer, is seen. */
#define BLOCK_HEADER 16u
#define BLOCK_MAGIC 0x5eedfacecafe1234ull
/* Requests above this fail (as a real allocator might) instead of letting
 * the sanitizer abort on an absurd size. */
#define BLOCK_LIMIT ((size_t)1 << 30)

typedef struct tracker {
    size_t live_blocks;
    size_t attempts;   /* allocation attempts (new_size > 0) */
    size_t fail_after; /* attempts numbered >= fail_after fail */
    size_t failed;     /* attempts that were made to fail */
    size_t bad_size;   /* frees/reallocs whose old_size was wrong */
    size_t bad_old, bad_real;
    size_t foreign;    /* pointers without our header */
    size_t huge;       /* requests over BLOCK_LIMIT */
} tracker;

static void tracker_init(tracker *t, size_t fail_after)
{
    memset(t, 0, sizeof *t);
    t->fail_after = fail_after;
}

static void *tracker_realloc(void *userdata, void *ptr, size_t old_size, size_t new_size)
{
    tracker *t = (tracker *)userdata;
    unsigned char *base = NULL, *nb;
    size_t real = 0;
    uint64_t magic = 0;
    if (ptr) {
        base = (unsigned char *)ptr - BLOCK_HEADER;
        memcpy(&magic, base + 8, sizeof magic);
        if (magic != BLOCK_MAGIC) {
            t->foreign++;
            return NULL; /* never touch a block we did not hand out */
        }
        memcpy(&real, base, sizeof real);
        if (real != old_size) {
            if (!t->bad_size) {
                t->bad_old = old_size;
                t->bad_real = real;
            }
            t->bad_size++;
        }
    }
    if (new_size == 0) {
        if (base) {
            memset(base + 8, 0, 8);
            free(base);
            t->live_blocks--;
        }
        return NULL;
    }
    if (t->attempts++ >= t->fail_after) {
        t->failed++;
        return NULL;
    }
    if (new_size > BLOCK_LIMIT) {
        t->huge++;
        t->failed++;
        return NULL;
    }
    nb = (unsigned char *)realloc(base, new_size + BLOCK_HEADER);
    if (!nb) {
        t->failed++;
        return NULL;
    }
    if (!base)
        t->live_blocks++;
    magic = BLOCK_MAGIC;
    memcpy(nb, &new_size, sizeof new_size);
    memcpy(nb + 8, &magic, sizeof magic);
    return nb + BLOCK_HEADER;
}

/* ------------------------------------------------------------------ */
/* Deterministic PRNG (splitmix64).                                   */
/* ------------------------------------------------------------------ */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0); the tiny modulo bias does not matter here. */
static size_t rng_below(rng *r, size_t n)
{
    return n ? (size_t)(rng_next(r) % n) : 0;
}

/* 1 with probability pct / 100. */
static int rng_pct(rng *r, unsigned pct)
{
    return rng_below(r, 100) < pct;
}

static uint64_t hash_bytes(const uint8_t *d, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= d[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ------------------------------------------------------------------ */
/* Contexts and statistics.                                           */
/* ------------------------------------------------------------------ */

static const char *const vars_small[] = {"a", "b", "price"};
static const char *const vars_big[] = {"a", "b", "price", "quality", "x", "pi", "n", "weight_2"};
static const char *const vars_dup[] = {"a", "b", "a"};
static const char *const vars_fn[] = {"a", "sin"};
static const char *const vars_kw[] = {"and"};
static const char *const vars_digit[] = {"1a"};
static const char *const vars_empty[] = {""};
static const char *const vars_null[] = {"a", NULL};
static const int64_t opt_dims[] = {1, 2, 3, 7, 64};

#define N_CONTEXTS 12

typedef struct stats {
    size_t runs, compiled, evaluated, gradients, separable_calls, sweeps;
    size_t by_status[DC_STATUS_COUNT + 1];
    size_t by_kind[5];
    dc_status last_status; /* of the last input's main compile */
} stats;

typedef struct run_ctx {
    const uint8_t *data;
    size_t size;
    int failures;
    int abort_on_fail;
} run_ctx;

static void print_escaped(FILE *f, const uint8_t *d, size_t n, size_t max)
{
    size_t i, shown = n < max ? n : max;
    fputc('"', f);
    for (i = 0; i < shown; i++) {
        unsigned c = d[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", (char)c);
        else if (c >= 0x20 && c < 0x7f)
            fputc((int)c, f);
        else
            fprintf(f, "\\x%02x\"\"", c); /* "" keeps a following hex digit apart */
    }
    fputc('"', f);
    if (shown < n)
        fprintf(f, " ... (%zu bytes in all)", n);
}

static void fail(run_ctx *rc, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz_expr: FAILURE: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  input (%zu bytes, 4 option bytes first): ", rc->size);
    print_escaped(stderr, rc->data, rc->size, 4096);
    fprintf(stderr, "\n");
    rc->failures++;
    if (rc->abort_on_fail)
        abort();
}

static int same_bits(double a, double b)
{
    if (a != a && b != b)
        return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

static int same_value(double a, double b)
{
    return a == b || (a != a && b != b);
}

/* Options for a context; *expect_inputs gets the row length. */
static void make_context(unsigned ctx, unsigned b3, dc_options *o, size_t *expect_inputs)
{
    dc_options_init(o);
    *expect_inputs = 0;
    switch (ctx) {
    case 0: case 1: case 2: case 3: case 4:
        o->n = opt_dims[ctx];
        *expect_inputs = (size_t)o->n;
        break;
    case 5:
        o->variables = vars_small;
        o->n_variables = 3;
        *expect_inputs = 3;
        break;
    case 6:
        o->variables = vars_big;
        o->n_variables = 8;
        *expect_inputs = 8;
        break;
    case 7:
        break;
    case 8:
        o->variables = vars_dup;
        o->n_variables = 3;
        *expect_inputs = 3;
        break;
    case 9:
        switch (b3 % 8) {
        case 0: o->variables = vars_fn; o->n_variables = 2; break;
        case 1: o->variables = vars_kw; o->n_variables = 1; break;
        case 2: o->variables = vars_digit; o->n_variables = 1; break;
        case 3: o->variables = vars_empty; o->n_variables = 1; break;
        case 4: o->variables = vars_null; o->n_variables = 2; break;
        case 5: o->n = DC_MAX_DIMENSION + 1; break;
        case 6: o->n = -1; break;
        default: o->n = 2; o->variables = vars_small; o->n_variables = 3; break;
        }
        *expect_inputs = o->n > 0 ? (size_t)o->n : o->n_variables;
        break;
    case 10:
        o->n = 1000;
        *expect_inputs = 1000;
        break;
    default:
        o->n = 5;
        *expect_inputs = 5;
        break;
    }
}

/* Checks on a failed compile. */
static void check_error(run_ctx *rc, dc_status st, const dc_error *err, const dc_program *prog,
                        size_t len, const char *what)
{
    const char *code;
    if ((unsigned)st >= DC_STATUS_COUNT) {
        fail(rc, "%s: status %d out of range", what, (int)st);
        return;
    }
    if (err->status != st)
        fail(rc, "%s: returned %s but error.status is %d", what, dc_status_code(st),
             (int)err->status);
    if (!memchr(err->message, '\0', sizeof err->message))
        fail(rc, "%s: error message not NUL-terminated", what);
    else if (err->message[0] == '\0')
        fail(rc, "%s: empty error message for %s", what, dc_status_code(st));
    if (err->position > len || err->length > len - err->position)
        fail(rc, "%s: error span %zu+%zu outside the text (length %zu): %s", what,
             err->position, err->length, len, err->message);
    if (prog)
        fail(rc, "%s: *out not NULL after a failed compile", what);
    code = dc_status_code(st);
    if (!code || !code[0] || !dc_status_title(st) || !dc_status_title(st)[0])
        fail(rc, "%s: no code/title for status %d", what, (int)st);
}

static void check_tracker(run_ctx *rc, const tracker *t, const char *what)
{
    if (t->live_blocks)
        fail(rc, "%s: %zu block(s) leaked", what, t->live_blocks);
    if (t->bad_size)
        fail(rc, "%s: %zu free/realloc call(s) passed a wrong old_size (first: %zu, block has %zu)",
             what, t->bad_size, t->bad_old, t->bad_real);
    if (t->foreign)
        fail(rc, "%s: %zu free/realloc of a pointer the allocator never returned", what,
             t->foreign);
}

/* ------------------------------------------------------------------ */
/* Exercising a compiled program.                                     */
/* ------------------------------------------------------------------ */

static const double ordinary_values[] = {0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 10.0, 0.25, -0.75, 3.5};

static double special_value(rng *r)
{
    switch (rng_below(r, 24)) {
    case 0: return NAN;
    case 1: return -NAN;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return DBL_MAX;
    case 5: return -DBL_MAX;
    case 6: return 1e308;
    case 7: return DBL_MIN;
    case 8: return DBL_TRUE_MIN;
    case 9: return -DBL_TRUE_MIN;
    case 10: return 1e-310;
    case 11: return -0.0;
    case 12: return 0.0;
    case 13: return 9007199254740993.0;
    case 14: return -1e16;
    case 15: return 1e-300;
    case 16: return 3.141592653589793;
    case 17: return 710.0;
    case 18: return -745.5;
    case 19: return 0.9999999999999999;
    default:
        return ((double)(int64_t)(rng_next(r) % 20001) - 10000.0) / 100.0;
    }
}

static void check_structure(run_ctx *rc, const dc_program *prog, size_t n_in)
{
    dc_structure_kind kind = dc_structure_kind_of(prog);
    int identical = dc_structure_identical_terms(prog);
    size_t ng, j, count = 0, count2 = 0, k;
    int64_t *group = NULL, *pairs = NULL, next_id = 0, one[2];
    unsigned char *used = NULL;
    size_t n_used = 0;
    dc_status st;
    const char *name = dc_structure_kind_name(kind);

    if ((unsigned)kind > DC_STRUCT_GENERAL || !name || !name[0])
        fail(rc, "structure kind %d out of range", (int)kind);
    if (identical != 0 && identical != 1)
        fail(rc, "identical_terms returned %d", identical);
    if (n_in) {
        group = (int64_t *)malloc(n_in * sizeof *group);
        used = (unsigned char *)malloc(n_in);
        if (!group || !used)
            abort();
        for (j = 0; j < n_in; j++) {
            group[j] = -7;
            used[j] = 7;
        }
    }
    ng = dc_structure_groups(prog, group);
    if (ng != dc_structure_groups(prog, NULL))
        fail(rc, "structure_groups count differs with a NULL array");
    dc_structure_used(prog, used);
    for (j = 0; j < n_in; j++) {
        if (used[j] > 1)
            fail(rc, "used[%zu] = %u", j, (unsigned)used[j]);
        n_used += used[j] == 1;
        if (group[j] < -1 || group[j] >= (int64_t)ng) {
            fail(rc, "group[%zu] = %lld with %zu groups", j, (long long)group[j], ng);
        } else if (group[j] >= 0) {
            if (group[j] > next_id)
                fail(rc, "group ids not in order of first coordinate (group[%zu] = %lld)", j,
                     (long long)group[j]);
            else if (group[j] == next_id)
                next_id++;
        }
        if ((used[j] == 1) != (group[j] >= 0))
            fail(rc, "used[%zu] = %u but group[%zu] = %lld", j, (unsigned)used[j], j,
                 (long long)group[j]);
    }
    if (n_in && (size_t)next_id != ng)
        fail(rc, "structure_groups returned %zu but ids 0..%lld are used", ng,
             (long long)next_id - 1);
    if (kind == DC_STRUCT_CONSTANT && n_used)
        fail(rc, "kind constant but %zu inputs used", n_used);

    st = dc_structure_edges(prog, NULL, 0, &count);
    if (st != DC_OK && st != DC_ERR_TOO_LARGE)
        fail(rc, "structure_edges returned %s", dc_status_code(st));
    if (dc_structure_edges(prog, NULL, 0, NULL) != DC_ERR_ARGUMENT)
        fail(rc, "structure_edges(count=NULL) did not return invalid_argument");
    if (st == DC_OK) {
        if ((kind == DC_STRUCT_CONSTANT || kind == DC_STRUCT_SEPARABLE) && count)
            fail(rc, "kind %s with %zu edges", name, count);
        if (count && count < ((size_t)1 << 24)) {
            pairs = (int64_t *)malloc(2 * count * sizeof *pairs);
            if (!pairs)
                abort();
            if (dc_structure_edges(prog, pairs, count, &count2) != DC_OK || count2 != count)
                fail(rc, "structure_edges changed its answer");
            for (k = 0; k < count; k++) {
                int64_t u = pairs[2 * k], v = pairs[2 * k + 1];
                if (u < 0 || u >= v || (uint64_t)v >= (uint64_t)n_in) {
                    fail(rc, "edge %zu = (%lld, %lld) with n = %zu", k, (long long)u,
                         (long long)v, n_in);
                    break;
                }
                if (k && (pairs[2 * k - 2] > u || (pairs[2 * k - 2] == u && pairs[2 * k - 1] >= v)))
                    fail(rc, "edges not sorted/unique at %zu", k);
                if (!used[u] || !used[v] || group[u] != group[v])
                    fail(rc, "edge (%lld, %lld) between unused or different-group inputs",
                         (long long)u, (long long)v);
            }
            one[0] = one[1] = -5;
            if (dc_structure_edges(prog, one, 1, &count2) != DC_OK || count2 != count ||
                one[0] != pairs[0] || one[1] != pairs[1])
                fail(rc, "structure_edges with capacity 1 disagrees");
            free(pairs);
        }
    }
    free(group);
    free(used);
}

static void check_disassembly(run_ctx *rc, const dc_program *prog)
{
    char small[16], one[1], big[4096];
    size_t need = dc_program_disassemble(prog, NULL, 0), got;
    char *exact;
    memset(small, 'Z', sizeof small);
    got = dc_program_disassemble(prog, small, sizeof small);
    if (got != need || !memchr(small, '\0', sizeof small) ||
        strlen(small) != (need < sizeof small ? need : sizeof small - 1))
        fail(rc, "disassemble into 16 bytes: got %zu, want %zu", got, need);
    one[0] = 'Z';
    if (dc_program_disassemble(prog, one, 1) != need || one[0] != '\0')
        fail(rc, "disassemble into 1 byte");
    got = dc_program_disassemble(prog, big, sizeof big);
    if (got != need || strlen(big) != (need < sizeof big ? need : sizeof big - 1))
        fail(rc, "disassemble into 4096 bytes: got %zu, want %zu", got, need);
    if (need < ((size_t)1 << 28)) {
        exact = (char *)malloc(need + 1);
        if (!exact)
            abort();
        got = dc_program_disassemble(prog, exact, need + 1);
        if (got != need || strlen(exact) != need)
            fail(rc, "disassemble into %zu bytes: got %zu, strlen %zu", need + 1, got,
                 strlen(exact));
        else if (memcmp(exact, big, need < sizeof big ? need : sizeof big - 1) != 0)
            fail(rc, "disassembly differs between calls");
        free(exact);
    }
}

/* Unused inputs have zero terms, and f(x) - sum_j G[j] must be the same
 * constant c on every row, up to rounding.  dc_separable_terms adds the terms
 * in its own order, so when an expression adds and cancels huge intermediate
 * values (a - a + 1 at a = 1e308) the two sides can differ by far more than
 * the final magnitudes suggest; the comparison is therefore made only on
 * rows of modest inputs (|x_j| <= 10) with a loose tolerance. */
static void check_separable(run_ctx *rc, const dc_program *prog, dc_workspace *ws,
                            const double *X, size_t rows, size_t stride, size_t n_in,
                            const unsigned char *used, const double *G)
{
    size_t k, j;
    int have_c = 0;
    double c0 = 0.0, scale0 = 0.0;
    for (k = 0; k < rows; k++) {
        double f, sum = 0.0, mag = 0.0, c;
        int finite = 1;
        for (j = 0; j < n_in; j++) {
            double gj = G[k * n_in + j];
            if (!used[j] && gj != 0.0)
                fail(rc, "separable term G[%zu][%zu] = %.17g for an unused input", k, j, gj);
            if (!(fabs(X[k * stride + j]) <= 10.0) || !isfinite(gj))
                finite = 0;
            sum += gj;
            mag += fabs(gj);
        }
        if (!finite || dc_eval(prog, ws, X + k * stride, &f) != DC_OK || !isfinite(f))
            continue;
        c = f - sum;
        mag += fabs(f);
        if (!have_c) {
            have_c = 1;
            c0 = c;
            scale0 = mag;
        } else if (fabs(c - c0) > 1e-6 * (scale0 + mag + fabs(c0) + 1.0)) {
            fail(rc, "separable terms: f - sum(G) is %.17g on row 0 but %.17g on row %zu", c0, c,
                 k);
        }
    }
}

/* Evaluate, differentiate and query a compiled program.  ws_alloc is NULL
 * (library malloc) or a counting allocator; nomem_ok says whether
 * DC_ERR_NOMEM is an acceptable answer (the workspace allocator fails). */
static void exercise(run_ctx *rc, stats *S, const dc_program *prog, size_t n_in,
                     const dc_allocator *ws_alloc, int nomem_ok, rng *r, int many_rows)
{
    size_t rows = many_rows ? MAX_ROWS : 5;
    size_t stride = n_in + rng_below(r, 3);
    size_t width = n_in ? n_in : 1, j, k;
    double *X, *row, *grad, *out, *G = NULL;
    double v0, v1, gv, sentinel;
    const uint64_t sentinel_bits = 0x7ff4dead5eed1234ull; /* a NaN nobody computes */
    unsigned char *used;
    size_t n_unused = 0;
    dc_workspace *ws;
    dc_status st;
    dc_structure_kind kind = dc_structure_kind_of(prog);

    memcpy(&sentinel, &sentinel_bits, sizeof sentinel);
    if (n_in == 0 && rng_pct(r, 50))
        stride = 0;
    X = (double *)malloc((rows * (stride ? stride : 1) + 1) * sizeof *X);
    row = (double *)malloc(width * sizeof *row);
    grad = (double *)malloc(width * sizeof *grad);
    out = (double *)malloc(rows * sizeof *out);
    used = (unsigned char *)malloc(width);
    if (!X || !row || !grad || !out || !used)
        abort();
    memset(used, 1, width);
    dc_structure_used(prog, used);
    for (j = 0; j < n_in; j++)
        n_unused += used[j] == 0;
    for (k = 0; k < rows; k++)
        for (j = 0; j < stride; j++) {
            double v;
            if (j >= n_in)
                v = -12345.5; /* padding that must never be read */
            else if (k == 0 || (k == 1 && rng_pct(r, 50)))
                v = ordinary_values[rng_below(r, sizeof ordinary_values / sizeof *ordinary_values)];
            else if (k == 2)
                v = rng_pct(r, 30) ? NAN : special_value(r);
            else
                v = special_value(r);
            X[k * stride + j] = v;
        }

    ws = dc_workspace_new(prog, ws_alloc);
    if (!ws) {
        if (!nomem_ok)
            fail(rc, "dc_workspace_new returned NULL");
        goto done;
    }

    /* Row 0 through dc_eval, twice (determinism). */
    memcpy(row, X, n_in * sizeof *row);
    st = dc_eval(prog, ws, n_in ? row : NULL, &v0);
    if (st == DC_ERR_NOMEM && nomem_ok)
        goto free_ws;
    if (st != DC_OK) {
        fail(rc, "dc_eval returned %s", dc_status_code(st));
        goto free_ws;
    }
    S->evaluated++;
    st = dc_eval(prog, ws, n_in ? row : NULL, &v1);
    if (st != DC_OK && !(st == DC_ERR_NOMEM && nomem_ok))
        fail(rc, "dc_eval (repeat) returned %s", dc_status_code(st));
    else if (st == DC_OK && !same_bits(v0, v1))
        fail(rc, "dc_eval not deterministic: %.17g then %.17g", v0, v1);
    /* Inputs the structure calls unused must not change the value. */
    if (n_unused) {
        for (j = 0; j < n_in; j++)
            if (!used[j])
                row[j] = (j & 1) ? NAN : -INFINITY;
        st = dc_eval(prog, ws, row, &v1);
        if (st == DC_OK && !same_bits(v0, v1))
            fail(rc, "value changed from %.17g to %.17g when unused inputs were set to "
                     "NaN/-inf", v0, v1);
        memcpy(row, X, n_in * sizeof *row);
    }
    /* One row with a zero stride. */
    st = dc_eval_many(prog, ws, n_in ? row : NULL, 1, 0, &v1);
    if (st == DC_OK && !same_bits(v0, v1))
        fail(rc, "dc_eval_many(1 row, stride 0) %.17g but dc_eval %.17g", v1, v0);

    /* All rows at once, then each row alone. */
    for (k = 0; k < rows; k++)
        out[k] = -999.0;
    st = dc_eval_many(prog, ws, n_in || rng_pct(r, 50) ? X : NULL, rows, stride, out);
    if (st != DC_OK && !(st == DC_ERR_NOMEM && nomem_ok)) {
        fail(rc, "dc_eval_many returned %s", dc_status_code(st));
    } else if (st == DC_OK) {
        for (k = 0; k < rows; k++) {
            double vk;
            memcpy(row, X + k * stride, n_in * sizeof *row);
            st = dc_eval(prog, ws, n_in ? row : NULL, &vk);
            if (st != DC_OK) {
                if (!(st == DC_ERR_NOMEM && nomem_ok))
                    fail(rc, "dc_eval (row %zu) returned %s", k, dc_status_code(st));
                continue;
            }
            if (!same_bits(vk, out[k]))
                fail(rc, "row %zu: dc_eval %.17g but dc_eval_many %.17g", k, vk, out[k]);
            /* Gradient on the same row: its value must match. */
            for (j = 0; j < width; j++)
                grad[j] = sentinel;
            st = dc_gradient(prog, ws, n_in ? row : NULL, &gv, n_in ? grad : NULL);
            if (st != DC_OK) {
                if (!(st == DC_ERR_NOMEM && nomem_ok))
                    fail(rc, "dc_gradient (row %zu) returned %s", k, dc_status_code(st));
                continue;
            }
            S->gradients++;
            if (!same_value(gv, vk))
                fail(rc, "row %zu: dc_gradient value %.17g but dc_eval %.17g", k, gv, vk);
            for (j = 0; j < n_in; j++) {
                if (memcmp(&grad[j], &sentinel, sizeof sentinel) == 0)
                    fail(rc, "row %zu: grad[%zu] not written", k, j);
                else if (!used[j] && grad[j] != 0.0)
                    fail(rc, "row %zu: grad[%zu] = %.17g for an unused input", k, j, grad[j]);
            }
        }
    }
    if (dc_eval_many(prog, ws, X, 0, stride, out) != DC_OK)
        fail(rc, "dc_eval_many with 0 rows");

    /* Separable terms: computed for separable/constant, refused otherwise. */
    if (n_in) {
        G = (double *)malloc(rows * n_in * sizeof *G);
        if (!G)
            abort();
    }
    st = dc_separable_terms(prog, ws, X, rows, stride, n_in ? G : out);
    S->separable_calls++;
    if (kind == DC_STRUCT_SEPARABLE || kind == DC_STRUCT_CONSTANT) {
        if (st != DC_OK && !(st == DC_ERR_NOMEM && nomem_ok))
            fail(rc, "dc_separable_terms on a %s program returned %s",
                 dc_structure_kind_name(kind), dc_status_code(st));
        if (st == DC_OK && n_in)
            check_separable(rc, prog, ws, X, rows, stride, n_in, used, G);
    } else if (st != DC_ERR_NOT_SEPARABLE) {
        fail(rc, "dc_separable_terms on a %s program returned %s", dc_structure_kind_name(kind),
             dc_status_code(st));
    }
    free(G);

free_ws:
    dc_workspace_free(ws);
done:
    free(used);
    free(X);
    free(row);
    free(grad);
    free(out);
}

/* Compile with the allocator failing at each allocation in turn (at most
 * SWEEP_MAX_STEPS points spread over the run): each must fail cleanly. */
static void oom_sweep(run_ctx *rc, stats *S, const char *text, size_t len, const dc_options *base)
{
    tracker t;
    dc_allocator a;
    dc_options o = *base;
    dc_program *prog = NULL;
    dc_error err;
    dc_status st0, st;
    size_t total, step, k;

    tracker_init(&t, SIZE_MAX);
    a.realloc = tracker_realloc;
    a.userdata = &t;
    o.allocator = &a;
    st0 = dc_compile(text, len, &o, &prog, &err);
    dc_program_free(prog);
    check_tracker(rc, &t, "sweep (no failure)");
    total = t.attempts;
    step = total > SWEEP_MAX_STEPS ? total / SWEEP_MAX_STEPS + 1 : 1;
    S->sweeps++;
    for (k = 0; k < total; k += step) {
        prog = NULL;
        tracker_init(&t, k);
        st = dc_compile(text, len, &o, &prog, &err);
        if (st == DC_OK) {
            fail(rc, "sweep: compile succeeded although allocation %zu of %zu failed", k, total);
            dc_program_free(prog);
        } else {
            check_error(rc, st, &err, prog, len, "sweep");
            if (st != DC_ERR_NOMEM && st != st0)
                fail(rc, "sweep: allocation %zu of %zu failed and compile returned %s (%s) "
                         "instead of out_of_memory or %s",
                     k, total, dc_status_code(st), err.message, dc_status_code(st0));
        }
        check_tracker(rc, &t, "sweep");
    }
}

/* Compiling the same text again (library malloc, with and without an error
 * record) gives the same status, error and program listing. */
static void check_recompile(run_ctx *rc, const char *text, size_t len, const dc_options *base,
                            dc_status st0, const dc_error *err0, const dc_program *prog0)
{
    dc_options o = *base;
    dc_program *prog = NULL;
    dc_error err;
    dc_status st;
    o.allocator = NULL;
    st = dc_compile(text, len, &o, &prog, NULL);
    if (st != st0)
        fail(rc, "recompile without an error record returned %s, first %s", dc_status_code(st),
             dc_status_code(st0));
    dc_program_free(prog);
    prog = NULL;
    st = dc_compile(text, len, &o, &prog, &err);
    if (st != st0) {
        fail(rc, "recompile returned %s, first %s", dc_status_code(st), dc_status_code(st0));
    } else if (st != DC_OK) {
        if (err.position != err0->position || err.length != err0->length ||
            strcmp(err.message, err0->message) != 0)
            fail(rc, "recompile error differs: @%zu+%zu '%s' vs @%zu+%zu '%s'", err.position,
                 err.length, err.message, err0->position, err0->length, err0->message);
    } else if (prog && prog0) {
        size_t n1 = dc_program_disassemble(prog0, NULL, 0);
        size_t n2 = dc_program_disassemble(prog, NULL, 0);
        if (n1 != n2) {
            fail(rc, "recompiled program's listing has %zu bytes, first %zu", n2, n1);
        } else if (n1 < ((size_t)1 << 24)) {
            char *a = (char *)malloc(n1 + 1), *b = (char *)malloc(n2 + 1);
            if (!a || !b)
                abort();
            dc_program_disassemble(prog0, a, n1 + 1);
            dc_program_disassemble(prog, b, n2 + 1);
            if (strcmp(a, b) != 0)
                fail(rc, "recompiled program differs");
            free(a);
            free(b);
        }
    }
    dc_program_free(prog);
}

/* One input: option bytes + text.  Returns the number of failures. */
static int run_one(const uint8_t *data, size_t size, stats *S, int abort_on_fail)
{
    run_ctx rc;
    uint8_t hdr[HEADER_SIZE] = {0, 7, 0, 0};
    const char *text;
    size_t len, expect_inputs, k_fail;
    unsigned ctx, mode;
    dc_options opt;
    tracker tp, tw;
    dc_allocator ap, aw;
    dc_program *prog = (dc_program *)&rc; /* must be reset to NULL by dc_compile */
    dc_error err;
    dc_status st;
    rng r;
    int ws_fails = 0, track_prog = 1;

    rc.data = data;
    rc.size = size;
    rc.failures = 0;
    rc.abort_on_fail = abort_on_fail;
    memcpy(hdr, data, size < HEADER_SIZE ? size : HEADER_SIZE);
    text = size > HEADER_SIZE ? (const char *)data + HEADER_SIZE : "";
    len = size > HEADER_SIZE ? size - HEADER_SIZE : 0;
    ctx = hdr[0] % N_CONTEXTS;
    mode = hdr[1] % 16u;
    k_fail = hdr[2] + 256u * (hdr[3] % 4u);
    r.s = hash_bytes(data, size);
    S->runs++;

    make_context(ctx, hdr[3], &opt, &expect_inputs);
    {
        /* the same text as a constraint ("[name:] lhs <= rhs"): never a crash,
         * spans within the text, one comparison operator found */
        dc_program *cp = NULL;
        dc_constraint_info ci;
        dc_error ce;
        if (dc_compile_constraint(text, len, &opt, &cp, &ci, &ce) == DC_OK) {
            if (!cp || ci.op_pos + ci.op_len > len || ci.name_pos + ci.name_len > len ||
                ci.op_len < 2 || (unsigned)ci.sense > (unsigned)DC_CONSTRAINT_EQ)
                fail(&rc, "constraint compiled with a bad span or sense");
            dc_program_free(cp);
        } else if (cp || ce.position > len + 1 || ce.position + ce.length > len + 1) {
            fail(&rc, "constraint error out of the text: %zu+%zu of %zu", ce.position,
                 ce.length, len);
        }
    }
    tracker_init(&tp, SIZE_MAX);
    tracker_init(&tw, SIZE_MAX);
    ap.realloc = tracker_realloc;
    ap.userdata = &tp;
    aw.realloc = tracker_realloc;
    aw.userdata = &tw;
    switch (mode) {
    case 0:
        opt.max_depth = 3;
        opt.max_instructions = 5;
        opt.max_length = 20;
        break;
    case 1:
        tp.fail_after = k_fail;
        break;
    case 2:
        tw.fail_after = k_fail % 16u;
        ws_fails = 1;
        break;
    case 3:
        opt.max_length = 2000000;
        opt.max_depth = 100000;
        opt.max_instructions = (size_t)1 << 20;
        break;
    case 4:
        track_prog = 0;
        break;
    case 5:
        if (len <= SWEEP_MAX_TEXT)
            oom_sweep(&rc, S, text, len, &opt);
        break;
    case 6:
        tp.fail_after = k_fail;
        tw.fail_after = hdr[2] % 16u;
        ws_fails = 1;
        break;
    default:
        break;
    }
    if (track_prog)
        opt.allocator = &ap;

    memset(&err, 0x5a, sizeof err);
    st = dc_compile(text, len, &opt, &prog, &err);
    S->by_status[(unsigned)st < DC_STATUS_COUNT ? (unsigned)st : DC_STATUS_COUNT]++;
    S->last_status = st;
    if (st != DC_OK) {
        check_error(&rc, st, &err, prog, len, "compile");
        if (st == DC_ERR_ARGUMENT && ctx != 9)
            fail(&rc, "compile returned invalid_argument for a valid context: %s", err.message);
        if ((hdr[3] & 0x40) && (mode >= 7 || mode == 0) && len <= 512)
            check_recompile(&rc, text, len, &opt, st, &err, NULL);
    } else if (!prog) {
        fail(&rc, "compile returned ok but no program");
    } else {
        size_t n_in = dc_program_n_inputs(prog);
        S->compiled++;
        if (tp.failed && mode != 1 && mode != 6)
            fail(&rc, "compile succeeded though an allocation failed");
        if (n_in != expect_inputs)
            fail(&rc, "n_inputs %zu, expected %zu", n_in, expect_inputs);
        if (opt.max_instructions && dc_program_n_instructions(prog) > opt.max_instructions)
            fail(&rc, "%zu instructions over the limit %zu", dc_program_n_instructions(prog),
                 opt.max_instructions);
        (void)dc_program_n_registers(prog);
        S->by_kind[dc_structure_kind_of(prog) % 5u]++;
        check_structure(&rc, prog, n_in);
        check_disassembly(&rc, prog);
        if ((hdr[3] & 0x40) && mode >= 7 && len <= 512)
            check_recompile(&rc, text, len, &opt, st, &err, prog);
        exercise(&rc, S, prog, n_in, (ws_fails || rng_pct(&r, 50)) ? &aw : NULL, ws_fails, &r,
                 (hdr[3] & 0x10) != 0 && n_in <= 64);
        dc_program_free(prog);
    }
    /* With an allocator failing after k, the compile must fail with
     * out_of_memory when it needed more than k allocations and nothing else
     * failed first; other errors found before that point are fine. */
    if ((mode == 1 || mode == 6) && tp.failed && st == DC_OK)
        fail(&rc, "compile succeeded although allocation %zu failed", k_fail);
    check_tracker(&rc, &tp, "program allocator");
    check_tracker(&rc, &tw, "workspace allocator");
    return rc.failures;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stats S;
    memset(&S, 0, sizeof S);
    (void)run_one(data, size, &S, 1);
    return 0;
}

#ifndef DECIDO_LIBFUZZER

/* ------------------------------------------------------------------ */
/* Standalone mode: input generation.                                 */
/* ------------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra)
{
    size_t need = b->n + extra + 1, cap = b->cap ? b->cap : 256;
    char *np;
    if (need <= b->cap)
        return;
    while (cap < need)
        cap *= 2;
    np = (char *)realloc(b->p, cap);
    if (!np) {
        fprintf(stderr, "fuzz_expr: out of memory\n");
        exit(2);
    }
    b->p = np;
    b->cap = cap;
}

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void sb_put(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

static void sb_repeat(sbuf *b, const char *s, size_t times)
{
    size_t n = strlen(s), i;
    sb_reserve(b, n * times);
    for (i = 0; i < times; i++) {
        memcpy(b->p + b->n, s, n);
        b->n += n;
    }
}

static void sb_int(sbuf *b, long long v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%lld", v);
    sb_put(b, tmp);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const fn1[] = {"abs", "sqrt", "exp", "log", "log2", "log10", "log1p",
                                  "expm1", "sin", "cos", "tan", "asin", "acos", "atan",
                                  "sinh", "cosh", "tanh", "floor", "ceil", "round", "sign",
                                  "sum", "prod", "mean", "norm", "cumsum", "min", "max"};
static const char *const fn2[] = {"atan2", "hypot", "min", "max"};
static const char *const fn3[] = {"where", "clip"};
static const char *const numbers[] = {
    "0", "1", "2", "3", "10", "100", "2.5", ".5", "0.5", "1e-3", "1e308", "1e-320", "1e309",
    "1e-400", "4.", "0.0", "00012", "1E5", "1e+5", "0e0", "7", "0.1", "1.7976931348623157e308",
    "4.9e-324", "2.2250738585072014e-308", "123456789012345678901234567890",
    "9007199254740993", "1e22", "64", "65", "16777216", "3.14159"};
static const char *const unknown_names[] = {"y", "xx", "foo", "_", "X", "N", "price2", "e1",
                                            "inf", "nan", "True", "None", "lambda", "import"};
static const char *const opt_names[] = {"x", "x", "x", "n", "i", "pi", "e"};
static const char *const dec_names[] = {"a", "b", "price", "pi", "e"};
static const char *const dec_big_names[] = {"a", "b", "price", "quality", "x", "pi", "n",
                                            "weight_2", "e"};
static const char *const binops[] = {" + ", "-", "*", " / ", "%", "**", " < ", "<=", ">",
                                     " >= ", "==", " != ", " and ", " or ", "+", " - ",
                                     " * ", "/"};
static const char *const cmpops[] = {"<", "<=", ">", ">=", "==", "!="};
static const char *const index_specials[] = {
    "1e300", "-1e300", "0.5", "-0", "n", "n-1", "-n", "x[0]", "a", "1e309", "2**62",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "16777216",
    "16777217", "0*1e309", "1e309-1e309", "-1", "-2", "2147483648", "-2147483649",
    "4294967296", "1.0", "pi", "0.0", "--1", "not 0", "1 < 2", "(3)", "e"};
static const char *const index_bases[] = {"x", "x", "x", "i", "cumsum(x)", "(x*2)", "x[1:]",
                                          "x[::-1]", "n", "a", "1", "sin", "x[0]",
                                          "(x + i)", "where(x > 0, x, i)", "price", "e"};

typedef struct gen {
    rng *r;
    sbuf *b;
    unsigned ctx;
    int64_t n; /* dimension used to pick indices */
} gen;

static void g_ws(gen *g)
{
    if (rng_pct(g->r, 15)) {
        static const char *const ws[] = {" ", "  ", "\t", "\n", "\r\n", " "};
        sb_put(g->b, ws[rng_below(g->r, COUNT(ws))]);
    }
}

static void g_number(gen *g)
{
    char tmp[64];
    size_t k, n;
    switch (rng_below(g->r, 10)) {
    case 0:
        snprintf(tmp, sizeof tmp, "%u", (unsigned)rng_below(g->r, 1000));
        sb_put(g->b, tmp);
        break;
    case 1:
        snprintf(tmp, sizeof tmp, "%u.%u", (unsigned)rng_below(g->r, 100),
                 (unsigned)rng_below(g->r, 1000));
        sb_put(g->b, tmp);
        break;
    case 2:
        snprintf(tmp, sizeof tmp, "%ue%s%u", (unsigned)rng_below(g->r, 10) + 1,
                 rng_pct(g->r, 50) ? "-" : "", (unsigned)rng_below(g->r, 400));
        sb_put(g->b, tmp);
        break;
    case 3:
        if (rng_pct(g->r, 10)) { /* long digit strings (heap path in the lexer) */
            n = 50 + rng_below(g->r, 400);
            for (k = 0; k < n; k++)
                sb_putc(g->b, (char)('0' + rng_below(g->r, 10)));
            if (rng_pct(g->r, 50)) {
                sb_putc(g->b, '.');
                for (k = 0; k < n / 3; k++)
                    sb_putc(g->b, (char)('0' + rng_below(g->r, 10)));
            }
            break;
        }
        /* fall through */
    default:
        sb_put(g->b, numbers[rng_below(g->r, COUNT(numbers))]);
        break;
    }
}

static void g_name(gen *g)
{
    unsigned pick = (unsigned)rng_below(g->r, 200);
    if (pick < 4) {
        sb_put(g->b, unknown_names[rng_below(g->r, COUNT(unknown_names))]);
    } else if (pick < 6) {
        sb_put(g->b, fn1[rng_below(g->r, COUNT(fn1))]); /* function as a value */
    } else if (pick < 10) { /* a name of another context */
        sb_put(g->b, rng_pct(g->r, 50) ? opt_names[rng_below(g->r, COUNT(opt_names))]
                                       : dec_names[rng_below(g->r, COUNT(dec_names))]);
    } else if (g->ctx == 5 || g->ctx == 8) {
        sb_put(g->b, dec_names[rng_below(g->r, COUNT(dec_names))]);
    } else if (g->ctx == 6) {
        sb_put(g->b, dec_big_names[rng_below(g->r, COUNT(dec_big_names))]);
    } else if (g->ctx == 7 || g->ctx == 9) {
        sb_put(g->b, rng_pct(g->r, 50) ? "pi" : "e");
    } else {
        sb_put(g->b, opt_names[rng_below(g->r, COUNT(opt_names))]);
    }
}

static void g_expr(gen *g, int depth);

static void g_index_value(gen *g)
{
    if (rng_pct(g->r, 70)) { /* in range: -n .. n-1 */
        sb_int(g->b, (long long)((int64_t)rng_below(g->r, (size_t)(2 * g->n)) - g->n));
    } else if (rng_pct(g->r, 50)) { /* near the ends, often out of range */
        int64_t span = g->n + 3;
        sb_int(g->b, (long long)((int64_t)rng_below(g->r, (size_t)(2 * span + 1)) - span));
    } else if (rng_pct(g->r, 80)) {
        sb_put(g->b, index_specials[rng_below(g->r, COUNT(index_specials))]);
    } else {
        g_expr(g, 1);
    }
}

static void g_subscript(gen *g)
{
    unsigned form = (unsigned)rng_below(g->r, 10);
    sb_putc(g->b, '[');
    g_ws(g);
    if (form < 5) {
        g_index_value(g);
    } else {
        static const char *const steps[] = {"0", "0.0", "-1", "2", "-2", "1e300", "3", "-0",
                                            "0.5", "n", ""};
        if (rng_pct(g->r, 60))
            g_index_value(g);
        sb_putc(g->b, ':');
        if (rng_pct(g->r, 60))
            g_index_value(g);
        if (form >= 7) {
            sb_putc(g->b, ':');
            if (rng_pct(g->r, 70))
                sb_put(g->b, steps[rng_below(g->r, COUNT(steps))]);
        }
        if (form == 9 && rng_pct(g->r, 30))
            sb_put(g->b, ":1"); /* too many colons */
    }
    g_ws(g);
    sb_putc(g->b, ']');
}

static void g_atom(gen *g)
{
    if (rng_pct(g->r, 30))
        g_number(g);
    else
        g_name(g);
}

static void g_args(gen *g, int depth, size_t nargs)
{
    size_t k;
    for (k = 0; k < nargs; k++) {
        if (k) {
            sb_putc(g->b, ',');
            g_ws(g);
        }
        g_expr(g, depth);
    }
}

static void g_call(gen *g, int depth)
{
    unsigned which = (unsigned)rng_below(g->r, 10);
    const char *f;
    size_t nargs;
    if (which < 6) {
        f = fn1[rng_below(g->r, COUNT(fn1))];
        nargs = 1;
    } else if (which < 8) {
        f = fn2[rng_below(g->r, COUNT(fn2))];
        nargs = 2;
    } else if (which < 9) {
        f = fn3[rng_below(g->r, COUNT(fn3))];
        nargs = 3;
    } else {
        f = rng_pct(g->r, 50) ? "min" : "max";
        nargs = 2 + rng_below(g->r, 5);
        if (rng_pct(g->r, 10))
            nargs = 63 + rng_below(g->r, 4); /* around the 64-argument limit */
    }
    if (rng_pct(g->r, 4))
        nargs = rng_below(g->r, 5); /* wrong arity, including none */
    if (rng_pct(g->r, 1))
        f = unknown_names[rng_below(g->r, COUNT(unknown_names))]; /* unknown function */
    sb_put(g->b, f);
    g_ws(g);
    sb_putc(g->b, '(');
    g_args(g, nargs > 8 ? 0 : depth - 1, nargs);
    if (rng_pct(g->r, 2))
        sb_putc(g->b, ','); /* trailing comma */
    sb_putc(g->b, ')');
}

static void g_expr(gen *g, int depth)
{
    size_t k, count;
    if (depth <= 0 || rng_pct(g->r, 12)) {
        g_atom(g);
        return;
    }
    g_ws(g);
    switch (rng_below(g->r, 16)) {
    case 0: { /* unary */
        static const char *const un[] = {"-", "+", "not ", "- ", "--", "-+", "not not "};
        const char *op = un[rng_below(g->r, COUNT(un))];
        /* 'not' binds looser than comparisons: usually parenthesize it */
        int paren = op[0] == 'n' && rng_pct(g->r, 80);
        if (paren)
            sb_putc(g->b, '(');
        sb_put(g->b, op);
        g_expr(g, depth - 1);
        if (paren)
            sb_putc(g->b, ')');
        break;
    }
    case 1: case 2: case 3: /* binary */
        g_expr(g, depth - 1);
        sb_put(g->b, binops[rng_below(g->r, COUNT(binops))]);
        g_expr(g, depth - 1);
        break;
    case 4: /* ** chain */
        count = 2 + rng_below(g->r, 4);
        for (k = 0; k < count; k++) {
            if (k)
                sb_put(g->b, rng_pct(g->r, 80) ? "**" : "**-");
            g_expr(g, depth - 2);
        }
        break;
    case 5: /* chained comparison */
        count = 2 + rng_below(g->r, 3);
        for (k = 0; k < count; k++) {
            if (k)
                sb_put(g->b, cmpops[rng_below(g->r, COUNT(cmpops))]);
            g_expr(g, depth - 2);
        }
        break;
    case 6: /* logic */
        if (rng_pct(g->r, 30))
            sb_put(g->b, "not ");
        g_expr(g, depth - 1);
        sb_put(g->b, rng_pct(g->r, 50) ? " and " : " or ");
        g_expr(g, depth - 1);
        break;
    case 7: case 8: case 9:
        g_call(g, depth);
        break;
    case 10: case 11: /* indexing and slicing, sometimes chained */
        if (g->ctx <= 4 || g->ctx >= 10 ? rng_pct(g->r, 80) : rng_pct(g->r, 20)) {
            sb_put(g->b, rng_pct(g->r, 70) ? "x"
                                           : index_bases[rng_below(g->r, COUNT(index_bases))]);
        } else {
            sb_putc(g->b, '(');
            g_expr(g, depth - 1);
            sb_putc(g->b, ')');
        }
        count = 1 + (rng_pct(g->r, 20) ? rng_below(g->r, 3) : 0);
        for (k = 0; k < count; k++)
            g_subscript(g);
        break;
    case 12: /* parentheses */
        sb_putc(g->b, '(');
        g_expr(g, depth - 1);
        sb_putc(g->b, ')');
        break;
    case 13: /* a reduction of a vector expression */
        sb_put(g->b, rng_pct(g->r, 50) ? "sum(" : "prod(");
        g_expr(g, depth - 1);
        sb_put(g->b, rng_pct(g->r, 50) ? "*x)" : ")");
        break;
    case 14: /* where / clip with a comparison */
        sb_put(g->b, rng_pct(g->r, 50) ? "where(" : "clip(");
        g_expr(g, depth - 1);
        sb_put(g->b, cmpops[rng_below(g->r, COUNT(cmpops))]);
        g_expr(g, depth - 2);
        sb_putc(g->b, ',');
        g_args(g, depth - 2, 2);
        sb_putc(g->b, ')');
        break;
    default:
        g_atom(g);
        break;
    }
    g_ws(g);
}

static const char *const seeds[] = {
    "10*n + sum(x**2 - 10*cos(2*pi*x))",
    "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)",
    "sum(i*x**2)",
    "quality*100 - price",
    "10 <= a <= 60",
    "x[0]", "x[-1]", "x[1:]", "x[:-1]", "x[::2]", "x[::-1]", "sum(x[::-1] * i)",
    "sum(where(x > 0, x, -x))", "sum(clip(x, -1, 1))", "min(x)", "max(x[0], x[-1], 3)",
    "norm(x)", "prod(x)", "mean(cumsum(x))", "-x[0]**2", "2**-1", "2**3**2",
    "a and b or not price", "a & b", "a | b", "a ^ b", "a = b", "!a", "a != b", "a && b",
    "hypot(a, b) + atan2(b, a)", "log(a) + log2(b) + log10(price)",
    "sum(x[::0])", "x[5:2]", "x[1e300]", "x[0.5]", "x[x[0]]", "sin", "sin(1,2)", "foo(1)",
    "x(1)", "1e", "1e+", "1..2", "1.2.3", ".", "", "   ", "()", "(", ")", "[", "x[", "x[0",
    "x[::]", "x[:]", "x[-1:-5:-1]", "sum(x)[0]", "n", "i", "pi*e", "sign(x[0])*abs(x[0])",
    "floor(a)+ceil(b)+round(price)", "asin(a)+acos(b)+atan(price)",
    "sinh(a)+cosh(b)+tanh(price)", "expm1(a)+log1p(b)+sqrt(price)", "sqrt(-1)", "1/0",
    "0/0", "1%0", "-1e308*10", "sum(x % 0)", "x[0] < x[1] < x[2]", "sum(x < 1)",
    "sum(x * (x > 0))", "(x[0]-1)**2 + (x[1]-2)**2", "sum((x[1:] - x[:-1])**2)",
    "x[0]*x[1]", "sum(x[::2]*x[1::2])", "sum(exp(x)) + sum(x)**2", "x[0]*x[-1] + x[1]",
    "sum(sin(x)) + x[0]*x[2]", "tan(x[0]) % x[1]", "sum(x**x)", "sum(abs(x)**0.5)",
    "sum((x - i)**2) / n", "max(x) - min(x)", "cumsum(x)[-1]", "sum(cumsum(x[::-1])[::2])",
    "where(a > b, a, b)", "not a", "not not a", "a < b < price < 3", "price % 7 // 2",
    "sum(x) + 1e-320", "x[0] ** -1", "0 ** -1", "(-8) ** (1/3)", "x[0] ** 0.5",
    "sum(x ** 2) ** 0.5", "log(0)", "exp(710)", "sum(log(abs(x) + 1))", "sum(i * i * x)",
    "x[1:3] + x[2:4]", "x[1:3] + x[2:5]", "sum(x[1:] * x)", "mean(x[10:])",
    "sum(x[-100:100])", "x[::-2][1]", "x[2:][::-1][0]", "1 if x else 2", "x.y", "x[0]e",
    "3x", "x 3", "sum()", "min()", "where(1, 2)", "clip(x, 1)", "atan2(1)", "sum(1, 2)",
    "norm(3)", "cumsum(2)", "mean(x, x)", "e", "pi", "pi(1)", "e[0]", "n[0]", "i[0]",
    "i[n-1]", "x[n]", "x[-n]", "x[-n-1]", "sum(x)*0", "0*x[0]", "x[0]-x[0]",
    "sum(x)-sum(x)", "a*0 + b", "(a+b)*(a-b)", "price*price", "sum(x+1e308)",
    /* products of several shifted slices: triangles and > 8 offsets */
    "sum(x[:-2]*x[1:-1]*x[2:])", "sum(x[:-3]*x[1:-2]*x[2:-1]*x[3:])",
    "sum(x[:-9]*x[1:-8]*x[2:-7]*x[3:-6]*x[4:-5]*x[5:-4]*x[6:-3]*x[7:-2]*x[8:-1]*x[9:])",
    "x[0]*x[1]*x[2]*x[3]*x[4]*x[5]*x[6]*x[7]*x[8]*x[9]", "sum(x[::2]) * sum(x[1::2])",
    "sum(x[:32]*x[32:])", "sum(x[::-1]*x)", "sum(x[1:]*x[:-1]) + sum(x[2:]*x[:-2])",
    "sum(sin(x[1:] + x[:-1]))", "sum(x[::3]**2) + prod(x[1::3])", "norm(x[:4]) + norm(x[4:])",
    "sum(x*x[0])", "sum(cumsum(x))", "sum(where(x > x[0], x, i))", "sum(clip(x, x[0], x[1]))",
    /* more than 32 distinct constants (constant table growth) */
    "1.5*x[0]+2.25*x[-1]+3.125*x[0]+4.75*x[-1]+5.5*x[0]+6.0625*x[-1]+7.5*x[0]+8.25*x[-1]+9.875*x[0]+10.5*x[-1]+11.25*x[0]+12.125*x[-1]+13.5*x[0]+14.75*x[-1]+15.25*x[0]+16.5*x[-1]+17.125*x[0]+18.375*x[-1]+19.5*x[0]+20.25*x[-1]+21.75*x[0]+22.5*x[-1]+23.125*x[0]+24.875*x[-1]+25.5*x[0]+26.25*x[-1]+27.75*x[0]+28.5*x[-1]+29.125*x[0]+30.375*x[-1]+31.5*x[0]+32.25*x[-1]+33.75*x[0]+34.5*x[-1]+35.125*x[0]+36.625*x[-1]+37.5*x[0]+38.25*x[-1]+39.75*x[0]+40.5*x[-1]",
};

static const unsigned char interesting[] = {
    0, 0x80, 0xff, 0xc3, 0xa9, '\t', '\n', '\r', 0x7f, 0x01, '$', '&', '|', '^', '=', '!',
    '(', ')', '[', ']', ',', ':', '.', 'e', 'E', '0', '9', '-', '+', '*', '/', '%', '<', '>',
    ' ', '#', '"', '\\', '@', '`', '~', '?', ';', '{', '}', 'x', 'n', 'i', '_', '\''};
static const char *const tokens[] = {
    "**", " and ", " or ", "not ", "[", "]", "(", ")", ",", ":", "::", "-", "1e", ".", "x",
    "sum(", "&", "|", "^", "=", "!", "==", "e+", "1e300", "[-1]", "[::0]", "min(", "**-",
    "&&", "||", "0", "x[", "(((", ")))", "where(", "1e-320", "<=", "!="};

/* 1..6 byte-level edits of b in place; pool supplies splice material. */
static void mutate(rng *r, sbuf *b, const char *const *pool, size_t pool_n, const sbuf *extra,
                   size_t extra_n)
{
    size_t edits = 1 + rng_below(r, 6), e;
    for (e = 0; e < edits; e++) {
        size_t pos = rng_below(r, b->n + 1), k;
        switch (rng_below(r, 9)) {
        case 0: /* insert an interesting byte */
        case 1: {
            char c = (char)interesting[rng_below(r, sizeof interesting)];
            sb_reserve(b, 1);
            memmove(b->p + pos + 1, b->p + pos, b->n - pos);
            b->p[pos] = c;
            b->n++;
            break;
        }
        case 2: /* delete 1..4 bytes */
            if (b->n) {
                size_t del = 1 + rng_below(r, 4);
                pos = rng_below(r, b->n);
                if (del > b->n - pos)
                    del = b->n - pos;
                memmove(b->p + pos, b->p + pos + del, b->n - pos - del);
                b->n -= del;
            }
            break;
        case 3: /* flip a bit */
            if (b->n)
                b->p[rng_below(r, b->n)] ^= (char)(1u << rng_below(r, 8));
            break;
        case 4: /* duplicate a range */
            if (b->n) {
                size_t from = rng_below(r, b->n), cnt = 1 + rng_below(r, 16);
                char tmp[16];
                if (cnt > b->n - from)
                    cnt = b->n - from;
                memcpy(tmp, b->p + from, cnt);
                sb_reserve(b, cnt);
                memmove(b->p + pos + cnt, b->p + pos, b->n - pos);
                memcpy(b->p + pos, tmp, cnt);
                b->n += cnt;
            }
            break;
        case 5: { /* splice part of another seed or corpus input */
            const char *src;
            size_t srcn, from, cnt;
            if (extra_n && rng_pct(r, 30)) {
                const sbuf *x = &extra[rng_below(r, extra_n)];
                src = x->p;
                srcn = x->n;
            } else {
                src = pool[rng_below(r, pool_n)];
                srcn = strlen(src);
            }
            if (!srcn)
                break;
            from = rng_below(r, srcn);
            cnt = 1 + rng_below(r, srcn - from);
            sb_reserve(b, cnt);
            memmove(b->p + pos + cnt, b->p + pos, b->n - pos);
            memcpy(b->p + pos, src + from, cnt);
            b->n += cnt;
            break;
        }
        case 6: /* replace a byte */
            if (b->n)
                b->p[rng_below(r, b->n)] = (char)interesting[rng_below(r, sizeof interesting)];
            break;
        case 7: { /* insert a token */
            const char *t = tokens[rng_below(r, COUNT(tokens))];
            k = strlen(t);
            sb_reserve(b, k);
            memmove(b->p + pos + k, b->p + pos, b->n - pos);
            memcpy(b->p + pos, t, k);
            b->n += k;
            break;
        }
        default: /* truncate */
            if (b->n && rng_pct(r, 50))
                b->n = pos;
            break;
        }
    }
}

#define N_PATHOLOGICAL 12

/* Pathological input number kind (occurrence occ) into b (text only);
 * returns the mode byte to use. */
static unsigned pathological(rng *r, sbuf *b, unsigned kind, unsigned occ)
{
    const size_t big = 100000;
    size_t k;
    unsigned mode = occ == 1 ? 7u : 3u; /* second occurrence: default limits */
    switch (kind) {
    case 0: /* nested parentheses */
        sb_repeat(b, "(", big);
        sb_put(b, "x[0]");
        sb_repeat(b, ")", big);
        break;
    case 1: /* unary minuses */
        sb_repeat(b, occ == 2 ? "- " : "-", big);
        sb_put(b, "x[0]");
        break;
    case 2: /* not */
        sb_repeat(b, "not ", big);
        sb_put(b, "x[0]");
        break;
    case 3: /* 1 MB expressions of several shapes */
        if (occ == 0) {
            while (b->n < 1000000)
                sb_put(b, "sin(x[0])*2.5 + ");
            sb_put(b, "1");
        } else if (occ == 1) {
            sb_repeat(b, " ", 1000000);
            sb_put(b, "x[0] $");
        } else {
            sb_repeat(b, "1", 1000000); /* a 1 MB number literal */
        }
        mode = 3u;
        break;
    case 4: /* 100,000-term sum */
        sb_put(b, "x[0]");
        sb_repeat(b, "+x[0]", big - 1);
        break;
    case 5: /* ** chain */
        sb_put(b, "x[0]");
        sb_repeat(b, occ == 2 ? "**-x[0]" : "**x[0]", big - 1);
        break;
    case 6: /* a chain of postfix slices */
        sb_put(b, "sum(x");
        sb_repeat(b, occ == 1 ? "[0:]" : "[::-1]", big);
        sb_put(b, ")");
        break;
    case 7: /* nesting just inside and at the hard depth limit */
        if (occ == 2) { /* vector-valued nesting, made scalar by sum */
            sb_put(b, "sum(");
            sb_repeat(b, "cumsum(", 1980);
            sb_put(b, "x");
            sb_repeat(b, ")", 1981);
        } else {
            sb_repeat(b, occ == 0 ? "(" : "abs(", 1990 + 10 * occ);
            sb_put(b, "x[0]");
            sb_repeat(b, ")", 1990 + 10 * occ);
        }
        mode = 3u;
        break;
    case 8: /* a call with 100,000 arguments, and 100,000 unclosed calls */
        if (occ == 1) {
            sb_repeat(b, "sum(", big);
            sb_put(b, "x");
        } else {
            sb_put(b, "max(x[0]");
            sb_repeat(b, ",x[0]", big);
            sb_put(b, ")");
        }
        break;
    case 9: /* huge indices */
        switch (occ) {
        case 0: sb_put(b, "x[1e300] + x[-1e300] + x[1e300:] + x[::1e300]"); break;
        case 1: sb_put(b, "x[9223372036854775807] + x[-9223372036854775808]"); break;
        default: sb_put(b, "sum(x[-9223372036854775808:9223372036854775807:4611686018427387904])"); break;
        }
        mode = 7u;
        break;
    case 10: /* a long chained comparison and a long and/or chain */
        sb_put(b, "x[0]");
        sb_repeat(b, occ == 1 ? " and x[0]" : "<x[0]", big / 4);
        break;
    default: /* a huge sum of distinct constants (many constants, CSE tables) */
        sb_put(b, "0");
        for (k = 0; k < big / 2; k++) {
            sb_put(b, "+");
            sb_int(b, (long long)k);
            sb_put(b, rng_pct(r, 50) ? "*x[0]" : "*x[-1]");
        }
        break;
    }
    return mode;
}

static int read_file(const char *path, sbuf *b)
{
    FILE *f = fopen(path, "rb");
    char tmp[4096];
    size_t got;
    if (!f)
        return 0;
    while ((got = fread(tmp, 1, sizeof tmp, f)) > 0)
        sb_putn(b, tmp, got);
    fclose(f);
    return 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: fuzz_expr [--runs N] [--seed S] [--verbose] [--print] [input files...]\n");
}

int main(int argc, char **argv)
{
    unsigned long long runs = 10000, seed = 1, run, progress_every;
    stats S;
    rng r;
    sbuf text, input;
    sbuf *files = NULL;
    size_t n_files = 0, total = 0, k;
    int failed = 0, i, verbose = 0, print_inputs = 0;
    unsigned path_seen[N_PATHOLOGICAL];

    memset(&S, 0, sizeof S);
    memset(&text, 0, sizeof text);
    memset(&input, 0, sizeof input);
    memset(path_seen, 0, sizeof path_seen);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(argv[i], "--print") == 0) {
            print_inputs = 1;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            usage();
            return 2;
        } else {
            sbuf *nf = (sbuf *)realloc(files, (n_files + 1) * sizeof *files);
            if (!nf)
                return 2;
            files = nf;
            memset(&files[n_files], 0, sizeof *files);
            if (!read_file(argv[i], &files[n_files])) {
                fprintf(stderr, "fuzz_expr: cannot read %s\n", argv[i]);
                return 2;
            }
            n_files++;
        }
    }

    /* Corpus files first, as they are. */
    for (k = 0; k < n_files; k++) {
        failed += run_one((const uint8_t *)files[k].p, files[k].n, &S, 0) != 0;
        total++;
    }

    r.s = seed;
    progress_every = runs >= 10 ? runs / 10 : 1;
    for (run = 0; run < runs; run++) {
        gen g;
        unsigned char hdr[HEADER_SIZE];
        unsigned mode, ctx_pick, path_kind = N_PATHOLOGICAL;
        unsigned long long period = runs / 3;

        /* Pathological inputs: each kind once per third of the run. */
        if (runs >= 3ull * (N_PATHOLOGICAL + 2) && run % period >= 1 &&
            run % period <= N_PATHOLOGICAL)
            path_kind = (unsigned)(run % period - 1);

        ctx_pick = (unsigned)rng_below(&r, 100);
        if (ctx_pick < 60)
            hdr[0] = (unsigned char)(ctx_pick % 5); /* optimization n = 1,2,3,7,64 */
        else if (ctx_pick < 72)
            hdr[0] = 5;
        else if (ctx_pick < 78)
            hdr[0] = 6;
        else if (ctx_pick < 88)
            hdr[0] = 7;
        else if (ctx_pick < 90)
            hdr[0] = 8;
        else if (ctx_pick < 93)
            hdr[0] = 9;
        else if (ctx_pick < 95)
            hdr[0] = 10;
        else
            hdr[0] = 11;
        hdr[0] = (unsigned char)(hdr[0] + N_CONTEXTS * rng_below(&r, 2));
        mode = (unsigned)rng_below(&r, 100);
        if (mode < 6)
            mode = 0; /* tiny limits */
        else if (mode < 16)
            mode = 1; /* failing compile allocator */
        else if (mode < 21)
            mode = 2; /* failing workspace allocator */
        else if (mode < 23)
            mode = 3; /* big limits */
        else if (mode < 33)
            mode = 4; /* library malloc */
        else if (mode < 36)
            mode = 5; /* out-of-memory sweep */
        else if (mode < 39)
            mode = 6; /* both fail */
        else
            mode = 7 + (unsigned)rng_below(&r, 9);
        hdr[1] = (unsigned char)mode;
        hdr[2] = (unsigned char)rng_below(&r, 256);
        hdr[3] = (unsigned char)rng_below(&r, 256);
        if (mode == 1 && rng_pct(&r, 70)) { /* most compiles need few allocations */
            hdr[2] = (unsigned char)rng_below(&r, 48);
            hdr[3] &= 0xfc;
        }

        g.r = &r;
        g.b = &text;
        g.ctx = hdr[0] % N_CONTEXTS;
        g.n = g.ctx <= 4 ? opt_dims[g.ctx] : g.ctx == 10 ? 1000 : g.ctx == 11 ? 5 : 3;
        text.n = 0;
        if (path_kind < N_PATHOLOGICAL) {
            hdr[0] = (unsigned char)rng_below(&r, 5); /* optimization context */
            hdr[1] = (unsigned char)pathological(&r, &text, path_kind, path_seen[path_kind]++);
            hdr[3] &= 0xef; /* few rows */
        } else {
            unsigned what = (unsigned)rng_below(&r, 100);
            if (what < 50) {
                /* optimization context: usually reduce a vector result */
                const char *wrap = NULL;
                if (g.ctx <= 4 || g.ctx >= 10) {
                    static const char *const wraps[] = {"sum(", "sum(", "sum(", "mean(",
                                                        "norm(", "max(", "prod("};
                    if (rng_pct(&r, 55))
                        wrap = wraps[rng_below(&r, COUNT(wraps))];
                }
                if (wrap)
                    sb_put(&text, wrap);
                g_expr(&g, 1 + (int)rng_below(&r, 6));
                if (wrap)
                    sb_put(&text, ")");
            } else if (what < 72) {
                g_expr(&g, 1 + (int)rng_below(&r, 4));
                mutate(&r, &text, seeds, COUNT(seeds), files, n_files);
            } else if (what < 97 || !n_files) {
                sb_put(&text, seeds[rng_below(&r, COUNT(seeds))]);
                if (rng_pct(&r, 85))
                    mutate(&r, &text, seeds, COUNT(seeds), files, n_files);
            } else {
                const sbuf *f = &files[rng_below(&r, n_files)];
                if (f->n > HEADER_SIZE)
                    sb_putn(&text, f->p + HEADER_SIZE, f->n - HEADER_SIZE);
                mutate(&r, &text, seeds, COUNT(seeds), files, n_files);
            }
        }
        input.n = 0;
        sb_putn(&input, (const char *)hdr, HEADER_SIZE);
        sb_putn(&input, text.p ? text.p : "", text.n);
        {
            clock_t t0 = clock();
            failed += run_one((const uint8_t *)input.p, input.n, &S, 0) != 0;
            if (verbose && path_kind < N_PATHOLOGICAL)
                printf("fuzz_expr: pathological kind %u (%zu bytes, mode %u): %s, %.3f s\n",
                       path_kind, text.n, (unsigned)hdr[1], dc_status_code(S.last_status),
                       (double)(clock() - t0) / CLOCKS_PER_SEC);
            if (print_inputs) {
                printf("%-22s ctx %2u mode %2u ", dc_status_code(S.last_status),
                       (unsigned)hdr[0], (unsigned)hdr[1]);
                print_escaped(stdout, (const uint8_t *)text.p, text.n, 200);
                printf("\n");
            }
        }
        total++;
        if ((run + 1) % progress_every == 0 || run + 1 == runs)
            printf("fuzz_expr: %llu/%llu runs: %zu compiled, %zu evaluated, %zu gradients, "
                   "%zu oom sweeps, %d failed\n",
                   run + 1, runs, S.compiled, S.evaluated, S.gradients, S.sweeps, failed);
        fflush(stdout);
    }

    printf("fuzz_expr: compile statuses:");
    for (k = 0; k < DC_STATUS_COUNT; k++)
        if (S.by_status[k])
            printf(" %s=%zu", dc_status_code((dc_status)k), S.by_status[k]);
    printf("\nfuzz_expr: structure kinds:");
    for (k = 0; k < 5; k++)
        printf(" %s=%zu", dc_structure_kind_name((dc_structure_kind)k), S.by_kind[k]);
    printf("\n");
    printf("fuzz_expr: %zu passed, %d failed\n", total - (size_t)failed, failed);
    for (k = 0; k < n_files; k++)
        free(files[k].p);
    free(files);
    free(text.p);
    free(input.p);
    return failed ? 1 : 0;
}

#endif /* DECIDO_LIBFUZZER */
