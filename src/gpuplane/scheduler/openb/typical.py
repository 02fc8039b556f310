"""FGD's typical pods: the trace's demand distribution (fgd-openb.md §4, pkg/utils/frag.go).

Specs (cpu_milli, gpu_milli, num_gpu, gpu_spec) of the original pod list (before shuffle and
tuning), CPU-only pods included; most popular first, equal counts ordered by the spec itself,
larger first (the simulator sorts with sort.Reverse over count, then cpu, gpu_milli, num_gpu,
gpu_spec). Specs are taken one by one until they cover >= 95 % of pods and their probabilities
renormalised over the kept ones, with the simulator's float operations.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from gpuplane.scheduler.openb.trace import PodTable, spec_allows
from gpuplane.scheduler.policies.types import TypicalPods

POPULARITY_THRESHOLD_PCT = 95

SpecKey = tuple[int, int, int, str]


def typical_pods(
    pods: PodTable,
    model_names: tuple[str, ...],
    threshold_pct: int = POPULARITY_THRESHOLD_PCT,
) -> TypicalPods:
    """The typical pods of ``pods`` for a cluster whose GPU models are ``model_names``."""
    counts = Counter(
        (int(c), int(g), int(n), s)
        for c, g, n, s in zip(
            pods.cpu_milli, pods.gpu_milli, pods.num_gpu, pods.gpu_spec, strict=True
        )
    )
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    total = float(pods.num_pods)
    expected = float(threshold_pct) * total / 100.0
    kept: list[tuple[SpecKey, int]] = []
    cumulative = 0.0
    while cumulative < expected and len(kept) < len(ranked):
        kept.append(ranked[len(kept)])
        cumulative += float(kept[-1][1])
    if len(kept) < len(ranked):
        prob = [(count / total) / (cumulative / total) for _, count in kept]
    else:
        prob = [count / total for _, count in kept]
    access = np.array(
        [[spec_allows(key[3], model) for model in model_names] for key, _ in kept],
        dtype=np.bool_,
    ).reshape(len(kept), len(model_names))
    return TypicalPods(
        cpu_milli=np.array([key[0] for key, _ in kept], dtype=np.int64),
        gpu_milli=np.array([key[1] for key, _ in kept], dtype=np.int64),
        num_gpu=np.array([key[2] for key, _ in kept], dtype=np.int64),
        access=access,
        prob=np.array(prob, dtype=np.float64),
        gpu_spec=tuple(key[3] for key, _ in kept),
    )
