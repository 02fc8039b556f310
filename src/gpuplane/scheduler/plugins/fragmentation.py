"""Fragmentation: the FGD paper's fragmentation-gradient score (or gpuplane's own policy) as a
Score plugin of the framework.

FGD (fgd-openb.md §3-4) scores a node by how much a placement lowers the node's expected
fragmentation over the cluster's *typical pods*, the demand distribution: 100 x
sigmoid((F_before - F_after) / 1000), truncated. The vectorised policy functions of
``gpuplane.scheduler.policies`` do the work; this plugin only turns the framework's cluster
state into their node arrays (cpu milli, memory MiB, free milli-GPU per GPU) and the pod into
their request (whole GPUs ``nvidia.com/gpu``, or a share ``gpuplane.io/gpu-milli``).

Args (``pluginConfig``): ``policy`` (``fgd`` or ``gpuplane``) and ``typicalPods``, the demand
distribution (cpu milli, milli-GPU per GPU, GPUs, weight). Without it, a generic mix of 1, 2, 4
and 8-GPU pods with 8 cores per GPU stands in; set it from your cluster's history for real use.
GPU models are not told apart here (node selectors and GFD labels constrain models in Filter).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU
from gpuplane.scheduler.framework.interfaces import SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.types import IntArray, PodInfo
from gpuplane.scheduler.policies.fgd import FgdPolicy
from gpuplane.scheduler.policies.frag import node_frag
from gpuplane.scheduler.policies.gpuplane import GpuplanePolicy
from gpuplane.scheduler.policies.types import (
    MILLI_PER_GPU,
    NUM_TAGS,
    NodeArrays,
    PodRequest,
    Policy,
    TypicalPods,
)

MIB = 1024 * 1024


class TypicalPod(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    cpu_milli: int = Field(alias="cpuMilli", ge=0)
    gpu_milli: int = Field(alias="gpuMilli", ge=0, le=MILLI_PER_GPU)
    num_gpu: int = Field(alias="numGpu", ge=0, le=64)
    weight: float = Field(gt=0)


DEFAULT_TYPICAL = (
    TypicalPod(cpu_milli=8000, gpu_milli=1000, num_gpu=1, weight=0.4),
    TypicalPod(cpu_milli=16000, gpu_milli=1000, num_gpu=2, weight=0.25),
    TypicalPod(cpu_milli=32000, gpu_milli=1000, num_gpu=4, weight=0.2),
    TypicalPod(cpu_milli=64000, gpu_milli=1000, num_gpu=8, weight=0.15),
)


class FragmentationArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    policy: Literal["fgd", "gpuplane"] = "fgd"
    typical_pods: list[TypicalPod] = Field(
        default_factory=lambda: list(DEFAULT_TYPICAL), alias="typicalPods", min_length=1
    )


def typical_from_args(specs: list[TypicalPod]) -> TypicalPods:
    weights = np.array([s.weight for s in specs], dtype=np.float64)
    return TypicalPods(
        cpu_milli=np.array([s.cpu_milli for s in specs], dtype=np.int64),
        gpu_milli=np.array([s.gpu_milli if s.num_gpu else 0 for s in specs], dtype=np.int64),
        num_gpu=np.array([s.num_gpu for s in specs], dtype=np.int64),
        access=np.ones((len(specs), 1), dtype=np.bool_),
        prob=weights / weights.sum(),
        gpu_spec=tuple("" for _ in specs),
    )


def node_arrays(st: ClusterState) -> NodeArrays:
    gpu = st.gpu
    n = st.num_nodes
    return NodeArrays(
        cpu_left=st.free[st.row[CPU]].astype(np.int64),
        mem_left=(st.free[st.row[MEMORY]] // MIB).astype(np.int64),
        gpu_left=np.clip(gpu, 0, None).astype(np.int64),
        num_gpus=np.count_nonzero(st.snap.gpu_free_milli >= 0, axis=1).astype(np.int64),
        model=np.zeros(n, dtype=np.int64),
        tag_counts=np.zeros((n, NUM_TAGS), dtype=np.int64),
    )


def pod_request(pod: PodInfo) -> PodRequest:
    share = pod.gpu_milli
    whole = int(pod.requests.get(NVIDIA_GPU, 0))
    return PodRequest(
        cpu_milli=int(pod.requests.get(CPU, 0)),
        mem_mib=int(pod.requests.get(MEMORY, 0)) // MIB,
        num_gpu=1 if share else whole,
        gpu_milli=share if share else (MILLI_PER_GPU if whole else 0),
    )


class Fragmentation:
    name: ClassVar[str] = "Fragmentation"
    extension_points: ClassVar[frozenset[str]] = frozenset({SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ("GPU models (gpu_spec) are not told apart",)

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        config = args if isinstance(args, FragmentationArgs) else FragmentationArgs()
        self.typical = typical_from_args(config.typical_pods)
        self.policy: Policy = (
            FgdPolicy(self.typical) if config.policy == "fgd" else GpuplanePolicy(self.typical)
        )
        # Both policies are node-local: a node's score depends on its own state and the pod.
        # Keep F per node and scores per pod shape, and recompute only nodes whose cpu or GPU
        # state changed since they were last seen (fgd-openb.md §6: what made FGD fast).
        self._cpu: IntArray | None = None
        self._gpu: IntArray | None = None
        self._frag = np.zeros(0, dtype=np.float64)
        self._scores: dict[tuple[int, int, int], tuple[IntArray, np.ndarray]] = {}

    def _refresh(self, arrays: NodeArrays) -> None:
        cpu, gpu = arrays.cpu_left, arrays.gpu_left
        if self._cpu is None or self._gpu is None or self._gpu.shape != gpu.shape:
            changed = np.arange(cpu.shape[0])
            self._frag = np.zeros(cpu.shape[0], dtype=np.float64)
            self._scores.clear()
        else:
            changed = np.flatnonzero((self._cpu != cpu) | (self._gpu != gpu).any(axis=1))
        if changed.size:
            self._frag[changed] = node_frag(
                cpu[changed], gpu[changed], arrays.model[changed], self.typical
            )
            for _, valid in self._scores.values():
                valid[changed] = False
        self._cpu, self._gpu = cpu.copy(), gpu.copy()

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        if len(nodes) == 0:
            return np.zeros(0, dtype=np.int64)
        arrays = node_arrays(st)
        self._refresh(arrays)
        request = pod_request(pod)
        key = (request.cpu_milli, request.num_gpu, request.gpu_milli)
        cached = self._scores.get(key)
        if cached is None:
            n = arrays.num_nodes
            cached = (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool))
            self._scores[key] = cached
        scores, valid = cached
        todo = nodes[~valid[nodes]]
        if todo.size:
            scores[todo] = self.policy.score(arrays, request, todo, self._frag).score
            valid[todo] = True
        return self.policy.normalize(scores[nodes]).astype(np.int64)

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        return int(self.score(cs, pod, st, np.array([i], dtype=np.int64))[0])
