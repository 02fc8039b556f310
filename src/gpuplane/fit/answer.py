"""``answer_fit``: the workload's pods through the scheduler's decision, then each placed pod
through the kubelet's admission on its node, at the GPU level.

1. One decision over the cluster as it is (``Scheduler.decide``), the workload's pods in queue
   order. A pod for which DefaultPreemption found victims is nominated; the victims are removed
   and a second decision places the nominated pods (kube-scheduler retries them once the victims
   are gone): "fits after preemption".
2. Every placed pod is admitted on its node in placement order, by the node's kubelet
   configuration and device plugin policy, after the pods already there
   (:func:`gpuplane.fit.gpu_answer.place_on_node`). A TopologyAffinityError is a "does not
   fit" with the kubelet's words. The scheduler does not see NUMA, so a later pod of the same
   pass still counts the rejected pod's room as taken (as the scheduler would, until the kubelet
   reports the pod Failed); the answer says so.
3. Pods no node took get the FitError, the per-node reasons and what would make them fit
   (:mod:`gpuplane.fit.remedies`); every template gets its capacity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from gpuplane.api.resources import NVIDIA_GPU, is_mig_resource, mig_profile_of
from gpuplane.fit.dra_claims import devices_by_pod, with_claims
from gpuplane.fit.framework_view import FrameworkView, framework_view
from gpuplane.fit.gpu_answer import place_on_node
from gpuplane.fit.model import FitCluster, FitNode, FitPod
from gpuplane.fit.reasons import node_reasons
from gpuplane.fit.remedies import capacity, remedies
from gpuplane.fit.result import FitAnswer, GangAnswer, Outcome, PodAnswer, Victim
from gpuplane.fit.workload import FitSettings, FitWorkload, WorkloadPod
from gpuplane.scheduler.framework.decision import Preemption, SchedulingDecision, Unschedulable
from gpuplane.scheduler.framework.plugin_sets import KUBERNETES_VERSION
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.types import PodInfo


@dataclass(frozen=True, slots=True)
class Placed:
    """The decision's outcome for one pod, before the kubelet."""

    node: str | None
    failure: Unschedulable | None = None
    preemption: Preemption | None = None
    waiting: bool = False
    # The cluster view the pod was placed on (after the preemption round's evictions, if any).
    view: FrameworkView | None = None
    dra_devices: tuple[str, ...] = ()  # "driver/pool/device" its claims were allocated


def decide(
    scheduler: Scheduler, view: FrameworkView, fw: FitWorkload, pods: Sequence[PodInfo]
) -> SchedulingDecision:
    snap = replace(
        view.snapshot,
        pod_groups={**view.snapshot.pod_groups, **fw.pod_groups},
        dra=with_claims(view.snapshot.dra, fw.claims, fw.pod_claims),
    )
    return scheduler.decide(snap, list(pods))


def _without(cluster: FitCluster, victims: set[str], placed: Mapping[str, str]) -> FitCluster:
    """The cluster once the victims are gone and the placed workload pods hold their node."""
    kept = [p for p in cluster.pods if p.info.uid not in victims]
    return replace(cluster, pods=tuple(kept))


def _as_bound(pod: WorkloadPod, node: str, now_s: float) -> FitPod:
    return FitPod(pod.info, node, "Pending", now_s)


def schedule(
    scheduler: Scheduler, cluster: FitCluster, fw: FitWorkload
) -> tuple[dict[str, Placed], FrameworkView, FitCluster]:
    """Every workload pod's placement, after at most one preemption round."""
    view = framework_view(cluster)
    ordered = sorted(fw.pods, key=lambda p: -p.info.priority)
    decision = decide(scheduler, view, fw, [p.info for p in ordered])
    claims = {c.key: c for c in fw.claims}
    devices = devices_by_pod(decision, claims)
    out: dict[str, Placed] = {
        b.pod_uid: Placed(b.node, dra_devices=devices.get(b.pod_uid, ())) for b in decision.bindings
    }
    for w in decision.waiting:
        out[w.pod.uid] = Placed(w.node, waiting=True)
    preempt = {p.preemptor_uid: p for p in decision.preemptions}
    for u in decision.unschedulable:
        out.setdefault(u.pod_uid, Placed(None, u, preempt.get(u.pod_uid)))
    if not preempt:
        return out, view, cluster
    victims = {v for p in preempt.values() for v in p.victims}
    by_uid = {p.info.uid: p for p in ordered}
    after = _without(cluster, victims, {})
    bound = [
        _as_bound(by_uid[uid], pl.node, cluster.now_s)
        for uid, pl in out.items()
        if pl.node is not None and not pl.waiting
    ]
    after = replace(after, pods=(*after.pods, *bound))
    retry = [replace(by_uid[uid].info, nominated_node=p.node) for uid, p in preempt.items()]
    changed = {p.node for p in preempt.values()} | {b.node for b in bound if b.node}
    after_view = framework_view(after, view.holdings, changed)
    second = decide(scheduler, after_view, fw, retry)
    devices = devices_by_pod(second, claims)
    for b in second.bindings:
        out[b.pod_uid] = Placed(
            b.node,
            preemption=preempt[b.pod_uid],
            view=after_view,
            dra_devices=devices.get(b.pod_uid, ()),
        )
    return out, view, cluster


def _victims(view: FrameworkView, p: Preemption) -> tuple[Victim, ...]:
    out = []
    for uid in p.victims:
        pod = view.pods_by_uid.get(uid)
        if pod is not None:
            out.append(Victim(pod.info.key, pod.info.priority, pod.gpus))
    return tuple(out)


