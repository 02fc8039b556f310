"""Apply a ``MigControllerDecision`` through an ``ApiWriter`` (``--apply`` only): the live
provider's writer for the loop both providers share
(:mod:`gpuplane.slicing.mig.controller_loop`, which fixes the order).

Order, per round:

1. the mig-parted ConfigMap, once, before any label names a config in it: the configs already
   in it are kept, the changes' configs added (a ConfigMap that does not exist yet is created
   with NVIDIA's named defaults for the GPU models being changed, the first model winning a
   name two models share);
2. per change, the pods it disrupts are evicted (policy/v1 Eviction; the API server enforces
   their PodDisruptionBudgets again); when one is refused the node is not relabelled this
   round and a Warning event says why;
3. the node's ``nvidia.com/mig.config`` label, as a merge patch: NVIDIA's MIG manager sees the
   change, sets ``nvidia.com/mig.config.state`` to ``pending`` and applies the config;
4. a Normal event ``GpuplaneMigRepartition`` on the Node with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.api_writer import ApiWriter
from gpuplane.live.migctl.round import CONFIG_KEY, ConfigMapTarget, RoundInputs
from gpuplane.slicing.mig.controller_loop import WriteRecord
from gpuplane.slicing.mig.controller_types import MigControllerDecision, NodeChange
from gpuplane.slicing.mig.parted_config import PartedConfig, dump_parted_config
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.parted_naming import merged_config

COMPONENT = "gpuplane-mig-controller"
REASON = "GpuplaneMigRepartition"
BLOCKED_REASON = "GpuplaneMigRepartitionBlocked"
EVENT_NAMESPACE = "default"  # where the kubelet and node controllers put Node events


def config_file(decision: MigControllerDecision, base: PartedConfig | None) -> PartedConfig:
    if base is None:
        base = PartedConfig((), source="<new>")
        for model in {c.model.key: c.model for c in decision.changes}.values():
            taken = set(base.names())
            defaults = default_configs(model).configs
            base = merged_config(base, [(n, e) for n, e in defaults if n not in taken])
    return merged_config(base, [(c.config, c.entries) for c in decision.changes])


def config_map_body(target: ConfigMapTarget, config: PartedConfig) -> RawObject:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": target.name,
            "namespace": target.namespace,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
        },
        "data": {CONFIG_KEY: dump_parted_config(config)},
    }


def event_body(
    node: str, uid: str | None, reason: str, message: str, now: str, warning: bool = False
) -> RawObject:
    involved: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "name": node}
    if uid:
        involved["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{node}.gpuplane-", "namespace": EVENT_NAMESPACE},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": "Warning" if warning else "Normal",
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": COMPONENT,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }


@dataclass(frozen=True, slots=True)
class ApiMigWriter:
    """The live provider's :class:`MigWriter`: the writes go to the API server."""

    writer: ApiWriter
    inputs: RoundInputs
    target: ConfigMapTarget
    clock: Callable[[], str]

    def write_configs(self, changes: Sequence[NodeChange]) -> str:
        decision = MigControllerDecision(tuple(changes), (), ())
        config = config_file(decision, self.inputs.parted)
        body = config_map_body(self.target, config)
        return self.writer.upsert_config_map(self.target.namespace, self.target.name, body)

    def evict(self, change: NodeChange, pod: str) -> bool:
        namespace, name = pod.split("/", 1)
        return self.writer.evict_pod(namespace, name)

    def refused(self, change: NodeChange, pod: str, message: str) -> None:
        uid = self.inputs.node_uid(change.node)
        body = event_body(change.node, uid, BLOCKED_REASON, message, self.clock(), warning=True)
        self.writer.create_event(EVENT_NAMESPACE, body)

    def relabel(self, change: NodeChange) -> None:
        uid = self.inputs.node_uid(change.node)
        self.writer.patch_node_labels(change.node, change.labels)
        body = event_body(change.node, uid, REASON, change.message, self.clock())
        self.writer.create_event(EVENT_NAMESPACE, body)


def write_records(writes: Sequence[WriteRecord], target: ConfigMapTarget) -> list[dict[str, Any]]:
    """The log's records of a round's writes (one per write)."""
    out: list[dict[str, Any]] = []
    for w in writes:
        if w.action == "configs":
            name = f"{target.namespace}/{target.name}"
            out.append({"action": "configmap", "name": name, "result": w.value})
        elif w.action == "applied":
            out.append({"action": "applied", "node": w.node, "config": w.value})
        else:
            out.append({"action": w.action, "node": w.node, "message": w.value})
    return out
