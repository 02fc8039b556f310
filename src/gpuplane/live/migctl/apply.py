"""Apply a ``MigControllerDecision`` through an ``ApiWriter`` (``--apply`` only).

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

from collections.abc import Callable
from typing import Any

from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.api_writer import ApiWriter
from gpuplane.live.migctl.round import CONFIG_KEY, ConfigMapTarget, RoundInputs
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


def _apply_change(
    writer: ApiWriter, inputs: RoundInputs, change: NodeChange, now: str
) -> dict[str, Any]:
    uid = inputs.node_uid(change.node)
    for key in change.evicts:
        namespace, name = key.split("/", 1)
        if not writer.evict_pod(namespace, name):
            message = (
                f"eviction of {key} refused by its PodDisruptionBudget; {change.node} is not "
                f"relabelled to {change.config} this round"
            )
            writer.create_event(
                EVENT_NAMESPACE,
                event_body(change.node, uid, BLOCKED_REASON, message, now, warning=True),
            )
            return {"action": "blocked", "node": change.node, "message": message}
    writer.patch_node_labels(change.node, change.labels)
    writer.create_event(EVENT_NAMESPACE, event_body(change.node, uid, REASON, change.message, now))
    return {"action": "applied", "node": change.node, "config": change.config}


def apply_decision(
    decision: MigControllerDecision,
    writer: ApiWriter,
    inputs: RoundInputs,
    target: ConfigMapTarget,
    clock: Callable[[], str],
) -> list[dict[str, Any]]:
    """Do the writes; one record per write done (for the log)."""
    if not decision.changes:
        return []
    config = config_file(decision, inputs.parted)
    how = writer.upsert_config_map(target.namespace, target.name, config_map_body(target, config))
    out: list[dict[str, Any]] = [
        {"action": "configmap", "name": f"{target.namespace}/{target.name}", "result": how}
    ]
    for change in decision.changes:
        out.append(_apply_change(writer, inputs, change, clock()))
    return out
