"""The run's plots over simulated time, each from what the run's files hold.

Every function returns HTML: a figure, or a line saying the series is not in this run. The
cluster totals come from timeseries.csv; per pool, pending reasons, latency, node states and
replicas are read off the events (``report.timeline``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gpuplane.report.html.page import figure, missing
from gpuplane.report.html.svg import new_figure, style, svg_text
from gpuplane.report.timeline import Timeline, split_object

HOUR = 3600.0
_CLAUSE = re.compile(r"(\d+) (?:node\(s\) |nodes? )?(.+)")
MARK_COLOURS = {
    "operator": "#8fb3e0",
    "upgrade": "#e6b34d",
    "not-ready": "#d9534f",
    "gpu-fault": "#8e44ad",
}


def _hours(values: Sequence[float]) -> np.ndarray:
    return np.asarray(values, dtype=float) / HOUR


def _step(times: Sequence[float], values: Sequence[float], until_s: float) -> tuple[Any, Any]:
    return _hours([*times, until_s]), np.asarray([*values, values[-1] if values else 0.0])


def cluster_gpus(columns: Mapping[str, Sequence[float]]) -> str:
    need = ("t_s", "gpus_capacity", "gpus_allocatable", "gpus_allocated")
    if not all(c in columns for c in need):
        return missing("GPUs allocated and capacity over time (timeseries.csv)")
    with style():
        fig = new_figure()
        ax = fig.add_subplot()
        t = _hours(columns["t_s"])
        for name, label in zip(
            need[1:], ("capacity", "allocatable (advertised)", "allocated"), strict=True
        ):
            ax.step(t, columns[name], where="post", label=label)
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel("GPUs")
        ax.legend(loc="lower right")
        return figure(
            svg_text(fig), "Cluster GPUs: capacity, advertised by device plugins, allocated"
        )


def pool_gpus(timeline: Timeline, capacity: Mapping[str, int]) -> str:
    """Whole GPUs named in Scheduled events, per pool, as a share of the pool's GPUs."""
    if not timeline.pods or not capacity:
        return missing("GPUs allocated per pool")
    pools = sorted(capacity, key=len, reverse=True)
    # (time, +1/-1, node, gpu): a GPU shared by several pods (time-slicing) counts once.
    changes: list[tuple[float, int, str, int]] = []
    for pod in timeline.pods:
        changes += [(pod.start_s, 1, pod.node, g) for g in pod.gpus]
        changes += [(pod.end_s, -1, pod.node, g) for g in pod.gpus]
    holders: dict[tuple[str, int], int] = {}
    used: dict[str, int] = dict.fromkeys(capacity, 0)
    deltas: dict[str, dict[float, int]] = {p: {} for p in capacity}
    for t, sign, node, gpu in sorted(changes, key=lambda c: (c[0], c[1], c[2], c[3])):
        pool = next((p for p in pools if node.startswith(p + "-")), None)
        if pool is None:
            continue
        before = holders.get((node, gpu), 0)
        holders[(node, gpu)] = before + sign
        if (before == 0) != (before + sign == 0):
            used[pool] += sign
            deltas[pool][t] = used[pool]
    with style():
        fig = new_figure(9.0, 3.6)
        ax = fig.add_subplot()
        for pool in sorted(capacity):
            if not deltas[pool] or capacity[pool] == 0:
                continue
            times = sorted(deltas[pool])
            share = [deltas[pool][t] * 100.0 / capacity[pool] for t in times]
            x, y = _step([0.0, *times], [0.0, *share], timeline.until_s)
            ax.step(x, y, where="post", label=f"{pool} ({capacity[pool]} GPUs)")
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel("% of the pool's GPUs")
        ax.legend(fontsize=7, ncol=3, loc="upper left")
        caption = (
            "GPUs in use per pool (whole GPUs the Scheduled events name, a shared GPU once; "
            "MIG instances and DRA devices are not named there)"
        )
        return figure(svg_text(fig), caption)


def pending_reason(message: str) -> str:
    """The commonest node reason of a FailedScheduling message, without its count."""
    head, _, rest = message.partition(": ")
    clauses = rest.split(". preemption:")[0].rstrip(".").split(", ") if rest else [head]
    best = (0, head)
    for c in clauses:
        m = _CLAUSE.match(c.strip())
        if m and int(m.group(1)) > best[0]:
            best = (int(m.group(1)), m.group(2))
    return best[1][:70]


