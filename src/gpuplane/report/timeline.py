"""A twin run's timeline, read back from its events (events.jsonl, ``Event.as_dict()``).

The HTML report and the Chrome trace both draw this one value. It is built from the events
alone, so ``gpuplane report RUN_DIR`` sees exactly what ``simulate`` saw. What the events do not
say is stated, not guessed: the kubelet records no event when a container exits 0 (Kubernetes
does not either), so a pod with no end event ends at its Job's ``Completed`` event when it has
one, and at the end of the run otherwise, with ``end_reason`` saying which.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_SCHEDULED = re.compile(r"^Successfully assigned (\S+) to (\S+?)(?: \(GPUs \[([0-9, ]*)\]\))?$")
_SCALED = re.compile(r"^Scaled (?:up|down) replica set \S+ (?:from \d+ )?to (\d+)")
_MIG_GPU = re.compile(r"GPU (\d+): ([^;]+)")
# Pod events that do not end the pod's time on its node.
_POD_ONGOING = frozenset(
    {"Scheduled", "Started", "FailedScheduling", "BackOff", "EngineReady", "GpuOutOfMemory"}
)
# Node events of the GPU Operator's bring-up chain (driver, toolkit, validator, plugin, ...).
_OPERATOR_CHAIN = frozenset({"Scheduled", "Pulled", "Started", "BackOff", "GPUDriverUpgrade"})
END_OF_RUN = "EndOfRun"
JOB_COMPLETED = "JobCompleted"


@dataclass(frozen=True, slots=True)
class PodSlice:
    """A pod's time bound to a node: from its Scheduled event to the event that ended it."""

    pod: str  # namespace/name
    node: str
    start_s: float
    end_s: float
    gpus: tuple[int, ...]
    end_reason: str  # the ending event's reason, JOB_COMPLETED or END_OF_RUN
    engine_ready_s: float | None = None  # the serving engine's EngineReady, when it had one


@dataclass(frozen=True, slots=True)
class NodeMark:
    """An interval of a node's state: operator bring-up, driver upgrade, not ready, GPU fault."""

    node: str
    kind: str  # "operator" | "upgrade" | "not-ready" | "gpu-fault"
    start_s: float
    end_s: float
    label: str


@dataclass(frozen=True, slots=True)
class Instant:
    t_s: float
    obj: str  # Kind/namespace/name as events.jsonl writes it
    reason: str
    message: str
    warning: bool


@dataclass(frozen=True, slots=True)
class ReplicaStep:
    t_s: float
    deployment: str  # namespace/name
    replicas: int


@dataclass(frozen=True, slots=True)
class MigChange:
    t_s: float
    node: str
    layouts: Mapping[int, str]  # GPU index -> Layout.describe() after the change


@dataclass(frozen=True, slots=True)
class Timeline:
    until_s: float
    pods: tuple[PodSlice, ...]
    node_marks: tuple[NodeMark, ...]
    instants: tuple[Instant, ...]  # faults, scheduling failures, scale events, MIG, policy
    replicas: tuple[ReplicaStep, ...]
    mig_changes: tuple[MigChange, ...]
    created_s: Mapping[str, float]  # pod -> its controller's SuccessfulCreate time


INSTANT_REASONS = frozenset(
    {
        "FailedScheduling",
        "GpuXidError",
        "GpuHealthy",
        "NodeNotReady",
        "NodeReady",
        "ScalingReplicaSet",
        "MigReconfigured",
        "Updated",
        "GpuOutOfMemory",
        "BackOff",
        "Preempted",
        "Evicted",
    }
)


def split_object(obj: str) -> tuple[str, str]:
    """``Pod/ns/name`` -> ("Pod", "ns/name"); ``Node/n`` -> ("Node", "n")."""
    kind, _, rest = obj.partition("/")
    return kind, rest


class _PodBook:
    def __init__(self) -> None:
        self.open: dict[str, tuple[str, float, tuple[int, ...], float | None]] = {}
        self.done: list[PodSlice] = []

    def close(self, pod: str, t_s: float, reason: str) -> None:
        node, start, gpus, ready = self.open.pop(pod)
        self.done.append(PodSlice(pod, node, start, t_s, gpus, reason, ready))

    def on_event(self, pod: str, t_s: float, reason: str, message: str) -> None:
        if reason == "Scheduled":
            m = _SCHEDULED.match(message)
            if m is None:
                return
            if pod in self.open:
                self.close(pod, t_s, "Rescheduled")
            gpus = tuple(int(x) for x in m.group(3).split(",")) if m.group(3) else ()
            self.open[pod] = (m.group(2), t_s, gpus, None)
        elif pod in self.open and reason == "EngineReady":
            node, start, gpus, _ = self.open[pod]
            self.open[pod] = (node, start, gpus, t_s)
        elif pod in self.open and reason not in _POD_ONGOING:
            if reason == "Completed" and message.startswith("Back-off"):
                return  # a restart (restartPolicy Always), not the pod's end
            self.close(pod, t_s, reason)

    def job_completed(self, job: str, t_s: float) -> None:
        ns, _, name = job.partition("/")
        pattern = re.compile(rf"^{re.escape(ns)}/{re.escape(name)}-[a-z0-9]{{5}}$")
        for pod in sorted(p for p in self.open if pattern.match(p)):
            self.close(pod, t_s, JOB_COMPLETED)


