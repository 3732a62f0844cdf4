/*
 * decido.h -- the one public header of the decido C library.
 *
 * The library compiles expressions of the decido language (DESIGN.md §2) into
 * an immutable bytecode program and evaluates it with a register VM, computes
 * gradients by reverse-mode AD over the bytecode, and reports the program's
 * separability structure.
 *
 * Ownership: every dc_X_new / dc_compile has a matching dc_X_free.  A program
 * is immutable once built and may be shared by any number of threads; a
 * workspace holds the scratch registers of one evaluation and belongs to one
 * thread at a time.  The library has no global mutable state.
 *
 * Errors are data: entry points return a dc_status and, where a dc_error is
 * passed, fill it with a stable code, a byte offset into the source text and
 * a message.  Nothing is printed.
 */
#ifndef DECIDO_H
#define DECIDO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DC_VERSION "0.1.0"

/* Status codes.  The order is ABI; the code strings (dc_status_code) are the
 * stable machine names surfaced to users. */
typedef enum dc_status {
    DC_OK = 0,
    DC_ERR_NOMEM,            /* out_of_memory */
    DC_ERR_ARGUMENT,         /* invalid_argument: API misuse (NULL, lengths) */
    DC_ERR_TOO_LONG,         /* too_long: text over max_length */
    DC_ERR_TOO_DEEP,         /* too_deep: nesting over max_depth */
    DC_ERR_TOO_LARGE,        /* program_too_large: over max_instructions */
    DC_ERR_CHARACTER,        /* unexpected_character (NUL, non-ASCII, '$') */
    DC_ERR_NUMBER,           /* invalid_number: malformed literal */
    DC_ERR_SYNTAX,           /* syntax_error: unexpected token */
    DC_ERR_BITWISE,          /* bitwise_operator: '&' or '|' (hint and/or) */
    DC_ERR_EMPTY,            /* empty_expression */
    DC_ERR_UNKNOWN_NAME,     /* unknown_name */
    DC_ERR_UNKNOWN_FUNCTION, /* unknown_function */
    DC_ERR_NOT_CALLABLE,     /* not_callable: name(...) of a non-function */
    DC_ERR_FUNCTION_VALUE,   /* function_as_value: 'sin' without a call */
    DC_ERR_ARITY,            /* wrong_arguments: argument count */
    DC_ERR_SHAPE,            /* shape_mismatch: vectors of unequal length */
    DC_ERR_NOT_INDEXABLE,    /* not_indexable: indexing a scalar */
    DC_ERR_INDEX,            /* invalid_index: non-constant, non-integer, out of range */
    DC_ERR_SLICE,            /* invalid_slice: zero step, empty, non-constant */
    DC_ERR_NOT_SCALAR,       /* not_scalar: the expression is vector-valued */
    DC_ERR_VARIABLE,         /* invalid_variable: bad or duplicate variable name */
    DC_ERR_NOT_SEPARABLE,    /* not_separable: separable terms asked of a coupled program */
    DC_ERR_INTERNAL,         /* internal_error: a verifier check failed */
    DC_STATUS_COUNT
} dc_status;

/* Stable machine code ("syntax_error") and a short title for a status. */
const char *dc_status_code(dc_status status);
const char *dc_status_title(dc_status status);

/* An error: what, where (byte offset and length in the source), and a
 * one-line message without the source text (callers draw the caret). */
typedef struct dc_error {
    dc_status status;
    size_t position;
    size_t length;
    char message[320];
} dc_error;

/* Allocator hook: realloc semantics with sizes; new_size == 0 frees.
 * Must return NULL on failure (never abort). */
typedef void *(*dc_realloc_fn)(void *userdata, void *ptr, size_t old_size, size_t new_size);
typedef struct dc_allocator {
    dc_realloc_fn realloc;
    void *userdata;
} dc_allocator;

