"""An independent NumPy reference evaluator for the decido expression language.

This is the test oracle: it shares no code with decido.  It has its own tokenizer and
recursive-descent parser of DESIGN.md §2 and evaluates a whole population at once (values are
arrays with one row per point: shape (P, 1) for a scalar and (P, L) for a vector).

Alongside every value it carries a running bound on how far a correct IEEE implementation may
legitimately differ from this one (a different but valid summation order, a libm routine that
is a few ulp away from NumPy's, and everything that propagates from those).  The bound is
propagated by re-evaluating each operation at the corners of its inputs' error boxes, so
discontinuities (floor, comparisons, %) and domain edges (NaN) are handled uniformly: when a
difference cannot be bounded the bound becomes +inf and the value is unchecked.
"""

import itertools
import re
from dataclasses import dataclass

import numpy as np

EPS = np.finfo(float).eps
TINY = 5e-324
KEYWORDS = {"and", "or", "not"}


class RefError(ValueError):
    def __init__(self, code, message=""):
        super().__init__(f"{code}: {message}")
        self.code = code


# ---------------------------------------------------------------------------- parsing
_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|<=|>=|==|!=|[-+*/%<>()\[\],:]))"
)
_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}


def tokenize(text):
    out, pos = [], 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos == len(text):
            return out + [("end", None)]
        m = _TOKEN.match(text, pos)
        if m is None:
            raise RefError("bitwise_operator" if text[pos] in "&|" else "unexpected_character")
        kind = m.lastgroup
        val = m.group(kind)
        if kind == "name" and val in KEYWORDS:
            kind = "op"
        out.append((kind, float(val) if kind == "num" else val))
        pos = m.end()


class _Parser:
    def __init__(self, text):
        self.toks, self.k = tokenize(text), 0

    def peek(self, *ops):
        kind, val = self.toks[self.k]
        return kind == "op" and val in ops

    def take(self, *ops):
        if not self.peek(*ops):
            raise RefError("syntax_error", f"expected {ops}, got {self.toks[self.k]}")
        self.k += 1
        return self.toks[self.k - 1][1]

    def parse(self):
        if self.toks[0][0] == "end":
            raise RefError("empty_expression")
        node = self.or_()
        if self.toks[self.k][0] != "end":
            raise RefError("syntax_error", f"trailing {self.toks[self.k]}")
        return node

    def _left(self, sub, ops, tag):  # left-associative binary level
        node = sub()
        while self.peek(*ops):
            op = self.take(*ops)
            node = (tag, op, node, sub())
        return node

    def or_(self):
        return self._left(self.and_, ("or",), "logic")

    def and_(self):
        return self._left(self.not_, ("and",), "logic")

    def not_(self):
        if self.peek("not"):
            self.take("not")
            return ("not", self.not_())
        return self.cmp()

    def cmp(self):
        operands, ops = [self.arith()], []
        while self.peek(*_CMP):
            ops.append(self.take(*_CMP))
            operands.append(self.arith())
        return ("cmp", ops, operands) if ops else operands[0]

    def arith(self):
        return self._left(self.term, ("+", "-"), "bin")

    def term(self):
        return self._left(self.unary, ("*", "/", "%"), "bin")

    def unary(self):
        if self.peek("-", "+"):
            return ("unary", self.take("-", "+"), self.unary())
        return self.power()

    def power(self):
        base = self.postfix()
        if self.peek("**"):
            self.take("**")
            return ("bin", "**", base, self.unary())
        return base

    def postfix(self):
        node = self.atom()
        while self.peek("["):
            self.take("[")
            parts, cur = [], None
            while not self.peek("]"):
                if self.peek(":"):
                    self.take(":")
                    parts.append(cur)
                    cur = None
                elif cur is None:
                    cur = self.or_()
                else:
                    raise RefError("syntax_error", "bad subscript")
            self.take("]")
            parts.append(cur)
            if len(parts) == 1:
                if cur is None:
                    raise RefError("syntax_error", "empty subscript")
                node = ("index", node, cur)
            elif len(parts) <= 3:
                node = ("slice", node, *(parts + [None] * (3 - len(parts))))
            else:
                raise RefError("syntax_error", "too many ':'")
        return node

    def atom(self):
        kind, val = self.toks[self.k]
        if kind == "num":
            self.k += 1
            return ("num", val)
        if kind == "name":
            self.k += 1
            if self.peek("("):
                self.take("(")
                args = [] if self.peek(")") else [self.or_()]
                while self.peek(","):
                    self.take(",")
                    args.append(self.or_())
                self.take(")")
                return ("call", val, args)
            return ("name", val)
        if self.peek("("):
            self.take("(")
            node = self.or_()
            self.take(")")
            return node
        raise RefError("syntax_error", f"unexpected {self.toks[self.k]}")


