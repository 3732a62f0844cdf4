# decido.h as Cython sees it (keep in step with csrc/include/decido.h).
from libc.stdint cimport int64_t, uint32_t, uint64_t


cdef extern from "decido.h" nogil:
    ctypedef enum dc_status:
        DC_OK
        DC_ERR_NOMEM
        DC_ERR_ARGUMENT
        DC_ERR_TOO_LARGE
        DC_ERR_NOT_SEPARABLE

    const char *dc_status_code(dc_status status)
    const char *dc_status_title(dc_status status)

    ctypedef struct dc_error:
        dc_status status
        size_t position
        size_t length
        char message[320]

    ctypedef struct dc_allocator:
        pass

    ctypedef struct dc_options:
        int64_t n
        const char *const *variables
        size_t n_variables
        size_t max_length
        size_t max_depth
        size_t max_instructions
        const dc_allocator *allocator

    void dc_options_init(dc_options *options)

    ctypedef struct dc_program:
        pass
    ctypedef struct dc_workspace:
        pass

    dc_status dc_compile(const char *text, size_t length, const dc_options *options,
                         dc_program **out, dc_error *error)
    void dc_program_free(dc_program *program)
    size_t dc_program_n_inputs(const dc_program *program)
    size_t dc_program_n_instructions(const dc_program *program)
    size_t dc_program_n_registers(const dc_program *program)
    size_t dc_program_disassemble(const dc_program *program, char *buffer, size_t capacity)
    dc_status dc_program_range(const dc_program *program, const double *lo, const double *hi,
                               const dc_allocator *allocator, double *f_lo, double *f_hi)

    dc_workspace *dc_workspace_new(const dc_program *program, const dc_allocator *allocator)
    void dc_workspace_free(dc_workspace *workspace)

    dc_status dc_eval(const dc_program *program, dc_workspace *workspace, const double *x,
                      double *value)
    dc_status dc_eval_many(const dc_program *program, dc_workspace *workspace, const double *X,
                           size_t rows, size_t row_stride, double *out)
    dc_status dc_gradient(const dc_program *program, dc_workspace *workspace, const double *x,
                          double *value, double *grad)

    ctypedef enum dc_structure_kind:
        DC_STRUCT_CONSTANT

    dc_structure_kind dc_structure_kind_of(const dc_program *program)
    const char *dc_structure_kind_name(dc_structure_kind kind)
    int dc_structure_identical_terms(const dc_program *program)
    size_t dc_structure_groups(const dc_program *program, int64_t *group)
    dc_status dc_structure_edges(const dc_program *program, int64_t *pairs, size_t capacity,
                                 size_t *count)
    void dc_structure_used(const dc_program *program, unsigned char *used)
    dc_status dc_separable_terms(const dc_program *program, dc_workspace *workspace,
                                 const double *T, size_t rows, size_t row_stride, double *G)
    const char *dc_version()

    ctypedef enum dc_constraint_sense:
        DC_CONSTRAINT_LE
        DC_CONSTRAINT_GE
        DC_CONSTRAINT_EQ

    ctypedef struct dc_constraint_info:
        dc_constraint_sense sense
        size_t name_pos
        size_t name_len
        size_t op_pos
        size_t op_len

    dc_status dc_compile_constraint(const char *text, size_t length, const dc_options *options,
                                    dc_program **out, dc_constraint_info *info,
                                    dc_error *error)

    enum:
        DC_SUPPORTS_CONSTRAINTS
        DC_SUPPORTS_INTEGERS
        DC_SUPPORTS_X0
        DC_SUPPORTS_OBJECTIVES
        DC_MAX_OBJECTIVES
        DC_DEFAULT_ARCHIVE

    ctypedef enum dc_stop:
        DC_STOP_NONE
        DC_STOP_ERROR
        DC_STOP_COUNT

    const char *dc_stop_name(dc_stop stop)

    ctypedef int (*dc_objective_fn)(void *userdata, const double *X, size_t rows, size_t n,
                                    double *f) noexcept nogil

    ctypedef struct dc_progress:
        int64_t evaluations
        int64_t iterations
        double best
        const double *best_x
        double elapsed
        double hypervolume
        int64_t front_size

    ctypedef int (*dc_callback_fn)(void *userdata, const dc_progress *progress) noexcept nogil

    ctypedef struct dc_monitor:
        pass

    ctypedef struct dc_monitor_snapshot:
        int64_t evaluations
        int64_t iterations
        double best
        double elapsed
        int running
        double hypervolume
        int64_t front_size

    dc_monitor *dc_monitor_new(const dc_allocator *allocator)
    void dc_monitor_free(dc_monitor *monitor)
    void dc_monitor_request_stop(dc_monitor *monitor)
    int dc_monitor_stop_requested(const dc_monitor *monitor)
    void dc_monitor_read(const dc_monitor *monitor, dc_monitor_snapshot *out)

    ctypedef struct dc_run:
        size_t n
        const double *lower
        const double *upper
        const dc_program *program
        dc_objective_fn objective
        void *objective_data
        int maximize
        int64_t max_evaluations
        double time_limit
        int has_target
        double target
        uint64_t seed
        const char *const *option_names
        const double *option_values
        size_t n_options
        dc_callback_fn callback
        void *callback_data
        size_t history_capacity
        const dc_allocator *allocator
        dc_monitor *monitor
        int (*interrupt)(void *userdata) noexcept nogil
        void *interrupt_data
        const double *x0
        size_t n_x0
        const unsigned char *integer
        const double *const *values
        const size_t *n_values
        const dc_program *const *constraints
        const dc_constraint_sense *senses
        size_t n_constraints
        double constraint_tolerance
        size_t n_objectives
        const dc_program *const *objectives
        const unsigned char *maximized
        const double *reference_point
        size_t archive_capacity

    ctypedef struct dc_history_entry:
        int64_t evaluations
        double best

    ctypedef struct dc_result:
        double *x
        double fun
        int64_t evaluations
        int64_t iterations
        int64_t gradients
        dc_stop stop
        char message[256]
        double elapsed
        dc_history_entry *history
        size_t n_history
        int feasible
        double max_violation
        double *g
        size_t n_g
        size_t n_objectives
        size_t n_pareto
        double *pareto_x
        double *pareto_f
        double *pareto_violation
        unsigned char *pareto_feasible
        double hypervolume
        double reference_point[8]
        char engine_chosen[32]

    void dc_run_init(dc_run *run)
    dc_status dc_optimize(const char *engine, const dc_run *run, dc_result *result,
                          dc_error *error)
    void dc_result_free(dc_result *result)

    ctypedef struct dc_option_info:
        const char *name
        double default_value
        double min_value
        double max_value
        int integer
        const char *description

    ctypedef struct dc_engine_info:
        const char *id
        const char *name
        const char *summary
        const char *kind
        size_t max_dims
        const dc_option_info *options
        size_t n_options
        unsigned supports

    size_t dc_engine_count()
    const dc_engine_info *dc_engine_at(size_t index)
    int64_t dc_engine_budget(size_t index)
    const dc_option_info *dc_run_options(size_t *count)
    const char *dc_engine_default()

    dc_status dc_hypervolume(const double *F, size_t rows, size_t m, const double *ref,
                             const dc_allocator *alloc, double *out, dc_error *error)
    dc_status dc_hypervolume_within(const double *F, size_t rows, size_t m, const double *ref,
                                    double time_limit, const dc_allocator *alloc, double *out,
                                    dc_error *error)

    ctypedef enum dc_trial_status:
        DC_TRIAL_OK
        DC_TRIAL_FAILED
        DC_TRIAL_INFEASIBLE

    size_t DC_STUDY_MAX_ASK

    ctypedef struct dc_study_spec:
        size_t n
        const double *lower
        const double *upper
        const unsigned char *integer
        const double *const *values
        const size_t *n_values
        const unsigned char *log_scale
        size_t n_objectives
        const unsigned char *maximized
        uint64_t seed
        int64_t budget
        int constrained
        const char *const *option_names
        const double *option_values
        size_t n_options
        const dc_allocator *allocator

    ctypedef struct dc_study:
        pass

    void dc_study_spec_init(dc_study_spec *spec)
    dc_status dc_study_new(const char *engine, const dc_study_spec *spec, dc_study **out,
                           dc_error *error)
    void dc_study_free(dc_study *study)
    dc_status dc_study_ask(dc_study *study, size_t k, int64_t *ids, double *X,
                           dc_error *error)
    dc_status dc_study_tell(dc_study *study, int64_t id, dc_trial_status status,
                            const double *values, double excess, dc_error *error)
    dc_status dc_study_tell_point(dc_study *study, const double *x, dc_trial_status status,
                                  const double *values, double excess, int64_t *id,
                                  dc_error *error)
    int64_t dc_study_n_trials(const dc_study *study)
    int64_t dc_study_best(const dc_study *study)
    int64_t dc_study_n_batches(const dc_study *study)

    dc_status dc_rank_competition(const double *score, size_t n, int higher_is_better,
                                  double rel_tol, int64_t *order, int64_t *rank)

    ctypedef enum dc_normalization:
        DC_NORM_MINMAX
        DC_NORM_VECTOR
        DC_NORM_SUM
        DC_NORM_MAX
        DC_NORM_LINEAR

    dc_status dc_mcdm_normalize(const double *X, size_t m, size_t k,
                                const unsigned char *benefit, dc_normalization norm, double *R)
    dc_status dc_mcdm_topsis(const double *X, size_t m, size_t k, const unsigned char *benefit,
                             const double *w, dc_normalization norm, double *R, double *V,
                             double *score, double *d_best, double *d_worst)
    dc_status dc_mcdm_wsm(const double *X, size_t m, size_t k, const unsigned char *benefit,
                          const double *w, dc_normalization norm, double *R, double *C,
                          double *score)
    dc_status dc_mcdm_moora(const double *X, size_t m, size_t k, const unsigned char *benefit,
                            const double *w, double *R, double *C, double *score)
    dc_status dc_mcdm_vikor(const double *X, size_t m, size_t k, const unsigned char *benefit,
                            const double *w, double v, double rel_tol, double *T, double *S,
                            double *Rmax, double *Q)
    dc_status dc_mcdm_spotis(const double *X, size_t m, size_t k, const unsigned char *benefit,
                             const double *w, const double *lower, const double *upper,
                             double *D, double *C, double *score)

