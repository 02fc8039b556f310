"""Per serving service and metrics interval (serving_timeseries.csv): the requests that
arrived and finished in the interval, their TTFT and ITL percentiles and their SLO attainment.

Read off the run's request outcomes after the run (each request is simulated at its own times,
so its outcome carries exact arrival, first-token and end times): nothing here is sampled
during the run. The row at grid time t covers the requests whose end falls in (t_prev, t].

- ``ttft_p*_s``: time to first token of the requests completed in the interval;
- ``itl_p*_s``: their mean inter-token latency ((e2e - TTFT) / (output tokens - 1)), a
  per-request figure, unlike the run summary's ITL over every token gap;
- ``slo_attainment``: the share of the requests that ended in the interval (completed,
  rejected or aborted) that met both SLO targets, as the run summary counts a request.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpuplane.serving.routing.outcome import RequestOutcome, Status, weighted_percentile
from gpuplane.twin.scenario.serving_spec import ServiceSpec
from gpuplane.twin.series import SeriesRow
from gpuplane.twin.serving.summary import meets_slo

QUANTILES = (50.0, 90.0, 99.0)


def _end_s(o: RequestOutcome) -> float | None:
    if o.status is Status.IN_FLIGHT:
        return None
    return o.end_s if o.end_s is not None else o.arrival_s


def _percentiles(values: list[float]) -> list[float]:
    arr = np.asarray(values, dtype=np.float64)
    ones = np.ones(len(arr), dtype=np.int64)
    return [round(weighted_percentile(arr, ones, q), 6) for q in QUANTILES]


def service_rows(
    spec: ServiceSpec,
    outcomes: Sequence[RequestOutcome],
    arrivals: np.ndarray,
    grid: Sequence[float],
) -> list[SeriesRow]:
    ends = [(_end_s(o), o) for o in outcomes]
    ended = sorted(((t, o) for t, o in ends if t is not None), key=lambda p: p[0])
    end_times = [t for t, _ in ended]
    rows: list[SeriesRow] = []
    prev = 0.0
    for t in grid:
        if t <= prev:
            continue
        lo = int(np.searchsorted(end_times, prev, side="right"))
        hi = int(np.searchsorted(end_times, t, side="right"))
        window = [o for _, o in ended[lo:hi]]
        arrived = int(np.searchsorted(arrivals, t, side="right")) - int(
            np.searchsorted(arrivals, prev, side="right")
        )
        values: dict[str, float] = {
            "arrived_rps": round(arrived / (t - prev), 6),
            "requests_ended": float(len(window)),
        }
        done = [o for o in window if o.status is Status.COMPLETED and o.ttft_s is not None]
        if done:
            ttft = [o.ttft_s for o in done if o.ttft_s is not None]
            for q, v in zip(QUANTILES, _percentiles(ttft), strict=True):
                values[f"ttft_p{q:g}_s"] = v
            itl = [
                (o.e2e_s - o.ttft_s) / (o.output_tokens - 1)
                for o in done
                if o.e2e_s is not None and o.ttft_s is not None and o.output_tokens > 1
            ]
            if itl:
                for q, v in zip(QUANTILES, _percentiles(itl), strict=True):
                    values[f"itl_p{q:g}_s"] = v
        if window:
            met = sum(1 for o in window if meets_slo(o, spec))
            values["slo_attainment"] = round(met / len(window), 6)
        rows += [SeriesRow(round(t, 6), spec.name, m, v) for m, v in values.items()]
        prev = t
    return rows
