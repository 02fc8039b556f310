"""Stabilization windows, scaling policies and the legacy clamp."""

from __future__ import annotations

from gpuplane.autoscaler.hpa.normalize import (
    Recommendation,
    ScaleEvent,
    convert_with_behavior_rate,
    convert_with_rules,
    scale_down_limit,
    scale_up_limit,
    stabilize_legacy,
    stabilize_with_behaviors,
    store_scale_event,
)
from gpuplane.autoscaler.hpa.spec import (
    DEFAULT_SCALE_DOWN,
    DEFAULT_SCALE_UP,
    Behavior,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
)

NOW = 10_000.0
PODS, PERCENT = ScalingPolicyType.PODS, ScalingPolicyType.PERCENT


def rules(select: SelectPolicy, *policies: tuple[ScalingPolicyType, int, int]) -> ScalingRules:
    return ScalingRules(
        select_policy=select, policies=tuple(ScalingPolicy(t, v, p) for t, v, p in policies)
    )


def ago(*pairs: tuple[int, float]) -> tuple[ScaleEvent, ...]:
    return tuple(ScaleEvent(c, NOW - a) for c, a in pairs)


def recs(*pairs: tuple[int, float]) -> tuple[Recommendation, ...]:
    return tuple(Recommendation(r, NOW - a) for r, a in pairs)


def test_api_defaults_when_behavior_is_given_partially() -> None:
    b = Behavior.of(ScalingRules(stabilization_window_s=60), None)
    assert b.scale_up.stabilization_window_s == 60
    assert b.scale_up.policies == DEFAULT_SCALE_UP.policies
    assert b.scale_up.select_policy is SelectPolicy.MAX
    assert b.scale_down == DEFAULT_SCALE_DOWN and b.scale_down.stabilization_window_s is None


def test_default_scale_up_is_max_of_4_pods_and_100_percent_per_15s() -> None:
    up = Behavior().scale_up
    assert scale_up_limit(2, (), (), up, NOW) == 6  # 2 + 4 beats 2 * 2
    assert scale_up_limit(10, (), (), up, NOW) == 20  # 100 % beats 4 pods
    # A scale-up 10 s ago still counts in the 15 s period, one 15 s ago does not.
    assert scale_up_limit(10, ago((5, 10)), (), up, NOW) == 10
    assert scale_up_limit(10, ago((5, 15)), (), up, NOW) == 20


def test_default_scale_down_allows_everything_at_once() -> None:
    assert scale_down_limit(10, (), (), Behavior().scale_down, NOW) == 0


def test_select_policies() -> None:
    up_max = rules(SelectPolicy.MAX, (PODS, 4, 60), (PERCENT, 50, 60))
    up_min = rules(SelectPolicy.MIN, (PODS, 4, 60), (PERCENT, 50, 60))
    assert scale_up_limit(10, (), (), up_max, NOW) == 15
    assert scale_up_limit(10, (), (), up_min, NOW) == 14
    down_max = rules(SelectPolicy.MAX, (PODS, 2, 60), (PERCENT, 50, 60))
    down_min = rules(SelectPolicy.MIN, (PODS, 2, 60), (PERCENT, 50, 60))
    assert scale_down_limit(10, (), (), down_max, NOW) == 5  # the biggest change
    assert scale_down_limit(10, (), (), down_min, NOW) == 8  # the smallest change
    off = rules(SelectPolicy.DISABLED, (PODS, 100, 60))
    assert scale_up_limit(10, (), (), off, NOW) == 10
    assert scale_down_limit(10, (), (), off, NOW) == 10


def test_percent_rounding_up_and_down() -> None:
    up = rules(SelectPolicy.MAX, (PERCENT, 10, 60))
    assert scale_up_limit(3, (), (), up, NOW) == 4  # ceil(3.3)
    down = rules(SelectPolicy.MAX, (PERCENT, 10, 60))
    assert scale_down_limit(3, (), (), down, NOW) == 2  # int(2.7)


