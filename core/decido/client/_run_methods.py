"""The run methods of the clients: ``submit``, ``optimize``, ``minimize`` and ``maximize``
of :class:`decido.Client` (:class:`RunMethods`) and :class:`decido.AsyncClient`
(:class:`AsyncRunMethods`), written once each with their real keyword arguments (``help()``
and an IDE show them) and typed overloads: one expression gives a
:class:`decido.OptimizeResult` (``submit``: a ``Run[OptimizeResult]``), a list of objectives
their front, a :class:`decido.ParetoResult`. A client provides ``_submit``: the run handle
of its own kind for a request (:func:`decido.client._ops.run_body`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, overload

from numpy.typing import ArrayLike

from decido.client._ops import Objective, Objectives, Result, RunArgs
from decido.optimize import OptimizeResult
from decido.pareto import ParetoResult

if TYPE_CHECKING:
    from decido.client.aio import AsyncRun
    from decido.client.sync import Run

__all__ = ["AsyncRunMethods", "RunMethods"]


class RunMethods:
    """The run methods of :class:`decido.Client` (module docs)."""

    def _submit(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                args: RunArgs, idempotency_key: str | None) -> Run[Any]:
        """The handle of a new run (the client's)."""
        raise NotImplementedError

    @overload
    def submit(
            self, objective: Objective, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            idempotency_key: str | None = None) -> Run[OptimizeResult]: ...
    @overload
    def submit(
            self, objective: Objectives, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            idempotency_key: str | None = None) -> Run[ParetoResult]: ...
    def submit(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            goal: str = "minimize", engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            idempotency_key: str | None = None) -> Run[Any]:
        """Start a run and return its handle at once. The arguments of
        :func:`decido.optimize` (the objective an expression, not a callable); a list of
        objectives (expressions, or dicts ``{"name", "expression", "goal"}``) makes a run
        of several, with :func:`decido.minimize`'s ``reference_point`` and
        ``archive_size``, whose result is their front (a :class:`decido.ParetoResult`).
        The call carries an ``Idempotency-Key`` (a new one unless given): a resent
        submission never makes a second run. The server's faults raise
        :class:`InvalidRequest` (``errors``: every fault with its JSON pointer)."""
        return self._submit(objective, bounds, RunArgs(
            goal=goal, engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), idempotency_key)

    @overload
    def optimize(
            self, objective: Objective, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            timeout: float | None = None) -> OptimizeResult: ...
    @overload
    def optimize(
            self, objective: Objectives, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> ParetoResult: ...
    def optimize(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            goal: str = "minimize", engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> Result:
        """Run on the service and wait for the result (:class:`Timeout` after
        ``timeout`` seconds; the run goes on): :func:`decido.optimize` remotely, a
        :class:`decido.OptimizeResult`, or for a list of objectives their front, a
        :class:`decido.ParetoResult`. The arguments are :meth:`submit`'s."""
        return self._result(objective, bounds, RunArgs(
            goal=goal, engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), timeout)

    @overload
    def minimize(
            self, objective: Objective, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            timeout: float | None = None) -> OptimizeResult: ...
    @overload
    def minimize(
            self, objective: Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> ParetoResult: ...
    def minimize(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> Result:
        """:meth:`optimize` with ``goal="minimize"``: a list of objectives gives
        their front (a :class:`decido.ParetoResult`), each objective minimized unless its
        dict's ``goal`` says otherwise."""
        return self._result(objective, bounds, RunArgs(
            goal="minimize", engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), timeout)

    @overload
    def maximize(
            self, objective: Objective, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            timeout: float | None = None) -> OptimizeResult: ...
    @overload
    def maximize(
            self, objective: Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> ParetoResult: ...
    def maximize(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> Result:
        """:meth:`optimize` with ``goal="maximize"``: a list of objectives gives
        their front (a :class:`decido.ParetoResult`), each objective maximized unless its
        dict's ``goal`` says otherwise."""
        return self._result(objective, bounds, RunArgs(
            goal="maximize", engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), timeout)

    def _result(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                args: RunArgs, timeout: float | None) -> Result:
        run = self._submit(objective, bounds, args, None)
        result: Result | None = run.wait(timeout)
        assert result is not None  # only a run cancelled before it starts has none
        return result


class AsyncRunMethods:
    """The run methods of :class:`decido.AsyncClient` (module docs)."""

    async def _submit(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                      args: RunArgs, idempotency_key: str | None) -> AsyncRun[Any]:
        """The handle of a new run (the client's)."""
        raise NotImplementedError

    @overload
    async def submit(
            self, objective: Objective, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            idempotency_key: str | None = None) -> AsyncRun[OptimizeResult]: ...
    @overload
    async def submit(
            self, objective: Objectives, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            idempotency_key: str | None = None) -> AsyncRun[ParetoResult]: ...
    async def submit(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            goal: str = "minimize", engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            idempotency_key: str | None = None) -> AsyncRun[Any]:
        """As :meth:`decido.Client.submit`."""
        return await self._submit(objective, bounds, RunArgs(
            goal=goal, engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), idempotency_key)

    @overload
    async def optimize(
            self, objective: Objective, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            timeout: float | None = None) -> OptimizeResult: ...
    @overload
    async def optimize(
            self, objective: Objectives, bounds: ArrayLike | None = None, *, goal: str = "minimize",
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> ParetoResult: ...
    async def optimize(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            goal: str = "minimize", engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> Result:
        """As :meth:`decido.Client.optimize`."""
        return await self._result(objective, bounds, RunArgs(
            goal=goal, engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), timeout)

    @overload
    async def minimize(
            self, objective: Objective, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            timeout: float | None = None) -> OptimizeResult: ...
    @overload
    async def minimize(
            self, objective: Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> ParetoResult: ...
    async def minimize(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> Result:
        """As :meth:`decido.Client.minimize`."""
        return await self._result(objective, bounds, RunArgs(
            goal="minimize", engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), timeout)

    @overload
    async def maximize(
            self, objective: Objective, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            timeout: float | None = None) -> OptimizeResult: ...
    @overload
    async def maximize(
            self, objective: Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> ParetoResult: ...
    async def maximize(
            self, objective: Objective | Objectives, bounds: ArrayLike | None = None, *,
            engine: str | None = None, max_evaluations: int | None = None,
            time_limit: float | None = None, target: float | None = None, seed: int | None = None,
            options: Mapping[str, float] | None = None, stop_on_convergence: bool | None = None,
            constraints: list[str] | None = None, constraint_tolerance: float | None = None,
            integers: list[int] | None = None, variables: list[dict[str, Any]] | None = None,
            x0: ArrayLike | None = None, metadata: Mapping[str, str] | None = None,
            reference_point: ArrayLike | None = None, archive_size: int | None = None,
            timeout: float | None = None) -> Result:
        """As :meth:`decido.Client.maximize`."""
        return await self._result(objective, bounds, RunArgs(
            goal="maximize", engine=engine, max_evaluations=max_evaluations, time_limit=time_limit,
            target=target, seed=seed, options=options, stop_on_convergence=stop_on_convergence,
            constraints=constraints, constraint_tolerance=constraint_tolerance,
            integers=integers, variables=variables, x0=x0, reference_point=reference_point,
            archive_size=archive_size, metadata=metadata), timeout)

    async def _result(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                      args: RunArgs, timeout: float | None) -> Result:
        run = await self._submit(objective, bounds, args, None)
        result: Result | None = await run.wait(timeout)
        assert result is not None  # only a run cancelled before it starts has none
        return result
