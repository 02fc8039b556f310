"""Instant-query evaluation of a parsed PromQL expression over a ``core.tsdb.SeriesStore``.

An instant vector selector takes, per series, the newest sample in ``(t - lookback, t]`` (the
lookback delta, 5 minutes by default); a range selector ``[d]`` takes the samples in
``(t - d, t]``. Both windows are open on the left, as in Prometheus 3: a sample exactly 5 minutes
old is seen neither by ``x`` nor by ``last_over_time(x[5m])``. Evaluation is a pure function of the
store's contents and the time, and raises nothing but InputError: arithmetic follows Go's float
rules (``gofloat``), and an expression nested deeper than Python's recursion allows is an
InputError rather than a crash (Prometheus has no such limit).
"""

from __future__ import annotations

from gpuplane.autoscaler.promql.aggregation import aggregate
from gpuplane.autoscaler.promql.ast import (
    COMPARISON_OPS,
    SET_OPS,
    Aggregate,
    Binary,
    Call,
    Expr,
    MatrixSelector,
    NumberLiteral,
    Paren,
    StringLiteral,
    Unary,
    VectorSelector,
)
from gpuplane.autoscaler.promql.binary import (
    BinaryOpError,
    scalar_op,
    set_op,
    vector_scalar,
    vector_vector,
)
from gpuplane.autoscaler.promql.errors import query_error
from gpuplane.autoscaler.promql.functions import (
    extrapolated_rate,
    histogram_quantile,
    instant_rate,
    over_time,
    simple,
)
from gpuplane.autoscaler.promql.parser import parse_query
from gpuplane.autoscaler.promql.values import (
    NAME,
    LabelSet,
    RangeSeries,
    Sample,
    Scalar,
    Value,
    Vector,
    drop_name,
    label_set,
    render,
)
from gpuplane.core.errors import InputError
from gpuplane.core.tsdb import DEFAULT_LOOKBACK_S, Series, SeriesStore, window_start

_RANGE_FUNCS = {"rate", "increase", "delta", "irate"}
_OVER_TIME = {
    "avg_over_time",
    "sum_over_time",
    "min_over_time",
    "max_over_time",
    "count_over_time",
    "last_over_time",
}


