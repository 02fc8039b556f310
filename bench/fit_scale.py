"""Benchmark: ``gpuplane fit`` of a 64-pod gang (8 GPUs each) on a 5,000-node cluster with
10,000 bound pods.

Run: ``.venv/bin/python bench/fit_scale.py`` (options: ``--nodes``, ``--pods``, ``--gang``,
``--repeat``). In one process it writes the cluster as one ``kubectl get -o json`` dump (the
objects of ``bench/cluster_dump.py``), then times each stage the command runs:

- load: the dump read into a snapshot (``snapshot save --from``), the snapshot file written and
  read back (``fit --snapshot``), and the snapshot turned into fit's cluster (holdings replayed);
- answer: the gang through ``answer_fit`` with kube's default profile, its remedies and the
  capacity search (``--capacity-limit`` replicas);
- the same answer with the per-node reference framework (``Scheduler(reference=True)``), side
  by side, and the ratio. Both must place the same pods on the same nodes.

Goals (issue 13): load + answer under 5 s; a 10,000-pod snapshot loads in under 10 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gpuplane.api.taints import Toleration
from gpuplane.fit import workload_objects as wo
from gpuplane.fit.answer import answer_fit
from gpuplane.fit.expand import WorkloadObject, expand
from gpuplane.fit.result import FitAnswer
from gpuplane.fit.workload import FitSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.reading import snapshot_from_files
from gpuplane.k8s.cluster.snapshot_file import read_snapshot, write_snapshot
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.plugins.registry import in_tree_registry

sys.path.insert(0, str(Path(__file__).parent))
from cluster_dump import large_cluster

T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def gang(size: int) -> list[WorkloadObject]:
    requests = {"cpu": 64000, "memory": 512 * 2**30, "nvidia.com/gpu": 8}
    template = wo.PodTemplate(
        labels={"scheduling.x-k8s.io/pod-group": "train"},
        containers=(wo.ContainerSpec("trainer", requests, {"nvidia.com/gpu": 8}),),
        tolerations=(Toleration("nvidia.com/gpu", "Exists", None, "NoSchedule"),),
    )
    job = wo.JobSpec("train", "batch", template, completions=size, parallelism=size)
    group = wo.PodGroupSpec("train", "batch", min_member=size)
    return [WorkloadObject(group, "PodGroup", "bench"), WorkloadObject(job, "Job", "bench")]


def placements(a: FitAnswer) -> list[tuple[str, str | None]]:
    return [(p.pod, p.node) for p in a.pods]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--gang", type=int, default=64)
    ap.add_argument("--capacity-limit", type=int, default=256)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "dump.json"
        objs = large_cluster(args.nodes, args.pods)
        dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
        snap, t_read = timed(lambda: snapshot_from_files([dump], read_at="2026-12-02T00:00:00Z"))
        path = Path(tmp) / "snap.json"
        _, t_write = timed(lambda: write_snapshot(snap, path))
        snap2, t_reread = timed(lambda: read_snapshot(path))
        cluster, t_cluster = timed(lambda: fit_cluster(snap2))
    fw = expand(gang(args.gang), cluster)
    settings = FitSettings(capacity_limit=args.capacity_limit)
    registry = in_tree_registry()
    fast = Scheduler([ProfileConfig()], registry=registry)
    ref = Scheduler([ProfileConfig()], registry=registry, reference=True)
    answer, t_answer = timed(lambda: answer_fit(fast, cluster, fw, settings))
    ref_answer, t_ref = timed(lambda: answer_fit(ref, cluster, fw, settings))
    same = placements(answer) == placements(ref_answer)
    pods = len(snap.of("pods"))
    print(
        f"cluster: {args.nodes} nodes, {pods} bound pods; gang of {args.gang} x 8 GPUs; "
        f"capacity search up to {args.capacity_limit}"
    )
    print(
        f"load: dump -> snapshot {t_read:.2f} s, write {t_write:.2f} s, read back "
        f"{t_reread:.2f} s, snapshot -> cluster {t_cluster:.2f} s"
    )
    load = t_reread + t_cluster
    print(
        f"answer: framework {t_answer:.2f} s | per-node reference {t_ref:.2f} s | "
        f"ratio {t_ref / t_answer:.1f}x | same placements: {same}"
    )
    print(
        f"fit --snapshot (read + cluster + answer): {load + t_answer:.2f} s (goal < 5 s); "
        f"10,000-pod dump loads in {t_read + t_cluster:.2f} s (goal < 10 s)"
    )
    print(
        f"answer: {answer.count(answer.pods[0].outcome)} pods {answer.pods[0].outcome}, "
        f"gangs {[(g.group, g.fits) for g in answer.gangs]}, capacity "
        f"{[c.max_replicas for c in answer.capacity]}"
    )
    if not same:
        raise SystemExit("the reference placed the pods differently")


if __name__ == "__main__":
    main()
