"""Hypothesis strategies: random well-formed decido expressions and input points.

Expressions are generated as text with a precedence-aware printer (parentheses only where the
grammar needs them, plus some redundant ones), with known shapes: every sub-expression is a
scalar or a vector of a known length, so vectors are only combined with equal lengths and
slices/indexes are always in range.  The result is scalar overall.
"""

import math

import numpy as np
from hypothesis import strategies as st

# precedence levels of the printed text, lowest to highest
OR, AND, NOT, CMP, ADD, MUL, UNARY, POW, ATOM = range(1, 10)

KEYWORDS = {"and", "or", "not"}
ELEMENTWISE1 = ["abs", "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos",
                "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceil", "round",
                "sign"]
FUNCTION_NAMES = set(ELEMENTWISE1) | {"atan2", "hypot", "min", "max", "where", "clip", "sum",
                                      "prod", "mean", "norm", "cumsum"}
REDUCTIONS = ["sum", "prod", "mean", "norm", "min", "max"]
CMP_OPS = ["<", "<=", ">", ">=", "==", "!="]
NS = (1, 2, 7, 64, 1000)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 2.0, 1e-300, -1e-300, 1e300,
           -1e300, 5e-324, 1e16, 710.0, -745.0, math.inf, -math.inf, math.nan, math.nan]


def par(item, minprec):
    text, prec = item
    return text if prec >= minprec else f"({text})"