#define DC_DEFAULT_MAX_LENGTH 10000u
#define DC_DEFAULT_MAX_DEPTH 256u
#define DC_DEFAULT_MAX_INSTRUCTIONS 65536u
#define DC_MAX_DIMENSION ((int64_t)1 << 24)

/* Compile options.  Contexts:
 *  - optimization: n >= 1 and no variables.  Names x (vector of length n),
 *    n, i (1..n); the program's input row is x.
 *  - decision: n == 0 and n_variables >= 1.  Each variable is a scalar; the
 *    input row holds the variables' values in order.
 *  - constant: n == 0 and no variables; the input row is empty.
 * pi and e are always defined (a variable of the same name shadows them).
 * Zero limits mean the defaults above. */
typedef struct dc_options {
    int64_t n;
    const char *const *variables;
    size_t n_variables;
    size_t max_length;
    size_t max_depth;
    size_t max_instructions;
    const dc_allocator *allocator; /* NULL: the C library's malloc */
} dc_options;

void dc_options_init(dc_options *options);

typedef struct dc_program dc_program;
typedef struct dc_workspace dc_workspace;

/* Compile text[0..length) (not NUL-terminated; NUL bytes are errors). */
dc_status dc_compile(const char *text, size_t length, const dc_options *options,
                     dc_program **out, dc_error *error);
void dc_program_free(dc_program *program);

/* Length of one input row (n, or the number of variables, or 0). */
size_t dc_program_n_inputs(const dc_program *program);
/* Number of instructions, registers and constants (for reports and tests). */
size_t dc_program_n_instructions(const dc_program *program);
size_t dc_program_n_registers(const dc_program *program);

/* Human-readable listing; snprintf semantics: writes at most capacity bytes
 * (NUL-terminated when capacity > 0) and returns the full length needed. */
size_t dc_program_disassemble(const dc_program *program, char *buffer, size_t capacity);

/* [*f_lo, *f_hi] encloses every value the VM computes for a point of the box
 * [lo, hi] (n_inputs values each; interval arithmetic over the bytecode, loose
 * in general, (-inf, inf) where an operation has no rule: expr/bound.c).
 * allocator may be NULL (the default); DC_ERR_NOMEM is the only failure. */
dc_status dc_program_range(const dc_program *program, const double *lo, const double *hi,
                           const dc_allocator *allocator, double *f_lo, double *f_hi);

/* A workspace for one thread's evaluations of one program.  It grows on
 * demand (first gradient, first large batch) and is reused afterwards. */
dc_workspace *dc_workspace_new(const dc_program *program, const dc_allocator *allocator);
void dc_workspace_free(dc_workspace *workspace);

/* value = f(x), x of length n_inputs. */
dc_status dc_eval(const dc_program *program, dc_workspace *workspace,
                  const double *x, double *value);
/* out[r] = f(X[r*row_stride .. +n_inputs)) for r < rows (row_stride in doubles). */
dc_status dc_eval_many(const dc_program *program, dc_workspace *workspace,
                       const double *X, size_t rows, size_t row_stride, double *out);
/* value = f(x) and grad[0..n_inputs) = df/dx by reverse-mode AD. */
dc_status dc_gradient(const dc_program *program, dc_workspace *workspace,
                      const double *x, double *value, double *grad);

/* Constraints: "[name:] lhs <= rhs", "lhs >= rhs" or "lhs == rhs" in the
 * expression language, in the same context (options) as the objective.  The
 * program computes g = lhs - rhs; the sense says what must hold (g <= 0,
 * g >= 0, g == 0).  Refused (DC_ERR_SYNTAX or DC_ERR_EMPTY, with the byte
 * position): no comparison, a chain, <, > or !=, and/or/not at the top level,
 * a bracket never closed or closing nothing,
 * an empty side; any compile error of a side is reported at its position in
 * text.  info gets the sense and the spans of the name (length 0: none) and
 * of the operator. */
typedef enum dc_constraint_sense {
    DC_CONSTRAINT_LE = 0,
    DC_CONSTRAINT_GE,
    DC_CONSTRAINT_EQ
} dc_constraint_sense;