class _Evaluator:
    def __init__(
        self, store: SeriesStore, t_s: float, lookback_s: float, query: str, source: str | None
    ) -> None:
        self.store = store
        self.t = t_s
        self.lookback = lookback_s
        self.query = query
        self.source = source

    def error(self, pos: int, problem: str) -> InputError:
        return query_error(self.query, pos, problem, source=self.source)

    def unique(self, samples: list[Sample], pos: int) -> Vector:
        seen: set[LabelSet] = set()
        for s in samples:
            if s.labels in seen:
                raise self.error(
                    pos,
                    f"vector cannot contain metrics with the same labelset {render(s.labels)}",
                )
            seen.add(s.labels)
        return Vector(tuple(samples))

    # -- selectors -----------------------------------------------------------------------
    def _series(self, sel: VectorSelector) -> list[tuple[LabelSet, Series]]:
        names = [sel.name] if sel.name is not None else self.store.names()
        out: list[tuple[LabelSet, Series]] = []
        for name in names:
            for series in self.store.series(name):
                labels = label_set(((NAME, name), *series.labels))
                values = dict(labels)
                if all(m.matches(values.get(m.name, "")) for m in sel.matchers):
                    out.append((labels, series))
        return out

    def vector(self, sel: VectorSelector) -> Vector:
        samples = []
        for labels, series in self._series(sel):
            value = series.at(self.t, self.lookback)
            if value is not None:
                samples.append(Sample(labels, value))
        return Vector(tuple(samples))

    def matrix(self, sel: MatrixSelector) -> list[RangeSeries]:
        out = []
        for labels, series in self._series(sel.vector):
            times, values = series.window(window_start(self.t, sel.range_s), self.t)
            if times:
                out.append(RangeSeries(labels, tuple(times), tuple(values)))
        return out

    # -- nodes ---------------------------------------------------------------------------
    def eval(self, node: Expr) -> Value:
        if isinstance(node, NumberLiteral):
            return Scalar(node.value)
        if isinstance(node, Paren):
            return self.eval(node.expr)
        if isinstance(node, VectorSelector):
            return self.vector(node)
        if isinstance(node, Unary):
            return self.unary(node)
        if isinstance(node, Aggregate):
            inner = self.eval_vector(node.expr)
            return Vector(tuple(aggregate(node.op, inner.samples, node.grouping, node.without)))
        if isinstance(node, Binary):
            return self.binary(node)
        if isinstance(node, Call):
            return self.call(node)
        # The parser only lets strings and range selectors appear where they are consumed.
        assert isinstance(node, StringLiteral | MatrixSelector)
        raise self.error(node.pos, f"a {node.type.value} cannot be evaluated on its own")

    def eval_vector(self, node: Expr) -> Vector:
        value = self.eval(node)
        assert isinstance(value, Vector)
        return value

    def eval_scalar(self, node: Expr) -> float:
        value = self.eval(node)
        assert isinstance(value, Scalar)
        return value.value

    def unary(self, node: Unary) -> Value:
        value = self.eval(node.expr)
        if node.op == "+":
            return value
        if isinstance(value, Scalar):
            return Scalar(-value.value)
        return self.unique([Sample(drop_name(s.labels), -s.value) for s in value.samples], node.pos)

    def binary(self, node: Binary) -> Value:
        lhs, rhs = self.eval(node.lhs), self.eval(node.rhs)
        if isinstance(lhs, Scalar) and isinstance(rhs, Scalar):
            return Scalar(scalar_op(node.op, lhs.value, rhs.value, node.return_bool))
        if isinstance(lhs, Vector) and isinstance(rhs, Vector):
            try:
                if node.op in SET_OPS:
                    return Vector(tuple(set_op(node.op, lhs.samples, rhs.samples, node.matching)))
                samples = vector_vector(
                    node.op, lhs.samples, rhs.samples, node.matching, node.return_bool
                )
            except BinaryOpError as err:
                raise self.error(node.pos, str(err)) from None
            return self.unique(samples, node.pos)
        if isinstance(lhs, Vector):
            assert isinstance(rhs, Scalar)
            samples = vector_scalar(node.op, lhs.samples, rhs.value, False, node.return_bool)
        else:
            assert isinstance(lhs, Scalar) and isinstance(rhs, Vector)
            samples = vector_scalar(node.op, rhs.samples, lhs.value, True, node.return_bool)
        if node.op in COMPARISON_OPS and not node.return_bool:
            return Vector(tuple(samples))
        return self.unique(samples, node.pos)

    def call(self, node: Call) -> Value:
        f, args = node.func, node.args
        if f in _RANGE_FUNCS or f in _OVER_TIME:
            sel = args[0]
            assert isinstance(sel, MatrixSelector)
            out: list[Sample] = []
            for series in self.matrix(sel):
                if f in _OVER_TIME:
                    value = over_time(f, series)
                elif f == "irate":
                    value = instant_rate(series, is_rate=True)
                else:
                    value = extrapolated_rate(
                        series, sel.range_s, self.t, f != "delta", f == "rate"
                    )
                if value is not None:
                    keep_name = f == "last_over_time"
                    labels = series.labels if keep_name else drop_name(series.labels)
                    out.append(Sample(labels, value))
            return self.unique(out, node.pos)
        if f == "histogram_quantile":
            q = self.eval_scalar(args[0])
            return self.unique(histogram_quantile(q, self.eval_vector(args[1]).samples), node.pos)
        if f == "scalar":
            samples = self.eval_vector(args[0]).samples
            return Scalar(samples[0].value if len(samples) == 1 else float("nan"))
        if f == "vector":
            return Vector((Sample((), self.eval_scalar(args[0])),))
        if f == "time":
            return Scalar(self.t)
        arg = self.eval_scalar(args[1]) if len(args) > 1 else None
        return self.unique(simple(f, self.eval_vector(args[0]).samples, arg), node.pos)


def evaluate(
    query: str | Expr,
    store: SeriesStore,
    t_s: float,
    lookback_s: float = DEFAULT_LOOKBACK_S,
    source: str | None = None,
    text: str | None = None,
) -> Value:
    """Evaluate ``query`` (text or an already parsed tree) at ``t_s``: a Scalar or a Vector.

    ``text`` is the query's text when ``query`` is a parsed tree, so that evaluation errors can
    say where they are. A ``lookback_s`` of 0 is the default 5 minutes, as Prometheus's engine
    takes a zero lookback delta. Every failure is an InputError.
    """
    if lookback_s <= 0:
        lookback_s = DEFAULT_LOOKBACK_S
    if isinstance(query, str):
        text, node = query, parse_query(query, source)
    else:
        text, node = text or "", query
    try:
        return _Evaluator(store, t_s, lookback_s, text, source).eval(node)
    except RecursionError:
        raise query_error(
            text, 0, "the expression is nested too deeply to evaluate", source=source
        ) from None