def parse(text):
    return _Parser(text).parse()


# ---------------------------------------------------------------------------- semantics
def c_round(a):
    """C round(): half away from zero (np.round is half-to-even)."""
    t = np.trunc(a)
    return np.where(np.abs(a - t) >= 0.5, t + np.copysign(1.0, a), t)


def _truth(a):
    return a != 0  # NaN is true


# min/max of two: IEEE 754-2019 minimum/maximum, as documented: NaN propagates (the first
# NaN wins), -0 < +0, and on other ties the first argument is returned (the gradient
# convention).  np.minimum leaves the sign of min(-0, 0) to its implementation.
def min2(a, b):
    sa, sb = np.signbit(a), np.signbit(b)
    first = (a < b) | np.isnan(a) | ((a == b) & (sa | ~sb))
    return np.where(first, a, b)


def max2(a, b):
    sa, sb = np.signbit(a), np.signbit(b)
    first = (a > b) | np.isnan(a) | ((a == b) & (~sa | sb))
    return np.where(first, a, b)


_BIN = {"+": (np.add, 1), "-": (np.subtract, 1), "*": (np.multiply, 1),
        "/": (np.true_divide, 1), "%": (np.remainder, 1), "**": (np.power, 4)}
_LOGIC = {"and": lambda a, b: (_truth(a) & _truth(b)) * 1.0,
          "or": lambda a, b: (_truth(a) | _truth(b)) * 1.0}
# name -> (function, ulps allowed against another libm)
UNARY = {"abs": (np.abs, 0), "sqrt": (np.sqrt, 1), "exp": (np.exp, 4), "log": (np.log, 4),
         "log2": (np.log2, 4), "log10": (np.log10, 4), "log1p": (np.log1p, 4),
         "expm1": (np.expm1, 4), "sin": (np.sin, 4), "cos": (np.cos, 4), "tan": (np.tan, 4),
         "asin": (np.arcsin, 4), "acos": (np.arccos, 4), "atan": (np.arctan, 4),
         "sinh": (np.sinh, 4), "cosh": (np.cosh, 4), "tanh": (np.tanh, 4),
         "floor": (np.floor, 0), "ceil": (np.ceil, 0), "round": (c_round, 0),
         "sign": (np.sign, 0)}
BINARY = {"atan2": (np.arctan2, 4), "hypot": (np.hypot, 4)}
TERNARY = {"where": (lambda c, a, b: np.where(_truth(c), a, b), 0),
           "clip": (lambda v, lo, hi: min2(max2(v, lo), hi), 0)}
REDUCTIONS = {"sum", "prod", "mean", "norm", "cumsum"}
FUNCTIONS = set(UNARY) | set(BINARY) | set(TERNARY) | REDUCTIONS | {"min", "max"}


@dataclass
class Val:
    v: np.ndarray  # (P, 1) scalar or (P, L) vector
    e: np.ndarray  # error bound, same shape
    vec: bool
    const: bool


def _dev(a, b):
    """|a - b| where equal values (incl. NaN/NaN, inf/inf) are 0 and NaN-vs-number is inf."""
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    d = np.where(same, 0.0, np.abs(a - b))
    return np.where(np.isnan(d), np.inf, d)


