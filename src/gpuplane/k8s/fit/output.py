"""``fit -o yaml``: the input objects, annotated with the answer, as a ``v1 List`` kubectl
accepts (``kubectl apply -f`` keeps annotations; nothing in ``spec`` is changed).

Every object gets ``gpuplane.io/fit`` (``fits``, or ``3/4 pods fit``) and
``gpuplane.io/fit-result`` (JSON: per pod its outcome, node, GPUs, NUMA nodes, ring bottleneck,
the FitError or the kubelet's rejection). A Pod also gets kube-scheduler-simulator's result
annotations (``kube-scheduler-simulator.sigs.k8s.io/filter-result``, ``score-result``,
``finalscore-result``, ``selected-node``, ``prefilter-result-status``) so the simulator's UI can
show gpuplane's answer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from gpuplane.fit.plugin_results import PluginResults
from gpuplane.fit.result import FitAnswer, Outcome, PodAnswer
from gpuplane.fit.workload import FitWorkload
from gpuplane.k8s.fit.workload import WorkloadDocument

FIT = "gpuplane.io/fit"
FIT_RESULT = "gpuplane.io/fit-result"
SIMULATOR = "kube-scheduler-simulator.sigs.k8s.io/"
PLACED = (Outcome.FITS, Outcome.FITS_AFTER_PREEMPTION)


def _compact(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _pod_result(p: PodAnswer) -> dict[str, Any]:
    out: dict[str, Any] = {"pod": p.pod, "outcome": str(p.outcome), "node": p.node}
    gpus = p.gpus.kubelet if p.gpus is not None else None
    if gpus is not None:
        out.update(
            gpus=list(gpus.gpus),
            numa=list(gpus.numa_nodes),
            ringGBps=round(gpus.bottleneck_gbps, 3),
        )
        if p.gpus is not None and p.gpus.uncertain:
            out["gpusAssumed"] = True
    if p.fit_error:
        out["reason"] = p.fit_error
    elif p.kubelet is not None and not p.kubelet.admit:
        out["reason"] = f"{p.kubelet.reason}: {p.kubelet.message}"
    if p.preempt_node:
        out["preemption"] = {"node": p.preempt_node, "victims": [v.pod for v in p.victims]}
    return out


def _simulator(results: PluginResults, node: str | None) -> dict[str, str]:
    return {
        SIMULATOR + "prefilter-result-status": _compact(results.pre_filter_status),
        SIMULATOR + "filter-result": _compact(results.filter),
        SIMULATOR + "score-result": _compact(results.score),
        SIMULATOR + "finalscore-result": _compact(results.final_score),
        SIMULATOR + "selected-node": node or "",
    }


def annotated_list(
    documents: Sequence[WorkloadDocument],
    fw: FitWorkload,
    answer: FitAnswer,
    simulator: Mapping[str, PluginResults] | None = None,
) -> str:
    """The List; ``simulator`` holds the plugin results of bare Pods by pod key."""
    by_workload: dict[str, list[PodAnswer]] = {}
    for p in answer.pods:
        by_workload.setdefault(p.workload, []).append(p)
    items = []
    for doc in documents:
        obj = copy.deepcopy(doc.raw)
        meta = obj.setdefault("metadata", {})
        notes = meta.setdefault("annotations", {}) or {}
        meta["annotations"] = notes
        name = str(meta.get("name", ""))
        pods = by_workload.get(f"{doc.parsed.kind}/{name}", [])
        placed = sum(1 for p in pods if p.outcome in PLACED)
        if pods:
            notes[FIT] = "fits" if placed == len(pods) else f"{placed}/{len(pods)} pods fit"
            notes[FIT_RESULT] = _compact([_pod_result(p) for p in pods])
        if doc.parsed.kind == "Pod" and pods and simulator is not None:
            found = simulator.get(pods[0].pod)
            if found is not None:
                notes.update(_simulator(found, pods[0].node))
        items.append(obj)
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": items,
    }
    return yaml.safe_dump(listing, sort_keys=False, default_flow_style=False, width=10**6)
