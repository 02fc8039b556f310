"""Faults checked before a run: what they name must exist, and what does nothing is said.

The twin plans faults when the run starts (``faults.plan_faults``); a mistake found there used to
surface after the cluster was built, with no file or line. :func:`check_fault_targets` runs the
same selection on the nodes the scenario will create, so the loader can locate the mistake in the
scenario file, and returns warnings for faults that would silently do less than written: a
selection that matches no node (the fault never happens) and a ``count`` above the nodes that
match (every matching node is hit, fewer than asked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuplane.core.errors import InputError, Location
from gpuplane.operator.faults import GpuXidFault, NodeLostFault, fault_candidates


def check_fault_targets(
    specs: Sequence[NodeLostFault | GpuXidFault],
    node_names_by_pool: Mapping[str, Sequence[str]],
    labels_by_node: Mapping[str, Mapping[str, str]],
    num_gpus_by_node: Mapping[str, int],
) -> list[tuple[str, str]]:
    """(field, warning) pairs; errors are InputErrors at ``faults[i]...`` (no file)."""
    warnings: list[tuple[str, str]] = []
    for index, spec in enumerate(specs):
        where = f"faults[{index}]"
        nodes = fault_candidates(index, spec.nodes, node_names_by_pool, labels_by_node)
        if not nodes:
            warnings.append(
                (f"{where}.nodes", "the selection matches no node; this fault never happens")
            )
            continue
        count = spec.nodes.count
        if count is not None and count > len(nodes):
            warnings.append(
                (
                    f"{where}.nodes.count",
                    f"count {count} is more than the {len(nodes)} matching nodes; each "
                    f"occurrence hits all {len(nodes)}",
                )
            )
        if isinstance(spec, GpuXidFault) and isinstance(spec.gpu, int):
            smallest = min(num_gpus_by_node.get(n, 0) for n in nodes)
            if spec.gpu >= smallest:
                node = next(n for n in nodes if num_gpus_by_node.get(n, 0) == smallest)
                raise InputError(
                    f"node {node!r} has {smallest} GPUs, no GPU {spec.gpu}",
                    expected=f"an index below {smallest} or random",
                    location=Location(field=f"{where}.gpu"),
                )
    return warnings
