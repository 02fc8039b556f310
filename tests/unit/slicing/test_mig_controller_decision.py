"""The live MIG controller's decision: demand, safety rules, named configs."""

from __future__ import annotations

from gpuplane.api.selectors import from_match_fields
from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.controller_decision import decide
from gpuplane.slicing.mig.controller_types import (
    ControlNode,
    ControlPod,
    ControlSettings,
    ControlSnapshot,
    DisruptionBudget,
    SkipReason,
)
from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.mig.parted_config import PartedConfig
from gpuplane.slicing.mig.parted_naming import layouts_of, named_node_config

A100 = get_mig_gpu("A100-80GB")


def _all_1g() -> Layout:
    layout = apply_counts(A100, {"1g.10gb": 7}).layout
    assert layout is not None
    return layout


def node(name: str, state: str | None = "success", gpus: int = 1) -> ControlNode:
    return ControlNode(name, A100, tuple(_all_1g() for _ in range(gpus)), "all-1g.10gb", state)


def pending(name: str, profile: str = "3g.40gb") -> ControlPod:
    return ControlPod(f"ml/{name}", "ml", {"app": "train"}, None, ((profile, 1),))


def running(name: str, on: str, app: str = "serve") -> ControlPod:
    return ControlPod(f"ml/{name}", "ml", {"app": app}, on, (("1g.10gb", 1),))


def test_idle_node_gets_a_named_config_serving_the_demand() -> None:
    snap = ControlSnapshot((node("a"),), (pending("p0"), pending("p1")))
    decision = decide(snap, ControlSettings())
    assert decision.demand == (("3g.40gb", 2),)
    assert len(decision.changes) == 1
    change = decision.changes[0]
    assert change.node == "a" and change.previous == "all-1g.10gb" and not change.evicts
    assert change.config.startswith("gpuplane-")
    config = PartedConfig(((change.config, change.entries),))
    back = layouts_of(config, change.config, A100, 1)
    assert back is not None and back[0].counts() == {"3g.40gb": 2}
    assert change.labels == {"nvidia.com/mig.config": change.config}


def test_pending_state_node_is_never_relabelled_and_counts_against_the_budget() -> None:
    snap = ControlSnapshot((node("a", state="pending"), node("b")), (pending("p0"),))
    decision = decide(snap, ControlSettings(max_unavailable=1))
    assert decision.changes == ()
    reasons = {(s.node, s.reason) for s in decision.skipped}
    assert ("a", SkipReason.IN_PROGRESS) in reasons
    assert ("b", SkipReason.MAX_UNAVAILABLE) in reasons
    assert decide(snap, ControlSettings(max_unavailable=2)).changes[0].node == "b"


def test_max_unavailable_limits_changes() -> None:
    snap = ControlSnapshot((node("a"), node("b")), tuple(pending(f"p{i}") for i in range(4)))
    decision = decide(snap, ControlSettings(max_unavailable=1))
    assert [c.node for c in decision.changes] == ["a"]
    assert [(s.node, s.reason) for s in decision.skipped] == [("b", SkipReason.MAX_UNAVAILABLE)]


def test_busy_node_needs_allow_evict_and_a_permissive_pdb() -> None:
    snap = ControlSnapshot((node("a", gpus=1),), (pending("p0"), running("r0", "a")))
    refused = decide(snap, ControlSettings())
    assert refused.changes == ()
    assert [(s.reason, s.evicts) for s in refused.skipped] == [(SkipReason.WOULD_EVICT, ("ml/r0",))]
    pdb = DisruptionBudget("ml/serve", "ml", from_match_fields({"app": "serve"}, None), 0)
    blocked = decide(
        ControlSnapshot(snap.nodes, snap.pods, (pdb,)), ControlSettings(allow_evict=True)
    )
    assert [s.reason for s in blocked.skipped] == [SkipReason.PDB]
    ok = DisruptionBudget("ml/serve", "ml", from_match_fields({"app": "serve"}, None), 1)
    allowed = decide(
        ControlSnapshot(snap.nodes, snap.pods, (ok,)), ControlSettings(allow_evict=True)
    )
    assert [c.evicts for c in allowed.changes] == [("ml/r0",)]


def test_idle_node_preferred_over_busy_one() -> None:
    snap = ControlSnapshot((node("a"), node("b")), (pending("p0"), running("r0", "a")))
    decision = decide(snap, ControlSettings())
    assert [c.node for c in decision.changes] == ["b"]


def test_names_are_content_derived() -> None:
    layouts = (_all_1g(), _all_1g())
    assert named_node_config(A100, layouts) == named_node_config(A100, list(layouts))
    other = named_node_config(A100, (_all_1g(), Layout()))
    assert other[0] != named_node_config(A100, layouts)[0]
    assert [e.devices for e in other[1]] == [(0,), (1,)]
