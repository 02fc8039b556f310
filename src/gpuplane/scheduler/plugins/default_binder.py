"""DefaultBinder (kube-scheduler: framework/plugins/defaultbinder): binds the pod to the node.
In a decision that is a ``Binding`` the caller applies (the twin writes the pod's node)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from gpuplane.scheduler.framework.interfaces import BIND, Handle
from gpuplane.scheduler.framework.state import CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Status
from gpuplane.scheduler.framework.types import PodInfo


class DefaultBinder:
    name: ClassVar[str] = "DefaultBinder"
    extension_points: ClassVar[frozenset[str]] = frozenset({BIND})
    unsupported: ClassVar[tuple[str, ...]] = ()

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        pass

    def bind(self, cs: CycleState, pod: PodInfo, node: str) -> Status:
        return SUCCESS
