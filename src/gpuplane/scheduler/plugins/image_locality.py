"""ImageLocality (kube-scheduler v1.31: framework/plugins/imagelocality/image_locality.go).

Favours nodes that already hold the pod's container images, so fewer and smaller pulls are
needed. For each container, init containers included, whose image (``:latest`` added when the
reference names no tag or digest) a node lists, the node earns the image's size scaled by its
spread: ``int(size * nodes_holding / all_nodes)``, so an image every node holds counts in full
and a rare one little (kube's guard against piling a workload onto the few nodes that pulled it
first). The sum is clamped to [23 MiB, 1000 MiB x containers] and mapped linearly onto [0, 100],
truncated. A node holding none of the images sits at the lower bound and scores 0.

Node images come from the snapshot (``ClusterSnapshot.image_states``, from ``status.images``).
The twin models no images, so there every node scores 0, as upstream does for a cluster that has
not pulled the pod's images.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from gpuplane.scheduler.framework.images import ImageState, ImageStates
from gpuplane.scheduler.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.types import IntArray, PodInfo

MIB = 1024 * 1024
# The score's range (kube: minThreshold, maxContainerThreshold): where the compressed sizes of
# about 90% of registry images fall; the upper bound grows with the pod's number of containers.
MIN_THRESHOLD = 23 * MIB
MAX_CONTAINER_THRESHOLD = 1000 * MIB


def normalized_image_name(name: str) -> str:
    """The name as the container runtime reports it: ``:latest`` added unless the reference has
    a tag or digest (a ``:`` after the last ``/``; a registry port comes before it)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageState, num_nodes: int) -> int:
    """The image's size scaled by the share of nodes holding it, truncated (kube computes it in
    float64, as Python's float does)."""
    spread = float(state.num_nodes) / float(num_nodes)
    return int(float(state.size_bytes) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """The node's score from its summed image scores (kube: calculatePriority)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def pod_images(pod: PodInfo) -> tuple[str, ...]:
    """The normalised image of every container, init containers first (two containers with
    one image give it twice: kube sums per container)."""
    return tuple(normalized_image_name(c.image) for c in pod.container_list())


class ImageLocality:
    name: ClassVar[str] = "ImageLocality"
    extension_points: ClassVar[frozenset[str]] = frozenset({SCORE})
    unsupported: ClassVar[tuple[str, ...]] = (
        "stale image counts: kube refreshes a node's count of the nodes holding an image only "
        "when that node changes; gpuplane's are always current",
    )

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        pass

    def _sums(self, pod: PodInfo, st: ClusterState, states: ImageStates) -> IntArray:
        """Per node, the summed image scores of the pod's images; pods with the same images
        (a controller's replicas) share one array for the decision."""
        images = pod_images(pod)
        key = (self.name, images)
        cached = st.memo.get(key)
        if isinstance(cached, np.ndarray):
            return cached
        sums = np.zeros(st.num_nodes, dtype=np.int64)
        for image in images:
            state = states.get(image)
            if state is not None:
                sums[state.nodes] += scaled_image_score(state, st.num_nodes)
        st.memo[key] = sums
        return sums

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        states = st.snap.image_states
        if states is None:
            return np.full(len(nodes), MIN_NODE_SCORE, dtype=np.int64)
        max_threshold = MAX_CONTAINER_THRESHOLD * len(pod.container_list())
        clamped = np.clip(self._sums(pod, st, states)[nodes], MIN_THRESHOLD, max_threshold)
        span = max_threshold - MIN_THRESHOLD
        out: IntArray = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // span
        return out

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        states = st.snap.image_states
        if states is None:
            return MIN_NODE_SCORE
        held = st.snap.node_images[i]
        total = 0
        for image in pod_images(pod):
            state = states.get(image)
            if state is not None and image in held:
                total += scaled_image_score(state, st.num_nodes)
        return calculate_priority(total, len(pod.container_list()))
