"""Why each node refused a pod: kube-scheduler's per-plugin reasons grouped by node, with what
gpuplane knows at the GPU level (free GPUs, how they split over NUMA nodes, what is unknown)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.fit.gpu_answer import numa_split
from gpuplane.fit.holdings import NodeHolding
from gpuplane.fit.model import FitNode
from gpuplane.fit.result import NodeReasons
from gpuplane.scheduler.framework.explain import Diagnosis
from gpuplane.scheduler.framework.types import PodInfo

# Node names listed per group; the rest are counted.
MAX_NAMES = 8
INSUFFICIENT_GPU = f"Insufficient {NVIDIA_GPU}"


def _per_node(diag: Diagnosis) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for g in diag.groups:
        for i in g.nodes.tolist():
            out.setdefault(int(i), []).append(f"{g.plugin}: {g.reason}")
    if diag.absent is not None:
        plugin, _, reason = diag.absent
        for i in range(len(diag.node_names)):
            out.setdefault(i, [f"{plugin}: {reason}"])
    return out


def _free(node: FitNode, holding: NodeHolding) -> list[int]:
    taken = holding.taken_gpus
    return [g for g in range(node.gpus) if g not in taken]


def _gpu_detail(pod: PodInfo, members: list[FitNode], holdings: Mapping[str, NodeHolding]) -> str:
    need = pod.requests.get(NVIDIA_GPU, 0)
    counts = Counter(len(_free(n, holdings[n.name])) for n in members)
    spread = ", ".join(
        f"{c} node{'s' if c > 1 else ''} with {free} free" for free, c in sorted(counts.items())
    )
    text = f"needs {need} GPU(s) on one node; {spread}"
    split_nodes = []
    for n in members:
        topo = n.hardware.topology
        free = _free(n, holdings[n.name])
        if topo is not None and len(free) >= need > 0:
            split_nodes.append(f"{n.name} {numa_split(topo, free)}")
    if split_nodes:
        text += "; free GPUs by NUMA node: " + ", ".join(split_nodes[:MAX_NAMES])
    unknown = sum(1 for n in members if holdings[n.name].uncertain)
    if unknown:
        text += (
            f"; on {unknown} of these nodes the bound pods do not say which GPUs they hold "
            "(counts are exact, the GPU indices are assumed)"
        )
    return text


def node_reasons(
    pod: PodInfo,
    diag: Diagnosis,
    nodes: Mapping[str, FitNode],
    holdings: Mapping[str, NodeHolding],
) -> tuple[NodeReasons, ...]:
    """Nodes grouped by their reasons (most nodes first), each with a GPU-level detail when a
    GPU count was the reason."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for i, said in _per_node(diag).items():
        groups.setdefault(tuple(sorted(set(said))), []).append(diag.node_names[i])
    out = []
    for reasons, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        detail = ""
        if any(r.endswith(INSUFFICIENT_GPU) for r in reasons):
            members = [nodes[n] for n in names if n in nodes]
            detail = _gpu_detail(pod, members, holdings)
        shown = tuple(sorted(names)[:MAX_NAMES])
        more = len(names) - len(shown)
        if more:
            detail = f"{len(names)} nodes ({more} not listed)" + (f"; {detail}" if detail else "")
        out.append(NodeReasons(shown, reasons, detail, tuple(sorted(names))))
    return tuple(out)
