"""The container images the nodes hold, as kube-scheduler's cache summarises them.

Each node's ``status.images`` lists entries with several names (tags and digests) and one
``sizeBytes``; kube-scheduler's cache keys every name of every entry, and per name keeps a size
and the set of nodes listing it (kube: backend/cache ``addNodeImageStates``; a node's
``NodeInfo.ImageStates``, with ``ImageStateSummary.NumNodes`` the size of that set when the node
enters the snapshot). ``ImageStates`` is that summary for one snapshot, built once by
``make_snapshot``: per name its size, how many nodes hold it and which.

The size of a name is the one the cache saw first: kube creates a name's entry when the first
node listing it is added and keeps that size while any node holds it, so gpuplane takes the size
from the first node in the snapshot's order. Nodes normally agree (one name, one image).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.framework.types import IntArray


@dataclass(frozen=True, slots=True)
class ImageState:
    """One image name across the cluster (kube's ImageStateSummary)."""

    size_bytes: int
    num_nodes: int
    # The indices of the nodes listing the name, ascending.
    nodes: IntArray


@dataclass(frozen=True, slots=True)
class ImageStates:
    """Every image name some node lists, over the snapshot's ``num_nodes`` nodes."""

    num_nodes: int
    by_name: Mapping[str, ImageState]

    def get(self, name: str) -> ImageState | None:
        return self.by_name.get(name)


def make_image_states(node_images: Sequence[Mapping[str, int]]) -> ImageStates | None:
    """The summary of the nodes' images (``node_images[i]``: node ``i``'s name -> bytes); None
    when no node lists an image."""
    sizes: dict[str, int] = {}
    holders: dict[str, list[int]] = {}
    for i, images in enumerate(node_images):
        for name, size in images.items():
            if name not in sizes:
                sizes[name] = int(size)
                holders[name] = []
            holders[name].append(i)
    if not sizes:
        return None
    by_name = {
        name: ImageState(sizes[name], len(nodes), np.array(nodes, dtype=np.int64))
        for name, nodes in holders.items()
    }
    return ImageStates(len(node_images), by_name)
