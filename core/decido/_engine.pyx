# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the C driver (dc_optimize) and the engine registry.

A program objective runs entirely in C with the GIL released.  A Python
callable is called back with the GIL held; an exception it raises stops the
run, everything is freed, and the exception is re-raised unchanged.
"""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc

cimport decido._capi as c
from decido._expr cimport Program

import numpy as np

from decido.errors import EngineError


cdef class _Context:
    cdef object objective
    cdef bint vectorized
    cdef object callback
    cdef object error
    cdef size_t n


cdef int _objective(void *ud, const double *X, size_t rows, size_t n,
                    double *f) noexcept nogil:
    with gil:
        return _objective_gil(<_Context>ud, X, rows, n, f)


cdef int _objective_gil(_Context ctx, const double *X, size_t rows, size_t n, double *f):
    cdef size_t r
    cdef const double[:, ::1] view
    cdef double[::1] values
    try:
        view = <const double[:rows, :n]> X
        points = np.array(view, dtype=np.float64, copy=True)
        if ctx.vectorized:
            out = np.asarray(ctx.objective(points), dtype=np.float64)
            if out.shape != (rows,):
                out = out.reshape(-1)
                if out.shape[0] != rows:
                    raise ValueError(
                        f"a vectorized objective must return {rows} values, got shape "
                        f"{np.shape(out)}")
            values = np.ascontiguousarray(out)
            for r in range(rows):
                f[r] = values[r]
        else:
            for r in range(rows):
                value = ctx.objective(points[r])
                f[r] = float(value)
    except BaseException as exc:
        ctx.error = exc
        return 1
    return 0


cdef int _callback(void *ud, const c.dc_progress *pr) noexcept nogil:
    with gil:
        return _callback_gil(<_Context>ud, pr)


cdef int _callback_gil(_Context ctx, const c.dc_progress *pr):
    cdef const double[::1] view
    try:
        view = <const double[:ctx.n]> pr.best_x
        progress = {
            "evaluations": pr.evaluations,
            "iterations": pr.iterations,
            "best": pr.best,
            "x": np.array(view, copy=True),
            "elapsed": pr.elapsed,
        }
        return 1 if ctx.callback(progress) else 0
    except BaseException as exc:
        ctx.error = exc
        return -1


def engines():
    """The registry: a list of dicts (id, name, summary, kind, max_dims, options)."""
    cdef size_t k, o
    cdef const c.dc_engine_info *info
    out = []
    for k in range(c.dc_engine_count()):
        info = c.dc_engine_at(k)
        options = []
        for o in range(info.n_options):
            opt = info.options[o]
            options.append({
                "name": opt.name.decode(),
                "default": int(opt.default_value) if opt.integer else opt.default_value,
                "min": int(opt.min_value) if opt.integer else opt.min_value,
                "max": int(opt.max_value) if opt.integer else opt.max_value,
                "integer": bool(opt.integer),
                "description": opt.description.decode(),
            })
        out.append({
            "id": info.id.decode(),
            "name": info.name.decode(),
            "summary": info.summary.decode(),
            "kind": info.kind.decode(),
            "max_dims": info.max_dims or None,
            "options": options,
        })
    return out


def default_engine():
    return c.dc_engine_default().decode()


def run(str engine, object lower, object upper, object objective, bint vectorized,
        bint maximize, int64_t max_evaluations, double time_limit, object target,
        uint64_t seed, dict options, object callback, size_t history_capacity):
    """Run the driver; returns a dict of the result fields."""
    cdef const double[::1] lo = lower
    cdef const double[::1] hi = upper
    cdef c.dc_run spec
    cdef c.dc_result res
    cdef c.dc_error err
    cdef c.dc_status st
    cdef _Context ctx = _Context()
    cdef Program program = None
    cdef const char **names = NULL
    cdef double *values = NULL
    cdef Py_ssize_t k
    cdef size_t n = lo.shape[0]
    cdef const double[::1] xview
    engine_b = engine.encode()
    cdef const char *engine_c = engine_b
    option_keys = [str(key).encode() for key in options]
    c.dc_run_init(&spec)
    spec.n = n
    spec.lower = &lo[0]
    spec.upper = &hi[0]
    if isinstance(objective, Program):
        program = <Program>objective
        spec.program = program.prog
    else:
        ctx.objective = objective
        ctx.vectorized = vectorized
        spec.objective = _objective
        spec.objective_data = <void *>ctx
    ctx.n = n
    spec.maximize = maximize
    spec.max_evaluations = max_evaluations
    spec.time_limit = time_limit
    if target is not None:
        spec.has_target = 1
        spec.target = target
    spec.seed = seed
    spec.history_capacity = history_capacity
    if callback is not None:
        ctx.callback = callback
        spec.callback = _callback
        spec.callback_data = <void *>ctx
    if option_keys:
        names = <const char **>malloc(len(option_keys) * sizeof(char *))
        values = <double *>malloc(len(option_keys) * sizeof(double))
        if names is NULL or values is NULL:
            free(names)
            free(values)
            raise MemoryError()
        for k, key in enumerate(option_keys):
            names[k] = <const char *>key
            values[k] = float(options[key.decode()])
        spec.option_names = names
        spec.option_values = values
        spec.n_options = len(option_keys)
    try:
        with nogil:
            st = c.dc_optimize(engine_c, &spec, &res, &err)
    finally:
        free(names)
        free(values)
    if st != c.DC_OK:
        if ctx.error is not None:
            raise ctx.error
        if st == c.DC_ERR_NOMEM:
            raise MemoryError("decido: out of memory during optimization")
        code = "invalid_argument" if st == c.DC_ERR_ARGUMENT else "engine_failure"
        raise EngineError(code, err.message.decode("utf-8", "replace"))
    try:
        if ctx.error is not None:
            raise ctx.error
        xview = <const double[:n]> res.x
        history = [(res.history[k].evaluations, res.history[k].best)
                   for k in range(res.n_history)]
        return {
            "x": np.array(xview, copy=True),
            "fun": res.fun,
            "evaluations": res.evaluations,
            "iterations": res.iterations,
            "gradients": res.gradients,
            "status": c.dc_stop_name(res.stop).decode(),
            "message": res.message.decode("utf-8", "replace"),
            "elapsed": res.elapsed,
            "history": history,
        }
    finally:
        c.dc_result_free(&res)
