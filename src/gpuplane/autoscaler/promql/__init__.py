"""A PromQL subset over the twin's ``core.tsdb.SeriesStore``, for KEDA's Prometheus trigger and
for reading the twin's metrics the way a real cluster's dashboards and alerts would.

``evaluate(query, store, t_s)`` returns a ``Scalar`` or a ``Vector`` of (labels, value) samples.
The lexer, parser (Prometheus's precedence and type checks) and the functions follow
prometheus/prometheus ``promql/``; anything outside the subset is an InputError that names the
construct and its position.
"""

from gpuplane.autoscaler.promql.evaluator import evaluate
from gpuplane.autoscaler.promql.parser import parse, parse_query
from gpuplane.autoscaler.promql.values import Sample, Scalar, Value, Vector

__all__ = ["Sample", "Scalar", "Value", "Vector", "evaluate", "parse", "parse_query"]
