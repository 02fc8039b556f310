"""The two verbs kube-scheduler asks of the extender: filter and prioritize.

- ``filter_nodes``: each offered node is kept, failed (the pod may fit there once GPUs are
  freed: kube's preemption may try it) or failed-and-unresolvable (no preemption helps: too few
  GPUs, or a topology that can never align the request). A name the view does not know (a node
  added since the extender's last update) is failed with a reason that says so; the scheduler
  retries the pod later, when the extender has seen the node.
- ``prioritize``: 0..10 per node (kube's MaxExtenderPriority; it multiplies by the extender's
  weight and by 10). Multi-GPU pods: ``(1 - packing_weight)`` x the ring bottleneck of the set the
  kubelet would give, relative to the best offered node's, + ``packing_weight`` x the share of
  the node's GPUs in use once placed. Pods of one GPU or none have no ring: packing only, so they
  fill partly used nodes and leave whole ones to the pods that need them. A node the pod does
  not fit scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.extender.node_eval import EvalCache, NodeEval, evaluate, pod_key
from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.fit.extender.view import ExtenderView
from gpuplane.scheduler.framework.types import PodInfo

MAX_PRIORITY = 10
UNKNOWN_NODE = "node not yet in gpuplane's cluster view"


@dataclass(frozen=True, slots=True)
class FilterDecision:
    kept: tuple[str, ...]
    failed: Mapping[str, str]
    unresolvable: Mapping[str, str]
    unknown: tuple[str, ...] = ()  # offered names the view does not know (also in ``failed``)


class HostScore(NamedTuple):
    host: str
    score: int


def _evals(
    view: ExtenderView,
    pod: PodInfo,
    needs: GpuNeeds,
    names: Sequence[str],
    cache: EvalCache | None,
) -> dict[str, NodeEval | None]:
    """Each offered node's verdict (None: unknown), computed once per distinct node state."""
    known: dict[int, NodeEval] = {}
    if cache is not None:
        known = cache.setdefault(pod_key(pod, needs), {})
    keys, nodes = view.keys, view.nodes
    out: dict[str, NodeEval | None] = {}
    for name in names:
        kid = keys.get(name)
        if kid is None:
            out[name] = None
            continue
        ev = known.get(kid)
        if ev is None:
            ev = known[kid] = evaluate(nodes[name], view.holdings[name], pod, needs)
        out[name] = ev
    return out


def filter_nodes(
    view: ExtenderView,
    pod: PodInfo,
    needs: GpuNeeds,
    node_names: Sequence[str],
    cache: EvalCache | None = None,
) -> FilterDecision:
    kept: list[str] = []
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    unknown: list[str] = []
    for name, ev in _evals(view, pod, needs, node_names, cache).items():
        if ev is None:
            unknown.append(name)
            failed[name] = UNKNOWN_NODE
        elif ev.fits:
            kept.append(name)
        elif ev.unresolvable:
            unresolvable[name] = ev.reason
        else:
            failed[name] = ev.reason
    return FilterDecision(tuple(kept), failed, unresolvable, tuple(unknown))


def prioritize(
    view: ExtenderView,
    pod: PodInfo,
    needs: GpuNeeds,
    node_names: Sequence[str],
    settings: ExtenderSettings,
    cache: EvalCache | None = None,
) -> tuple[HostScore, ...]:
    evals = _evals(view, pod, needs, node_names, cache)
    multi = pod.requests.get(NVIDIA_GPU, 0) > 1
    best = max((e.bottleneck_gbps for e in evals.values() if e is not None and e.fits), default=0)
    w = settings.packing_weight
    by_eval: dict[int, int] = {}  # id(NodeEval) -> score: nodes in one state share a verdict

    def score(ev: NodeEval | None) -> int:
        if ev is None or not ev.fits:
            return 0
        found = by_eval.get(id(ev))
        if found is None:
            ring = (ev.bottleneck_gbps / best if best > 0 else 1.0) if multi else None
            value = ev.used_after if ring is None else (1 - w) * ring + w * ev.used_after
            found = by_eval[id(ev)] = round(MAX_PRIORITY * value)
        return found

    return tuple(HostScore(name, score(ev)) for name, ev in evals.items())


def top_host(scores: Sequence[HostScore]) -> str | None:
    """The extender's own choice: highest score, then the first offered."""
    best = max(scores, key=lambda s: s.score, default=None)
    return None if best is None or best.score <= 0 else best.host
