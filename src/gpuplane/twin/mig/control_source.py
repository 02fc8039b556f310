"""The twin's :class:`~gpuplane.slicing.mig.controller_loop.ControlSource`: the MIG controller's
snapshot read from the twin's object store, as the live one lists it from the API server
(:mod:`gpuplane.k8s.cluster.mig_inputs`):

- nodes: the MIG nodes of the pools the controller manages (``mig.dynamic``), with their
  ``nvidia.com/mig.config`` and ``nvidia.com/mig.config.state`` labels, the device plugin's
  strategy, cordoning and GFD's product; the layouts are the ones applied (the twin knows them,
  where the live controller looks the label's config up: the same once the state is
  ``success``). A node the twin has lost, not Ready or not advertising its GPUs (driver
  install, fault) is left out: the MIG manager and device plugin do not run there.
- pods: every pod that is neither finished nor deleted, bound or not (the API's pending pods
  include those the scheduler has not tried yet), with the MIG instances and ``nvidia.com/gpu``
  it asks; a pod asking ``nvidia.com/gpu`` and no MIG resource whose nodeSelector names a
  ``<product>-MIG-<profile>`` ``nvidia.com/gpu.product``, or that carries the
  ``gpuplane.io/mig-profile`` annotation, asks that profile on single-strategy nodes.
- disruption budgets: none (the twin has no PodDisruptionBudgets).
"""

from __future__ import annotations

from collections.abc import Collection

from gpuplane.api.resources import NVIDIA_GPU, is_mig_resource, mig_profile_of
from gpuplane.slicing.mig.controller_loop import ControlRead
from gpuplane.slicing.mig.controller_types import (
    MIG_PROFILE_ANNOTATION,
    ControlNode,
    ControlPod,
    ControlSnapshot,
)
from gpuplane.slicing.mig.node_devices import MIG_CONFIG_LABEL, MIG_STATE_LABEL, mig_gpu_of
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Node, Pod

PRODUCT_LABEL = "nvidia.com/gpu.product"
MIG_INFIX = "-MIG-"


def _product(value: str | None) -> str | None:
    """GFD's gpu.product without its ``-MIG-<profile>`` (single strategy adds it)."""
    return value.split(MIG_INFIX, 1)[0] if value else None


def control_node(node: Node) -> ControlNode:
    assert node.mig_layouts is not None
    return ControlNode(
        name=node.name,
        model=mig_gpu_of(node.topology),
        layouts=tuple(node.mig_layouts),
        config=node.labels.get(MIG_CONFIG_LABEL) or None,
        state=node.labels.get(MIG_STATE_LABEL) or None,
        strategy=node.mig_strategy or "mixed",
        schedulable=not node.unschedulable,
        product=_product(node.labels.get(PRODUCT_LABEL)),
    )


def single_request(pod: Pod) -> tuple[str | None, str | None]:
    """(profile, product) a pod asking nvidia.com/gpu wants on single-strategy nodes, as
    ``mig_inputs.single_request`` reads it from the API (nodeSelector, then annotation)."""
    if pod.requests.get(NVIDIA_GPU, 0) <= 0 or any(is_mig_resource(r) for r in pod.requests):
        return None, None
    value = pod.template.node_selector.get(PRODUCT_LABEL, "")
    if MIG_INFIX in value:
        product, profile = value.split(MIG_INFIX, 1)
        if profile:
            return profile, product
    annotated = pod.template.annotations.get(MIG_PROFILE_ANNOTATION)
    return (annotated, None) if annotated else (None, None)


def control_pod(pod: Pod) -> ControlPod:
    mig = tuple(
        sorted((mig_profile_of(r), v) for r, v in pod.requests.items() if is_mig_resource(r) and v)
    )
    profile, product = single_request(pod)
    return ControlPod(
        pod.key,
        pod.namespace,
        dict(pod.template.labels),
        pod.node_name,
        mig,
        pod.requests.get(NVIDIA_GPU, 0),
        single_profile=profile,
        single_product=product,
    )


class TwinControlSource:
    """Reads the snapshot of ``pools``' MIG nodes and every live pod each round."""

    def __init__(self, cluster: Cluster, pools: Collection[str]) -> None:
        self.c = cluster
        self.pools = frozenset(pools)

    def _nodes(self) -> list[Node]:
        nodes = (self.c.store.nodes[name] for name in self.c.store.node_order)
        return [
            n
            for n in nodes
            if n.pool in self.pools
            and n.mig_layouts is not None
            and n.ready
            and not n.lost
            and n.gpus_advertised
        ]

    def read(self) -> ControlRead:
        live = (self.c.store.pods[uid] for uid in self.c.store.active)
        # In the API's list order (namespace/name), as the live controller reads them.
        pods = tuple(control_pod(p) for p in sorted(live, key=lambda p: p.key) if p.is_active)
        nodes = tuple(control_node(n) for n in self._nodes())
        return ControlRead(ControlSnapshot(nodes, pods))