typedef struct dc_constraint_info {
    dc_constraint_sense sense;
    size_t name_pos, name_len;
    size_t op_pos, op_len;
} dc_constraint_info;

dc_status dc_compile_constraint(const char *text, size_t length, const dc_options *options,
                                dc_program **out, dc_constraint_info *info, dc_error *error);

/* Structure: which input coordinates interact. */
typedef enum dc_structure_kind {
    DC_STRUCT_CONSTANT = 0,  /* depends on no input */
    DC_STRUCT_SEPARABLE,     /* f = c + sum_j g_j(x_j) */
    DC_STRUCT_CHAINED,       /* additive terms couple only x_j and x_{j+1} */
    DC_STRUCT_GROUPED,       /* additive terms within disjoint groups */
    DC_STRUCT_GENERAL        /* anything else */
} dc_structure_kind;

dc_structure_kind dc_structure_kind_of(const dc_program *program);
const char *dc_structure_kind_name(dc_structure_kind kind);
/* 1 when the program is separable and every coordinate has the same term
 * function g (no dependence on i, constant vectors or per-coordinate terms). */
int dc_structure_identical_terms(const dc_program *program);
/* group[j] = id of the connected component of coordinate j in the
 * interaction graph (ids 0.. in order of first coordinate); coordinates the
 * function does not depend on get -1.  Returns the number of groups. */
size_t dc_structure_groups(const dc_program *program, int64_t *group);
/* Interaction edges (u < v), sorted; *count gets the total.  Writes at most
 * capacity pairs (2*capacity int64).  DC_ERR_TOO_LARGE when the graph was too
 * large to list (the kind is still right). */
dc_status dc_structure_edges(const dc_program *program, int64_t *pairs, size_t capacity,
                             size_t *count);
/* Which inputs the function depends on at all: used[j] = 0/1. */
void dc_structure_used(const dc_program *program, unsigned char *used);
/* 1 when the scalar program is exactly a*x_j + b (a != 0) in one coordinate j:
 * built from x_j and constants by + - negation, products and quotients by
 * constants, sums and means (e.g. "2*x[1] - 1", a constraint x[1] >= 0.5).
 * *j, *a, *b get them; 0 otherwise (nothing written). */
int dc_structure_affine1(const dc_program *program, size_t *j, double *a, double *b);

/* For a separable program: G[k*n + j] = g_j(T[k*row_stride + j]) for all
 * k < rows, j < n, where f(x) = c + sum_j g_j(x_j) with a constant c.
 * Cost: about one evaluation per row.  DC_ERR_NOT_SEPARABLE otherwise. */
dc_status dc_separable_terms(const dc_program *program, dc_workspace *workspace,
                             const double *T, size_t rows, size_t row_stride, double *G);

/* ------------------------------------------------------------------ */
/* Optimization: engines behind one driver (engine/driver.c).          */
/* ------------------------------------------------------------------ */

/* Why a run stopped.  Names (dc_stop_name, one table in engine/driver.c):
 * "converged", "target_reached", "max_evaluations", "time_limit", "stopped"
 * (callback or monitor), "error" (the objective or callback asked to abort,
 * e.g. a Python exception); "running" for DC_STOP_NONE.  The order is ABI:
 * new reasons go last, before DC_STOP_COUNT (and into the Python types:
 * decido.status, held equal to the table by tests/engines/test_stop_reasons.py). */
typedef enum dc_stop {
    DC_STOP_NONE = 0,
    DC_STOP_CONVERGED,
    DC_STOP_TARGET,
    DC_STOP_MAX_EVALUATIONS,
    DC_STOP_TIME_LIMIT,
    DC_STOP_CALLBACK,
    DC_STOP_ERROR,
    DC_STOP_MONITOR,         /* "stopped": dc_monitor_request_stop */
    DC_STOP_COUNT            /* not a reason: how many there are */
} dc_stop;

