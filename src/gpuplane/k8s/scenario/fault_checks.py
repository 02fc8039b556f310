"""The scenario's ``faults`` checked against the nodes its pools create, before any run.

Node names and labels are the twin's own (``twin.cluster.nodes.make_node``): hostname, OS, the
pool label, the pool's labels, MIG labels, and GPU Feature Discovery's labels when no
ClusterPolicy is given (with one, GFD labels appear only once the operator's pods run, after the
twin has planned its faults, so a fault selecting on them would match nothing).
"""

from __future__ import annotations

from gpuplane.core.errors import InputError
from gpuplane.k8s.field_errors import LineOf, relocate
from gpuplane.operator.fault_targets import check_fault_targets
from gpuplane.operator.faults import GpuXidFault, NodeLostFault
from gpuplane.twin.cluster.nodes import make_node
from gpuplane.twin.kubelet.gpu_devices import node_gfd_labels
from gpuplane.twin.scenario.spec import NodePoolSpec

HOSTNAME = "kubernetes.io/hostname"


def fault_warnings(
    faults: list[NodeLostFault | GpuXidFault],
    pools: tuple[NodePoolSpec, ...],
    *,
    gfd_labels_known: bool,
    source: str,
    line_of: LineOf,
) -> list[str]:
    """Warnings ``file:line: field: text``; a fault naming what does not exist is an error."""
    if not faults:
        return []
    names: dict[str, list[str]] = {}
    labels: dict[str, dict[str, str]] = {}
    gpus: dict[str, int] = {}
    for pool in pools:
        first = make_node(pool, 0)
        base = dict(first.labels)
        if gfd_labels_known:
            base.update(node_gfd_labels(first))
        for i in range(pool.count):
            name = f"{pool.name}-{i}"
            names.setdefault(pool.name, []).append(name)
            labels[name] = {**base, HOSTNAME: name}
            gpus[name] = pool.topology.num_gpus
    try:
        found = check_fault_targets(faults, names, labels, gpus)
    except InputError as err:
        raise relocate(err, source, line_of) from None
    return [f"{source}:{line_of(field) or 1}: {field}: {text}" for field, text in found]
