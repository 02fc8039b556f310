"""GPUSharing: fractional GPUs placed on a concrete device, and the devices of every GPU pod.

gpuplane's plugin (no kube-scheduler counterpart; the model is OpenB's, the FGD paper's
simulator: a node keeps free milli-GPU per GPU, a sharing pod takes ``gpu_milli`` of one GPU).

Resource convention: a sharing pod requests ``gpuplane.io/gpu-milli: M`` (1 <= M <= 1000) and no
``nvidia.com/gpu``; a whole-GPU pod requests ``nvidia.com/gpu: N``. A GPU that holds a share is not
free as a whole, so NodeResourcesFit's ``nvidia.com/gpu`` check already keeps whole-GPU pods off
it, and its ``gpuplane.io/gpu-milli`` check is the node's total free share.

- PreFilter: a bad request (M outside 1..1000, or M with nvidia.com/gpu) is unresolvable.
- Filter (sharing pods): some GPU must have M free milli, else
  ``node(s) had no GPU with enough free gpuplane.io/gpu-milli`` (Unschedulable).
- Reserve: picks the devices: the share goes best-fit (the GPU with the least free milli that
  holds it), whole GPUs are the lowest-indexed free ones; the framework assumes that placement.
"""

from __future__ import annotations

from typing import ClassVar, cast

import numpy as np
from pydantic import BaseModel

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import (
    FILTER,
    PLACEMENT_KEY,
    PRE_FILTER,
    RESERVE,
    Handle,
)
from gpuplane.scheduler.framework.state import (
    ClusterState,
    CycleState,
    Placement,
    pick_share_gpu,
    pick_whole_gpus,
)
from gpuplane.scheduler.framework.status import (
    SUCCESS,
    Code,
    Status,
    unresolvable,
    unschedulable,
)
from gpuplane.scheduler.framework.types import (
    GPU_MILLI,
    MILLI_PER_GPU,
    BoolArray,
    GpuShare,
    IntArray,
    PodInfo,
)

NO_SHARE = f"node(s) had no GPU with enough free {GPU_MILLI}"
BAD_REQUEST = (
    f"{GPU_MILLI} must be between 1 and {MILLI_PER_GPU} and cannot be combined with {NVIDIA_GPU}"
)


class GPUSharing:
    name: ClassVar[str] = "GPUSharing"
    extension_points: ClassVar[frozenset[str]] = frozenset({PRE_FILTER, FILTER, RESERVE})
    unsupported: ClassVar[tuple[str, ...]] = ("a share spread over more than one GPU",)

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        pass

    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        milli = pod.requests.get(GPU_MILLI, 0)
        if milli and (milli > MILLI_PER_GPU or milli < 0 or pod.requests.get(NVIDIA_GPU, 0)):
            return unresolvable(BAD_REQUEST)
        return SUCCESS

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        milli = pod.gpu_milli
        if not milli:
            return None
        return cast(BoolArray, (st.gpu >= milli).any(axis=1))

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        return [ReasonGroup(self.name, Code.UNSCHEDULABLE, NO_SHARE, nodes)]

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        milli = pod.gpu_milli
        if milli and not bool(np.any(st.gpu[i] >= milli)):
            return unschedulable(NO_SHARE)
        return SUCCESS

    def reserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        whole = pod.requests.get(NVIDIA_GPU, 0)
        ids = pick_whole_gpus(st.gpu[i], whole) if whole else ()
        if whole and not ids:
            return unschedulable(f"node(s) did not have {whole} whole GPUs free")
        share = None
        if pod.gpu_milli:
            g = pick_share_gpu(st.gpu[i], pod.gpu_milli)
            if g is None:
                return unschedulable(NO_SHARE)
            share = GpuShare(g, pod.gpu_milli)
        cs.data[PLACEMENT_KEY] = Placement(i, ids, share)
        return SUCCESS

    def unreserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> None:
        cs.data.pop(PLACEMENT_KEY, None)
