"""Rule 7: every invalid request is a DecisionError with a stable code and path."""

from __future__ import annotations

import copy
import pickle

import pytest

import decido
from decido import DecisionError

BASE = {
    "options": [
        {"id": "a", "attributes": {"price": 10.0, "quality": 7.0, "lead time": 3}},
        {"id": "b", "attributes": {"price": 12.0, "quality": 8.0, "lead time": 5}},
        {"id": "c", "attributes": {"price": 9.0, "quality": 6.0, "lead time": 4}},
    ],
    "method": "wsm",
    "criteria": [
        {"attribute": "price", "goal": "minimize", "weight": 2},
        {"attribute": "quality", "goal": "maximize", "weight": 1},
    ],
}


P1 = "options[1].attributes.price"


def with_(path, value):
    """BASE with one field replaced; path like 'options.1.attributes.price'."""
    req = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    node = req
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is KeyError:
        del node[last]
    else:
        node[last] = value
    return req


def error(req):
    with pytest.raises(DecisionError) as info:
        decido.decide(req)
    return info.value


CASES = [
    (with_("method", "wsum"), "unknown_method", "method"),
    (with_("method", 3), "unknown_method", "method"),
    (with_("normalization", "zscore"), "unknown_normalization", "normalization"),
    (with_("weighting", "bwm"), "unknown_weighting", "weighting"),
    (with_("criteria.1.attribute", "qualty"), "unknown_attribute", "criteria[1].attribute"),
    (with_("options.2.id", "a"), "duplicate_option_id", "options[2].id"),
    (with_("options.1.attributes.price", float("nan")), "non_finite_value", P1),
    (with_("options.0.attributes.quality", -float("inf")), "non_finite_value",
     "options[0].attributes.quality"),
    (with_("options.1.attributes.price", 10**400), "non_finite_value", P1),
    (with_("options.1.attributes.price", "12"), "invalid_request", P1),
    (with_("options.1.attributes.price", None), "invalid_request", P1),
    (with_("options.1.attributes.price", [1, 2]), "invalid_request", P1),
    (with_("options.1.attributes.price", KeyError), "missing_attribute", P1),
    (with_("options.1", "b"), "invalid_request", "options[1]"),
    (with_("options.1.id", None), "invalid_request", "options[1].id"),
    (with_("options.1.id", 1.5), "invalid_request", "options[1].id"),
    (with_("options.1.attributes", [1]), "invalid_request", "options[1].attributes"),
    (with_("options", []), "invalid_request", "options"),
    (with_("options", "abc"), "invalid_request", "options"),
    (with_("criteria.0.weight", 0), "non_positive_value", "criteria[0].weight"),
    (with_("criteria.0.weight", -1), "non_positive_value", "criteria[0].weight"),
    (with_("criteria.0.weight", float("inf")), "non_finite_value", "criteria[0].weight"),
    (with_("criteria.0.weight", "2"), "invalid_request", "criteria[0].weight"),
    (with_("criteria.0.goal", "up"), "invalid_request", "criteria[0].goal"),
    (with_("criteria.0.goal", "MAX"), "invalid_request", "criteria[0].goal"),
    (with_("criteria.0.wieght", 1), "invalid_request", "criteria[0].wieght"),
    (with_("criteria.1.attribute", "price"), "invalid_request", "criteria[1].attribute"),
    (with_("criteria", []), "invalid_request", "criteria"),
    (with_("criteria", KeyError), "invalid_request", "criteria"),
    (with_("top_k", 0), "invalid_request", "top_k"),
    (with_("top_k", True), "invalid_request", "top_k"),
    (with_("explain", "yes"), "invalid_request", "explain"),
    (with_("constraints", "price < 3"), "invalid_request", "constraints"),
    (with_("constraints", [3]), "invalid_request", "constraints[0]"),
    (with_("crtieria", []), "invalid_request", "crtieria"),
    (with_("params", {"v": 0.5, "lamda": 1}), "invalid_params", "params.lamda"),
    (with_("params", [1]), "invalid_params", "params"),
    (with_("normalization", "sum") | {"options": [
        {"id": "a", "attributes": {"price": 10.0, "quality": 0.0}},
        {"id": "b", "attributes": {"price": 12.0, "quality": 8.0}},
    ]}, "non_positive_value", "options[0].attributes.quality"),
]  # fmt: skip


@pytest.mark.parametrize(("req", "code", "path"), CASES)
def test_error_code_and_path(req, code, path):
    err = error(req)
    assert (err.code, err.path) == (code, path), str(err)
    assert isinstance(err, ValueError) and isinstance(err, decido.DecidoError)
    assert err.position is None
    assert err.to_dict() == {"code": code, "message": err.message, "path": path}
    assert path in str(err)


