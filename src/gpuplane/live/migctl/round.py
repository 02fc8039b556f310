"""One round of the live MIG repartitioning controller: read, decide, report (and apply).

Read: polling lists (no watch): ``/api/v1/nodes``, ``/api/v1/pods``,
``/apis/policy/v1/poddisruptionbudgets`` and the ConfigMaps of the GPU Operator's namespace
(the one ``ClusterPolicy.spec.migManager.config.name`` names holds mig-parted's file under
``config.yaml``). A round reads everything again, so nothing is cached between rounds and a
missed change is seen at the next one.

Decide: :func:`gpuplane.slicing.mig.controller_decision.decide` on the values
:mod:`gpuplane.k8s.cluster.mig_inputs` builds, through the round both providers share
(:func:`gpuplane.slicing.mig.controller_loop.run_round`; :class:`LiveSource` is this side's
source, :class:`gpuplane.live.migctl.apply.ApiMigWriter` its writer).

Report: one JSON object per action (``relabel``, ``skip``) and one per round (``round``), the
same in dry-run and with ``--apply``; :mod:`gpuplane.live.migctl.apply` does the writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuplane.core.errors import InputError
from gpuplane.k8s.cluster.api_lister import ApiLister, ListNotFound, RawObject
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import NodeDefaults
from gpuplane.k8s.cluster.mig_inputs import control_snapshot
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.slicing.mig.controller_loop import ControlRead, run_round
from gpuplane.slicing.mig.controller_types import (
    ControlSettings,
    MigControllerDecision,
    NodeChange,
)
from gpuplane.slicing.mig.parted_config import PartedConfig, read_parted_config

PAGE_SIZE = 500
CONFIG_KEY = "config.yaml"  # the key the MIG manager reads in its ConfigMap


@dataclass(frozen=True, slots=True)
class ConfigMapTarget:
    namespace: str = "gpu-operator"
    name: str = "custom-mig-parted-config"


@dataclass(frozen=True, slots=True)
class RoundInputs:
    snapshot: ClusterSnapshot
    pdbs: tuple[RawObject, ...]
    parted: PartedConfig | None  # the ConfigMap's file; None when the ConfigMap is absent
    notes: tuple[str, ...] = ()

    def node_uid(self, name: str) -> str | None:
        for node in self.snapshot.of("nodes"):
            meta = node.get("metadata") or {}
            if meta.get("name") == name:
                uid = meta.get("uid")
                return str(uid) if uid else None
        return None


@dataclass(frozen=True, slots=True)
class RoundResult:
    decision: MigControllerDecision
    notes: tuple[str, ...]


def parted_from_config_maps(
    maps: Sequence[RawObject], target: ConfigMapTarget
) -> tuple[PartedConfig | None, list[str]]:
    for cm in maps:
        if (cm.get("metadata") or {}).get("name") != target.name:
            continue
        text = (cm.get("data") or {}).get(CONFIG_KEY)
        where = f"ConfigMap {target.namespace}/{target.name} key {CONFIG_KEY}"
        if not isinstance(text, str):
            return PartedConfig((), source=where), [f"{where} is missing"]
        try:
            return read_parted_config(text, where), []
        except InputError as err:
            return PartedConfig((), source=where), [f"{where} is not used: {err}"]
    return None, []


def read_round(lister: ApiLister, target: ConfigMapTarget, *, read_at: str) -> RoundInputs:
    """List what a round needs (every list paged)."""
    nodes = tuple(lister.list("/api/v1/nodes", limit=PAGE_SIZE))
    pods = tuple(lister.list("/api/v1/pods", limit=PAGE_SIZE))
    pdbs = tuple(lister.list("/apis/policy/v1/poddisruptionbudgets", limit=PAGE_SIZE))
    try:
        maps = tuple(
            lister.list(f"/api/v1/namespaces/{target.namespace}/configmaps", limit=PAGE_SIZE)
        )
    except ListNotFound:
        maps = ()
    parted, notes = parted_from_config_maps(maps, target)
    snapshot = ClusterSnapshot(
        source="the API server",
        read_at=read_at,
        server_version=None,
        api_versions={"nodes": "v1", "pods": "v1"},
        skipped=(),
        objects={"nodes": nodes, "pods": pods},
    )
    return RoundInputs(snapshot, pdbs, parted, tuple(notes))


@dataclass(frozen=True, slots=True)
class LiveSource:
    """The live provider's :class:`ControlSource`: what one round listed, as the controller's
    snapshot (:mod:`gpuplane.k8s.cluster.mig_inputs`)."""

    inputs: RoundInputs
    defaults: NodeDefaults

    def read(self) -> ControlRead:
        cluster = fit_cluster(self.inputs.snapshot, self.defaults)
        snap, notes = control_snapshot(cluster, self.inputs.pdbs, self.inputs.parted)
        return ControlRead(snap, self.inputs.notes + notes)


def decide_round(
    inputs: RoundInputs, defaults: NodeDefaults, settings: ControlSettings
) -> RoundResult:
    """A dry round: the shared loop without a writer."""
    outcome = run_round(LiveSource(inputs, defaults), settings, None)
    return RoundResult(outcome.decision, outcome.notes)


def change_record(change: NodeChange) -> dict[str, Any]:
    return {
        "action": "relabel",
        "node": change.node,
        "label": "nvidia.com/mig.config",
        "from": change.previous,
        "to": change.config,
        "model": change.model.name,
        "gpus": [
            {
                "index": g,
                "from": t.current.describe(),
                "to": t.layout.describe(),
                "mig-devices": dict(sorted(t.layout.counts().items())),
            }
            for g, t in change.targets
        ],
        "evicts": list(change.evicts),
        "message": change.message,
    }


def records(result: RoundResult, *, round_no: int, mode: str) -> list[dict[str, Any]]:
    """The round's JSON lines: every change, every skip, then the round's summary."""
    d = result.decision
    out: list[dict[str, Any]] = []
    for change in d.changes:
        out.append({"round": round_no, "mode": mode, **change_record(change)})
    for skip in d.skipped:
        out.append(
            {
                "round": round_no,
                "mode": mode,
                "action": "skip",
                "node": skip.node,
                "reason": str(skip.reason),
                "evicts": list(skip.evicts),
                "message": skip.message,
            }
        )
    out.append(
        {
            "round": round_no,
            "mode": mode,
            "action": "round",
            "demand": dict(d.demand),
            "unplaced": dict(d.unplaced),
            "single-demand": dict(d.single_demand),
            "single-unplaced": dict(d.single_unplaced),
            "changes": len(d.changes),
            "skipped": len(d.skipped),
            "plan": d.plan_status,
            "notes": list(result.notes),
        }
    )
    return out