def _apply(f, args, ulps):
    """f elementwise over args with broadcasting and error propagation by corners."""
    vecs = [a for a in args if a.vec]
    if any(a.v.shape[1] != vecs[0].v.shape[1] for a in vecs):
        raise RefError("shape_mismatch")
    center = f(*[a.v for a in args])
    err = np.zeros(center.shape)
    if any(np.any(a.e) for a in args):
        for signs in itertools.product((-1.0, 1.0), repeat=len(args)):
            corner = f(*[a.v + s * a.e for a, s in zip(args, signs, strict=True)])
            err = np.maximum(err, _dev(corner, center))
        # an unbounded input may be anything in another valid order, NaN (0 * inf in a
        # product) or a number where this order gave NaN, which no corner of NaN shows:
        # where any of those would change the result, it is unbounded too
        for i, a in enumerate(args):
            unbounded = np.isinf(a.e)
            for stand_in in (np.nan, np.inf, -np.inf, 0.0) if unbounded.any() else ():
                probe = f(*[np.where(unbounded, stand_in, b.v) if j == i else b.v
                            for j, b in enumerate(args)])
                err = np.maximum(err, _dev(probe, center))
    if ulps:
        fin = np.isfinite(center)
        err = err + np.where(fin, ulps * EPS * np.abs(center), 0.0)
        if ulps > 1:  # libm results may differ by an ulp in the subnormal range too
            err = err + np.where(fin & (center != 0), ulps * TINY, 0.0)
    return Val(center, err, bool(vecs), all(a.const for a in args))


# sin and cos turn, tan has a pole, at offset + k pi: the corners of an argument's interval
# bound the function only where the interval holds no such point (an argument of 1e17 known
# to a few hundred, as a product of 64 factors is, may give any sine)
_TURNS = {"sin": np.pi / 2, "cos": 0.0, "tan": np.pi / 2}


def _turns(name, a, out):
    """``out`` (the function over ``a``, bounded by corners) with its bound widened where
    ``a``'s interval holds a turn (sin, cos: the value there) or a pole (tan: unbounded)."""
    offset = _TURNS[name]
    with np.errstate(invalid="ignore"):
        first = np.floor((a.v - a.e - offset) / np.pi) + 1  # the first k inside
        count = np.floor((a.v + a.e - offset) / np.pi) - first + 1
    held = (a.e > 0) & np.isfinite(a.v) & ~(count < 1)  # NaN count (unbounded e): held
    if name == "tan":
        extra = np.where(held, np.inf, 0.0)
    else:
        turn = np.where(np.isfinite(first), first, 0.0) * np.pi + offset
        one = np.abs(np.where(np.isfinite(first), np.sin(turn) if name == "sin"
                              else np.cos(turn), 1.0) - out.v)
        extra = np.where(held, np.where(count >= 2, 1.0 + np.abs(out.v), one), 0.0)
    return Val(out.v, np.maximum(out.e, extra), out.vec, out.const)


def _finite_or_inf(a):
    return np.where(np.isnan(a), np.inf, a)


