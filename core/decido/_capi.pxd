# decido.h as Cython sees it (keep in step with csrc/include/decido.h).
from libc.stdint cimport int64_t


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
