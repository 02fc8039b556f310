"""A MIG repartition that would make unplaced MIG pods fit, from gpuplane's exact MIG planner.

For a pod asking for ``nvidia.com/mig-<profile>`` devices that no node has free, every node
with MIG-capable GPUs in MIG mode (it advertises ``nvidia.com/mig-*`` resources, or is labelled
``nvidia.com/mig.strategy=mixed``) is asked: could its GPUs be laid out to serve the instances
its bound pods use *and* the unplaced pods' instances? The current layout is the one the node's
``nvidia.com/mig.config`` label names (NVIDIA's mig-parted defaults), else unknown (every GPU is
taken as reconfigurable). The planner (:mod:`gpuplane.slicing.mig.planner`) returns the target
layout per GPU; the node needing the fewest GPUs reconfigured, then disrupting the fewest pods,
is proposed.

Disruption: NVIDIA's MIG manager can only repartition a GPU no process uses, and the API does
not say which GPU (or which instance) a bound pod holds, so every pod on the node that holds a
GPU or a MIG device is listed as possibly disrupted when any GPU is reconfigured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from gpuplane.api.resources import is_mig_resource, mig_profile_of
from gpuplane.core.errors import InputError
from gpuplane.fit.framework_view import FrameworkView
from gpuplane.fit.model import FitCluster, FitNode
from gpuplane.fit.result import MigGpuChange, Outcome, PodAnswer, Remedy
from gpuplane.fit.workload import FitWorkload, WorkloadPod
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Layout
from gpuplane.slicing.mig.node_devices import MIG_CONFIG_LABEL, layouts_from_config, mig_gpu_of
from gpuplane.slicing.mig.plan_types import GpuState, MigPlan, make_snapshot
from gpuplane.slicing.mig.planner import decide as plan_mig

MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
MAX_NODES = 16


def _mig_requests(requests: Mapping[str, int]) -> Counter[str]:
    return Counter({mig_profile_of(r): v for r, v in requests.items() if is_mig_resource(r) and v})


def _mig_mode(node: FitNode) -> bool:
    if node.hardware.topology is None:
        return False
    advertises = any(is_mig_resource(r) for r in node.allocatable)
    return advertises or node.labels.get(MIG_STRATEGY_LABEL) == "mixed"


def _layouts(node: FitNode) -> tuple[Layout, ...]:
    topo = node.hardware.topology
    assert topo is not None
    config = node.labels.get(MIG_CONFIG_LABEL)
    if config:
        try:
            return layouts_from_config(topo, config)
        except InputError:
            pass
    return tuple(EMPTY_LAYOUT for _ in topo.gpus)


def _layout_text(layout: Layout) -> str:
    names = Counter(i.profile for i in layout.instances)
    return " + ".join(f"{n}x {p}" for p, n in sorted(names.items())) or "(no MIG instances)"


def _plan(node: FitNode, view: FrameworkView, wanted: Counter[str]) -> MigPlan | None:
    topo = node.hardware.topology
    assert topo is not None
    try:
        model = mig_gpu_of(topo)
    except InputError:
        return None
    used: Counter[str] = Counter()
    for pod in view.pods_by_node.get(node.name, ()):
        used.update(_mig_requests(pod.info.requests))
    demand = dict(used + wanted)
    gpus = [GpuState(i, model, layout) for i, layout in enumerate(_layouts(node))]
    plan = plan_mig(make_snapshot(gpus, demand))
    return None if any(plan.unplaced.values()) else plan


def _remedy(node: FitNode, view: FrameworkView, plan: MigPlan, placed: int) -> Remedy:
    changed = [t for t in plan.targets if t.reconfigured]
    topo = node.hardware.topology
    assert topo is not None
    model = mig_gpu_of(topo)
    changes = tuple(MigGpuChange(node.name, t.index, model, t.current, t.layout) for t in changed)
    disrupted = tuple(
        p.info.key
        for p in view.pods_by_node.get(node.name, ())
        if changed and (p.gpus or _mig_requests(p.info.requests))
    )
    steps = "; ".join(
        f"GPU {t.index}: {_layout_text(t.current)} -> {_layout_text(t.layout)}" for t in changed
    )
    summary = (
        f"repartition MIG on {node.name} ({len(changed)} GPU(s) reconfigured): {steps}"
        if changed
        else f"{node.name} already serves these MIG instances once its layout is applied"
    )
    return Remedy("mig-repartition", summary, (), disrupted, placed, changes)


def mig_remedies(
    cluster: FitCluster,
    view: FrameworkView,
    fw: FitWorkload,
    unplaced: Sequence[WorkloadPod],
    answers: Mapping[str, PodAnswer],
) -> tuple[Remedy, ...]:
    wanted: Counter[str] = Counter()
    pods = 0
    for wp in unplaced:
        if answers[wp.info.uid].outcome is Outcome.UNSCHEDULABLE:
            asks = _mig_requests(wp.info.requests)
            if asks:
                wanted.update(asks)
                pods += 1
    if not wanted:
        return ()
    best: tuple[tuple[int, int, str], Remedy] | None = None
    for node in [n for n in cluster.nodes if _mig_mode(n)][:MAX_NODES]:
        plan = _plan(node, view, wanted)
        if plan is None:
            continue
        remedy = _remedy(node, view, plan, pods)
        key = (sum(1 for t in plan.targets if t.reconfigured), len(remedy.disrupted), node.name)
        if best is None or key < best[0]:
            best = (key, remedy)
    return (best[1],) if best is not None else ()
