"""The twin's timeline as a Chrome trace (the Trace Event Format; chrome://tracing, Perfetto).

One process per node: thread 0 holds the node's state (GPU Operator bring-up, driver upgrade,
not ready, GPU faults) and the node's instant events; threads 1.. hold its pods as complete
("X") slices, each pod in the first lane free at its start so slices in a lane never overlap.
One process per Deployment that served requests: its engines as slices from EngineReady to the
pod's end, and replicas as a counter with the scale events as instants. One "cluster" process
holds the scheduling failures and the ClusterPolicy changes. ``ts`` and ``dur`` are integer
microseconds of simulated time, so the same events give the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gpuplane.report.timeline import END_OF_RUN, PodSlice, Timeline, split_object

CLUSTER_PID = 1


def us(t_s: float) -> int:
    return round(t_s * 1e6)


def _meta(pid: int, tid: int | None, name: str, value: str) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "M", "pid": pid, "name": name, "args": {"name": value}}
    event["tid"] = 0 if tid is None else tid
    return event


def _slice(
    pid: int, tid: int, name: str, start_s: float, end_s: float, cat: str, **args: Any
) -> Any:
    return {
        "ph": "X",
        "pid": pid,
        "tid": tid,
        "name": name,
        "cat": cat,
        "ts": us(start_s),
        "dur": max(0, us(end_s) - us(start_s)),
        "args": args,
    }


def _instant(pid: int, tid: int, name: str, t_s: float, cat: str, message: str) -> Any:
    return {
        "ph": "i",
        "s": "t",
        "pid": pid,
        "tid": tid,
        "name": name,
        "cat": cat,
        "ts": us(t_s),
        "args": {"message": message},
    }


def lanes(slices: Sequence[tuple[float, float]]) -> list[int]:
    """For slices sorted by start, the first lane (1, 2, ...) free at each one's start."""
    ends: list[float] = []
    out = []
    for start, end in slices:
        for lane, busy_until in enumerate(ends):
            if busy_until <= start:
                ends[lane] = end
                out.append(lane + 1)
                break
        else:
            ends.append(end)
            out.append(len(ends))
    return out


def _pod_args(p: PodSlice) -> dict[str, Any]:
    args: dict[str, Any] = {"pod": p.pod, "gpus": list(p.gpus), "ended_by": p.end_reason}
    if p.end_reason == END_OF_RUN:
        args["note"] = "no end event: running at the end, or exited 0 (no event for that)"
    return args


def _node_events(timeline: Timeline, node: str, pid: int) -> list[dict[str, Any]]:
    events = [_meta(pid, 0, "thread_name", "node state")]
    for m in timeline.node_marks:
        if m.node == node:
            events.append(_slice(pid, 0, m.kind, m.start_s, m.end_s, "node", label=m.label))
    for i in timeline.instants:
        if i.obj == f"Node/{node}":
            events.append(_instant(pid, 0, i.reason, i.t_s, "node", i.message))
    pods = [p for p in timeline.pods if p.node == node]
    for p, lane in zip(pods, lanes([(p.start_s, p.end_s) for p in pods]), strict=True):
        name = p.pod.partition("/")[2]
        events.append(_slice(pid, lane, name, p.start_s, p.end_s, "pod", **_pod_args(p)))
    for lane in sorted({e["tid"] for e in events if e["tid"] > 0}):
        events.append(_meta(pid, lane, "thread_name", f"pods {lane}"))
    return events


def _deployment_of(pod: str, deployments: Iterable[str]) -> str | None:
    """A ReplicaSet pod is named <deployment>-<hash>-<5 chars>."""
    for d in deployments:
        if pod.startswith(d + "-") and pod.count("-") >= d.count("-") + 2:
            return d
    return None


def _serving_events(timeline: Timeline, pid: int, deployment: str) -> list[dict[str, Any]]:
    events = [
        _meta(pid, None, "process_name", f"serving {deployment}"),
        _meta(pid, 0, "thread_name", "replicas and scale events"),
    ]
    for step in timeline.replicas:
        if step.deployment == deployment:
            events.append(
                {
                    "ph": "C",
                    "pid": pid,
                    "tid": 0,
                    "name": "replicas",
                    "ts": us(step.t_s),
                    "args": {"replicas": step.replicas},
                }
            )
            events.append(_instant(pid, 0, "ScalingReplicaSet", step.t_s, "scale", ""))
    engines = [
        p
        for p in timeline.pods
        if p.engine_ready_s is not None and _deployment_of(p.pod, [deployment])
    ]
    spans = [(p.engine_ready_s or p.start_s, p.end_s) for p in engines]
    for p, lane in zip(engines, lanes(spans), strict=True):
        start = p.engine_ready_s or p.start_s
        events.append(_slice(pid, lane, "engine", start, p.end_s, "engine", pod=p.pod, node=p.node))
    for lane in sorted({e["tid"] for e in events if e["tid"] > 0}):
        events.append(_meta(pid, lane, "thread_name", f"engine {lane}"))
    return events


def chrome_trace(timeline: Timeline, *, scenario: str = "", seed: int = 0) -> dict[str, Any]:
    """The trace as a JSON object (``traceEvents``, ``displayTimeUnit``, ``otherData``)."""
    events: list[dict[str, Any]] = [
        _meta(CLUSTER_PID, None, "process_name", "cluster"),
        _meta(CLUSTER_PID, 0, "thread_name", "scheduling failures, policy, scale"),
    ]
    for i in timeline.instants:
        kind, _ = split_object(i.obj)
        if kind not in ("Node",):
            events.append(_instant(CLUSTER_PID, 0, i.reason, i.t_s, kind.lower(), i.message))
    nodes = sorted({p.node for p in timeline.pods} | {m.node for m in timeline.node_marks})
    for offset, node in enumerate(nodes):
        pid = CLUSTER_PID + 1 + offset
        events.append(_meta(pid, None, "process_name", f"node {node}"))
        events.append(
            {
                "ph": "M",
                "pid": pid,
                "tid": 0,
                "name": "process_sort_index",
                "args": {"sort_index": offset + 1},
            }
        )
        events.extend(_node_events(timeline, node, pid))
    deployments = sorted({s.deployment for s in timeline.replicas})
    served = [
        d
        for d in deployments
        if any(p.engine_ready_s is not None and _deployment_of(p.pod, [d]) for p in timeline.pods)
    ]
    for offset, d in enumerate(served):
        events.extend(_serving_events(timeline, CLUSTER_PID + 1 + len(nodes) + offset, d))
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "scenario": scenario,
            "seed": seed,
            "until_s": timeline.until_s,
            "clock": "simulated time",
        },
    }
