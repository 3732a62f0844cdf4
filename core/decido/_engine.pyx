# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the C driver (dc_optimize) and the engine registry.

A program objective runs entirely in C with the GIL released.  A Python
callable is called back with the GIL held; an exception it raises stops the
run, everything is freed, and the exception is re-raised unchanged.  A
RunMonitor (dc_monitor) is shared with the run through atomics only: reading
it or stopping the run never needs the run to take the GIL.  A run on the main
thread takes the GIL at most every 10 ms after an iteration to run the signal
handlers, so Ctrl-C (KeyboardInterrupt) stops it; the exception then carries
the result so far (``exc.result``).
"""
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport isnan
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

cimport cython
cimport decido._capi as c
from decido._expr cimport Program

import threading

import numpy as np

from decido.errors import EngineError, status_error

#: The most objectives a run takes, and the front's size cap when none is given (decido.h).
MAX_OBJECTIVES = c.DC_MAX_OBJECTIVES
DEFAULT_ARCHIVE = c.DC_DEFAULT_ARCHIVE

# A run on the main thread looks for a pending signal (Ctrl-C) this often, in seconds.
cdef double _SIGNAL_INTERVAL = 0.01


cdef struct _Hook:
    # what the interrupt hook (signals) reads without the GIL
    void *ctx                  # the _Context
    double next_signal_check   # CLOCK_MONOTONIC seconds
    # the clock is read every `stride` iterations: the stride doubles while that takes
    # under 1 ms and halves above 4 ms, so a run of microsecond iterations pays ~1 ns each
    int countdown, stride
    double last_read


cdef class _Context:
    cdef object objective
    cdef bint vectorized
    cdef object callback
    cdef object error
    cdef size_t n
    cdef size_t m  # objectives (0: one, the single-objective path)
    cdef _Hook hook


cdef double _monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + 1e-9 * <double>ts.tv_nsec


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
        if ctx.m:
            # several objectives: one call over the rows, (rows, m) values
            out = np.ascontiguousarray(ctx.objective(points), dtype=np.float64)
            if out.size != rows * ctx.m:
                raise ValueError(
                    f"the objectives must give {rows} x {ctx.m} values, got shape "
                    f"{np.shape(out)}")
            values = out.reshape(-1)
            for r in range(rows * ctx.m):
                f[r] = values[r]
        elif ctx.vectorized:
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


cdef int _interrupt(void *ud) noexcept nogil:
    """After every iteration of a run on the main thread: at most every _SIGNAL_INTERVAL
    seconds, take the GIL and run the signal handlers (Ctrl-C: KeyboardInterrupt stops
    the run).  The clock is read every `stride` iterations only (see _Hook)."""
    cdef _Hook *hook = <_Hook *>ud
    cdef double t
    hook.countdown -= 1
    if hook.countdown > 0:
        return 0
    t = _monotonic()
    if t - hook.last_read < 0.001 and hook.stride < 4096:
        hook.stride *= 2
    elif t - hook.last_read > 0.004 and hook.stride > 1:
        hook.stride //= 2
    hook.last_read = t
    hook.countdown = hook.stride
    if t < hook.next_signal_check:
        return 0
    hook.next_signal_check = t + _SIGNAL_INTERVAL
    with gil:
        return _signals_gil(<_Context>hook.ctx)


cdef int _signals_gil(_Context ctx):
    try:
        PyErr_CheckSignals()
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
        if ctx.m:
            progress = {
                "evaluations": pr.evaluations,
                "iterations": pr.iterations,
                "hypervolume": None if isnan(pr.hypervolume) else pr.hypervolume,
                "front_size": pr.front_size,
                "elapsed": pr.elapsed,
            }
            return 1 if ctx.callback(progress) else 0
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


cdef dict _front(const c.dc_result *res, size_t n, size_t m):
    """The archive of a run of several objectives, copied out of the result."""
    cdef size_t k = res.n_pareto, q
    cdef const double[:, ::1] xs
    cdef const double[:, ::1] fs
    pareto_x = np.empty((k, n), dtype=np.float64)
    pareto_f = np.empty((k, m), dtype=np.float64)
    if k:
        xs = <const double[:k, :n]> res.pareto_x
        fs = <const double[:k, :m]> res.pareto_f
        pareto_x[:, :] = xs
        pareto_f[:, :] = fs
    return {
        "pareto_x": pareto_x,
        "pareto_f": pareto_f,
        "pareto_violation": [res.pareto_violation[q] for q in range(k)],
        "pareto_feasible": [res.pareto_feasible[q] != 0 for q in range(k)],
        "hypervolume": res.hypervolume,
        "reference_point": [res.reference_point[q] for q in range(m)],
    }


@cython.final
cdef class RunMonitor:
    """Progress and cancellation of a run, from any thread, without the GIL.

    Pass it as ``decido.optimize(..., monitor=m)``.  After every iteration the
    run publishes its progress with a few atomic stores and checks whether a
    stop was requested (also once before its first iteration); ``progress()``
    and ``stop()`` may be called from any thread at any time, during or
    outside a run.

    A monitor watches one run at a time (a second concurrent run on it raises
    ``EngineError``); runs one after another may share it, each starting its
    progress from zero.  A stop is permanent: a stopped monitor stops every
    later run at once (after one evaluation, the centre of the box).  A new
    RunMonitor is cheap.
    """

    cdef c.dc_monitor *mon

    def __cinit__(self):
        self.mon = c.dc_monitor_new(NULL)
        if self.mon is NULL:
            raise MemoryError("decido: out of memory creating a RunMonitor")

    def __dealloc__(self):
        # a running optimize() holds a reference, so no run can still see it
        c.dc_monitor_free(self.mon)

    def stop(self):
        """Ask the run to stop (thread-safe; idempotent; never waits).

        The run ends at its next iteration boundary with status ``"stopped"``
        and the best point found so far.  Stopping before the run starts makes
        it stop at once.
        """
        c.dc_monitor_request_stop(self.mon)

    @property
    def stopped(self):
        """True once ``stop()`` was called (it stays True)."""
        return c.dc_monitor_stop_requested(self.mon) != 0

    def progress(self):
        """The latest published progress, as a dict.

        ``evaluations`` and ``iterations`` so far, ``best`` (the best value in
        the caller's sense, None until a number was seen), ``elapsed`` (wall
        seconds at the last iteration) and ``running`` (a run is in progress).
        The values come from one publication, after an iteration or at the
        end of the run; after the run they equal its result's.  A run of several
        objectives also publishes ``hypervolume`` (of its front at its reference point,
        None until known) and ``front_size``; other runs give None and 0.
        """
        cdef c.dc_monitor_snapshot s
        c.dc_monitor_read(self.mon, &s)  # a few loads; the run never waits on us
        return {
            "evaluations": s.evaluations,
            "iterations": s.iterations,
            "best": None if isnan(s.best) else s.best,
            "elapsed": s.elapsed,
            "running": s.running != 0,
            "hypervolume": None if isnan(s.hypervolume) else s.hypervolume,
            "front_size": s.front_size,
        }

    def __repr__(self):
        p = self.progress()
        state = "running" if p["running"] else "idle"
        if self.stopped:
            state += ", stopped"
        return f"<RunMonitor {state}: {p['evaluations']} evaluations, best {p['best']}>"


cdef dict _option(const c.dc_option_info *opt):
    return {
        "name": opt.name.decode(),
        "default": int(opt.default_value) if opt.integer else opt.default_value,
        "min": int(opt.min_value) if opt.integer else opt.min_value,
        "max": int(opt.max_value) if opt.integer else opt.max_value,
        "integer": bool(opt.integer),
        "description": opt.description.decode(),
    }


def engines():
    """The registry: a list of dicts (id, name, summary, kind, max_dims, typical_budget,
    options, supports); each engine's options are its own, then the run's options every
    engine takes (``stop_on_convergence``).  ``typical_budget``: the number of evaluations
    the engine is built for (csrc/engine/engines.def; a model-based engine's suggestions
    cost more with every point it has seen), ``None`` for any budget."""
    cdef size_t k, o, n_run
    cdef const c.dc_engine_info *info
    cdef const c.dc_option_info *run_options = c.dc_run_options(&n_run)
    common = [_option(&run_options[o]) for o in range(n_run)]
    out = []
    for k in range(c.dc_engine_count()):
        info = c.dc_engine_at(k)
        options = [_option(&info.options[o]) for o in range(info.n_options)]
        out.append({
            "id": info.id.decode(),
            "name": info.name.decode(),
            "summary": info.summary.decode(),
            "kind": info.kind.decode(),
            "max_dims": info.max_dims or None,
            "typical_budget": c.dc_engine_budget(k) or None,
            "options": options + [dict(opt) for opt in common],
            "supports": {
                "constraints": bool(info.supports & c.DC_SUPPORTS_CONSTRAINTS),
                "integers": bool(info.supports & c.DC_SUPPORTS_INTEGERS),
                "x0": bool(info.supports & c.DC_SUPPORTS_X0),
                "objectives": bool(info.supports & c.DC_SUPPORTS_OBJECTIVES),
            },
        })
    return out


def stop_names():
    """``dc_stop_name`` of every ``dc_stop``, in enum order: C's table of stop reasons."""
    return [c.dc_stop_name(<c.dc_stop>k).decode() for k in range(c.DC_STOP_COUNT)]