def _placed_answers(
    fw: FitWorkload,
    placed: Mapping[str, Placed],
    view: FrameworkView,
    nodes: Mapping[str, FitNode],
    settings: FitSettings,
) -> dict[str, PodAnswer]:
    """Placed pods through the kubelet, node by node in placement order."""
    # (node, placed after the preemption round) -> what this answer's pods took there.
    taken: dict[tuple[str, bool], tuple[frozenset[int], frozenset[int]]] = {}
    out: dict[str, PodAnswer] = {}
    for wp in fw.pods:
        pl = placed.get(wp.info.uid)
        if pl is None or pl.node is None:
            continue
        node = nodes[pl.node]
        on = pl.view or view
        key = (node.name, pl.view is not None)
        gpus, cpus = taken.get(key, (frozenset(), frozenset()))
        answer, verdict, result = place_on_node(
            node, on.holdings[node.name], wp.info, gpus, cpus, settings.message_bytes
        )
        if result is not None and result.admit:
            got = {g for a in result.allocations.values() for g in a.gpus}
            own = {c for a in result.allocations.values() for c in a.cpus}
            taken[key] = (gpus | got, cpus | own)
        if pl.waiting:
            outcome = Outcome.WAITING
        elif not verdict.admit:
            outcome = Outcome.REJECTED_BY_KUBELET
        elif pl.preemption is not None:
            outcome = Outcome.FITS_AFTER_PREEMPTION
        else:
            outcome = Outcome.FITS
        out[wp.info.uid] = PodAnswer(
            pod=wp.info.key,
            workload=wp.workload,
            outcome=outcome,
            node=node.name,
            hardware=node.hardware.source,
            gpus=answer,
            kubelet=verdict,
            victims=_victims(view, pl.preemption) if pl.preemption else (),
            preempt_node=pl.preemption.node if pl.preemption else None,
            dra_devices=pl.dra_devices,
            mig=_mig_text(wp.info, node.name),
        )
    return out


def _mig_text(pod: PodInfo, node: str) -> str | None:
    asks = [
        f"{v}x {mig_profile_of(r)}"
        for r, v in sorted(pod.requests.items())
        if is_mig_resource(r) and v
    ]
    if not asks:
        return None
    return f"{', '.join(asks)} on {node} (which GPU's instance is the device plugin's choice)"


def _failed_answer(
    wp: WorkloadPod, pl: Placed, view: FrameworkView, nodes: Mapping[str, FitNode]
) -> PodAnswer:
    failure = pl.failure
    diag = failure.diagnosis if failure is not None else None
    reasons = node_reasons(wp.info, diag, nodes, view.holdings) if diag is not None else ()
    return PodAnswer(
        pod=wp.info.key,
        workload=wp.workload,
        outcome=Outcome.UNSCHEDULABLE,
        fit_error=failure.message if failure is not None else None,
        node_reasons=reasons,
        victims=_victims(view, pl.preemption) if pl.preemption else (),
        preempt_node=pl.preemption.node if pl.preemption else None,
    )


def _gangs(
    fw: FitWorkload, answers: Mapping[str, PodAnswer], profile_has_gangs: bool
) -> tuple[GangAnswer, ...]:
    out = []
    for key, group in sorted(fw.pod_groups.items()):
        members = [wp for wp in fw.pods if wp.info.group_key == key]
        placed = sum(
            1
            for wp in members
            if answers[wp.info.uid].outcome in (Outcome.FITS, Outcome.FITS_AFTER_PREEMPTION)
        )
        fits = placed >= group.min_member
        note = ""
        if not profile_has_gangs and not fits and placed:
            note = (
                f"the profile has no Coscheduling: {placed} member(s) would bind and hold their "
                f"GPUs while the gang cannot run (use the gpuplane profile for all-or-nothing)"
            )
        out.append(GangAnswer(key, group.min_member, placed, fits, note))
    return tuple(out)


def answer_fit(
    scheduler: Scheduler,
    cluster: FitCluster,
    fw: FitWorkload,
    settings: FitSettings | None = None,
    *,
    profile: str = "default-scheduler",
) -> FitAnswer:
    settings = settings or FitSettings()
    nodes = {n.name: n for n in cluster.nodes}
    placed, view, _ = schedule(scheduler, cluster, fw)
    answers = _placed_answers(fw, placed, view, nodes, settings)
    for wp in fw.pods:
        if wp.info.uid not in answers:
            answers[wp.info.uid] = _failed_answer(wp, placed[wp.info.uid], view, nodes)
    has_gangs = any("Coscheduling" in f.plugins for f in scheduler.frameworks.values())
    ordered = tuple(answers[wp.info.uid] for wp in fw.pods)
    notes = list(cluster.notes)
    if any(a.outcome is Outcome.REJECTED_BY_KUBELET for a in ordered):
        notes.append(
            "kube-scheduler does not see NUMA: pods placed after a kubelet-rejected pod in the "
            "same pass still count its room as taken"
        )
    unplaced = [wp for wp in fw.pods if answers[wp.info.uid].outcome is not Outcome.FITS]
    fixes = (
        remedies(scheduler, cluster, view, fw, unplaced, answers, settings)
        if (settings.remedies and unplaced)
        else ()
    )
    return FitAnswer(
        profile=profile,
        kubernetes_version=KUBERNETES_VERSION,
        nodes=len(cluster.nodes),
        pods=ordered,
        gangs=_gangs(fw, answers, has_gangs),
        remedies=fixes,
        capacity=capacity(scheduler, cluster, view, fw, settings),
        notes=tuple(notes),
    )


def gpus_of(pod: PodInfo) -> int:
    return pod.requests.get(NVIDIA_GPU, 0)