def pending_by_reason(timeline: Timeline, columns: Mapping[str, Sequence[float]]) -> str:
    first: dict[str, tuple[float, str]] = {}
    for i in timeline.instants:
        kind, pod = split_object(i.obj)
        if kind == "Pod" and i.reason == "FailedScheduling":
            first.setdefault(pod, (i.t_s, pending_reason(i.message)))
    if not first and "pods_pending" not in columns:
        return missing("pending pods by reason")
    bound = {p.pod: p.start_s for p in timeline.pods}
    with style():
        fig = new_figure()
        ax = fig.add_subplot()
        if "pods_pending" in columns:
            ax.step(
                _hours(columns["t_s"]),
                columns["pods_pending"],
                where="post",
                label="pending (all, timeseries.csv)",
                color="black",
                lw=1,
            )
        by_reason: dict[str, dict[float, int]] = {}
        for pod, (t, reason) in sorted(first.items()):
            d = by_reason.setdefault(reason, {})
            end = bound.get(pod, timeline.until_s)
            d[t] = d.get(t, 0) + 1
            d[end] = d.get(end, 0) - 1
        for reason, d in sorted(by_reason.items()):
            times = sorted(d)
            x, y = _step(times, np.cumsum([d[t] for t in times]).tolist(), timeline.until_s)
            ax.step(x, y, where="post", label=reason)
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel("pods")
        ax.legend(fontsize=7, loc="upper right")
        caption = (
            "Pending pods; by the commonest node reason of their first FailedScheduling event, "
            "until they bind"
        )
        return figure(svg_text(fig), caption)


def scheduling_latency(timeline: Timeline, bins: int = 24) -> str:
    """p50/p90/p99 of (Scheduled - SuccessfulCreate) of the pods bound in each time bin."""
    samples = [
        (p.start_s, p.start_s - timeline.created_s[p.pod])
        for p in timeline.pods
        if p.pod in timeline.created_s
    ]
    if not samples or timeline.until_s <= 0:
        return missing("scheduling latency over time (pods created by a controller)")
    edges = np.linspace(0.0, timeline.until_s, bins + 1)
    t = np.asarray([s[0] for s in samples])
    lat = np.asarray([s[1] for s in samples])
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1)
    with style():
        fig = new_figure()
        ax = fig.add_subplot()
        mids = _hours(((edges[:-1] + edges[1:]) / 2).tolist())
        for q in (50, 90, 99):
            ys = [
                float(np.percentile(lat[idx == b], q)) if (idx == b).any() else np.nan
                for b in range(bins)
            ]
            ax.plot(mids, ys, marker="o", ms=3, label=f"p{q}")
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel("seconds")
        ax.legend()
        caption = (
            "Scheduling latency (Scheduled minus the controller's SuccessfulCreate) of the pods "
            f"bound in each of {bins} windows"
        )
        return figure(svg_text(fig), caption)


def node_states(timeline: Timeline) -> str:
    nodes = sorted({m.node for m in timeline.node_marks})
    if not nodes:
        return missing("node states")
    with style():
        fig = new_figure(9.0, max(2.0, 0.18 * len(nodes) + 1.0))
        ax = fig.add_subplot()
        row = {n: i for i, n in enumerate(nodes)}
        for kind, colour in MARK_COLOURS.items():
            spans = [m for m in timeline.node_marks if m.kind == kind]
            for m in spans:
                width = max((m.end_s - m.start_s) / HOUR, timeline.until_s / HOUR / 400)
                ax.broken_barh([(m.start_s / HOUR, width)], (row[m.node] - 0.4, 0.8), color=colour)
            ax.plot([], [], color=colour, lw=6, label=kind)
        xid = [
            (i.t_s, i.obj.partition("/")[2])
            for i in timeline.instants
            if i.reason in ("GpuXidError", "MigReconfigured")
        ]
        for t, node in xid:
            if node in row:
                ax.plot([t / HOUR], [row[node]], marker="v", color="black", ms=4)
        ax.set_yticks(range(len(nodes)), nodes, fontsize=6)
        ax.set_xlim(0, timeline.until_s / HOUR)
        ax.set_xlabel("simulated time (h)")
        ax.legend(fontsize=7, ncol=4, loc="upper right")
        caption = "Node states from the events (triangles: XID errors and MIG repartitions)"
        return figure(svg_text(fig), caption)


def replicas(timeline: Timeline, autoscaled: Sequence[str]) -> str:
    if not timeline.replicas:
        return missing("replicas over time")
    with style():
        fig = new_figure()
        ax = fig.add_subplot()
        for d in sorted({s.deployment for s in timeline.replicas}):
            steps = [s for s in timeline.replicas if s.deployment == d]
            x, y = _step([s.t_s for s in steps], [s.replicas for s in steps], timeline.until_s)
            label = d + (" (autoscaled)" if d in autoscaled else "")
            ax.step(x, y, where="post", label=label)
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel("replicas")
        ax.legend(fontsize=7)
        return figure(svg_text(fig), "Deployment replicas (ScalingReplicaSet events)")


def openb_curves(curves: Mapping[str, Sequence[float | None]]) -> str:
    if not curves:
        return missing("the OpenB placement comparison")
    with style():
        fig = new_figure(7.0, 3.4)
        ax = fig.add_subplot()
        for policy, values in curves.items():
            ys = [np.nan if v is None else v for v in values]
            ax.plot(range(len(ys)), ys, label=policy)
        ax.axvline(100, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("arrived GPU demand (% of the cluster's GPUs)")
        ax.set_ylabel("unallocated GPUs (%)")
        ax.legend()
        caption = "OpenB (FGD paper protocol, default trace, seed 42): unallocated GPUs vs arrived"
        return figure(svg_text(fig), caption)
