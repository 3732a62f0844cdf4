"""decido.decide against pymcdm 1.4.0 and scikit-criteria on generated problems.

Every method, normalization and weighting is compared with at least one library
where the library follows the classical definition (rule 6 conventions where
they do not are tested in test_decide_rules.py).  Generated values are
continuous, so no criterion is constant and no scores tie.
"""

from __future__ import annotations

import numpy as np
import pytest
from decide_cases import problem, run, scores

pymcdm = pytest.importorskip("pymcdm")
skc = pytest.importorskip("skcriteria")

from pymcdm import methods as pm  # noqa: E402
from pymcdm import normalizations as pn  # noqa: E402
from pymcdm import weights as pw  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

SEEDS = range(6)
SHAPES = [(7, 4), (23, 6), (3, 2)]
NORMS = {
    "minmax": pn.minmax_normalization,
    "vector": pn.vector_normalization,
    "sum": pn.sum_normalization,
    "max": pn.max_normalization,
    "linear": pn.linear_normalization,
}


def types(benefit):
    return np.where(benefit, 1, -1)


def close(ours, theirs):
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def same_order(result, reference, higher_is_better=True):
    """Our ranking lists options in the order of the reference scores."""
    order = np.argsort(-reference if higher_is_better else reference, kind="stable")
    assert [e["id"] for e in result["ranking"]] == [f"o{i}" for i in order]


def cases():
    for seed in SEEDS:
        for m, k in SHAPES:
            yield seed, m, k


CASES = list(cases())


# ---------------------------------------------------------------- pymcdm, per method
@pytest.mark.parametrize(("seed", "m", "k"), CASES)
@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("method", ["wsm", "wpm", "topsis"])
def test_normalized_methods_match_pymcdm(method, norm, seed, m, k):
    X, benefit, w = problem(seed, m, k)
    cls = {"wsm": pm.WSM, "wpm": pm.WPM, "topsis": pm.TOPSIS}[method]
    expected = cls(NORMS[norm])(X, w, types(benefit))
    result = run(X, benefit, w, method, normalization=norm)
    assert result["normalization"] == norm
    close(scores(result), expected)
    same_order(result, expected)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
@pytest.mark.parametrize("lam", [0.0, 0.3, 0.5, 1.0])
def test_waspas_matches_pymcdm(seed, m, k, lam):
    X, benefit, w = problem(seed, m, k)
    expected = pm.WASPAS(pn.linear_normalization, l=lam)(X, w, types(benefit))
    result = run(X, benefit, w, "waspas", params={"lambda": lam})
    close(scores(result), expected)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
@pytest.mark.parametrize("v", [0.0, 0.25, 0.5, 1.0])
def test_vikor_matches_pymcdm(seed, m, k, v):
    X, benefit, w = problem(seed, m, k)
    expected = pm.VIKOR(v=v)(X, w, types(benefit))
    result = run(X, benefit, w, "vikor", params={"v": v})
    assert result["higher_is_better"] is False
    close(scores(result), expected)


PROMETHEE = [
    ("usual", "usual", None, None),
    ("u_shape", "ushape", 5.0, None),
    ("v_shape", "vshape", None, 30.0),
    ("level", "level", 5.0, 30.0),
    ("linear", "vshape_2", 5.0, 30.0),
]


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
@pytest.mark.parametrize(("ours", "theirs", "q", "p"), PROMETHEE)
def test_promethee2_matches_pymcdm(seed, m, k, ours, theirs, q, p):
    X, benefit, w = problem(seed, m, k)
    qs = None if q is None else [q * (j + 1) / k for j in range(k)]
    ps = None if p is None else [p * (j + 1) / k for j in range(k)]
    expected = pm.PROMETHEE_II(theirs, p=ps, q=qs)(X, w, types(benefit))
    params = {"preference": ours}
    if qs is not None:
        params["q"] = {f"c{j}": qs[j] for j in range(k)}
    if ps is not None:
        params["p"] = {f"c{j}": ps[j] for j in range(k)}
    result = run(X, benefit, w, "promethee2", params=params, explain=True)
    close(scores(result), expected)
    for e in result["ranking"]:
        ex = e["explanation"]
        assert ex["phi_plus"] - ex["phi_minus"] == pytest.approx(e["score"], abs=1e-12)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