const char *dc_stop_name(dc_stop stop);

/* Objective for callers without a compiled program: f[r] = f(X[r*n..]) for
 * r < rows (points inside the bounds).  NaN means "worse than any number".
 * Return 0 to go on, nonzero to abort the run (DC_STOP_ERROR). */
typedef int (*dc_objective_fn)(void *userdata, const double *X, size_t rows, size_t n, double *f);

typedef struct dc_progress {
    int64_t evaluations, iterations;
    double best;          /* in the caller's sense (maximize: the maximum); NaN with
                             several objectives */
    const double *best_x; /* n values; NULL with several objectives */
    double elapsed;       /* seconds */
    /* several objectives: the archive's hypervolume at the run's reference point
     * (given, else derived from the archive as it is: dc_result) and its size */
    double hypervolume;
    int64_t front_size;
} dc_progress;

/* Called after every iteration; nonzero stops the run (DC_STOP_CALLBACK),
 * negative marks it as an error (DC_STOP_ERROR). */
typedef int (*dc_callback_fn)(void *userdata, const dc_progress *progress);

/* A run monitor: progress and cancellation shared between a run and any
 * number of other threads, without calls into the caller.  The driver
 * publishes a snapshot after every iteration (a few atomic stores) and reads
 * the stop flag before the first iteration and after every one; readers copy
 * the snapshot and may request a stop from any thread at any time.
 *
 * One run at a time: dc_optimize refuses (DC_ERR_ARGUMENT) a monitor that is
 * watching another run.  A monitor may watch runs one after another; each
 * run starts its snapshot from zero.  A stop request is permanent: a stopped
 * monitor stops every later run at once (create a new one instead).  A run
 * stopped before its first iteration evaluates only the centre of the box
 * (one evaluation) so that its result holds a point, as any run cut short
 * at once does.  The caller frees the monitor after the run has returned. */
typedef struct dc_monitor dc_monitor;

typedef struct dc_monitor_snapshot {
    int64_t evaluations, iterations;
    double best;          /* in the caller's sense; NaN until a number was seen */
    double elapsed;       /* seconds, at the last iteration */
    int running;          /* 1 between the start and the end of a run */
    double hypervolume;   /* several objectives (dc_progress); NaN otherwise */
    int64_t front_size;   /* several objectives; 0 otherwise */
} dc_monitor_snapshot;

/* NULL allocator: the C library's malloc.  NULL when out of memory. */
dc_monitor *dc_monitor_new(const dc_allocator *allocator);
void dc_monitor_free(dc_monitor *monitor);
/* Thread-safe; the run sees it at its next iteration boundary. */
void dc_monitor_request_stop(dc_monitor *monitor);
int dc_monitor_stop_requested(const dc_monitor *monitor);
/* Thread-safe; the fields come from one publication (never torn). */
void dc_monitor_read(const dc_monitor *monitor, dc_monitor_snapshot *out);