def _reduce(name, a):
    if not a.vec:
        if name == "norm":
            return _apply(np.abs, [a], 0)
        return a  # sum(s) = prod(s) = mean(s) = min(s) = max(s) = cumsum(s) = s
    v, e, m = a.v, a.e, a.v.shape[1]
    av = np.abs(v)
    extreme = np.zeros((v.shape[0], 1), dtype=bool)  # rows whose value depends on the order
    # sums accumulate left to right from +0.0 (like np.sum and a C loop `acc = 0; acc += v`):
    # adding 0.0 to the prefix sums turns an all-(-0) prefix into +0 and changes nothing else
    if name == "cumsum":
        out = np.cumsum(v, axis=1) + 0.0
        err = np.cumsum(e, axis=1) + np.arange(1, m + 1) * EPS * np.cumsum(av, axis=1)
        return Val(out, _finite_or_inf(err), True, a.const)
    if name in ("sum", "mean"):
        out = np.cumsum(v, axis=1)[:, -1:] + 0.0
        err = e.sum(axis=1, keepdims=True) + m * EPS * av.sum(axis=1, keepdims=True)
        if name == "mean":
            out, err = out / m, err / m + EPS * np.abs(out / m)
    elif name == "prod":
        out = np.cumprod(v, axis=1)[:, -1:]
        # relative rounding, and in the subnormals an absolute one of up to a unit per
        # product, grown by the factors after it: 5e-324 * 1.5 is 5e-324 or 1e-323
        err = (np.prod(av + e, axis=1, keepdims=True) - np.prod(av, axis=1, keepdims=True)
               + m * EPS * np.abs(out)
               + m * TINY * np.prod(np.maximum(av, 1.0), axis=1, keepdims=True))
        # where some partial product of the finite factors can underflow to 0 or overflow
        # to inf, another order of the same factors can give 0, inf or NaN (0 * inf):
        # [1, 1e-300, inf, 1e-300] is inf left to right, NaN as (1 * 1e-300) * (inf * 1e-300)
        # is not, but (1e-300 * 1e-300) * inf is
        with np.errstate(divide="ignore"):
            scale = np.log2(np.where(np.isfinite(av) & (av > 0), av, 1.0))
        extreme = ((np.where(scale < 0, scale, 0.0).sum(axis=1, keepdims=True) < -1074)
                   | (np.where(scale > 0, scale, 0.0).sum(axis=1, keepdims=True) > 1024))
    elif name == "norm":
        out = np.sqrt(np.cumsum(v * v, axis=1)[:, -1:])
        err = e.sum(axis=1, keepdims=True) + m * EPS * out
    else:  # min / max of a vector: IEEE 754-2019 (NaN propagates, -0 < +0)
        zeros = v == 0
        if name == "min":
            out = np.min(v, axis=1, keepdims=True)
            signed = (zeros & np.signbit(v)).any(axis=1, keepdims=True)
            out = np.where((out == 0) & signed, -0.0, np.where(out == 0, 0.0, out))
        else:
            out = np.max(v, axis=1, keepdims=True)
            unsigned = (zeros & ~np.signbit(v)).any(axis=1, keepdims=True)
            out = np.where((out == 0) & unsigned, 0.0, np.where(out == 0, -0.0, out))
        err = e.max(axis=1, keepdims=True)
    # an infinite result from finite inputs overflowed, and another order might not
    overflow = np.isinf(out) & np.isfinite(v).all(axis=1, keepdims=True)
    err = np.where(overflow | extreme, np.inf, np.where(np.isinf(out), 0.0, err))
    return Val(out, _finite_or_inf(err), False, a.const)