class _NodeBook:
    def __init__(self) -> None:
        self.open: dict[tuple[str, str], tuple[float, str]] = {}
        self.last_chain: dict[str, float] = {}
        self.done: list[NodeMark] = []

    def start(self, node: str, kind: str, t_s: float, label: str) -> None:
        self.open.setdefault((node, kind), (t_s, label))

    def end(self, node: str, kind: str, t_s: float) -> None:
        if (node, kind) in self.open:
            start, label = self.open.pop((node, kind))
            self.done.append(NodeMark(node, kind, start, t_s, label))

    def on_event(self, node: str, t_s: float, reason: str, message: str) -> None:
        if reason in _OPERATOR_CHAIN and reason != "GPUDriverUpgrade":
            self.start(node, "operator", t_s, "GPU Operator bring-up")
            self.last_chain[node] = t_s
        elif (node, "operator") in self.open and reason not in _OPERATOR_CHAIN:
            self.end(node, "operator", self.last_chain[node])
        if reason == "RegisteredNode":
            self.start(node, "operator", t_s, "GPU Operator bring-up")
            self.last_chain[node] = t_s
        elif reason == "NodeNotSchedulable":
            self.start(node, "upgrade", t_s, "driver upgrade (cordoned)")
        elif reason == "NodeSchedulable":
            self.end(node, "upgrade", t_s)
        elif reason == "NodeNotReady":
            self.start(node, "not-ready", t_s, message)
        elif reason == "NodeReady":
            self.end(node, "not-ready", t_s)
        elif reason == "GpuXidError":
            self.start(node, "gpu-fault", t_s, message)
        elif reason == "GpuHealthy":
            self.end(node, "gpu-fault", t_s)

    def finish(self, until_s: float) -> None:
        for node, kind in sorted(self.open):
            self.end(node, kind, self.last_chain[node] if kind == "operator" else until_s)


def build_timeline(events: Iterable[Mapping[str, Any]], until_s: float) -> Timeline:
    """The timeline of a run from its events in order (``Event.as_dict()`` form)."""
    pods, nodes = _PodBook(), _NodeBook()
    instants: list[Instant] = []
    replicas: list[ReplicaStep] = []
    mig: list[MigChange] = []
    created: dict[str, float] = {}
    for e in events:
        t_s, reason, message = float(e["t_s"]), str(e["reason"]), str(e["message"])
        kind, name = split_object(str(e["object"]))
        if kind == "Pod":
            pods.on_event(name, t_s, reason, message)
        elif kind == "Node":
            nodes.on_event(name, t_s, reason, message)
        elif kind == "Job" and reason == "Completed":
            pods.job_completed(name, t_s)
        if reason == "SuccessfulCreate" and message.startswith("Created pod: "):
            ns = name.partition("/")[0]
            created.setdefault(f"{ns}/{message.removeprefix('Created pod: ')}", t_s)
        if reason == "ScalingReplicaSet" and (m := _SCALED.match(message)):
            replicas.append(ReplicaStep(t_s, name, int(m.group(1))))
        if reason == "MigReconfigured":
            layouts = {int(g): d.strip() for g, d in _MIG_GPU.findall(message)}
            mig.append(MigChange(t_s, name, layouts))
        if reason in INSTANT_REASONS or e.get("type") == "Warning":
            instants.append(Instant(t_s, str(e["object"]), reason, message, e["type"] != "Normal"))
    for pod in sorted(pods.open):
        pods.close(pod, until_s, END_OF_RUN)
    nodes.finish(until_s)
    return Timeline(
        until_s=until_s,
        pods=tuple(sorted(pods.done, key=lambda p: (p.start_s, p.pod))),
        node_marks=tuple(sorted(nodes.done, key=lambda m: (m.node, m.start_s, m.kind))),
        instants=tuple(instants),
        replicas=tuple(replicas),
        mig_changes=tuple(mig),
        created_s=created,
    )