typedef struct dc_run {
    size_t n;
    const double *lower, *upper; /* n each; lower == upper fixes a coordinate */
    const dc_program *program;   /* the objective as a program (exact gradients,
                                    structure), or NULL to use objective */
    dc_objective_fn objective;
    void *objective_data;
    int maximize;
    int64_t max_evaluations;     /* > 0; never exceeded */
    double time_limit;           /* seconds; <= 0: none */
    int has_target;
    double target;               /* in the caller's sense */
    uint64_t seed;
    const char *const *option_names; /* engine options by name */
    const double *option_values;
    size_t n_options;
    dc_callback_fn callback;
    void *callback_data;
    size_t history_capacity;     /* 0: 512 */
    const dc_allocator *allocator;
    dc_monitor *monitor;         /* NULL: none */
    /* Polled after every iteration, before the callback (NULL: none); nonzero
     * ends the run as DC_STOP_ERROR.  Cheaper than a callback (no progress
     * report is built): a binding uses it to look for pending signals. */
    int (*interrupt)(void *userdata);
    void *interrupt_data;
    /* Start points (engine/driver.c): n_x0 rows of n values inside the bounds.
     * The driver evaluates each first (counted) and starts the engine from the
     * best (engines with DC_SUPPORTS_X0). */
    const double *x0;
    size_t n_x0;
    /* Integer and discrete coordinates (NULL: all real).  integer[j] = 1: x_j
     * takes the integers in [ceil(lower), floor(upper)] (an empty range is an
     * error).  n_values[j] > 0: x_j takes one of values[j][0..n_values[j])
     * (finite, in increasing order; lower and upper are then ignored). */
    const unsigned char *integer;
    const double *const *values;
    const size_t *n_values;
    /* Constraints (engine/constraints.c): programs g_k = lhs - rhs over the
     * same inputs as the objective, with their senses; a point is feasible
     * when every violation (max(0, g), max(0, -g) or |g|) is at most
     * constraint_tolerance (<= 0: 1e-6). */
    const dc_program *const *constraints;
    const dc_constraint_sense *senses;
    size_t n_constraints;
    double constraint_tolerance;
    /* Several objectives (2 to DC_MAX_OBJECTIVES; engines with
     * DC_SUPPORTS_OBJECTIVES): n_objectives programs over the same inputs
     * (program is then NULL), or the callable objective, which then fills
     * f[r * n_objectives + k] for every row r and objective k.  maximized[k]
     * = 1: objective k is maximized (NULL: all minimized; `maximize` and
     * `target` are not used).  The run keeps an archive of the non-dominated
     * points evaluated (engine/pareto.c; constrained domination), thinned to
     * archive_capacity points (0: DC_DEFAULT_ARCHIVE) after each batch.
     * reference_point: n_objectives values in the objectives' own sense, or
     * NULL: derived from the front (the largest value of a minimized
     * objective, the smallest of a maximized one, moved a tenth of the
     * front's range outward; by max(1, |value|) / 10 where the range is 0). */
    size_t n_objectives;                 /* 0 or 1: one objective */
    const dc_program *const *objectives;
    const unsigned char *maximized;
    const double *reference_point;
    size_t archive_capacity;
} dc_run;

#define DC_MAX_OBJECTIVES 8
#define DC_DEFAULT_ARCHIVE 100u

typedef struct dc_history_entry {
    int64_t evaluations;
    double best;
} dc_history_entry;

typedef struct dc_result {
    double *x;                   /* n values; free with dc_result_free */
    double fun;
    int64_t evaluations, iterations, gradients;
    dc_stop stop;
    char message[256];
    double elapsed;
    dc_history_entry *history;
    size_t n_history;
    /* constraints: x is the best feasible point, else the least violating;
     * g holds every g_k at x (n_constraints values) */
    int feasible;                /* 1 without constraints */
    double max_violation;        /* 0 without constraints */
    double *g;
    size_t n_g;
    /* several objectives: the archive (n_pareto rows), values in the objectives'
     * own sense; x and fun are unused (fun NaN) */
    size_t n_objectives, n_pareto;
    double *pareto_x;                 /* n_pareto x n */
    double *pareto_f;                 /* n_pareto x n_objectives */
    double *pareto_violation;         /* n_pareto: the largest violation */
    unsigned char *pareto_feasible;   /* n_pareto */
    double hypervolume;               /* of the archive at reference_point */
    double reference_point[DC_MAX_OBJECTIVES];
    /* the engine that ran: the one asked for, or the one `auto` chose */
    char engine_chosen[32];
    /* owned by the library */
    dc_allocator alloc;
    size_t n, history_cap;
} dc_result;

void dc_run_init(dc_run *run);
dc_status dc_optimize(const char *engine, const dc_run *run, dc_result *result, dc_error *error);
void dc_result_free(dc_result *result);

/* The engine registry. */
typedef struct dc_option_info {
    const char *name;
    double default_value, min_value, max_value;
    int integer;             /* the value must be an integer */
    const char *description; /* "0 = automatic" and such are stated here */
} dc_option_info;