@pytest.mark.parametrize(
    ("method", "cls"),
    [("edas", pm.EDAS), ("aras", pm.ARAS), ("moora", pm.MOORA)],
)
def test_own_normalization_methods_match_pymcdm(method, cls, seed, m, k):
    X, benefit, w = problem(seed, m, k)
    expected = cls()(X, w, types(benefit))
    result = run(X, benefit, w, method)
    assert result["normalization"] is None
    close(scores(result), expected)
    same_order(result, expected)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
def test_spotis_matches_pymcdm(seed, m, k):
    X, benefit, w = problem(seed, m, k)
    bounds = np.column_stack([np.zeros(k), np.full(k, 120.0)])
    expected = pm.SPOTIS(bounds)(X, w, types(benefit))
    params = {"bounds": {f"c{j}": [0.0, 120.0] for j in range(k)}}
    result = run(X, benefit, w, "spotis", params=params)
    assert result["higher_is_better"] is False and result["warnings"] == []
    close(scores(result), expected)
    same_order(result, expected, higher_is_better=False)


# ---------------------------------------------------------------- scikit-criteria
def dm(X, benefit, w):
    return skc.mkdm(X, np.where(benefit, 1, -1), weights=w)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
def test_topsis_matches_skcriteria(seed, m, k):
    from skcriteria.agg.topsis import TOPSIS
    from skcriteria.preprocessing.scalers import VectorScaler

    X, benefit, w = problem(seed, m, k)
    res = TOPSIS().evaluate(VectorScaler(target="matrix").transform(dm(X, benefit, w)))
    close(scores(run(X, benefit, w, "topsis")), res.e_.similarity)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
@pytest.mark.parametrize("v", [0.0, 0.5, 0.8])
def test_vikor_and_compromise_match_skcriteria(seed, m, k, v):
    from skcriteria.agg.vikor import VIKOR

    X, benefit, w = problem(seed, m, k)
    res = VIKOR(v=v, use_compromise_set=False).evaluate(dm(X, benefit, w))
    result = run(X, benefit, w, "vikor", params={"v": v}, explain=True)
    close(scores(result), res.e_.q_k)
    assert sorted(result["compromise"]) == sorted(f"o{i}" for i in res.e_.compromise_set)
    for e in result["ranking"]:
        i = int(e["id"][1:])
        assert e["explanation"]["S"] == pytest.approx(res.e_.s_k[i], abs=1e-12)
        assert e["explanation"]["R"] == pytest.approx(res.e_.r_k[i], abs=1e-12)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
def test_copras_matches_skcriteria(seed, m, k):
    from skcriteria.agg.copras import COPRAS
    from skcriteria.preprocessing.scalers import SumScaler

    X, benefit, w = problem(seed, m, k)
    res = COPRAS().evaluate(SumScaler(target="matrix").transform(dm(X, benefit, w)))
    close(scores(run(X, benefit, w, "copras")), res.e_.score / 100.0)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
def test_moora_edas_spotis_match_skcriteria(seed, m, k):
    from skcriteria.agg.edas import EDAS
    from skcriteria.agg.moora import RatioMOORA
    from skcriteria.agg.spotis import SPOTIS
    from skcriteria.preprocessing.scalers import VectorScaler

    X, benefit, w = problem(seed, m, k)
    d = dm(X, benefit, w)
    res = RatioMOORA().evaluate(VectorScaler(target="matrix").transform(d))
    close(scores(run(X, benefit, w, "moora")), res.e_.score)
    close(scores(run(X, benefit, w, "edas")), EDAS().evaluate(d).e_.score)
    bounds = np.column_stack([np.zeros(k), np.full(k, 120.0)])
    res = SPOTIS().evaluate(d, bounds=bounds)
    params = {"bounds": {f"c{j}": [0.0, 120.0] for j in range(k)}}
    close(scores(run(X, benefit, w, "spotis", params=params)), res.e_.score)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
