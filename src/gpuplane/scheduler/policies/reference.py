"""Plain reference implementations: one node, one GPU, one typical pod at a time, straight from
the formulas of fgd-openb.md §3-4 and the simulator's Go code, with no vectorisation and no
caching. Tests check that the fast policies choose the same nodes and GPUs.
"""

from __future__ import annotations

import math

import numpy as np

from gpuplane.scheduler.policies.gpuplane import GpuplaneSettings, cpu_per_gpu_milli
from gpuplane.scheduler.policies.types import (
    MAX_SCORE,
    MAX_SPEC_CPU_MILLI,
    MAX_SPEC_GPU_MILLI,
    MILLI_PER_GPU,
    IntArray,
    NodeArrays,
    NodeScores,
    PodRequest,
    TypicalPods,
)

Q1, Q2, Q3, Q4, XL, XR, NA = range(7)


def frag_reference(cpu_left: int, gpus: list[int], model: int, typical: TypicalPods) -> float:
    """NodeGpuShareFragAmountScore: class buckets filled in typical-pod order, summed except Q3."""
    buckets = [0.0] * 7
    total = sum(gpus)
    for m in range(typical.num_specs):
        p = float(typical.prob[m])
        cpu, milli, count = (
            int(typical.cpu_milli[m]),
            int(typical.gpu_milli[m]),
            int(typical.num_gpu[m]),
        )
        if milli == 0:
            buckets[XL if cpu_left >= cpu else XR] += p * float(total)
            continue
        if not typical.access[m, model]:
            buckets[NA] += p * float(total)
            continue
        gpu_ok = sum(1 for g in gpus if g >= milli) >= count
        cpu_ok = cpu_left >= cpu
        if gpu_ok and cpu_ok:
            small = sum(g for g in gpus if g < milli)
            buckets[Q2] += p * float(small)
            buckets[Q3] += p * float(total - small)
        else:
            cls = Q4 if gpu_ok else (Q2 if cpu_ok else Q1)
            buckets[cls] += p * float(total)
    out = 0.0
    for cls in range(7):
        if cls != Q3:
            out += buckets[cls]
    return out


def _sigmoid_score(delta: float) -> int:
    # np.exp, not math.exp: both paths must use the same exp to agree to the last bit.
    return int(1.0 / (1.0 + float(np.exp(np.array([-(delta / 1000.0)]))[0])) * float(MAX_SCORE))


def _whole_after(gpus: list[int], count: int) -> list[int]:
    after, left = list(gpus), count
    for g, free in enumerate(after):
        if left and free == MILLI_PER_GPU:
            after[g], left = 0, left - 1
    return after


def _tightest(gpus: list[int], milli: int) -> int:
    best = -1
    for g, free in enumerate(gpus):
        if free >= milli and (best < 0 or free < gpus[best]):
            best = g
    return best


def fgd_node(
    cpu_left: int, gpus: list[int], model: int, pod: PodRequest, t: TypicalPods
) -> tuple[int, int]:
    before = frag_reference(cpu_left, gpus, model, t)
    if not pod.is_share:
        after = frag_reference(cpu_left - pod.cpu_milli, _whole_after(gpus, pod.num_gpu), model, t)
        return _sigmoid_score(before - after), -1
    score, choice = 0, -1
    for g, free in enumerate(gpus):
        if free >= pod.gpu_milli:
            trial = list(gpus)
            trial[g] -= pod.gpu_milli
            s = _sigmoid_score(before - frag_reference(cpu_left - pod.cpu_milli, trial, model, t))
            if choice < 0 or s > score:
                score, choice = s, g
    return score, choice


def _stranded(cpu_left: int, gpus: list[int], ratio: float) -> float:
    return max(0.0, float(sum(gpus)) - cpu_left / ratio)


def gpuplane_node(
    cpu_left: int,
    gpus: list[int],
    model: int,
    pod: PodRequest,
    t: TypicalPods,
    settings: GpuplaneSettings,
) -> tuple[int, int]:
    """FGD's loop with the stranding penalty added to each candidate's F difference."""
    # The ratio is a parameter of the trace, not of the decision: share its computation.
    ratio = cpu_per_gpu_milli(t)
    before = frag_reference(cpu_left, gpus, model, t)
    trials: list[tuple[int, list[int]]] = []
    if pod.is_share:
        for g, free in enumerate(gpus):
            if free >= pod.gpu_milli:
                trial = list(gpus)
                trial[g] -= pod.gpu_milli
                trials.append((g, trial))
    else:
        trials.append((-1, _whole_after(gpus, pod.num_gpu)))
    score, choice = 0, -2
    for g, trial in trials:
        cpu_after = cpu_left - pod.cpu_milli
        delta = before - frag_reference(cpu_after, trial, model, t)
        if ratio is not None:
            gained = _stranded(cpu_left, gpus, ratio) - _stranded(cpu_after, trial, ratio)
            relief = settings.relief_weight * max(0.0, gained)
            delta = delta + settings.strand_weight * (min(0.0, gained) + relief)
        s = _sigmoid_score(delta)
        if choice == -2 or s > score:
            score, choice = s, g
    return score, choice


