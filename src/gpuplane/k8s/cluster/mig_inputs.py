"""A ``FitCluster``, PodDisruptionBudgets and the mig-parted ConfigMap -> the live MIG
controller's ``ControlSnapshot``.

- MIG nodes: a node whose hardware is known (``--pools`` or GFD labels) with MIG-capable GPUs,
  that advertises ``nvidia.com/mig-*`` or is labelled ``nvidia.com/mig.strategy=mixed`` (as
  ``gpuplane fit``'s MIG remedy decides it).
- Current layouts: the config the node's ``nvidia.com/mig.config`` names, looked up in the
  ConfigMap the MIG manager reads, else in NVIDIA's defaults for the GPU model; an unknown name
  leaves every GPU taken as empty (and a note).
- Pods: every pod that is not finished; pending ones are those no node is set for.
- PodDisruptionBudgets (policy/v1): ``spec.selector`` and ``status.disruptionsAllowed``; a PDB
  without status yet allows nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuplane.api.resources import is_mig_resource, mig_profile_of
from gpuplane.api.selectors import LabelSelector, from_match_fields
from gpuplane.core.errors import InputError
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.slicing.mig.controller_types import (
    ControlNode,
    ControlPod,
    ControlSnapshot,
    DisruptionBudget,
)
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT
from gpuplane.slicing.mig.parted_config import PartedConfig
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.parted_naming import layouts_of
from gpuplane.twin.cluster.mig_devices import MIG_CONFIG_LABEL, MIG_STATE_LABEL, mig_gpu_of
from gpuplane.twin.fit.model import FitCluster, FitNode

MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _mig_mode(node: FitNode) -> bool:
    if node.hardware.topology is None:
        return False
    advertises = any(is_mig_resource(r) for r in node.allocatable)
    return advertises or node.labels.get(MIG_STRATEGY_LABEL) == "mixed"


def control_node(
    node: FitNode, parted: PartedConfig | None, notes: list[str]
) -> ControlNode | None:
    topo = node.hardware.topology
    if topo is None or not _mig_mode(node):
        return None
    try:
        model = mig_gpu_of(topo)
    except InputError:
        return None
    config = node.labels.get(MIG_CONFIG_LABEL) or None
    layouts = None
    if config is not None:
        for source in (parted, default_configs(model)):
            if source is not None and layouts is None:
                layouts = layouts_of(source, config, model, len(topo.gpus))
    if layouts is None:
        notes.append(
            f"node {node.name}: mig.config {config or '(none)'} is not in the mig-parted config; "
            "its GPUs are taken as empty"
        )
    return ControlNode(
        name=node.name,
        model=model,
        layouts=layouts or tuple(EMPTY_LAYOUT for _ in topo.gpus),
        config=config,
        state=node.labels.get(MIG_STATE_LABEL) or None,
        strategy=node.labels.get(MIG_STRATEGY_LABEL, "mixed"),
        schedulable=not node.unschedulable,
        layouts_known=layouts is not None,
    )


def _selector(raw: object) -> LabelSelector:
    sel = _dict(raw)
    exprs = [
        (str(e.get("key", "")), str(e.get("operator", "")), [str(v) for v in e.get("values") or []])
        for e in sel.get("matchExpressions") or []
        if isinstance(e, dict)
    ]
    labels = {str(k): str(v) for k, v in _dict(sel.get("matchLabels")).items()}
    return from_match_fields(labels, exprs)


def disruption_budget(pdb: RawObject) -> DisruptionBudget:
    meta, spec, status = (_dict(pdb.get(k)) for k in ("metadata", "spec", "status"))
    namespace = str(meta.get("namespace") or "default")
    allowed = status.get("disruptionsAllowed")
    return DisruptionBudget(
        key=f"{namespace}/{meta.get('name', '')}",
        namespace=namespace,
        selector=_selector(spec.get("selector")),
        disruptions_allowed=allowed if isinstance(allowed, int) else 0,
    )


def control_snapshot(
    cluster: FitCluster, pdbs: Sequence[RawObject], parted: PartedConfig | None
) -> tuple[ControlSnapshot, tuple[str, ...]]:
    notes: list[str] = []
    nodes = tuple(n for n in (control_node(f, parted, notes) for f in cluster.nodes) if n)
    pods = []
    for p in cluster.pods:
        if p.finished or p.terminating:
            continue
        mig = tuple(
            sorted(
                (mig_profile_of(r), v)
                for r, v in p.info.requests.items()
                if is_mig_resource(r) and v
            )
        )
        pods.append(ControlPod(p.info.key, p.info.namespace, dict(p.labels), p.node, mig, p.gpus))
    budgets = tuple(disruption_budget(b) for b in pdbs)
    return ControlSnapshot(nodes, tuple(pods), budgets), tuple(notes)
