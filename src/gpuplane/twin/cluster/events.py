"""Kubernetes-style events (``kubectl get events``): time, object, type, reason, message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Event:
    t_s: float
    kind: str
    namespace: str
    name: str
    reason: str
    message: str
    type: Literal["Normal", "Warning"] = "Normal"

    def as_dict(self) -> dict[str, Any]:
        return {
            "t_s": round(self.t_s, 6),
            "object": f"{self.kind}/{self.name}"
            if not self.namespace
            else f"{self.kind}/{self.namespace}/{self.name}",
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
        }


class EventRecorder:
    """Append-only list of events, with counts by reason for the summary."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.events: list[Event] = []
        self.counts: dict[str, int] = {}

    def record(
        self,
        t_s: float,
        kind: str,
        name: str,
        reason: str,
        message: str,
        *,
        namespace: str = "",
        warning: bool = False,
    ) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        if self.keep:
            self.events.append(
                Event(
                    t_s, kind, namespace, name, reason, message, "Warning" if warning else "Normal"
                )
            )