def test_a_request_must_be_an_object():
    assert error([1, 2]).code == "invalid_request"


def test_unknown_names_suggest():
    err = error(with_("criteria.1.attribute", "qualty"))
    assert "'quality'" in err.message
    err = error(with_("method", "topsys"))
    assert "'topsis'" in err.message


def test_attribute_paths_quote_non_identifiers():
    err = error(with_("options.2.attributes.lead time", float("nan")) | {
        "criteria": [{"attribute": "lead time", "weight": 1}]
    })  # fmt: skip
    assert err.path == 'options[2].attributes["lead time"]'


@pytest.mark.parametrize(
    ("method", "norm", "bad"),
    [
        ("wsm", "sum", -1.0),
        ("wsm", "max", 0.0),
        ("topsis", "linear", 0.0),
        ("wpm", None, 0.0),
        ("wpm", "vector", -2.0),
        ("waspas", None, 0.0),
        ("copras", None, 0.0),
        ("edas", None, -3.0),
        ("aras", None, 0.0),
    ],
)
def test_values_must_be_positive_where_the_method_needs_it(method, norm, bad):
    req = with_("options.1.attributes.quality", bad) | {"method": method}
    if norm:
        req["normalization"] = norm
    err = error(req)
    assert (err.code, err.path) == ("non_positive_value", "options[1].attributes.quality")


@pytest.mark.parametrize("method", ["wsm", "topsis", "vikor", "promethee2", "moora", "spotis"])
def test_negative_values_are_fine_elsewhere(method):
    req = with_("options.1.attributes.quality", -4.0) | {"method": method}
    assert decido.decide(req)["status"] == "ok"
    assert decido.decide(req | {"method": "wpm", "normalization": "minmax"})["status"] == "ok"


def test_positivity_is_checked_on_feasible_options_only():
    req = with_("options.1.attributes.quality", -4.0) | {"method": "copras"}
    req["constraints"] = ["quality > 0"]
    assert decido.decide(req)["n_feasible"] == 2


def test_entropy_needs_non_negative_values():
    req = with_("options.1.attributes.quality", -4.0) | {"weighting": "entropy"}
    assert error(req).code == "non_positive_value"
    req = with_("options.1.attributes.quality", 0.0) | {"weighting": "entropy"}
    assert decido.decide(req)["status"] == "ok"  # 0 ln 0 = 0 for a maximized criterion


PARAMS = [
    ("vikor", {"v": 1.5}, "params.v"),
    ("vikor", {"v": "half"}, "params.v"),
    ("waspas", {"lambda": -0.1}, "params.lambda"),
    ("promethee2", {"preference": "gaussian"}, "params.preference"),
    ("promethee2", {"preference": "u_shape"}, "params.q.price"),
    ("promethee2", {"preference": "u_shape", "q": {"price": 1}}, "params.q.quality"),
    ("promethee2", {"preference": "v_shape", "p": {"price": 1, "quality": 0}}, "params.p.quality"),
    ("promethee2", {"preference": "linear", "q": {"price": 1, "quality": 2},
                    "p": {"price": 2, "quality": 2}}, "params.q.quality"),
    ("promethee2", {"preference": "level", "q": {"price": 1, "quality": -1},
                    "p": {"price": 2, "quality": 2}}, "params.q.quality"),
    ("promethee2", {"preference": "usual", "q": 3}, None),
    ("promethee2", {"preference": "u_shape", "q": {"price": 1, "quality": 1, "cost": 2}},
     "params.q.cost"),
    ("spotis", {"bounds": {"price": [5]}}, "params.bounds.price"),
    ("spotis", {"bounds": {"price": [5, 5]}}, "params.bounds.price"),
    ("spotis", {"bounds": {"price": [0, 11]}}, P1),
    ("spotis", {"bounds": {"qualit": [0, 11]}}, "params.bounds.qualit"),
    ("spotis", {"bounds": []}, "params.bounds"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "params", "path"), PARAMS)
def test_bad_params(method, params, path):
    req = BASE | {"method": method, "params": params}
    if path is None:  # q is not used by 'usual': ignored with a warning
        assert decido.decide(req)["status"] == "ok"
        return
    err = error(req)
    assert err.code in ("invalid_params", "out_of_bounds") and err.path == path, str(err)


def test_params_of_another_method_are_ignored_with_a_warning():
    result = decido.decide(BASE | {"params": {"v": 0.3}})
    assert result["warnings"][0]["path"] == "params.v"


