"""One run specification on the wire: the members of ``POST /v1/optimize`` beside the
objective(s), the box, goal and metadata are exactly the keywords of
:class:`decido.run_spec.RunSpec` a request carries, the queue hands each to the library
by that name, and the keywords only a front takes are refused on one objective by name."""

from __future__ import annotations

import msgspec
import pytest

import decido
from decido.run_spec import keyword_names
from decido_service import limits
from decido_service.config import Settings
from decido_service.errors import ServiceError
from decido_service.runs import queue
from decido_service.schemas import decode_optimize
from decido_service.store import KeyRecord
from decido_service.types import Budget, OptimizeRequest

#: the request's own members: what the run is of, and its labels
OWN = {"bounds", "objective_expression", "objectives", "goal", "metadata"}


def test_the_request_carries_the_run_specs_wire_keywords() -> None:
    members = set(OptimizeRequest.__struct_fields__)
    assert members - OWN == set(keyword_names(wire=True))
    assert not set(keyword_names(wire=True)) & {"callback", "monitor", "vectorized",
                                               "stop_on_convergence"}


def _front_request(**extra: object) -> OptimizeRequest:
    body = {"objectives": [{"name": "a", "expression": "x[0]**2"},
                           {"name": "b", "expression": "(x[0] - 1)**2"}],
            "bounds": [[-2, 2]], "seed": 5, **extra}
    return decode_optimize(msgspec.json.encode(body))


def test_the_queue_passes_every_keyword_by_name() -> None:
    """A front's cap and reference point reach the library through the derived mapping:
    the same front as the library's own call."""
    req = _front_request(archive_size=6, reference_point=[5.0, 5.0])
    budget = Budget(max_evaluations=1200, time_limit=10.0)
    got = queue.execute(req, ["x[0]**2", "(x[0] - 1)**2"], budget, decido.RunMonitor())
    assert isinstance(got, decido.ParetoResult)
    local = decido.minimize(
        [{"name": "a", "expression": "x[0]**2"}, {"name": "b", "expression": "(x[0] - 1)**2"}],
        [[-2.0, 2.0]], seed=5, max_evaluations=1200, archive_size=6,
        reference_point=[5.0, 5.0], engine=req.engine_id)
    assert got.pareto == local.pareto and got.reference_point == [5.0, 5.0]
    assert len(got.pareto) <= 6


def test_front_keywords_on_one_objective_are_named() -> None:
    body = {"objective_expression": "x[0]**2", "bounds": [[-1, 1]], "archive_size": 4,
            "reference_point": [1.0]}
    with pytest.raises(ServiceError) as caught:
        decode_optimize(msgspec.json.encode(body))
    fields = [e["field"] for e in caught.value.extra["errors"]]
    assert fields == ["reference_point", "archive_size"]


def test_the_tier_caps_the_front_by_the_request() -> None:
    key = KeyRecord(id="k1", prefix="dk_AbCdEfGh", plan="free", tier="free", label="",
                    created_at="2024-11-30T10:00:00Z", revoked_at=None, limits=None)
    settings = Settings()
    cap = limits.tier_limits(key, settings=settings)["max_archive_size"]
    assert limits.run_size_faults(key, _front_request(archive_size=cap),
                                  settings=settings) == []
    (fault,) = limits.run_size_faults(key, _front_request(archive_size=cap + 1),
                                      settings=settings)
    assert (fault.field, fault.code) == ("archive_size", "above_tier_cap")
