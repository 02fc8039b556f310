"""From the metrics' proposal to the replica count the HPA writes: stabilization, rate limits and
the min/max clamp (``horizontal.go``: ``normalizeDesiredReplicas*``, ``stabilizeRecommendation*``,
``convertDesiredReplicasWith*``, ``calculateScale{Up,Down}Limit*``, ``storeScaleEvent``).

Two regimes exist:

- **no behavior** (legacy): the proposal is raised to the highest recommendation of the last
  downscale-stabilization window (5 min), then clamped to ``[min, min(max, max(2·current, 4))]``;
- **behavior**: stabilize first (raise to the *lowest* recommendation inside the scale-up window,
  lower to the *highest* inside the scale-down window, starting from the current count), then
  limit the change by the policies of that direction, counted against the scale events of each
  policy's period, then clamp to ``[min, max]``.

Recommendations and scale events are the controller's memory between syncs; here they are values
passed in and returned, so a decision stays a pure function. Times are seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplane.autoscaler.hpa.golang import INT32_MAX, INT32_MIN, to_int32
from gpuplane.autoscaler.hpa.spec import (
    Behavior,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
)

WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")
SCALE_UP_LIMIT = (
    "ScaleUpLimit",
    "the desired replica count is increasing faster than the maximum scale rate",
)
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
SCALE_DOWN_LIMIT = (
    "ScaleDownLimit",
    "the desired replica count is decreasing faster than the maximum scale rate",
)
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")

SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0


@dataclass(frozen=True, slots=True)
class Recommendation:
    """An unstabilized proposal the controller remembers, with the time it was made."""

    replicas: int
    t_s: float


@dataclass(frozen=True, slots=True)
class ScaleEvent:
    """A rescale this HPA made: how many replicas it added or removed (>= 0), and when."""

    change: int
    t_s: float
    outdated: bool = False


@dataclass(frozen=True, slots=True)
class Limited:
    """A normalized count and the ScalingLimited reason/message that explains it."""

    replicas: int
    reason: str
    message: str


def stabilize_legacy(
    recs: tuple[Recommendation, ...], desired: int, now_s: float, window_s: float
) -> tuple[int, tuple[Recommendation, ...]]:
    """``stabilizeRecommendation``: max of ``desired`` and the recommendations not older than the
    window; the new proposal overwrites the last one older than the window, else is appended."""
    cutoff = now_s - window_s
    best = desired
    old_index: int | None = None
    for i, rec in enumerate(recs):
        if rec.t_s < cutoff:
            old_index = i
        elif rec.replicas > best:
            best = rec.replicas
    return best, _store(recs, Recommendation(desired, now_s), old_index)


def _store(
    recs: tuple[Recommendation, ...], new: Recommendation, index: int | None
) -> tuple[Recommendation, ...]:
    if index is None:
        return (*recs, new)
    return (*recs[:index], new, *recs[index + 1 :])


def stabilize_with_behaviors(
    recs: tuple[Recommendation, ...],
    desired: int,
    current: int,
    up_window_s: float,
    down_window_s: float,
    now_s: float,
) -> tuple[int, str, str, tuple[Recommendation, ...]]:
    """``stabilizeRecommendationWithBehaviors``: (count, reason, message, recommendations).

    A recommendation counts for a window when it is strictly newer than its cutoff; the new one
    overwrites the last recommendation strictly older than both cutoffs, else is appended.
    """
    up_cutoff, down_cutoff = now_s - up_window_s, now_s - down_window_s
    up, down = desired, desired
    old_index: int | None = None
    for i, rec in enumerate(recs):
        if rec.t_s > up_cutoff:
            up = min(rec.replicas, up)
        if rec.t_s > down_cutoff:
            down = max(rec.replicas, down)
        if rec.t_s < up_cutoff and rec.t_s < down_cutoff:
            old_index = i
    result = current
    if result < up:
        result = up
    if result > down:
        result = down
    stored = _store(recs, Recommendation(desired, now_s), old_index)
    if desired >= current:
        return (
            result,
            "ScaleUpStabilized",
            "recent recommendations were lower than current one, applying the lowest recent "
            "recommendation",
            stored,
        )
    return (
        result,
        "ScaleDownStabilized",
        "recent recommendations were higher than current one, applying the highest recent "
        "recommendation",
        stored,
    )


def change_in_period(period_s: float, events: tuple[ScaleEvent, ...], now_s: float) -> int:
    """``getReplicasChangePerPeriod``: the changes strictly newer than ``now - period``."""
    cutoff = now_s - period_s
    return sum(e.change for e in events if e.t_s > cutoff)


def _period_start(
    current: int,
    period_s: int,
    up: tuple[ScaleEvent, ...],
    down: tuple[ScaleEvent, ...],
    now: float,
) -> int:
    return current - change_in_period(period_s, up, now) + change_in_period(period_s, down, now)


def scale_up_limit(
    current: int,
    up_events: tuple[ScaleEvent, ...],
    down_events: tuple[ScaleEvent, ...],
    rules: ScalingRules,
    now_s: float,
) -> int:
    """``calculateScaleUpLimitWithScalingRules``: the most replicas the policies allow now."""
    select = rules.select_policy or SelectPolicy.MAX
    if select is SelectPolicy.DISABLED:
        return current
    pick = min if select is SelectPolicy.MIN else max
    result = INT32_MAX if select is SelectPolicy.MIN else INT32_MIN
    for policy in rules.policies or ():
        start = _period_start(current, policy.period_s, up_events, down_events, now_s)
        if policy.type is ScalingPolicyType.PODS:
            proposed = start + policy.value
        else:
            # Rounded up, or a small percentage of a small count would never add a pod.
            proposed = to_int32(math.ceil(float(start) * (1 + float(policy.value) / 100)))
        result = pick(result, proposed)
    return result


def scale_down_limit(
    current: int,
    up_events: tuple[ScaleEvent, ...],
    down_events: tuple[ScaleEvent, ...],
    rules: ScalingRules,
    now_s: float,
) -> int:
    """``calculateScaleDownLimitWithBehaviors``: the fewest replicas the policies allow now."""
    select = rules.select_policy or SelectPolicy.MAX
    if select is SelectPolicy.DISABLED:
        return current
    # For scale-down the smallest change is the highest count.
    pick = max if select is SelectPolicy.MIN else min
    result = INT32_MIN if select is SelectPolicy.MIN else INT32_MAX
    for policy in rules.policies or ():
        start = _period_start(current, policy.period_s, up_events, down_events, now_s)
        if policy.type is ScalingPolicyType.PODS:
            proposed = start - policy.value
        else:
            proposed = to_int32(float(start) * (1 - float(policy.value) / 100))
        result = pick(result, proposed)
    return result


def convert_with_rules(current: int, desired: int, min_r: int, max_r: int) -> Limited:
    """``convertDesiredReplicasWithRules``: the legacy clamp with the 2x-or-4 scale-up limit."""
    limit = to_int32(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    if max_r > limit:
        maximum, (reason, message) = limit, SCALE_UP_LIMIT
    else:
        maximum, (reason, message) = max_r, TOO_MANY
    if desired < min_r:
        return Limited(min_r, *TOO_FEW)
    if desired > maximum:
        return Limited(maximum, reason, message)
    return Limited(desired, *WITHIN_RANGE)


def convert_with_behavior_rate(
    current: int,
    desired: int,
    min_r: int,
    max_r: int,
    behavior: Behavior,
    up_events: tuple[ScaleEvent, ...],
    down_events: tuple[ScaleEvent, ...],
    now_s: float,
) -> Limited:
    """``convertDesiredReplicasWithBehaviorRate``: policies of the direction, then min/max."""
    if desired > current:
        limit = scale_up_limit(current, up_events, down_events, behavior.scale_up, now_s)
        limit = max(limit, current)  # never below current until old events expire
        if max_r > limit:
            maximum, (reason, message) = limit, SCALE_UP_LIMIT
        else:
            maximum, (reason, message) = max_r, TOO_MANY
        if desired > maximum:
            return Limited(maximum, reason, message)
    elif desired < current:
        limit = scale_down_limit(current, up_events, down_events, behavior.scale_down, now_s)
        limit = min(limit, current)
        if min_r < limit:
            minimum, (reason, message) = limit, SCALE_DOWN_LIMIT
        else:
            minimum, (reason, message) = min_r, TOO_FEW
        if desired < minimum:
            return Limited(minimum, reason, message)
    return Limited(desired, *WITHIN_RANGE)


def longest_period(rules: ScalingRules) -> int:
    return max((p.period_s for p in rules.policies or ()), default=0)


def store_scale_event(
    behavior: Behavior,
    events: tuple[ScaleEvent, ...],
    change: int,
    now_s: float,
) -> tuple[ScaleEvent, ...]:
    """``storeScaleEvent`` for one direction: mark events older than the direction's longest
    policy period as outdated, overwrite the last outdated one, else append."""
    rules = behavior.scale_up if change > 0 else behavior.scale_down
    cutoff = now_s - longest_period(rules)
    marked = tuple(ScaleEvent(e.change, e.t_s, True) if e.t_s < cutoff else e for e in events)
    new = ScaleEvent(abs(change), now_s)
    old = [i for i, e in enumerate(marked) if e.outdated]
    if not old:
        return (*marked, new)
    i = old[-1]
    return (*marked[:i], new, *marked[i + 1 :])