/* What an engine takes besides a box (dc_engine_info.supports). */
enum {
    DC_SUPPORTS_CONSTRAINTS = 1, /* constraints (the driver's constraint layer) */
    DC_SUPPORTS_INTEGERS = 2,    /* integer and discrete coordinates */
    DC_SUPPORTS_X0 = 4,          /* starts from a given point (seed_point) */
    DC_SUPPORTS_OBJECTIVES = 8   /* several objectives (dc_run.n_objectives) */
};

typedef struct dc_engine_info {
    const char *id, *name, *summary, *kind;
    size_t max_dims;         /* 0: no limit of its own */
    const dc_option_info *options;
    size_t n_options;
    unsigned supports;       /* DC_SUPPORTS_* flags */
} dc_engine_info;

size_t dc_engine_count(void);
const dc_engine_info *dc_engine_at(size_t index);
/* The number of evaluations the engine at index is built for (engines.def): a
 * model-based engine's suggestions cost more with every point it has seen, so
 * a run far beyond it is slow (it still runs); 0: any budget (and past the end). */
int64_t dc_engine_budget(size_t index);
/* The options of the run that every engine takes (read by the driver, given
 * by name among the engine's own): *count rows.  stop_on_convergence (1):
 * end the run with DC_STOP_CONVERGED when the engine's convergence test is
 * met or its restarts agree; 0: an engine that converged starts again (local
 * engines from a uniform random point) until the budget, clock or target. */
const dc_option_info *dc_run_options(size_t *count);
const char *dc_engine_default(void);

const char *dc_version(void);

/* ---- studies: ask/tell optimization (engine/study.c) ---------------------- */

/* A study runs one engine by reverse communication: the caller asks for points,
 * evaluates them wherever it likes, and tells the results back, in any order.
 *
 * Trials are numbered 0, 1, 2, ... in the order they are handed out (asked) or
 * told without being asked (a warm start).  ask(k) hands out k points from the
 * engine's batches (a batch is a generation of a population engine, one point of
 * a local one, or the 1 + 2r points of a finite-difference gradient over the r
 * real coordinates); the batch size hint dc_batch.want is k's rest.  A batch goes
 * to the engine once every point of it is told; an ask beyond what is left of the
 * current batch closes it first: the results told so far go to the engine and the
 * missing ones count as failed.  A result told after its batch closed, and a
 * warm-start point, is recorded (best trial, the rank of infeasible points) but
 * not given to the engine, except warm-start points told before the first ask:
 * the engine starts from the best of them (several objectives: from each), when
 * it takes start points (DC_SUPPORTS_X0).
 *
 * Ranking: values are minimized internally (maximized objectives negated); a
 * failed trial (and NaN) is worse than any other; an infeasible one (excess > 0,
 * or DC_TRIAL_INFEASIBLE) ranks after every feasible one, by its excess, as the
 * driver's constraint layer ranks points.  An engine that converges (or has
 * nothing more to ask) starts again from a uniform random point, planning for the
 * trials left of the budget (the whole budget again once it is spent).
 *
 * Determinism: the same spec (seed included) and the same calls in the same order
 * give bit-identical points; the study reads no clock and no global state.  A
 * study belongs to one thread at a time. */
typedef enum dc_trial_status {
    DC_TRIAL_OK = 0,         /* values given (excess: 0 when feasible) */
    DC_TRIAL_FAILED,         /* no values: ranked worst */
    DC_TRIAL_INFEASIBLE      /* no values: infeasible, ranked after every number */
} dc_trial_status;

#define DC_STUDY_MAX_ASK ((size_t)1 << 20) /* points in one ask */

