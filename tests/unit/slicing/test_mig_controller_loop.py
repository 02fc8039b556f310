"""The MIG controller's round (``controller_loop``): read, decide, write in the live order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuplane.slicing.mig.controller_loop import ControlRead, RoundOutcome, run_round
from gpuplane.slicing.mig.controller_types import ControlSettings, ControlSnapshot, NodeChange
from tests.unit.slicing.test_mig_controller_decision import node, pending, running


@dataclass
class Source:
    snapshot: ControlSnapshot
    reads: int = 0

    def read(self) -> ControlRead:
        self.reads += 1
        return ControlRead(self.snapshot, ("a note",))


@dataclass
class Writer:
    refuse: set[str] = field(default_factory=set)
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def write_configs(self, changes: Sequence[NodeChange]) -> str:
        self.calls.append(("configs", *(c.config for c in changes)))
        return "created"

    def evict(self, change: NodeChange, pod: str) -> bool:
        self.calls.append(("evict", change.node, pod))
        return pod not in self.refuse

    def refused(self, change: NodeChange, pod: str, message: str) -> None:
        self.calls.append(("refused", change.node, pod))

    def relabel(self, change: NodeChange) -> None:
        self.calls.append(("relabel", change.node, change.config))


def _round(snap: ControlSnapshot, writer: Writer | None, **settings: object) -> RoundOutcome:
    return run_round(Source(snap), ControlSettings.model_validate(settings), writer)


def test_a_dry_round_decides_and_writes_nothing() -> None:
    outcome = _round(ControlSnapshot((node("a"),), (pending("p0"),)), None)
    assert len(outcome.decision.changes) == 1 and outcome.writes == ()
    assert outcome.notes == ("a note",) and outcome.relabelled() == ()


def test_configs_first_then_evictions_then_the_label() -> None:
    snap = ControlSnapshot((node("a"),), (pending("p0"), running("s0", "a")))
    writer = Writer()
    outcome = _round(snap, writer, allow_evict=True)
    (change,) = outcome.decision.changes
    assert writer.calls == [
        ("configs", change.config),
        ("evict", "a", "ml/s0"),
        ("relabel", "a", change.config),
    ]
    assert outcome.relabelled() == (("a", change.config),)
    assert [w.action for w in outcome.writes] == ["configs", "applied"]


def test_a_refused_eviction_leaves_the_node_unlabelled() -> None:
    snap = ControlSnapshot((node("a"),), (pending("p0"), running("s0", "a")))
    writer = Writer(refuse={"ml/s0"})
    outcome = _round(snap, writer, allow_evict=True)
    assert [c[0] for c in writer.calls] == ["configs", "evict", "refused"]
    assert outcome.relabelled() == ()
    (blocked,) = [w for w in outcome.writes if w.action == "blocked"]
    assert blocked.node == "a" and "ml/s0" in blocked.value


def test_no_change_no_write() -> None:
    writer = Writer()
    outcome = _round(ControlSnapshot((node("a"),), ()), writer)
    assert writer.calls == [] and outcome.writes == ()


def test_on_decided_sees_the_decision_before_any_write() -> None:
    snap = ControlSnapshot((node("a"),), (pending("p0"),))
    writer = Writer()
    seen: list[int] = []
    run_round(
        Source(snap),
        ControlSettings(),
        writer,
        lambda d, notes: seen.append(len(writer.calls)),
    )
    assert seen == [0] and writer.calls