def test_period_start_counts_both_directions() -> None:
    down = rules(SelectPolicy.MAX, (PERCENT, 50, 180))
    # start = 10 - 2 (up) + 4 (down) = 12 -> int(6.0) = 6
    assert scale_down_limit(10, ago((2, 60)), ago((4, 60)), down, NOW) == 6


def test_rate_conversion_reasons() -> None:
    b = Behavior.of(rules(SelectPolicy.MAX, (PODS, 2, 60)), rules(SelectPolicy.MAX, (PODS, 3, 60)))
    assert convert_with_behavior_rate(5, 20, 1, 10, b, (), (), NOW).reason == "ScaleUpLimit"
    assert convert_with_behavior_rate(5, 20, 1, 6, b, (), (), NOW).reason == "TooManyReplicas"
    assert convert_with_behavior_rate(5, 1, 1, 10, b, (), (), NOW).replicas == 2
    assert convert_with_behavior_rate(5, 1, 3, 10, b, (), (), NOW).reason == "TooFewReplicas"
    within = convert_with_behavior_rate(5, 6, 1, 10, b, (), (), NOW)
    assert (within.replicas, within.reason) == (6, "DesiredWithinRange")
    # Recent scale-ups used the budget: the limit never drops below the current count.
    used = convert_with_behavior_rate(5, 9, 1, 10, b, ago((3, 10)), (), NOW)
    assert used.replicas == 5 and used.reason == "ScaleUpLimit"


def test_legacy_rules() -> None:
    assert convert_with_rules(1, 10, 1, 20).replicas == 4  # max(2 * 1, 4)
    assert convert_with_rules(5, 30, 1, 20).replicas == 10
    assert convert_with_rules(5, 30, 1, 8).reason == "TooManyReplicas"
    assert convert_with_rules(3, 1, 2, 8).reason == "TooFewReplicas"


def test_legacy_stabilization_keeps_the_highest_recent_recommendation() -> None:
    assert stabilize_legacy(recs((4, 120), (5, 60)), 3, NOW, 300)[0] == 5
    value, log = stabilize_legacy(recs((10, 600), (4, 60), (5, 120), (9, 540)), 3, NOW, 300)
    assert value == 5 and len(log) == 4 and log[3] == Recommendation(3, NOW)
    assert len(stabilize_legacy((), 5, NOW, 300)[1]) == 1


def test_behavior_stabilization_windows() -> None:
    # Scale down held by the highest recommendation of the window.
    got, reason, _, _ = stabilize_with_behaviors(recs((8, 100), (6, 50)), 3, 8, 0, 300, NOW)
    assert (got, reason) == (8, "ScaleDownStabilized")
    # Scale up held by the lowest recommendation of the up window.
    got, reason, _, _ = stabilize_with_behaviors(recs((4, 30), (6, 20)), 9, 3, 60, 0, NOW)
    assert (got, reason) == (4, "ScaleUpStabilized")
    # The last slot older than both windows is overwritten; a too-new one never is.
    _, _, _, stored = stabilize_with_behaviors(
        recs((1, 900), (2, 800), (3, 10)), 5, 5, 60, 300, NOW
    )
    assert [r.replicas for r in stored] == [1, 5, 3]


def test_store_scale_event_reuses_an_outdated_slot() -> None:
    b = Behavior.of(rules(SelectPolicy.MAX, (PODS, 4, 60)), None)
    events = ago((2, 120), (3, 30))
    stored = store_scale_event(b, events, 5, NOW)
    assert [e.change for e in stored] == [5, 3] and stored[0].t_s == NOW
    stored = store_scale_event(b, ago((3, 30)), 1, NOW)
    assert [e.change for e in stored] == [3, 1]
    down = store_scale_event(b, (), -4, NOW)
    assert down == (ScaleEvent(4, NOW),)
