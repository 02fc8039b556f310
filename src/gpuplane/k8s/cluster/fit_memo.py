"""``FitMemo``: fit's reading of each Node and Pod object, kept by name or uid and
resourceVersion, so a cluster built again after a watch event reads only what changed.

A pod's reading also depends on the PriorityClasses and on what selects pods (the
DefaultSelector's Services and controllers): when those differ from the last build, every pod
is read again. A node's reading depends only on ``NodeDefaults``, fixed for a memo. Objects
without a resourceVersion (files) are always read. Not thread-safe: one builder at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplane.fit.model import FitNode, FitPod
from gpuplane.fit.selecting import Selecting
from gpuplane.k8s.cluster.api_lister import RawObject

Context = tuple[object, ...]


def _meta(obj: RawObject) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _version(obj: RawObject) -> str:
    return str(_meta(obj).get("resourceVersion") or "")


class FitMemo:
    def __init__(self) -> None:
        self._nodes: dict[str, tuple[str, FitNode]] = {}
        self._pods: dict[str, tuple[str, FitPod]] = {}
        self._context: Context | None = None
        self.reads = 0  # objects actually read since the memo was made (for tests and logs)

    def node(self, raw: RawObject) -> FitNode | None:
        name, version = str(_meta(raw).get("name") or ""), _version(raw)
        held = self._nodes.get(name)
        return held[1] if held is not None and version and held[0] == version else None

    def keep_node(self, raw: RawObject, node: FitNode) -> None:
        self.reads += 1
        if version := _version(raw):
            self._nodes[node.name] = (version, node)

    def pod(self, raw: RawObject) -> FitPod | None:
        meta = _meta(raw)
        uid, version = str(meta.get("uid") or ""), _version(raw)
        held = self._pods.get(uid)
        return held[1] if held is not None and version and held[0] == version else None

    def keep_pod(self, raw: RawObject, pod: FitPod) -> None:
        self.reads += 1
        uid = str(_meta(raw).get("uid") or "")
        if uid and (version := _version(raw)):
            self._pods[uid] = (version, pod)

    def use_context(self, classes: Mapping[str, int], default: int, sel: Selecting) -> None:
        """Forget every pod when what a pod's reading depends on has changed."""
        context: Context = (tuple(sorted(classes.items())), default, sel)
        if context != self._context:
            self._pods.clear()
            self._context = context

    def trim(self, node_names: set[str], pod_uids: set[str]) -> None:
        """Drop objects gone from the cluster (after a build, so the memo does not grow)."""
        if len(self._nodes) > len(node_names):
            self._nodes = {k: v for k, v in self._nodes.items() if k in node_names}
        if len(self._pods) > len(pod_uids):
            self._pods = {k: v for k, v in self._pods.items() if k in pod_uids}
