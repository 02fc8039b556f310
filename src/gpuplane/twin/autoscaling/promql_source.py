"""The twin's answer to the SLO scaler's queries: gpuplane's PromQL over the cluster's series
store, read by the rules the KEDA external scaler reads a Prometheus answer by
(``live.scaler.prom_api.read_result`` with ``ignoreNullValues``): one number from a scalar or a
one-element vector, None for an empty vector or a NaN/±Inf value, and a query answering several
series is an error (it must aggregate)."""

from __future__ import annotations

import math

from gpuplane.autoscaler.promql.evaluator import evaluate
from gpuplane.autoscaler.promql.values import Scalar
from gpuplane.core.errors import InputError
from gpuplane.core.tsdb import SeriesStore


class TwinPromql:
    """``autoscaler.slo.signals.QueryEvaluator`` over a ``SeriesStore``."""

    def __init__(self, store: SeriesStore) -> None:
        self.store = store

    def query(self, query: str, at_s: float) -> float | None:
        value = evaluate(query, self.store, at_s)
        if isinstance(value, Scalar):
            x = float(value.value)
        else:
            if len(value.samples) > 1:
                raise InputError(f"prometheus query {query} returned multiple elements")
            if not value.samples:
                return None
            x = float(value.samples[0].value)
        return x if math.isfinite(x) else None