typedef struct dc_study_spec {
    size_t n;
    const double *lower, *upper;  /* n each, finite, lower <= upper */
    /* integer and discrete coordinates as in dc_run (NULL: all real): values[j]
     * finite and increasing */
    const unsigned char *integer;
    const double *const *values;
    const size_t *n_values;
    /* log_scale[j] = 1: a real or integer coordinate searched on a log scale
     * (lower > 0); NULL: none */
    const unsigned char *log_scale;
    size_t n_objectives;          /* 0 or 1: one; 2..DC_MAX_OBJECTIVES */
    const unsigned char *maximized; /* max(1, n_objectives) flags, NULL: all minimized */
    uint64_t seed;
    int64_t budget;               /* trials the engine plans for, > 0 */
    int constrained;              /* tells may carry an excess (the engine must take
                                     constraints: DC_SUPPORTS_CONSTRAINTS) */
    const char *const *option_names; /* engine options by name, as dc_run */
    const double *option_values;
    size_t n_options;
    const dc_allocator *allocator;
} dc_study_spec;

typedef struct dc_study dc_study;

void dc_study_spec_init(dc_study_spec *spec);
/* engine NULL: dc_engine_default().  *out NULL on failure. */
dc_status dc_study_new(const char *engine, const dc_study_spec *spec, dc_study **out,
                       dc_error *error);
void dc_study_free(dc_study *study);
/* k points (k <= DC_STUDY_MAX_ASK; 0 does nothing): ids[i] and X[i*n .. +n] (inside
 * the bounds; integer and discrete coordinates take their values). */
dc_status dc_study_ask(dc_study *study, size_t k, int64_t *ids, double *X, dc_error *error);
/* The result of trial id: values (max(1, n_objectives) of them, NULL unless
 * DC_TRIAL_OK; NaN ranks worst) and the excess (>= 0; NaN: infinite).  A trial
 * is told once; DC_ERR_ARGUMENT for an unknown id or a second tell. */
dc_status dc_study_tell(dc_study *study, int64_t id, dc_trial_status status,
                        const double *values, double excess, dc_error *error);
/* A point never asked (n values inside the bounds; integer and discrete ones
 * taking their values), told as a new trial: *id gets its number. */
dc_status dc_study_tell_point(dc_study *study, const double *x, dc_trial_status status,
                              const double *values, double excess, int64_t *id,
                              dc_error *error);
/* Trials numbered so far (asked or told as points). */
int64_t dc_study_n_trials(const dc_study *study);
/* The best trial told with DC_TRIAL_OK and a number as its value (feasible first,
 * then by value), or -1 when there is none or the study has several objectives. */
int64_t dc_study_best(const dc_study *study);
/* The batches the engine was told so far (its iterations). */
int64_t dc_study_n_batches(const dc_study *study);

/* The hypervolume of rows points F (rows x m, every objective minimized) at
 * the reference point ref: the measure of the union of the boxes [f, ref]
 * over the points with f < ref in every objective (the others, NaN included,
 * add nothing).  Exact: O(n log n) for 2 and 3 objectives, WFG's recursion
 * for 4 to DC_MAX_OBJECTIVES (engine/hypervolume.c).  DC_ERR_ARGUMENT for m
 * outside 1..DC_MAX_OBJECTIVES or a non-finite reference point (error->position:
 * its index).  alloc NULL: the C library's malloc. */
dc_status dc_hypervolume(const double *F, size_t rows, size_t m, const double *ref,
                         const dc_allocator *alloc, double *out, dc_error *error);
/* dc_hypervolume within about time_limit seconds (<= 0: no limit): when the
 * clock passes it first, DC_OK with *out NaN (the computation counts its work
 * and reads the clock every few hundred microseconds of it). */
dc_status dc_hypervolume_within(const double *F, size_t rows, size_t m, const double *ref,
                                double time_limit, const dc_allocator *alloc, double *out,
                                dc_error *error);

/* ---- decisions (csrc/decide/) -------------------------------------------- */

