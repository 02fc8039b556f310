"""The live MIG controller: single strategy and nodes whose last config failed."""

from __future__ import annotations

from gpuplane.api.selectors import from_match_fields
from gpuplane.fit.model import FitPod
from gpuplane.k8s.cluster.mig_inputs import single_request
from gpuplane.scheduler.framework.types import PodInfo
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
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Layout

A100 = get_mig_gpu("A100-80GB")
PRODUCT = "NVIDIA-A100-SXM4-80GB"


def _all(profile: str, count: int) -> Layout:
    layout = apply_counts(A100, {profile: count}).layout
    assert layout is not None
    return layout


def single_node(
    name: str, config: str = "all-1g.10gb", state: str | None = "success"
) -> ControlNode:
    layout = _all("1g.10gb", 7) if config == "all-1g.10gb" else _all("3g.40gb", 2)
    return ControlNode(
        name, A100, (layout, layout), config, state, strategy="single", product=PRODUCT
    )


def wants(name: str, profile: str = "3g.40gb", gpus: int = 1) -> ControlPod:
    return ControlPod(f"ml/{name}", "ml", {"app": "train"}, None, (), gpus, profile, PRODUCT)


def uses(name: str, on: str) -> ControlPod:
    return ControlPod(f"ml/{name}", "ml", {"app": "serve"}, on, (), 1)


def test_idle_single_node_is_relabelled_to_the_asked_profile() -> None:
    snap = ControlSnapshot((single_node("a"),), (wants("p0"), wants("p1")))
    decision = decide(snap, ControlSettings())
    assert [(c.node, c.previous, c.config, c.evicts) for c in decision.changes] == [
        ("a", "all-1g.10gb", "all-3g.40gb", ())
    ]
    change = decision.changes[0]
    assert [t.layout.counts() for _, t in change.targets] == [{"3g.40gb": 2}] * 2
    assert decision.single_demand == (("3g.40gb", 2),) and decision.single_unplaced == ()
    assert decision.demand == ()


def test_free_devices_of_the_profile_need_no_change() -> None:
    snap = ControlSnapshot(
        (single_node("a", "all-3g.40gb"), single_node("b")), (wants("p0"), uses("r0", "a"))
    )
    assert decide(snap, ControlSettings()).changes == ()


def test_other_product_or_mixed_node_is_not_used() -> None:
    other = ControlPod("ml/p0", "ml", {}, None, (), 1, "3g.40gb", "NVIDIA-H100-80GB-HBM3")
    mixed = ControlNode("m", A100, (_all("1g.10gb", 7),), "all-1g.10gb", "success")
    decision = decide(ControlSnapshot((single_node("a"), mixed), (other,)), ControlSettings())
    assert decision.changes == ()
    assert decision.single_unplaced == (("3g.40gb", 1),)


def test_used_single_node_needs_allow_evict_and_a_permissive_pdb() -> None:
    snap = ControlSnapshot((single_node("a"),), (wants("p0"), uses("r0", "a")))
    refused = decide(snap, ControlSettings())
    assert refused.changes == ()
    assert [(s.reason, s.evicts) for s in refused.skipped] == [(SkipReason.WOULD_EVICT, ("ml/r0",))]
    strict = DisruptionBudget("ml/serve", "ml", from_match_fields({"app": "serve"}, None), 0)
    blocked = decide(
        ControlSnapshot(snap.nodes, snap.pods, (strict,)), ControlSettings(allow_evict=True)
    )
    assert [s.reason for s in blocked.skipped] == [SkipReason.PDB]
    ok = DisruptionBudget("ml/serve", "ml", from_match_fields({"app": "serve"}, None), 1)
    allowed = decide(
        ControlSnapshot(snap.nodes, snap.pods, (ok,)), ControlSettings(allow_evict=True)
    )
    assert [(c.config, c.evicts) for c in allowed.changes] == [("all-3g.40gb", ("ml/r0",))]


def test_idle_single_node_preferred_and_max_unavailable_kept() -> None:
    snap = ControlSnapshot((single_node("a"), single_node("b")), (wants("p0"), uses("r0", "a")))
    assert [c.node for c in decide(snap, ControlSettings()).changes] == ["b"]
    many = ControlSnapshot(
        (single_node("a"), single_node("b")), tuple(wants(f"p{i}") for i in range(8))
    )
    decision = decide(many, ControlSettings(max_unavailable=1))
    assert [c.node for c in decision.changes] == ["a"]
    assert [(s.node, s.reason) for s in decision.skipped] == [("b", SkipReason.MAX_UNAVAILABLE)]


def test_failed_single_config_is_not_set_again() -> None:
    failed = single_node("a", "all-3g.40gb", state="failed")
    decision = decide(ControlSnapshot((failed,), (wants("p0"),)), ControlSettings())
    assert decision.changes == ()
    assert [(s.node, s.reason) for s in decision.skipped] == [("a", SkipReason.PREVIOUSLY_FAILED)]
    assert decision.single_unplaced == (("3g.40gb", 1),)
    # A different profile is a new attempt.
    other = decide(ControlSnapshot((failed,), (wants("p0", "1g.10gb"),)), ControlSettings())
    assert [c.config for c in other.changes] == ["all-1g.10gb"]


def test_failed_mixed_config_is_not_set_again() -> None:
    pods = (ControlPod("ml/p0", "ml", {}, None, (("3g.40gb", 2),)),)
    fresh = ControlNode("a", A100, (EMPTY_LAYOUT,), None, "success")
    first = decide(ControlSnapshot((fresh,), pods), ControlSettings())
    assert len(first.changes) == 1
    config = first.changes[0].config
    failed = ControlNode("a", A100, (first.changes[0].targets[0][1].layout,), config, "failed")
    again = decide(ControlSnapshot((failed,), pods), ControlSettings())
    assert again.changes == ()
    assert [(s.node, s.reason) for s in again.skipped] == [("a", SkipReason.PREVIOUSLY_FAILED)]
    ok = ControlNode("b", A100, (EMPTY_LAYOUT,), None, "success")
    elsewhere = decide(ControlSnapshot((failed, ok), pods), ControlSettings())
    assert [c.node for c in elsewhere.changes] == ["b"]


def _pod(
    selector: dict[str, str] | None = None,
    affinity: dict[str, object] | None = None,
    annotation: str | None = None,
    requests: dict[str, int] | None = None,
) -> FitPod:
    info = PodInfo(
        "u",
        "ml",
        "p",
        requests=requests if requests is not None else {"nvidia.com/gpu": 1},
        node_selector=selector or {},
        affinity=affinity,
    )
    return FitPod(info, None, "Pending", 0.0, mig_profile=annotation)


def test_single_request_reads_selector_affinity_and_annotation() -> None:
    product = {"nvidia.com/gpu.product": f"{PRODUCT}-MIG-1g.10gb"}
    assert single_request(_pod(selector=product)) == ("1g.10gb", PRODUCT)
    expr = {"key": "nvidia.com/gpu.product", "operator": "In", "values": [f"{PRODUCT}-MIG-3g.40gb"]}
    affinity: dict[str, object] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr]}]
            }
        }
    }
    assert single_request(_pod(affinity=affinity)) == ("3g.40gb", PRODUCT)
    assert single_request(_pod(annotation="2g.20gb")) == ("2g.20gb", None)
    assert single_request(_pod(selector={"nvidia.com/gpu.product": PRODUCT})) == (None, None)
    mig = {"nvidia.com/mig-1g.10gb": 1, "nvidia.com/gpu": 1}
    assert single_request(_pod(annotation="1g.10gb", requests=mig)) == (None, None)
