"""The component protocol: how a simulation drives the parts of the twin.

A twin is a ``Cluster`` and a list of components built from the scenario (``twin.build``). The
simulation calls, in list order:

- ``start(until_s)`` once before the loop: the component schedules its first events (the
  operator's lifecycle steps, the first metrics sample, arrivals, scaler polls...). Events at the
  same time and priority run in the order they were scheduled, so the list order is part of the
  run's behaviour;
- ``stop(until_s)`` once after the loop: a component with a clock of its own (the serving
  simulations) catches up to the end;
- ``summary()``: its typed section of the run summary (``twin.summary.RunSummary``), or None.

A component that also has ``after_event(handle)`` (``EventObserver``) is called after every
event; the invariant checks use it. Nothing else is called per event.

Parts that only react to the cluster's hooks (the kubelet, the scheduler loop, the workload
controllers, the resourceclaim controller) are components with nothing to start or report:
``Component`` gives them the empty hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any, Protocol, runtime_checkable

from gpuplane.core.kernel import EventHandle


class SummarySection(Protocol):
    """A component's part of the run summary: a frozen value with its JSON form."""

    def as_dict(self) -> object: ...


class TwinComponent(Protocol):
    def start(self, until_s: float) -> None: ...

    def stop(self, until_s: float) -> None: ...

    def summary(self) -> SummarySection | None: ...


@runtime_checkable
class EventObserver(Protocol):
    """Called after every event the kernel runs (slow: only for checks and debugging)."""

    def after_event(self, handle: EventHandle) -> None: ...


class Component:
    """The empty hooks of a ``TwinComponent``; a part overrides the ones it uses."""

    __slots__ = ()

    def start(self, until_s: float) -> None:
        """Nothing to schedule before the loop: the part acts on the cluster's hooks."""

    def stop(self, until_s: float) -> None:
        """No clock of its own to bring up to the end."""

    def summary(self) -> SummarySection | None:
        return None


def fields_dict(value: Any) -> dict[str, Any]:
    """A summary dataclass as its JSON form, field by field in declaration order: nested values
    by their own ``as_dict``, tuples as lists, mappings as dicts."""
    return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return value.as_dict() if hasattr(value, "as_dict") else fields_dict(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value
