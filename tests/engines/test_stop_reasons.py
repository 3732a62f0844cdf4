"""Stop reasons and run states: one table, C's dc_stop_name, up to the Python types."""

from __future__ import annotations

from typing import get_args

import msgspec
import pytest

import decido
from decido import _engine, status


def test_the_engine_stops_are_the_c_table() -> None:
    names = _engine.stop_names()
    assert names[0] == "running"  # DC_STOP_NONE
    # what reaches a result: C's names but "running" (no stop yet) and "error" (the
    # objective's exception propagates instead)
    assert set(names) - {"running", "error"} == set(status.ENGINE_STOPS)
    assert set(get_args(status.Status)) == {*status.ENGINE_STOPS, "infeasible", "interrupted"}


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"max_evaluations": 50, "stop_on_convergence": False}, "max_evaluations"),
    ({"target": 10.0}, "target_reached"),
    ({"engine": "nelder_mead", "max_evaluations": 100_000}, "converged"),
    ({"callback": lambda progress: True}, "stopped"),
    ({"constraints": ["x[0] >= 9"]}, "infeasible"),
])
def test_a_result_status_is_one_of_the_table(kwargs: dict[str, object], expected: str) -> None:
    r = decido.minimize("sum(x**2)", [[-1, 1]] * 2, seed=1, **kwargs)
    assert r.status == expected and r.status in status.STATUSES
    assert r.success == (r.status in status.SUCCESSFUL)


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown stop reason"):
        status.engine_stop("error")
    with pytest.raises(ValueError, match="unknown status"):
        status.status("done")
    assert status.status("interrupted") == "interrupted"


def test_run_states_come_from_the_library() -> None:
    from decido_service import store
    from decido_service.types.optimize import RunResult

    assert store.RUN_STATES == status.RUN_STATES
    assert store.FINISHED_STATES == status.FINISHED_RUN_STATES
    assert status.run_state("stopped") == "cancelled"
    assert status.run_state("converged") == "succeeded"
    # the service's result schema lists what a finished run can report
    (schema,), components = msgspec.json.schema_components([RunResult])
    enum = components["RunResult"]["properties"]["status"]["enum"]
    assert set(enum) == set(get_args(status.FinishedStatus)) == set(status.STATUSES) - {
        "interrupted"}
