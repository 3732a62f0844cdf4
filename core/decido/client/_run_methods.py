"""The run methods of the clients: ``submit``, ``optimize``, ``minimize`` and ``maximize``
of :class:`decido.Client` (:class:`RunMethods`) and :class:`decido.AsyncClient`
(:class:`AsyncRunMethods`), with typed overloads: one expression gives a
:class:`decido.OptimizeResult` (``submit``: a ``Run[OptimizeResult]``), a list of objectives
their front, a :class:`decido.ParetoResult`. Their keyword arguments are written once, as
:class:`~decido.client._ops.RunKeywords` and :class:`~decido.client._ops.FrontKeywords`
(``**kwargs``: a type checker and an IDE know them); :func:`_keywords_shown` gives each
method the signature ``help()`` and :func:`inspect.signature` show, every keyword in it. A
client provides ``_submit``: the run handle of its own kind for a request
(:func:`decido.client._ops.run_body`).
"""

from __future__ import annotations

import abc
import asyncio
import difflib
import inspect
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from numpy.typing import ArrayLike

from decido.client._ops import FrontKeywords, Objective, Objectives, Result, RunArgs, RunKeywords
from decido.client.errors import Conflict
from decido.optimize import OptimizeResult
from decido.pareto import ParetoResult

if TYPE_CHECKING:  # typing.Unpack is 3.11+
    from typing_extensions import Unpack

    from decido.client.aio import AsyncRun
    from decido.client.sync import Run

__all__ = ["CANCEL_WAIT", "AsyncRunMethods", "RunMethods"]

#: seconds a run method waits, after Ctrl-C cancelled its run, for the run's final state
CANCEL_WAIT = 60.0

F = TypeVar("F", bound=Callable[..., Any])

#: the run methods' keywords but ``goal``, in the order ``help()`` shows them
_KEYWORDS = tuple(name for name in RunArgs.__annotations__ if name != "goal")


def _text(annotation: Any) -> Any:
    """A TypedDict key's annotation as the text written (not a ``ForwardRef``)."""
    return getattr(annotation, "__forward_arg__", annotation)


def _keywords_shown(method: F) -> F:
    """Give a run method the signature ``help()`` and :func:`inspect.signature` show: its
    own parameters with ``**kwargs`` spelled out, each keyword of :class:`RunArgs` but
    ``goal`` (default None) after ``goal`` (when the method takes it)."""
    signature = inspect.signature(method)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    at = next((k + 1 for k, p in enumerate(own) if p.name == "goal"),
              next(k for k, p in enumerate(own) if p.kind is p.KEYWORD_ONLY))
    keywords = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                  annotation=_text(RunArgs.__annotations__[name]))
                for name in _KEYWORDS]
    vars(method)["__signature__"] = signature.replace(
        parameters=own[:at] + keywords + own[at:])
    return method


def _run_args(method: str, given: Mapping[str, Any], goal: str) -> RunArgs:
    """The arguments of a run from a run method's ``**kwargs``; a keyword that is not
    one raises :class:`TypeError` naming it (and the one meant, when near)."""
    for name in given:
        if name not in _KEYWORDS:
            near = difflib.get_close_matches(name, _KEYWORDS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r}{hint}")
    return cast(RunArgs, {**given, "goal": goal})


