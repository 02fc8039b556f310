"""ImageLocality (kube-scheduler: framework/plugins/imagelocality/image_locality.go).

Upstream scores a node by the size of the pod's container images already on it, spread by how
many nodes hold each image, clamped below by a threshold (23 MB times the number of containers):
a node holding none of the images is at the threshold and scores 0. The twin models no container
images, so no node holds any image and every node scores 0, as upstream's score is for a cluster
that has not pulled the pod's images. Since all nodes get the same score it never changes which
node wins; it is kept so that kube's default profile, and its score sums, are the same.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from gpuplane.scheduler.framework.interfaces import MIN_NODE_SCORE, SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.types import IntArray, PodInfo


class ImageLocality:
    name: ClassVar[str] = "ImageLocality"
    extension_points: ClassVar[frozenset[str]] = frozenset({SCORE})
    unsupported: ClassVar[tuple[str, ...]] = (
        "container images on nodes (the twin models none: every node scores 0)",
    )

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        pass

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        return np.full(len(nodes), MIN_NODE_SCORE, dtype=np.int64)

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        return MIN_NODE_SCORE
