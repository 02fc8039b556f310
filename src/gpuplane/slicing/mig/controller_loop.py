"""One round of gpuplane's MIG repartitioning controller, for the live service and the twin alike.

A round is: read a :class:`ControlSnapshot` from a :class:`ControlSource`, call the pure
:func:`gpuplane.slicing.mig.controller_decision.decide` with the controller's settings, then
(when a writer is given: ``--apply`` live, always in the twin) apply the decision's changes
through a :class:`MigWriter`, in the order the deployed controller writes them:

1. every change's mig-parted config is made known to NVIDIA's MIG manager, once, before any
   label names it (live: the ConfigMap ``migManager.config.name`` names);
2. per change, the pods it disrupts are evicted; when one eviction is refused (a
   PodDisruptionBudget), the node is not relabelled this round and the refusal is told;
3. the node's ``nvidia.com/mig.config`` label is set (with an event saying why): the MIG manager
   sees it and applies the config.

The providers differ only in where the snapshot comes from and where the writes go: the live
one lists the API server and writes to it (``gpuplane.live.migctl``), the twin's reads its
object store and hands the label to its MIG manager (``gpuplane.twin.mig``). Keeping the loop
here, below both, is what lets a twin run predict what the deployed controller does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from gpuplane.slicing.mig.controller_decision import decide
from gpuplane.slicing.mig.controller_types import (
    ControlSettings,
    ControlSnapshot,
    MigControllerDecision,
    NodeChange,
)


@dataclass(frozen=True, slots=True)
class ControlRead:
    """A source's view of the cluster for one round, and what it could not read cleanly."""

    snapshot: ControlSnapshot
    notes: tuple[str, ...] = ()


class ControlSource(Protocol):
    def read(self) -> ControlRead:
        """The cluster as the controller sees it now (read again every round, nothing cached)."""
        ...


class MigWriter(Protocol):
    def write_configs(self, changes: Sequence[NodeChange]) -> str:
        """Make the changes' mig-parted configs known to the MIG manager; what was done."""
        ...

    def evict(self, change: NodeChange, pod: str) -> bool:
        """Evict ``pod`` (namespace/name) for ``change``; False when its budget refuses it."""
        ...

    def refused(self, change: NodeChange, pod: str, message: str) -> None:
        """Tell that ``change`` waits because the eviction of ``pod`` was refused."""
        ...

    def relabel(self, change: NodeChange) -> None:
        """Set the node's ``nvidia.com/mig.config`` to ``change.config`` and tell why."""
        ...


@dataclass(frozen=True, slots=True)
class WriteRecord:
    """One write a round made: ``configs`` (value: what the writer did), ``applied`` (value: the
    config the node is labelled with) or ``blocked`` (value: why the node was not)."""

    action: str
    node: str | None
    value: str


@dataclass(frozen=True, slots=True)
class RoundOutcome:
    decision: MigControllerDecision
    notes: tuple[str, ...]
    writes: tuple[WriteRecord, ...] = ()

    def relabelled(self) -> tuple[tuple[str, str], ...]:
        """(node, config) for every node this round labelled, in the order written."""
        return tuple((w.node or "", w.value) for w in self.writes if w.action == "applied")


def _apply_change(writer: MigWriter, change: NodeChange) -> WriteRecord:
    for pod in change.evicts:
        if not writer.evict(change, pod):
            message = (
                f"eviction of {pod} refused by its PodDisruptionBudget; {change.node} is not "
                f"relabelled to {change.config} this round"
            )
            writer.refused(change, pod, message)
            return WriteRecord("blocked", change.node, message)
    writer.relabel(change)
    return WriteRecord("applied", change.node, change.config)


def apply_decision(decision: MigControllerDecision, writer: MigWriter) -> tuple[WriteRecord, ...]:
    """Do a decision's writes (nothing when it changes nothing); one record per write."""
    if not decision.changes:
        return ()
    out = [WriteRecord("configs", None, writer.write_configs(decision.changes))]
    out.extend(_apply_change(writer, change) for change in decision.changes)
    return tuple(out)


def run_round(
    source: ControlSource,
    settings: ControlSettings,
    writer: MigWriter | None,
    on_decided: Callable[[MigControllerDecision, tuple[str, ...]], None] | None = None,
) -> RoundOutcome:
    """Read, decide, (report,) apply. ``writer`` None is a dry run. ``on_decided`` sees the
    decision before any write, so a log keeps the plan even when a write then fails."""
    read = source.read()
    decision = decide(read.snapshot, settings)
    if on_decided is not None:
        on_decided(decision, read.notes)
    writes = apply_decision(decision, writer) if writer is not None else ()
    return RoundOutcome(decision, read.notes, writes)
