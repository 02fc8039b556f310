"""Which functions and aggregations the subset knows, with their argument types, and the names
of the Prometheus ones it does not implement (so the error can say "not supported" rather than
"unknown")."""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.autoscaler.promql.ast import ValueType

S, V, M = ValueType.SCALAR, ValueType.VECTOR, ValueType.MATRIX


@dataclass(frozen=True, slots=True)
class Signature:
    args: tuple[ValueType, ...]
    result: ValueType
    optional: int = 0  # how many trailing args may be left out


FUNCTIONS: dict[str, Signature] = {
    "rate": Signature((M,), V),
    "increase": Signature((M,), V),
    "irate": Signature((M,), V),
    "delta": Signature((M,), V),
    "avg_over_time": Signature((M,), V),
    "sum_over_time": Signature((M,), V),
    "min_over_time": Signature((M,), V),
    "max_over_time": Signature((M,), V),
    "count_over_time": Signature((M,), V),
    "last_over_time": Signature((M,), V),
    "histogram_quantile": Signature((S, V), V),
    "abs": Signature((V,), V),
    "ceil": Signature((V,), V),
    "floor": Signature((V,), V),
    "clamp_min": Signature((V, S), V),
    "clamp_max": Signature((V, S), V),
    "scalar": Signature((V,), S),
    "vector": Signature((S,), V),
    "time": Signature((), S),
}

AGGREGATIONS = frozenset({"sum", "avg", "min", "max", "count"})
UNSUPPORTED_AGGREGATIONS = frozenset(
    {
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "count_values",
        "group",
        "limitk",
        "limit_ratio",
    }
)
# Every other function of Prometheus 3 (promql/parser/functions.go).
UNSUPPORTED_FUNCTIONS = frozenset(
    {
        "absent",
        "absent_over_time",
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atanh",
        "changes",
        "clamp",
        "cos",
        "cosh",
        "day_of_month",
        "day_of_week",
        "day_of_year",
        "days_in_month",
        "deg",
        "deriv",
        "double_exponential_smoothing",
        "exp",
        "histogram_avg",
        "histogram_count",
        "histogram_fraction",
        "histogram_stddev",
        "histogram_stdvar",
        "histogram_sum",
        "holt_winters",
        "hour",
        "idelta",
        "info",
        "label_join",
        "label_replace",
        "ln",
        "log10",
        "log2",
        "mad_over_time",
        "minute",
        "month",
        "predict_linear",
        "present_over_time",
        "quantile_over_time",
        "rad",
        "resets",
        "round",
        "sgn",
        "sin",
        "sinh",
        "sort",
        "sort_by_label",
        "sort_by_label_desc",
        "sort_desc",
        "sqrt",
        "stddev_over_time",
        "stdvar_over_time",
        "tan",
        "tanh",
        "timestamp",
        "year",
        "pi",
        "ts_of_max_over_time",
        "ts_of_min_over_time",
        "ts_of_last_over_time",
        "first_over_time",
    }
)
KEYWORDS = frozenset(
    {
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "offset",
        "and",
        "or",
        "unless",
        "atan2",
    }
)