/* Competition ranks (1, 2, 2, 4) of n scores, the rule of docs/decisions.md:
 * order[p] is the option at position p, best first (a stable sort; NaN last);
 * neighbours whose keys differ by at most rel_tol times the largest finite
 * |score| tie, and a tied group takes input order; rank[p] is the rank of
 * order[p].  rank is also the sort's scratch, so both arrays hold n entries
 * and must not overlap score.  No allocation; DC_ERR_ARGUMENT for NULL arrays
 * when n > 0. */
dc_status dc_rank_competition(const double *score, size_t n, int higher_is_better,
                              double rel_tol, int64_t *order, int64_t *rank);

/* Kernels of the multi-criteria methods (csrc/decide/kernels.c), one pass
 * each.  X is m x k column-major (option i, criterion j at X[i + j*m]);
 * benefit holds k flags (nonzero = maximize), w the k weights.  Outputs are
 * caller-owned: m x k arrays column-major, the others m values; they must not
 * overlap the inputs.  No allocation; DC_ERR_ARGUMENT for a NULL pointer, m or
 * k zero, m*k beyond size_t, or an unknown normalization. */

/* Normalizations (docs/decisions.md): each makes larger better in every column.
 * MINMAX (x - min)/span, cost (max - x)/span; VECTOR x/||x||, cost 1 - x/||x||;
 * SUM x/sum(x), cost (1/x)/sum(1/x); MAX x/max, cost 1 - x/max; LINEAR x/max,
 * cost min/x.  A zero span or norm makes the column 1 for every option.  SUM,
 * MAX and LINEAR need values > 0 (the caller checks). */
typedef enum dc_normalization {
    DC_NORM_MINMAX,
    DC_NORM_VECTOR,
    DC_NORM_SUM,
    DC_NORM_MAX,
    DC_NORM_LINEAR
} dc_normalization;

dc_status dc_mcdm_normalize(const double *X, size_t m, size_t k, const unsigned char *benefit,
                            dc_normalization norm, double *R);

/* TOPSIS: R normalized, V = R w, d_best/d_worst Euclidean distances to the
 * column max/min of V, score d_worst / (d_best + d_worst), 1 where that
 * denominator is 0. */
dc_status dc_mcdm_topsis(const double *X, size_t m, size_t k, const unsigned char *benefit,
                         const double *w, dc_normalization norm, double *R, double *V,
                         double *score, double *d_best, double *d_worst);

/* Weighted sum: R normalized, C = R w, score the row sums of C. */
dc_status dc_mcdm_wsm(const double *X, size_t m, size_t k, const unsigned char *benefit,
                      const double *w, dc_normalization norm, double *R, double *C,
                      double *score);

/* MOORA ratio system: R = x/||x|| (a zero norm divides by 1), C = R w with w
 * negated on cost criteria, score the row sums of C. */
dc_status dc_mcdm_moora(const double *X, size_t m, size_t k, const unsigned char *benefit,
                        const double *w, double *R, double *C, double *score);

/* VIKOR: T = w |best - x| / span (0 on zero-span criteria; best is the column
 * max for benefit, min for cost), S = row sums, Rmax = row maxima (NaN
 * propagates), Q = v S~ + (1 - v) R~ with s~ = (s - min)/(max - min), 0 where
 * max - min is at most rel_tol times max(|min|, |max|) (the ranking's tie
 * tolerance: S or R that would tie do not spread).  Lower Q is better. */
dc_status dc_mcdm_vikor(const double *X, size_t m, size_t k, const unsigned char *benefit,
                        const double *w, double v, double rel_tol, double *T, double *S,
                        double *Rmax, double *Q);

/* SPOTIS: D = |x - ideal| / (upper - lower) with ideal = upper for benefit,
 * lower for cost (0 where upper == lower), C = D w, score the row sums of C
 * (lower is better).  lower and upper hold k bounds each. */
dc_status dc_mcdm_spotis(const double *X, size_t m, size_t k, const unsigned char *benefit,
                         const double *w, const double *lower, const double *upper, double *D,
                         double *C, double *score);

#ifdef __cplusplus
}
#endif
#endif /* DECIDO_H */
