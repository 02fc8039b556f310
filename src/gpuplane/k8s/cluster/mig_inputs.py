"""A ``FitCluster``, PodDisruptionBudgets and the mig-parted ConfigMap -> the live MIG
controller's ``ControlSnapshot``.

- MIG nodes: a node whose hardware is known (``--pools`` or GFD labels) with MIG-capable GPUs,
  that advertises ``nvidia.com/mig-*`` or is labelled ``nvidia.com/mig.strategy=mixed`` (as
  ``gpuplane fit``'s MIG remedy decides it), or labelled ``nvidia.com/mig.strategy=single``
  (every MIG device advertised as ``nvidia.com/gpu``).
- Current layouts: the config the node's ``nvidia.com/mig.config`` names, looked up in the
  ConfigMap the MIG manager reads, else in NVIDIA's defaults for the GPU model; an unknown name
  leaves every GPU taken as empty (and a note).
- Pods: every pod that is not finished; pending ones are those no node is set for. A pod
  asking ``nvidia.com/gpu`` and no MIG resource whose ``nodeSelector`` (or required node
  affinity, ``In``) names a ``nvidia.com/gpu.product`` ``<product>-MIG-<profile>``, or that
  carries the ``gpuplane.io/mig-profile`` annotation, asks that profile on single-strategy nodes.
- PodDisruptionBudgets (policy/v1): ``spec.selector`` and ``status.disruptionsAllowed``; a PDB
  without status yet allows nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuplane.api.resources import is_mig_resource, mig_profile_of
from gpuplane.api.selectors import LabelSelector, from_match_fields
from gpuplane.core.errors import InputError
from gpuplane.fit.model import FitCluster, FitNode, FitPod
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.slicing.mig.controller_types import (
    SINGLE_STRATEGY,
    ControlNode,
    ControlPod,
    ControlSnapshot,
    DisruptionBudget,
)
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT
from gpuplane.slicing.mig.node_devices import MIG_CONFIG_LABEL, MIG_STATE_LABEL, mig_gpu_of
from gpuplane.slicing.mig.parted_config import PartedConfig
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.parted_naming import layouts_of

MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
PRODUCT_LABEL = "nvidia.com/gpu.product"
MIG_INFIX = "-MIG-"


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _mig_mode(node: FitNode) -> bool:
    if node.hardware.topology is None:
        return False
    advertises = any(is_mig_resource(r) for r in node.allocatable)
    return advertises or node.labels.get(MIG_STRATEGY_LABEL) in ("mixed", SINGLE_STRATEGY)


def _product(value: str | None) -> str | None:
    """GFD's gpu.product without its ``-MIG-<profile>`` (single strategy adds it)."""
    if not value:
        return None
    return value.split(MIG_INFIX, 1)[0]


def _selected_products(pod: FitPod) -> list[str]:
    """The gpu.product values the pod's nodeSelector or required node affinity (``In``) asks."""
    out: list[str] = []
    if PRODUCT_LABEL in pod.info.node_selector:
        out.append(pod.info.node_selector[PRODUCT_LABEL])
    node_affinity = _dict(_dict(pod.info.affinity).get("nodeAffinity"))
    required = _dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in required.get("nodeSelectorTerms") or []:
        for expr in _dict(term).get("matchExpressions") or []:
            e = _dict(expr)
            if e.get("key") == PRODUCT_LABEL and e.get("operator") == "In":
                out.extend(str(v) for v in e.get("values") or [])
    return out


def single_request(pod: FitPod) -> tuple[str | None, str | None]:
    """(profile, product) a pod asking nvidia.com/gpu wants on single-strategy nodes: the first
    ``<product>-MIG-<profile>`` it selects, else its ``gpuplane.io/mig-profile`` annotation (any
    product); (None, None) when neither."""
    if pod.gpus <= 0 or any(is_mig_resource(r) for r in pod.info.requests):
        return None, None
    for value in _selected_products(pod):
        if MIG_INFIX in value:
            product, profile = value.split(MIG_INFIX, 1)
            if profile:
                return profile, product
    return (pod.mig_profile, None) if pod.mig_profile else (None, None)


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
        product=_product(node.labels.get(PRODUCT_LABEL)),
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
        profile, product = single_request(p)
        pods.append(
            ControlPod(
                p.info.key,
                p.info.namespace,
                dict(p.labels),
                p.node,
                mig,
                p.gpus,
                single_profile=profile,
                single_product=product,
            )
        )
    budgets = tuple(disruption_budget(b) for b in pdbs)
    return ControlSnapshot(nodes, tuple(pods), budgets), tuple(notes)
