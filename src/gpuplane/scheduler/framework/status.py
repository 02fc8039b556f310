"""Plugin results (kube-scheduler framework's Status and Code), as frozen values.

A status carries one or more reasons; its message is the reasons joined by ", " (Status.Message).
``Unschedulable`` nodes may become feasible if pods are removed (preemption tries them);
``UnschedulableAndUnresolvable`` ones may not (kube-scheduler: framework/interface.go).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    # Permit's Wait: how long the pod may wait for the plugin to allow it.
    wait_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin, self.wait_s)


SUCCESS = Status()


def unschedulable(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.UNSCHEDULABLE, tuple(r for r in reasons if r), plugin)


def unresolvable(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(r for r in reasons if r), plugin)


def wait(wait_s: float, plugin: str = "") -> Status:
    return Status(Code.WAIT, (), plugin, wait_s)


def skip(plugin: str = "") -> Status:
    return Status(Code.SKIP, (), plugin)