def default_engine():
    return c.dc_engine_default().decode()


def hypervolume(object points, object reference, double time_limit=0.0):
    """dc_hypervolume_within of a (k, m) C-contiguous float64 array (minimized) at a
    float64 reference of m values (NaN: time_limit > 0 seconds passed first); EngineError
    for what the C side refuses."""
    cdef const double[:, ::1] F = points
    cdef const double[::1] ref = reference
    cdef c.dc_error err
    cdef double out = 0.0
    cdef c.dc_status st
    cdef size_t rows = F.shape[0], m = F.shape[1]
    cdef const double *data = &F[0, 0] if rows else NULL
    with nogil:
        st = c.dc_hypervolume_within(data, rows, m, &ref[0], time_limit, NULL, &out, &err)
    if st == c.DC_ERR_NOMEM:
        raise MemoryError("decido: out of memory computing a hypervolume")
    if st != c.DC_OK:
        raise EngineError("invalid_argument", err.message.decode("utf-8", "replace"),
                          "reference_point")
    return out


def run(str engine, object lower, object upper, object objective, bint vectorized,
        bint maximize, int64_t max_evaluations, double time_limit, object target,
        uint64_t seed, dict options, object callback, size_t history_capacity,
        object monitor=None, object x0=None, object integer=None, object discrete=None,
        object constraints=None, object senses=None, double constraint_tolerance=0.0,
        size_t n_objectives=0, object objectives=None, object maximized=None,
        object reference_point=None, size_t archive_capacity=0):
    """Run the driver; returns a dict of the result fields.  x0: (k, n) start points;
    integer: n flags; discrete: n arrays (None: not discrete) of increasing values;
    constraints: Programs g = lhs - rhs with senses (0 <=, 1 >=, 2 ==).  Several
    objectives: n_objectives >= 1 with objectives (Programs; objective is then None)
    or objective a callable over the rows giving (rows, n_objectives) values;
    maximized: n_objectives flags; reference_point: n_objectives values or None."""
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
    cdef const double[:, ::1] x0view
    cdef const unsigned char[::1] intview
    cdef const double[::1] vview
    cdef const double **vptr = NULL
    cdef size_t *vcount = NULL
    cdef const c.dc_program **cptr = NULL
    cdef c.dc_constraint_sense *sptr = NULL
    cdef Py_ssize_t m = 0
    cdef const c.dc_program **optr = NULL
    cdef const unsigned char[::1] maxview
    cdef const double[::1] refview
    keep = []  # arrays whose memory the run reads
    engine_b = engine.encode()
    cdef const char *engine_c = engine_b
    option_keys = [str(key).encode() for key in options]
    c.dc_run_init(&spec)
    spec.n = n
    spec.lower = &lo[0]
    spec.upper = &hi[0]
    if n_objectives:
        ctx.m = n_objectives
        spec.n_objectives = n_objectives
        spec.archive_capacity = archive_capacity
        if maximized is not None:
            maxview = maximized
            spec.maximized = &maxview[0]
        if reference_point is not None:
            refview = reference_point
            spec.reference_point = &refview[0]
    if objectives is not None:
        optr = <const c.dc_program **>malloc(n_objectives * sizeof(c.dc_program *))
        if optr is NULL:
            raise MemoryError()
        for k in range(<Py_ssize_t>n_objectives):
            optr[k] = (<Program>objectives[k]).prog
        spec.objectives = optr
    elif isinstance(objective, Program):
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
    if threading.current_thread() is threading.main_thread():
        ctx.hook.ctx = <void *>ctx  # Ctrl-C reaches a run in C
        ctx.hook.last_read = ctx.hook.next_signal_check = _monotonic()
        ctx.hook.countdown = ctx.hook.stride = 1
        spec.interrupt = _interrupt
        spec.interrupt_data = <void *>&ctx.hook
    if monitor is not None:
        if not isinstance(monitor, RunMonitor):
            raise EngineError("invalid_argument", "monitor must be a decido.RunMonitor",
                              "monitor")
        spec.monitor = (<RunMonitor>monitor).mon  # kept alive by the argument
    if x0 is not None and len(x0):
        x0view = x0
        spec.x0 = &x0view[0, 0]
        spec.n_x0 = x0view.shape[0]
    if integer is not None:
        intview = integer
        spec.integer = &intview[0]
    if discrete is not None:
        vptr = <const double **>malloc(n * sizeof(double *))
        vcount = <size_t *>malloc(n * sizeof(size_t))
        if vptr is NULL or vcount is NULL:
            free(vptr)
            free(vcount)
            free(optr)
            raise MemoryError()
        for k in range(<Py_ssize_t>n):
            vptr[k] = NULL
            vcount[k] = 0
            if discrete[k] is not None:
                vview = discrete[k]
                keep.append(discrete[k])
                vptr[k] = &vview[0]
                vcount[k] = vview.shape[0]
        spec.values = vptr
        spec.n_values = vcount
    if constraints:
        m = len(constraints)
        cptr = <const c.dc_program **>malloc(m * sizeof(c.dc_program *))
        sptr = <c.dc_constraint_sense *>malloc(m * sizeof(c.dc_constraint_sense))
        if cptr is NULL or sptr is NULL:
            free(cptr)
            free(sptr)
            free(vptr)
            free(vcount)
            free(optr)
            raise MemoryError()
        for k in range(m):
            cptr[k] = (<Program>constraints[k]).prog
            sptr[k] = <c.dc_constraint_sense>(<int>senses[k])
        spec.constraints = cptr
        spec.senses = sptr
        spec.n_constraints = m
        spec.constraint_tolerance = constraint_tolerance
    if option_keys:
        names = <const char **>malloc(len(option_keys) * sizeof(char *))
        values = <double *>malloc(len(option_keys) * sizeof(double))
        if names is NULL or values is NULL:
            free(names)
            free(values)
            free(vptr)
            free(vcount)
            free(cptr)
            free(sptr)
            free(optr)
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
        free(vptr)
        free(vcount)
        free(cptr)
        free(sptr)
        free(optr)
    if st != c.DC_OK:
        if ctx.error is not None:
            raise ctx.error
        message = err.message.decode("utf-8", "replace")
        field = "monitor" if message.startswith("the monitor ") else None
        raise status_error(c.dc_status_code(st).decode(), message, "engine", field=field)
    try:
        if ctx.error is not None and not isinstance(ctx.error, KeyboardInterrupt):
            raise ctx.error
        xview = <const double[:n]> res.x
        history = [(res.history[k].evaluations, res.history[k].best)
                   for k in range(res.n_history)]
        out = {
            "x": np.array(xview, copy=True),
            "fun": res.fun,
            "evaluations": res.evaluations,
            "iterations": res.iterations,
            "gradients": res.gradients,
            "status": c.dc_stop_name(res.stop).decode(),
            "message": res.message.decode("utf-8", "replace"),
            "elapsed": res.elapsed,
            "history": history,
            "feasible": res.feasible != 0,
            "max_violation": res.max_violation,
            "g": [res.g[k] for k in range(res.n_g)],
            "engine_chosen": res.engine_chosen.decode("ascii", "replace"),
        }
        if n_objectives:
            out.update(_front(&res, n, n_objectives))
        if ctx.error is not None:  # Ctrl-C: the best so far rides on the exception
            ctx.error.result = out
            raise ctx.error
        return out
    finally:
        c.dc_result_free(&res)