def slice_menu(n):
    """{length: [subscript text, ...]} of constant slices of a length-n vector."""
    def fmt(v):
        return "" if v is None else str(v)

    menu = {}
    for a in (None, 0, 1, 2, -1, -2, -3, n // 2):
        for b in (None, 1, 2, -1, -2, n // 2, n):
            for c in (None, 1, 2, 3, -1, -2):
                length = len(range(n)[slice(a, b, c)])
                if length:
                    text = f"[{fmt(a)}:{fmt(b)}" + ("" if c is None else f":{c}") + "]"
                    menu.setdefault(length, set()).add(text)
    return {k: sorted(v) for k, v in menu.items()}


class Ctx:
    """What names exist: optimization (n), decision (variables) or constant (neither)."""

    def __init__(self, n=None, variables=None, smooth=False):
        self.n, self.variables, self.smooth = n, list(variables or []), smooth
        self.slices = slice_menu(n) if n else {}
        self.lengths = sorted(self.slices)


# ---------------------------------------------------------------------------- leaves
@st.composite
def number(draw, positive=False):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        text = str(draw(st.integers(0, 10)))
    elif kind == 1:
        text = repr(round(draw(st.floats(0, 10, allow_nan=False)), 3))
    elif kind == 2:
        text = draw(st.sampled_from([".5", "1e-3", "2.5e1", "1E2", "0.25", "1.5e+0", "3.0",
                                     "2.5", "0.5", "1.5"]))
    else:
        text = draw(st.sampled_from(["0.1", "7", "100", "1e-8", "0.001"]))
    if not positive and draw(st.integers(0, 3)) == 0:
        return "-" + text, UNARY
    return text, ATOM


@st.composite
def scalar_leaf(draw, ctx):
    options = ["num", "num", "const"] + ([] if ctx.smooth else ["special"])
    if ctx.variables:
        options += ["var"] * 4
    if ctx.n:
        options += ["index", "index", "reduce", "n"]
    kind = draw(st.sampled_from(options))
    if kind == "num":
        return draw(number())
    if kind == "const":
        return draw(st.sampled_from(["pi", "e"])), ATOM
    if kind == "special":  # IEEE specials: NaN (which is true), infinities, signed zero
        return draw(st.sampled_from(["(0/0)", "(1/0)", "(-1/0)", "(-0)", "-0.0", "1e308"])), ATOM
    if kind == "var":
        return draw(st.sampled_from(ctx.variables)), ATOM
    if kind == "n":
        return "n", ATOM
    if kind == "index":
        return draw(index_into(ctx, ("x", ATOM), ctx.n))
    reductions = ["sum", "mean", "prod"] if ctx.smooth else REDUCTIONS
    return f"{draw(st.sampled_from(reductions))}({draw(vector_leaf(ctx, ctx.n))})", ATOM


@st.composite
def vector_leaf(draw, ctx, length):
    base = draw(st.sampled_from(["x", "x", "x", "i"]))
    specs = list(ctx.slices.get(length, []))
    if length == ctx.n and (not specs or draw(st.booleans())):
        return base
    return base + draw(st.sampled_from(specs))


@st.composite
def index_into(draw, ctx, vec, length):
    k = draw(st.integers(-length, length - 1))
    text = str(k)
    if length == ctx.n and draw(st.integers(0, 3)) == 0:
        text = {ctx.n - 1: "n-1", -ctx.n: "-n"}.get(k, text)
        if text == str(k) and k >= 0:
            text = f"n - {ctx.n - k}"
    return f"{par(vec, ATOM)}[{text}]", ATOM


# ---------------------------------------------------------------------------- expressions
def expr(ctx, shape, depth):
    """Strategy for (text, precedence) of an expression of the given shape.

    shape None is a scalar, an int is a vector of that length."""
    return _expr(ctx, shape, depth)


@st.composite
def _expr(draw, ctx, shape, depth):
    if depth <= 0 or draw(st.integers(0, 7)) == 0:
        item = draw(scalar_leaf(ctx)) if shape is None else (draw(vector_leaf(ctx, shape)), ATOM)
    else:
        rules = SMOOTH_RULES if ctx.smooth else RULES
        rule = draw(st.sampled_from([r for r in rules if _allowed(r, ctx, shape)]))
        item = draw(rule(ctx, shape, depth - 1))
    if draw(st.integers(0, 12)) == 0:
        item = f"({item[0]})", ATOM
    return item


def _allowed(rule, ctx, shape):
    if rule in (_reduce, _index, _s_reduce):
        return shape is None and ctx.n is not None
    if rule in (_cumsum, _slice):
        return shape is not None
    if rule is _reduce_scalar:
        return shape is None
    return True


def _shapes(draw, shape, k):
    """Operand shapes for a k-ary elementwise op with result shape `shape`."""
    if shape is None:
        return [None] * k
    vec = draw(st.lists(st.booleans(), min_size=k, max_size=k))
    vec[draw(st.integers(0, k - 1))] = True
    return [shape if v else None for v in vec]


def _operands(draw, ctx, shape, depth, k):
    return [draw(expr(ctx, s, depth)) for s in _shapes(draw, shape, k)]


def _sp(draw):
    return draw(st.sampled_from(["", " ", " ", "  "]))


@st.composite
def _arith(draw, ctx, shape, depth):
    op = draw(st.sampled_from(["+", "-", "*", "/", "%", "**", "**"]))
    shapes = _shapes(draw, shape, 2)
    a, b = (draw(expr(ctx, s, depth)) for s in shapes)
    s = _sp(draw)
    if op in "+-":
        return f"{par(a, ADD)}{s}{op}{s}{par(b, MUL)}", ADD
    if op in "*/%":
        return f"{par(a, MUL)}{s}{op}{s}{par(b, UNARY)}", MUL
    if shapes[0] == shape and draw(st.booleans()):  # a small constant exponent
        b = draw(st.sampled_from(["2", "3", "0.5", "-1", "-2", "1.5", "(-2)"])), UNARY
    return f"{par(a, ATOM)}{s}**{s}{par(b, UNARY)}", POW


@st.composite
def _unary(draw, ctx, shape, depth):
    (a,) = _operands(draw, ctx, shape, depth, 1)
    return draw(st.sampled_from(["-", "+", "- "])) + par(a, UNARY), UNARY


@st.composite
def _func(draw, ctx, shape, depth):
    name = draw(st.sampled_from(ELEMENTWISE1 + ["atan2", "hypot", "where", "clip"]))
    k = {"atan2": 2, "hypot": 2, "where": 3, "clip": 3}.get(name, 1)
    args = _operands(draw, ctx, shape, depth, k)
    return f"{name}({', '.join(a[0] for a in args)})", ATOM


@st.composite
def _minmax(draw, ctx, shape, depth):
    args = _operands(draw, ctx, shape, depth, draw(st.integers(2, 4)))
    return f"{draw(st.sampled_from(['min', 'max']))}({','.join(a[0] for a in args)})", ATOM


@st.composite
def _compare(draw, ctx, shape, depth):
    args = _operands(draw, ctx, shape, depth, draw(st.integers(2, 3)))
    text = par(args[0], ADD)
    for a in args[1:]:
        s = _sp(draw)
        text += f"{s}{draw(st.sampled_from(CMP_OPS))}{s}{par(a, ADD)}"
    return text, CMP


@st.composite
def _logic(draw, ctx, shape, depth):
    op = draw(st.sampled_from(["and", "or", "not"]))
    if op == "not":
        (a,) = _operands(draw, ctx, shape, depth, 1)
        return f"not {par(a, NOT)}", NOT
    a, b = _operands(draw, ctx, shape, depth, 2)
    if op == "and":
        return f"{par(a, AND)} and {par(b, NOT)}", AND
    return f"{par(a, OR)} or {par(b, AND)}", OR


def _vector_length(draw, ctx):
    return ctx.n if draw(st.booleans()) else draw(st.sampled_from(ctx.lengths))


@st.composite
def _reduce(draw, ctx, shape, depth):
    v = draw(expr(ctx, _vector_length(draw, ctx), depth))
    return f"{draw(st.sampled_from(REDUCTIONS))}({v[0]})", ATOM


@st.composite
def _reduce_scalar(draw, ctx, shape, depth):
    a = draw(expr(ctx, None, depth))
    return f"{draw(st.sampled_from(REDUCTIONS + ['cumsum']))}({a[0]})", ATOM


@st.composite
def _index(draw, ctx, shape, depth):
    length = _vector_length(draw, ctx)
    return draw(index_into(ctx, draw(expr(ctx, length, depth)), length))


@st.composite
def _cumsum(draw, ctx, shape, depth):
    return f"cumsum({draw(expr(ctx, shape, depth))[0]})", ATOM


@st.composite
def _slice(draw, ctx, shape, depth):
    v = draw(expr(ctx, ctx.n, depth))
    return par(v, ATOM) + draw(st.sampled_from(ctx.slices[shape])), ATOM


RULES = [_arith, _arith, _unary, _func, _func, _minmax, _compare, _logic, _reduce, _reduce,
         _reduce_scalar, _index, _cumsum, _slice]


# ---------------------------------------------------------------------------- smooth subset
SMOOTH_WRAPS = ["sin({})", "cos({})", "atan({})", "tanh({})", "exp(sin({}))", "sqrt(1 + ({})**2)",
                "log(2 + sin({}))", "log1p(({})**2)", "expm1(tanh({}))", "sinh(tanh({}))",
                "cosh(tanh({}))", "asin(0.5*tanh({}))", "acos(0.5*tanh({}))",
                "log2(2 + cos({}))", "log10(3 + tanh({}))", "tan(0.5*tanh({}))",
                "hypot({}, 1.5)", "atan2({}, 2)", "(2 + sin({}))**1.5", "({})**2", "({})**3"]


@st.composite
def _s_arith(draw, ctx, shape, depth):
    op = draw(st.sampled_from(["+", "-", "*", "/"]))
    a, b = _operands(draw, ctx, shape, depth, 2)
    if op in "+-":
        return f"{par(a, ADD)} {op} {par(b, MUL)}", ADD
    if op == "*":
        return f"{par(a, MUL)}*{par(b, UNARY)}", MUL
    return f"{par(a, MUL)}/(2 + {par(b, ATOM)}**2)", MUL


@st.composite
def _s_func(draw, ctx, shape, depth):
    (a,) = _operands(draw, ctx, shape, depth, 1)
    form = draw(st.sampled_from(SMOOTH_WRAPS))
    return form.format(a[0]), POW if form.startswith("(") else ATOM


@st.composite
def _s_two(draw, ctx, shape, depth):
    a, b = _operands(draw, ctx, shape, depth, 2)
    form = draw(st.sampled_from(["hypot({}, 1 + ({})**2)", "atan2({}, 2 + ({})**2)",
                                 "(1.5 + sin({}))**cos({})"]))
    return form.format(a[0], b[0]), POW if form.startswith("(") else ATOM


@st.composite
def _s_reduce(draw, ctx, shape, depth):
    v = draw(expr(ctx, _vector_length(draw, ctx), depth))[0]
    form = draw(st.sampled_from(["sum({})", "mean({})", "prod(1 + 0.1*sin({}))",
                                 "norm(2 + tanh({}))", "sum(cumsum({}))", "prod(cos({}))"]))
    return form.format(v), ATOM


SMOOTH_RULES = [_s_arith, _s_arith, _unary, _s_func, _s_func, _s_two, _s_reduce, _index, _cumsum,
                _slice]


# ---------------------------------------------------------------------------- cases
@st.composite
def optimization_case(draw, ns=NS, max_depth=5, smooth=False):
    """(n, text): a scalar expression over x of length n."""
    n = draw(st.sampled_from(ns))
    ctx = Ctx(n=n, smooth=smooth)
    text, _ = draw(expr(ctx, None, draw(st.integers(min(2, max_depth), max_depth))))
    return n, text


_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True).filter(
    lambda s: s not in KEYWORDS and s not in FUNCTION_NAMES)
variable_names = st.lists(_NAME | st.sampled_from(["e", "pi", "x", "n", "i", "quality"]),
                          min_size=1, max_size=6, unique=True)


@st.composite
def decision_case(draw, max_depth=5, smooth=False):
    """(variables, text): a scalar expression over named scalar variables."""
    names = draw(variable_names)
    ctx = Ctx(variables=names, smooth=smooth)
    text, _ = draw(expr(ctx, None, draw(st.integers(min(2, max_depth), max_depth))))
    return names, text


@st.composite
def constant_case(draw, max_depth=3):
    return draw(expr(Ctx(), None, draw(st.integers(1, max_depth))))[0]


# ---------------------------------------------------------------------------- inputs
@st.composite
def point(draw, n, lo=-5.0, hi=5.0, extreme=True):
    """A float64 vector of length n: mostly uniform in [lo, hi], sometimes integers,
    sometimes with special values (0, tiny, huge, inf, nan) when extreme."""
    if n <= 8:
        elems = [st.floats(lo, hi), st.integers(int(lo), int(hi)).map(float)]
        if extreme:
            elems.append(st.sampled_from(SPECIAL))
        return np.array(draw(st.lists(st.one_of(elems), min_size=n, max_size=n)), dtype=float)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.uniform(lo, hi, n)
    mode = draw(st.sampled_from(["plain", "plain", "ints", "special"] if extreme
                                else ["plain", "ints"]))
    if mode == "ints":
        x = np.round(x)
    elif mode == "special":
        for _ in range(draw(st.integers(1, 4))):
            x[draw(st.integers(0, n - 1))] = draw(st.sampled_from(SPECIAL))
    return x


@st.composite
def population(draw, n, max_rows=6, **kw):
    rows = draw(st.integers(1, max_rows))
    if n == 0:
        return np.zeros((rows, 0))
    return np.stack([draw(point(n, **kw)) for _ in range(rows)])
