"""Plots of the run's tidy series files (``twin.series``): FGD fragmentation per pool, TTFT/ITL
percentiles and SLO attainment per serving service, and what each autoscaler saw.

Every function returns HTML: the figures, or a line saying the series is not in this run (an
older run, or a run without that kind of entity).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from gpuplane.report.html.page import figure, missing
from gpuplane.report.html.run_data import Series
from gpuplane.report.html.svg import new_figure, style, svg_text

HOUR = 3600.0
Metrics = Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]]


def _line(ax: Axes, metrics: Metrics, name: str, label: str, **kw: Any) -> bool:
    if name not in metrics:
        return False
    t, v = metrics[name]
    ax.step(np.asarray(t) / HOUR, v, where="post", label=label, **kw)
    return True


def pool_fragmentation(series: Mapping[str, Series]) -> str:
    pools = series.get("pools_timeseries.csv")
    if not pools:
        return missing("FGD fragmentation per pool over time (pools_timeseries.csv)")
    with style():
        fig = new_figure()
        ax = fig.add_subplot()
        for pool in sorted(pools):
            m = pools[pool]
            _line(ax, m, "fgd_fragmentation_gpus", f"{pool}: fragmentation")
            _line(ax, m, "gpus_free", f"{pool}: free GPUs", ls="--", lw=0.8)
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel("GPUs")
        ax.legend(fontsize=7, ncol=2, loc="upper right")
        caption = (
            "FGD expected fragmentation per pool (GPUs), typical pods from the pods seen so far, "
            "against the pool's free GPUs"
        )
        return figure(svg_text(fig), caption)


def serving_latency(series: Mapping[str, Series]) -> str:
    services = series.get("serving_timeseries.csv")
    if not services:
        return missing("TTFT/ITL and SLO attainment over time (serving_timeseries.csv)")
    parts = []
    for name in sorted(services):
        m = services[name]
        with style():
            fig = new_figure(9.0, 3.2)
            ttft, itl, slo = fig.subplots(1, 3)
            for q in ("p50", "p90", "p99"):
                _line(ttft, m, f"ttft_{q}_s", q)
                _line(itl, m, f"itl_{q}_s", q)
            _line(slo, m, "slo_attainment", "attainment", color="black")
            ttft.set_ylabel("TTFT (s)")
            itl.set_ylabel("ITL (s)")
            slo.set_ylabel("SLO attainment")
            slo.set_ylim(-0.02, 1.02)
            for ax in (ttft, itl, slo):
                ax.set_xlabel("simulated time (h)")
            ttft.legend(fontsize=7)
            caption = (
                f"{name}: TTFT and per-request ITL percentiles and SLO attainment of the "
                "requests that ended in each metrics interval"
            )
            parts.append(figure(svg_text(fig), caption))
    return "".join(parts)


def autoscaler_signals(series: Mapping[str, Series]) -> str:
    scalers = series.get("autoscaling_timeseries.csv")
    if not scalers:
        return missing("request rate and queue length per autoscaler over time")
    parts = []
    for name in sorted(scalers):
        m = scalers[name]
        with style():
            fig = new_figure(9.0, 3.2)
            reps, triggers = fig.subplots(1, 2)
            _line(reps, m, "desired_replicas", "desired replicas")
            _line(reps, m, "current_replicas", "current replicas")
            reps.set_ylabel("replicas")
            load = reps.twinx()
            _line(load, m, "request_rate_rps", "request rate (req/s)", color="tab:green", lw=0.8)
            _line(load, m, "queue_length", "queue (requests)", color="tab:red", lw=0.8)
            load.set_ylabel("req/s, requests")
            reps.legend(fontsize=7, loc="upper left")
            load.legend(fontsize=7, loc="upper right")
            names = sorted({k.rsplit(".", 1)[0] for k in m if k.startswith("trigger.")})
            for i, trig in enumerate(names):
                colour = f"C{i % 10}"
                label = trig.removeprefix("trigger.")
                _line(triggers, m, f"{trig}.value", label, color=colour)
                _line(triggers, m, f"{trig}.threshold", f"{label} threshold", color=colour, ls="--")
            triggers.set_ylabel("trigger value")
            if names:
                triggers.legend(fontsize=6)
            for ax in (reps, triggers):
                ax.set_xlabel("simulated time (h)")
            caption = (
                f"{name}: desired and current replicas, the request rate and queue it saw, and "
                "each trigger's value against its threshold"
            )
            parts.append(figure(svg_text(fig), caption))
    return "".join(parts)
