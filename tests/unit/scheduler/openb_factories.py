"""Factories for the OpenB and policy tests: tiny hand-made clusters and trace subsets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gpuplane.scheduler.openb.trace import NodeTable, PodTable
from gpuplane.scheduler.policies.types import (
    NUM_TAGS,
    NodeArrays,
    PodRequest,
    TypicalPods,
)

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "openb"
NODE_CSV = DATA / "openb_node_list_gpu_node.csv"


def make_nodes(
    gpus: Sequence[Sequence[int]],
    *,
    cpu: Sequence[int] | None = None,
    mem: Sequence[int] | None = None,
    model: Sequence[int] | None = None,
    tags: Sequence[Sequence[int]] | None = None,
    slots: int = 8,
) -> NodeArrays:
    """Nodes whose GPUs have the given free milli (one list per node, padded to ``slots``)."""
    n = len(gpus)
    gpu_left = np.zeros((n, slots), dtype=np.int64)
    for i, row in enumerate(gpus):
        gpu_left[i, : len(row)] = row
    tag_counts = np.zeros((n, NUM_TAGS), dtype=np.int64)
    for i, row in enumerate(tags or []):
        tag_counts[i, : len(row)] = row
    return NodeArrays(
        cpu_left=np.array(cpu if cpu is not None else [64_000] * n, dtype=np.int64),
        mem_left=np.array(mem if mem is not None else [262_144] * n, dtype=np.int64),
        gpu_left=gpu_left,
        num_gpus=np.array([len(row) for row in gpus], dtype=np.int64),
        model=np.array(model if model is not None else [0] * n, dtype=np.int64),
        tag_counts=tag_counts,
    )


def make_pod(
    cpu: int = 1000,
    gpus: int = 0,
    milli: int = 0,
    *,
    mem: int = 1024,
    models: frozenset[int] | None = None,
) -> PodRequest:
    return PodRequest(cpu_milli=cpu, mem_mib=mem, num_gpu=gpus, gpu_milli=milli, models=models)


def make_typical(
    specs: Sequence[tuple[int, int, int]],
    prob: Sequence[float],
    *,
    num_models: int = 1,
    access: Sequence[Sequence[bool]] | None = None,
) -> TypicalPods:
    """Typical pods from (cpu_milli, gpu_milli, num_gpu) triples."""
    m = len(specs)
    allowed = (
        np.array(access, dtype=np.bool_)
        if access is not None
        else np.ones((m, num_models), dtype=np.bool_)
    )
    return TypicalPods(
        cpu_milli=np.array([s[0] for s in specs], dtype=np.int64),
        gpu_milli=np.array([s[1] for s in specs], dtype=np.int64),
        num_gpu=np.array([s[2] for s in specs], dtype=np.int64),
        access=allowed,
        prob=np.array(prob, dtype=np.float64),
        gpu_spec=tuple("" for _ in specs),
    )


def all_nodes(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64)


def subset_nodes(table: NodeTable, rows: Sequence[int]) -> NodeTable:
    idx = np.array(rows, dtype=np.int64)
    return NodeTable(
        source=table.source,
        names=tuple(table.names[i] for i in idx),
        cpu_milli=table.cpu_milli[idx],
        mem_mib=table.mem_mib[idx],
        num_gpus=table.num_gpus[idx],
        model=table.model[idx],
        model_names=table.model_names,
    )


def subset_pods(table: PodTable, rows: Sequence[int]) -> PodTable:
    idx = np.array(rows, dtype=np.int64)
    return PodTable(
        source=table.source,
        names=tuple(table.names[i] for i in idx),
        cpu_milli=table.cpu_milli[idx],
        mem_mib=table.mem_mib[idx],
        num_gpu=table.num_gpu[idx],
        gpu_milli=table.gpu_milli[idx],
        gpu_spec=tuple(table.gpu_spec[i] for i in idx),
    )


def make_pod_table(specs: Sequence[tuple[int, int, int]], gpu_spec: str = "") -> PodTable:
    """A pod list from (cpu_milli, num_gpu, gpu_milli) triples, named p000, p001, ..."""
    n = len(specs)
    return PodTable(
        source="test",
        names=tuple(f"p{i:03d}" for i in range(n)),
        cpu_milli=np.array([s[0] for s in specs], dtype=np.int64),
        mem_mib=np.ones(n, dtype=np.int64),
        num_gpu=np.array([s[1] for s in specs], dtype=np.int64),
        gpu_milli=np.array([s[2] for s in specs], dtype=np.int64),
        gpu_spec=tuple(gpu_spec for _ in specs),
    )