@pytest.mark.parametrize(
    ("field", "text", "position", "expr_code"),
    [
        ("constraints", "price < 10 and qualty > 3", 15, "unknown_name"),
        ("constraints", "price <", 7, "syntax_error"),
        ("constraints", "price & quality", 6, "bitwise_operator"),
        ("constraints", "sum(price) > 1 and cost", 19, "unknown_name"),
        ("expression", "quality * 10 - prce", 15, "unknown_name"),
        ("expression", "", 0, "empty_expression"),
    ],
)
def test_expression_errors_have_path_and_position(field, text, position, expr_code):
    if field == "constraints":
        req = BASE | {"constraints": ["price > 0", text]}
        path = "constraints[1]"
    else:
        req = {"options": BASE["options"], "method": "expression", "expression": text}
        path = "expression"
    err = error(req)
    assert (err.code, err.path, err.position) == ("invalid_expression", path, position)
    assert isinstance(err.__cause__, decido.ExpressionError)
    assert err.__cause__.code == expr_code and expr_code in err.message
    assert err.to_dict() == {
        "code": "invalid_expression", "message": err.message, "path": path, "position": position,
    }  # fmt: skip


def test_unknown_name_suggests_any_attribute():
    err = error(BASE | {"constraints": ["qualty > 3"]})
    assert "'quality'" in err.message


@pytest.mark.parametrize("extra", [
    {"constraints": ["qualty > 3"]},  # an unknown name: suggestions list every attribute
    {"criteria": [{"attribute": "qualty", "weight": 1}]},  # an unknown criterion: the same
])
def test_a_non_string_attribute_name_is_refused_where_names_are_listed(extra):
    """Only Python callers can send one (JSON keys are strings): it gets the error of an
    invalid option, not an AttributeError from the code that lists names."""
    opts = copy.deepcopy(BASE["options"])
    opts[2]["attributes"][7] = 1.0
    err = error(BASE | {"options": opts} | extra)
    assert (err.code, err.path) == ("invalid_request", "options[2].attributes")
    assert "attribute names are strings, not" in err.message
    # unused, it changes nothing (names are not walked on every request)
    assert decido.decide(BASE | {"options": opts})["best"] == decido.decide(BASE)["best"]


def test_expression_method_needs_an_expression():
    err = error({"options": BASE["options"], "method": "expression"})
    assert (err.code, err.path) == ("invalid_request", "expression")
    err = error({"options": BASE["options"], "expression": "price", "goal": "up"})
    assert err.path == "goal"


def test_a_reserved_attribute_name_cannot_be_used_in_expressions():
    opts = [{"id": i, "attributes": {"sum": float(i), "x": 1.0}} for i in range(3)]
    err = error({"options": opts, "expression": "sum + x"})
    assert err.code == "invalid_expression"
    # ... but it can be a criterion
    crit = [{"attribute": "sum", "weight": 1}]
    assert decido.decide({"options": opts, "criteria": crit})["best"] == 2


def test_limits():
    limits = decido.DECISION_LIMITS
    too_many = BASE | {"criteria": [{"attribute": f"c{j}", "weight": 1} for j in range(65)]}
    assert (error(too_many).code, error(too_many).path) == ("too_many", "criteria")
    old = dict(limits)
    try:
        limits.update(max_promethee_options=2, max_options=2, max_constraints=1)
        assert (
            error(BASE | {"method": "promethee2", "constraints": ["price > 9.5"]}).code
            == "too_many"
        )
        assert error(BASE | {"method": "promethee2"}).path == "options"
        assert error(BASE | {"constraints": ["price > 0"] * 2}).path == "constraints"
    finally:
        limits.update(old)


def test_error_pickles():
    err = error(with_("method", "nope"))
    again = pickle.loads(pickle.dumps(err))
    assert (again.code, again.path, again.message) == (err.code, err.path, err.message)


def test_integer_beyond_the_doubles_is_named():
    """A Python int too large for a double (JSON parsers other than orjson give them) is
    a ``non_finite_value`` naming the field, never an OverflowError."""
    big = 10**400
    weighted = BASE | {"criteria": [{"attribute": "price", "weight": big}]}
    assert (error(weighted).code, error(weighted).path) == (
        "non_finite_value", "criteria[0].weight")
    valued = BASE | {"options": [{"id": "a", "attributes": {"price": big, "quality": 1}},
                                 {"id": "b", "attributes": {"price": 1, "quality": 2}}]}
    assert (error(valued).code, error(valued).path) == (
        "non_finite_value", "options[0].attributes.price")
