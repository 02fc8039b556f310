"""The figures of one ``fit`` answer for a sweep's table: a summary of the answer, or any number,
text or flag in ``fit --json``'s answer by path."""

from __future__ import annotations

from typing import Any

from gpuplane.sweep.engine.checks import figure_at
from gpuplane.sweep.engine.point import Cell

SUMMARY_FIGURES = (
    "all_fit",
    "pods",
    "placed",
    "fits",
    "fits_after_preemption",
    "rejected_by_kubelet",
    "unschedulable",
    "waiting",
    "victims",
    "nodes_used",
    "min_bottleneck_gbps",
    "max_allreduce_ms",
    "capacity",
    "remedies",
)
"""all_fit: every pod placed and admitted; placed: pods that fit (with or without preemption);
the outcome counts; victims: pods DefaultPreemption evicts; nodes_used: nodes holding a placed
pod; min_bottleneck_gbps / max_allreduce_ms: over the placed pods' kubelet GPU sets of two or
more GPUs (empty when there is none); capacity: more replicas that fit now, summed over the
templates; remedies: how many remedies the answer proposes."""

_PLACED = ("fits", "fits-after-preemption")


def _multi_gpu_sets(answer: dict[str, Any]) -> list[dict[str, Any]]:
    sets = []
    for pod in answer["pods"]:
        gpus = pod.get("gpus") or {}
        chosen = gpus.get("kubelet")
        if pod["outcome"] in _PLACED and chosen and len(chosen["gpus"]) >= 2:
            sets.append(chosen)
    return sets


def summary(answer: dict[str, Any]) -> dict[str, Cell]:
    counts = answer["counts"]
    pods = answer["pods"]
    sets = _multi_gpu_sets(answer)
    victims = sum(len((p.get("preemption") or {}).get("victims", [])) for p in pods)
    return {
        "all_fit": bool(answer["allFit"]),
        "pods": len(pods),
        "placed": sum(counts[o] for o in _PLACED),
        "fits": counts["fits"],
        "fits_after_preemption": counts["fits-after-preemption"],
        "rejected_by_kubelet": counts["rejected-by-kubelet"],
        "unschedulable": counts["unschedulable"],
        "waiting": counts["waiting"],
        "victims": victims,
        "nodes_used": len({p["node"] for p in pods if p["outcome"] in _PLACED and p["node"]}),
        "min_bottleneck_gbps": min((s["bottleneckGBps"] for s in sets), default=None),
        "max_allreduce_ms": max((s["allReduceMs"] for s in sets), default=None),
        "capacity": sum(int(c["maxReplicas"]) for c in answer["capacity"]),
        "remedies": len(answer["remedies"]),
    }


def fit_figures(answer: dict[str, Any], figures: tuple[str, ...]) -> dict[str, Cell]:
    """``figures`` of ``answer`` (``FitAnswer.as_dict()``), in that order."""
    table = summary(answer)
    out: dict[str, Cell] = {}
    for i, name in enumerate(figures):
        if name in table:
            out[name] = table[name]
            continue
        out[name] = figure_at(answer, name, i, "the fit answer", "counts.unschedulable")
    return out