def _interrupted(exc: BaseException, run_id: str | None, result: Result | None) -> None:
    """Carry what Ctrl-C left on ``exc``: ``exc.result`` (the cancelled run's best so far,
    None when it had none) and ``exc.run_id``, and say so in a note of the traceback."""
    vars(exc).update(result=result, run_id=run_id)
    told = (f"decido: run {run_id} was cancelled on the server; exc.result holds its best "
            "so far" if result is not None else
            f"decido: run {run_id} was cancelled on the server before it had a result"
            if run_id is not None else "decido: the run may go on: client.runs() lists it")
    add_note = getattr(exc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(told)


class RunMethods(abc.ABC):
    """The run methods of :class:`decido.Client` (module docs)."""

    @abc.abstractmethod
    def _submit(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                args: RunArgs, idempotency_key: str | None) -> Run[Any]:
        """The handle of a new run (the client's)."""

    @overload
    def submit(self, objective: Objective, bounds: ArrayLike | None = None, *,
               goal: str = "minimize", idempotency_key: str | None = None,
               **kwargs: Unpack[RunKeywords]) -> Run[OptimizeResult]: ...
    @overload
    def submit(self, objective: Objectives, bounds: ArrayLike | None = None, *,
               goal: str = "minimize", idempotency_key: str | None = None,
               **kwargs: Unpack[FrontKeywords]) -> Run[ParetoResult]: ...
    @_keywords_shown
    def submit(self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
               goal: str = "minimize", idempotency_key: str | None = None,
               **kwargs: Any) -> Run[Any]:
        """Start a run and return its handle at once. The arguments of
        :func:`decido.optimize` (the objective an expression, not a callable); a list of
        objectives (expressions, or dicts ``{"name", "expression", "goal"}``) makes a run
        of several, with the keywords only such a run of :func:`decido.minimize` takes,
        whose result is their front (a :class:`decido.ParetoResult`).
        ``metadata`` labels the run. The call carries an ``Idempotency-Key`` (a new one
        unless given): a resent submission never makes a second run. The server's faults
        raise :class:`InvalidRequest` (``errors``: every fault with its JSON pointer)."""
        return self._submit(objective, bounds, _run_args("submit", kwargs, goal),
                            idempotency_key)

    @overload
    def optimize(self, objective: Objective, bounds: ArrayLike | None = None, *,
                 goal: str = "minimize", timeout: float | None = None,
                 **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
    @overload
    def optimize(self, objective: Objectives, bounds: ArrayLike | None = None, *,
                 goal: str = "minimize", timeout: float | None = None,
                 **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
    @_keywords_shown
    def optimize(self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
                 goal: str = "minimize", timeout: float | None = None,
                 **kwargs: Any) -> Result:
        """Run on the service and wait for the result (:class:`Timeout` after
        ``timeout`` seconds; the run goes on): :func:`decido.optimize` remotely, a
        :class:`decido.OptimizeResult`, or for a list of objectives their front, a
        :class:`decido.ParetoResult`. The arguments are :meth:`submit`'s."""
        return self._result(objective, bounds, _run_args("optimize", kwargs, goal), timeout)

    @overload
    def minimize(self, objective: Objective, bounds: ArrayLike | None = None, *,
                 timeout: float | None = None,
                 **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
    @overload
    def minimize(self, objective: Objectives, bounds: ArrayLike | None = None, *,
                 timeout: float | None = None,
                 **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
    @_keywords_shown
    def minimize(self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
                 timeout: float | None = None, **kwargs: Any) -> Result:
        """:meth:`optimize` with ``goal="minimize"``: a list of objectives gives
        their front (a :class:`decido.ParetoResult`), each objective minimized unless its
        dict's ``goal`` says otherwise."""
        return self._result(objective, bounds, _run_args("minimize", kwargs, "minimize"),
                            timeout)

    @overload
    def maximize(self, objective: Objective, bounds: ArrayLike | None = None, *,
                 timeout: float | None = None,
                 **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
    @overload
    def maximize(self, objective: Objectives, bounds: ArrayLike | None = None, *,
                 timeout: float | None = None,
                 **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
    @_keywords_shown
    def maximize(self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
                 timeout: float | None = None, **kwargs: Any) -> Result:
        """:meth:`optimize` with ``goal="maximize"``: a list of objectives gives
        their front (a :class:`decido.ParetoResult`), each objective maximized unless its
        dict's ``goal`` says otherwise."""
        return self._result(objective, bounds, _run_args("maximize", kwargs, "maximize"),
                            timeout)

    def _result(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                args: RunArgs, timeout: float | None) -> Result:
        """Submit and wait. Ctrl-C at any moment cancels the run on the server (a
        submission cut off is sent again with its ``Idempotency-Key``, which finds the run
        it made) and re-raises :class:`KeyboardInterrupt` carrying ``result``, the run's
        best so far, and ``run_id``."""
        key = uuid.uuid4().hex
        made: list[Run[Any]] = []
        try:
            made.append(self._submit(objective, bounds, args, key))
            result: Result | None = made[0].wait(timeout)
        except KeyboardInterrupt as exc:
            run = made[0] if made else self._submit(objective, bounds, args, key)
            _interrupted(exc, run.id, self._cancelled(run))
            raise
        assert result is not None  # only a run cancelled before it starts has none
        return result

    @staticmethod
    def _cancelled(run: Run[Any]) -> Result | None:
        """Cancel ``run`` (one already ended stays as it is) and wait for its result."""
        try:
            run.cancel()
        except Conflict:
            pass
        return cast("Result | None", run.wait(CANCEL_WAIT))


class AsyncRunMethods(abc.ABC):
    """The run methods of :class:`decido.AsyncClient` (module docs)."""

    @abc.abstractmethod
    async def _submit(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                      args: RunArgs, idempotency_key: str | None) -> AsyncRun[Any]:
        """The handle of a new run (the client's)."""

    @overload
    async def submit(self, objective: Objective, bounds: ArrayLike | None = None, *,
                     goal: str = "minimize", idempotency_key: str | None = None,
                     **kwargs: Unpack[RunKeywords]) -> AsyncRun[OptimizeResult]: ...
    @overload
    async def submit(self, objective: Objectives, bounds: ArrayLike | None = None, *,
                     goal: str = "minimize", idempotency_key: str | None = None,
                     **kwargs: Unpack[FrontKeywords]) -> AsyncRun[ParetoResult]: ...
    @_keywords_shown
    async def submit(self, objective: Objective | Objectives, bounds: ArrayLike | None = None,
                     *, goal: str = "minimize", idempotency_key: str | None = None,
                     **kwargs: Any) -> AsyncRun[Any]:
        """As :meth:`decido.Client.submit`."""
        return await self._submit(objective, bounds, _run_args("submit", kwargs, goal),
                                  idempotency_key)

    @overload
    async def optimize(self, objective: Objective, bounds: ArrayLike | None = None, *,
                       goal: str = "minimize", timeout: float | None = None,
                       **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
    @overload
    async def optimize(self, objective: Objectives, bounds: ArrayLike | None = None, *,
                       goal: str = "minimize", timeout: float | None = None,
                       **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
    @_keywords_shown
    async def optimize(self, objective: Objective | Objectives,
                       bounds: ArrayLike | None = None, *, goal: str = "minimize",
                       timeout: float | None = None, **kwargs: Any) -> Result:
        """As :meth:`decido.Client.optimize`."""
        return await self._result(objective, bounds, _run_args("optimize", kwargs, goal),
                                  timeout)

    @overload
    async def minimize(self, objective: Objective, bounds: ArrayLike | None = None, *,
                       timeout: float | None = None,
                       **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
    @overload
    async def minimize(self, objective: Objectives, bounds: ArrayLike | None = None, *,
                       timeout: float | None = None,
                       **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
    @_keywords_shown
    async def minimize(self, objective: Objective | Objectives,
                       bounds: ArrayLike | None = None, *, timeout: float | None = None,
                       **kwargs: Any) -> Result:
        """As :meth:`decido.Client.minimize`."""
        return await self._result(objective, bounds,
                                  _run_args("minimize", kwargs, "minimize"), timeout)

    @overload
    async def maximize(self, objective: Objective, bounds: ArrayLike | None = None, *,
                       timeout: float | None = None,
                       **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
    @overload
    async def maximize(self, objective: Objectives, bounds: ArrayLike | None = None, *,
                       timeout: float | None = None,
                       **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
    @_keywords_shown
    async def maximize(self, objective: Objective | Objectives,
                       bounds: ArrayLike | None = None, *, timeout: float | None = None,
                       **kwargs: Any) -> Result:
        """As :meth:`decido.Client.maximize`."""
        return await self._result(objective, bounds,
                                  _run_args("maximize", kwargs, "maximize"), timeout)

    async def _result(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                      args: RunArgs, timeout: float | None) -> Result:
        """As :meth:`RunMethods._result`; the task's cancellation (what ``asyncio.run``
        does on Ctrl-C) cancels the run too."""
        key = uuid.uuid4().hex
        made: list[AsyncRun[Any]] = []
        try:
            made.append(await self._submit(objective, bounds, args, key))
            result: Result | None = await made[0].wait(timeout)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            run = made[0] if made else await self._submit(objective, bounds, args, key)
            _interrupted(exc, run.id, await self._cancelled(run))
            raise
        assert result is not None  # only a run cancelled before it starts has none
        return result

    @staticmethod
    async def _cancelled(run: AsyncRun[Any]) -> Result | None:
        """Cancel ``run`` (one already ended stays as it is) and wait for its result."""
        try:
            await run.cancel()
        except Conflict:
            pass
        return cast("Result | None", await run.wait(CANCEL_WAIT))