class Reference:
    """Reference(text, n=None, variables=None): same contexts as decido.Expression."""

    def __init__(self, text, n=None, variables=None):
        self.text, self.n, self.variables = text, n, variables
        self.tree = parse(text)
        self.n_inputs = n if n is not None else len(variables or [])
        self._run(np.zeros((1, self.n_inputs)))  # compile-time errors surface here

    def _env(self, X):
        P = X.shape[0]

        def scalar(c, const=True):
            return Val(np.full((P, 1), float(c)), np.zeros((P, 1)), False, const)

        env = {"pi": scalar(np.pi), "e": scalar(np.e)}
        if self.n is not None:
            env["x"] = Val(X, np.zeros(X.shape), True, False)
            env["n"] = scalar(self.n)
            env["i"] = Val(np.tile(np.arange(1.0, self.n + 1), (P, 1)), np.zeros(X.shape),
                           True, True)
        for k, name in enumerate(self.variables or []):
            env[name] = Val(X[:, k:k + 1], np.zeros((P, 1)), False, False)
        return env

    def _run(self, X):
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.ndim != 2 or X.shape[1] != self.n_inputs:
            raise RefError("invalid_argument", f"rows of length {self.n_inputs} expected")
        if X.shape[0] == 0:  # an empty population (compile-time errors were found in __init__)
            return np.zeros(0), np.zeros(0)
        with np.errstate(all="ignore"):
            out = self._eval(self.tree, self._env(X))
        if out.vec:
            raise RefError("not_scalar")
        return out.v[:, 0], out.e[:, 0]

    def evaluate(self, x=()):
        return float(self._run(np.asarray(x, dtype=float)[None])[0][0])

    def evaluate_many(self, X):
        return self._run(X)[0]

    def evaluate_bound(self, X):
        """(values, error bounds), one per row of X."""
        return self._run(X)

    def _const_int(self, node, env, code):
        if node is None:
            return None
        a = self._eval(node, env)
        k = a.v[0, 0]
        if a.vec or not a.const or not np.isfinite(k) or k != np.floor(k):
            raise RefError(code, "index must be a constant integer")
        return int(k)

    def _eval(self, node, env):
        tag = node[0]
        if tag == "num":
            P = next(iter(env.values())).v.shape[0]
            return Val(np.full((P, 1), node[1]), np.zeros((P, 1)), False, True)
        if tag == "name":
            if node[1] in env:
                return env[node[1]]
            raise RefError("function_as_value" if node[1] in FUNCTIONS else "unknown_name")
        if tag == "unary":
            a = self._eval(node[2], env)
            return _apply(np.negative, [a], 0) if node[1] == "-" else a
        if tag == "bin":
            f, ulps = _BIN[node[1]]
            return _apply(f, [self._eval(node[2], env), self._eval(node[3], env)], ulps)
        if tag == "logic":
            return _apply(_LOGIC[node[1]], [self._eval(node[2], env),
                                            self._eval(node[3], env)], 0)
        if tag == "not":
            return _apply(lambda a: (~_truth(a)) * 1.0, [self._eval(node[1], env)], 0)
        if tag == "cmp":
            vals = [self._eval(t, env) for t in node[2]]
            out = None
            for op, a, b in zip(node[1], vals, vals[1:], strict=False):
                c = _apply(lambda p, q, op=op: _CMP[op](p, q) * 1.0, [a, b], 0)
                out = c if out is None else _apply(_LOGIC["and"], [out, c], 0)
            return out
        if tag in ("index", "slice"):
            a = self._eval(node[1], env)
            if not a.vec:
                raise RefError("not_indexable")
            m = a.v.shape[1]
            if tag == "index":
                k = self._const_int(node[2], env, "invalid_index")
                if not -m <= k < m:
                    raise RefError("invalid_index", f"{k} out of range for length {m}")
                return Val(a.v[:, k:k + 1 or None], a.e[:, k:k + 1 or None], False, a.const)
            s = slice(*[self._const_int(t, env, "invalid_slice") for t in node[2:]])
            if s.step == 0 or len(range(m)[s]) == 0:
                raise RefError("invalid_slice")
            return Val(a.v[:, s], a.e[:, s], True, a.const)
        return self._call(node[1], node[2], env)

    def _call(self, name, arg_nodes, env):
        if name not in FUNCTIONS:
            raise RefError("not_callable" if name in env else "unknown_function")
        args = [self._eval(t, env) for t in arg_nodes]
        want = {**{f: 1 for f in UNARY}, **{f: 2 for f in BINARY}, **{f: 3 for f in TERNARY},
                **{f: 1 for f in REDUCTIONS}}.get(name)
        if name in ("min", "max"):
            if len(args) == 1:
                return _reduce(name, args[0])
            if not args:
                raise RefError("wrong_arguments")
            f = min2 if name == "min" else max2
            out = args[0]
            for b in args[1:]:
                out = _apply(f, [out, b], 0)
            return out
        if len(args) != want:
            raise RefError("wrong_arguments", f"{name} takes {want}")
        if name in REDUCTIONS:
            return _reduce(name, args[0])
        f, ulps = {**UNARY, **BINARY, **TERNARY}[name]
        out = _apply(f, args, ulps)
        return _turns(name, args[0], out) if name in _TURNS else out


def agrees(got, want, err, rel=1e-12, slack=4.0):
    """Elementwise: got matches the reference value want within rel and slack * err.

    Both NaN, or the same infinity, agree; an infinite bound accepts anything.  An exact
    zero (bound 0) must also have the right sign: 1/x, atan2 and copysign can tell."""
    got, want, err = (np.asarray(a, dtype=float) for a in (got, want, err))
    zero_sign = (got == 0) & (want == 0) & (err == 0) & (np.signbit(got) != np.signbit(want))
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        near = np.abs(got - want) <= rel * np.abs(want) + slack * err
    return np.isinf(err) | ((same | (near & np.isfinite(want) & np.isfinite(got))) & ~zero_sign)