def dotprod_node(cpu_left: int, gpus: list[int], pod: PodRequest) -> int:
    node = [cpu_left / MAX_SPEC_CPU_MILLI, sum(gpus) / MAX_SPEC_GPU_MILLI]
    want = [pod.cpu_milli / MAX_SPEC_CPU_MILLI, pod.total_gpu_milli / MAX_SPEC_GPU_MILLI]
    dot = 0.0
    for a, b in zip(node, want, strict=True):
        dot += a * b
    return int(float(MAX_SCORE) * (1.0 - dot / 2.0))


def bestfit_node(cpu_left: int, gpus: list[int], pod: PodRequest) -> int:
    score = 0.0
    score += float(cpu_left - pod.cpu_milli) / MAX_SPEC_CPU_MILLI * 0.5
    score += float(sum(gpus) - pod.total_gpu_milli) / MAX_SPEC_GPU_MILLI * 0.5
    return int((1.0 - score) * float(MAX_SCORE))


def clustering_node(gpus: list[int], tags: list[int], pod: PodRequest) -> int:
    if pod.num_gpu == 0:
        return 0
    base = MAX_SCORE // 4 * (MAX_SPEC_GPU_MILLI - sum(gpus)) // MAX_SPEC_GPU_MILLI
    present = [t for t, n in enumerate(tags) if n > 0]
    if pod.tag in present:
        return base + (75 if len(present) == 1 else 50)
    return base + (25 if not present else 0)


def packing_node(gpus: list[int], num_gpus: int, pod: PodRequest) -> int:
    if pod.gpu_milli <= 0:
        return 0
    free = sum(1 for g in gpus if g == MILLI_PER_GPU)
    if free == num_gpus:
        return max(MAX_SCORE // 3 - free, free)
    order = sorted(range(len(gpus)), key=lambda g: gpus[g])  # stable: index order on ties
    used = [g for g in order if gpus[g] >= pod.gpu_milli][: pod.num_gpu]
    full_used = sum(1 for g in used if gpus[g] == MILLI_PER_GPU)
    if full_used:
        return max(MAX_SCORE // 2 - full_used, MAX_SCORE // 3)
    pct = sum(gpus[g] * 100 // MILLI_PER_GPU for g in used)
    return max(MAX_SCORE - pct // 10, MAX_SCORE // 2)


def reference_scores(
    name: str,
    nodes: NodeArrays,
    pod: PodRequest,
    idx: IntArray,
    typical: TypicalPods | None,
    settings: GpuplaneSettings | None = None,
) -> NodeScores:
    """Scores of nodes ``idx`` by the named deterministic policy, node by node."""
    scores, choices = [], []
    for n in (int(i) for i in idx):
        cpu, gpus = int(nodes.cpu_left[n]), [int(g) for g in nodes.gpu_left[n]]
        choice = _tightest(gpus, pod.gpu_milli) if pod.is_share else -1
        if name in ("fgd", "gpuplane"):
            if typical is None:
                raise ValueError(f"{name} needs typical pods")
            model = int(nodes.model[n])
            if name == "fgd":
                score, choice = fgd_node(cpu, gpus, model, pod, typical)
            else:
                own = settings or GpuplaneSettings()
                score, choice = gpuplane_node(cpu, gpus, model, pod, typical, own)
        elif name == "dotprod":
            score = dotprod_node(cpu, gpus, pod)
        elif name == "bestfit":
            score = bestfit_node(cpu, gpus, pod)
        elif name == "clustering":
            score = clustering_node(gpus, [int(t) for t in nodes.tag_counts[n]], pod)
        elif name == "packing":
            score = packing_node(gpus, int(nodes.num_gpus[n]), pod)
        else:
            raise ValueError(f"no reference for policy {name!r}")
        scores.append(score)
        choices.append(choice)
    return NodeScores(np.array(scores, dtype=np.int64), np.array(choices, dtype=np.int64))


def minmax_reference(raw: list[int]) -> list[int]:
    lowest, highest = min(raw), max(raw)
    if highest == lowest:
        return [0] * len(raw)
    return [(s - lowest) * MAX_SCORE // (highest - lowest) for s in raw]


def select_reference(scores: list[int], nodes: list[int], rank: list[int]) -> int:
    """Highest score, then smallest priority rank."""
    best = -math.inf
    chosen = -1
    for score, node in zip(scores, nodes, strict=True):
        if score > best or (score == best and rank[node] < rank[chosen]):
            best, chosen = score, node
    return chosen