@pytest.mark.parametrize("norm", ["sum", "linear"])
def test_wsm_wpm_waspas_match_skcriteria_pipelines(seed, m, k, norm):
    """linear = InvertMinimize (1/x) + MaxAbsScaler; sum = InvertMinimize + SumScaler."""
    from skcriteria.agg.simple import WeightedProductModel, WeightedSumModel
    from skcriteria.agg.waspas import WASPAS
    from skcriteria.preprocessing.invert_objectives import InvertMinimize
    from skcriteria.preprocessing.scalers import MaxAbsScaler, SumScaler

    X, benefit, w = problem(seed, m, k)
    scaler = (MaxAbsScaler if norm == "linear" else SumScaler)(target="matrix")
    d = scaler.transform(InvertMinimize().transform(dm(X, benefit, w)))
    close(
        scores(run(X, benefit, w, "wsm", normalization=norm)),
        WeightedSumModel().evaluate(d).e_.score,
    )
    wpm = run(X, benefit, w, "wpm", normalization=norm)
    close(np.log10(scores(wpm)), WeightedProductModel().evaluate(d).e_.score)
    if norm == "linear":
        res = WASPAS(lambda_value=0.3).evaluate(d)
        close(scores(run(X, benefit, w, "waspas", params={"lambda": 0.3})), res.e_.score)


# ---------------------------------------------------------------- weighting
def weights_of(result):
    return np.array(list(result["weights"].values()))


def goal_minmax(X, benefit):
    lo, hi = X.min(axis=0), X.max(axis=0)
    return np.where(benefit, X - lo, hi - X) / (hi - lo)


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
def test_entropy_weights_match_both(seed, m, k):
    """Entropy reads the raw values, goals ignored (scikit-criteria's convention)."""
    from skcriteria.preprocessing.weighters import entropy_weights

    X, benefit, w = problem(seed, m, k)
    result = run(X, benefit, None, "wsm", weighting="entropy")
    assert result["weighting"] == "entropy"
    close(weights_of(result), pw.entropy_weights(X))
    close(weights_of(result), entropy_weights(X))


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
def test_critic_weights_match_both(seed, m, k):
    from skcriteria.preprocessing.weighters import critic_weights

    X, benefit, w = problem(seed, m, k)
    result = run(X, benefit, None, "topsis", weighting="critic")
    close(weights_of(result), critic_weights(X, np.where(benefit, 1, -1)))
    close(weights_of(result), pw.critic_weights(goal_minmax(X, benefit)))


@pytest.mark.parametrize(("seed", "m", "k"), CASES)
def test_std_weights_match_both_on_raw_values(seed, m, k):
    from skcriteria.preprocessing.weighters import std_weights

    X, benefit, w = problem(seed, m, k)
    result = run(X, benefit, None, "wsm", weighting="std")
    close(weights_of(result), pw.standard_deviation_weights(X))
    close(weights_of(result), std_weights(X))


@pytest.mark.parametrize("weighting", ["equal", "entropy", "critic", "std"])
@pytest.mark.parametrize("method", ["wsm", "topsis", "vikor", "edas"])
def test_automatic_weights_feed_the_method(method, weighting):
    X, benefit, _ = problem(11, 9, 5)
    auto = run(X, benefit, None, method, weighting=weighting)
    w = weights_of(auto)
    assert w.sum() == pytest.approx(1.0) and (w >= 0).all()
    given = run(X, benefit, w, method)
    close(scores(auto), scores(given))
