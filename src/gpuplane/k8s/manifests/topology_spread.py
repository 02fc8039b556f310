"""A pod's ``spec.topologySpreadConstraints`` -> ``gpuplane.api.topology_spread`` values, validated
as the API server validates them (kubernetes/kubernetes pkg/apis/core/validation,
``validateTopologySpreadConstraints`` in v1.31, read through the code index), checks in its
order for each constraint: maxSkew, topologyKey, whenUnsatisfiable, no repeated
{topologyKey, whenUnsatisfiable}, minDomains, the two node inclusion policies, matchLabelKeys,
labelSelector. Messages are the upstream ones. A constraint without a labelSelector matches no
pod; the API server warns about it, so does this reader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpuplane.api.topology_spread import (
    NODE_INCLUSION_POLICIES,
    UNSATISFIABLE_ACTIONS,
    NodeInclusionPolicy,
    TopologySpreadConstraint,
    UnsatisfiableAction,
)
from gpuplane.api.validation import qualified_name_errors
from gpuplane.k8s.field_errors import fail
from gpuplane.k8s.manifests.api_types import TopologySpreadConstraint as ConstraintModel
from gpuplane.k8s.manifests.labels import check_selector

NOT_POSITIVE = "must be greater than zero"
_ACTIONS = ", ".join(f'"{a}"' for a in UNSATISFIABLE_ACTIONS)
_POLICIES = ", ".join(f'"{p}"' for p in NODE_INCLUSION_POLICIES)
# (field path, text): how a reader collects what it accepts with a warning.
Warn = Callable[[str, str], None]


def _action(c: ConstraintModel, where: str) -> UnsatisfiableAction:
    for action in UNSATISFIABLE_ACTIONS:
        if c.when_unsatisfiable == action:
            return action
    raise fail(
        f"Unsupported value: {c.when_unsatisfiable!r}", f"{where}.whenUnsatisfiable", _ACTIONS
    )


def _policy(value: str | None, where: str) -> NodeInclusionPolicy | None:
    if value is None:
        return None
    for policy in NODE_INCLUSION_POLICIES:
        if value == policy:
            return policy
    raise fail(f"Unsupported value: {value!r}", where, _POLICIES)


def _min_domains(c: ConstraintModel, action: str, where: str) -> None:
    if c.min_domains is None:
        return
    if c.min_domains <= 0:
        raise fail(f"{c.min_domains}: {NOT_POSITIVE}", f"{where}.minDomains")
    if action != "DoNotSchedule":
        raise fail(
            f"{c.min_domains}: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
            f"not {action}",
            f"{where}.minDomains",
        )


def _match_label_keys(c: ConstraintModel, where: str) -> tuple[str, ...]:
    keys = tuple(c.match_label_keys or ())
    if not keys:
        return ()
    field = f"{where}.matchLabelKeys"
    selector = c.label_selector
    if selector is None:
        raise fail("Forbidden: must not be specified when labelSelector is not set", field)
    in_selector = set(selector.match_labels or {}) | {
        r.key for r in selector.match_expressions or ()
    }
    for k, key in enumerate(keys):
        errors = qualified_name_errors(key)
        if errors:
            raise fail(f"{key!r}: {errors[0]}", f"{field}[{k}]")
        if key in in_selector:
            raise fail(f"{key!r}: exists in both matchLabelKeys and labelSelector", f"{field}[{k}]")
    return keys


def _constraint(
    c: ConstraintModel, where: str, rest: Sequence[ConstraintModel], warn: Warn
) -> TopologySpreadConstraint:
    if c.max_skew <= 0:
        raise fail(f"{c.max_skew}: {NOT_POSITIVE}", f"{where}.maxSkew")
    if not c.topology_key:
        raise fail("Required value: can not be empty", f"{where}.topologyKey")
    action = _action(c, where)
    # ValidateSpreadConstraintNotRepeat: against the constraints that follow.
    if any(r.topology_key == c.topology_key and r.when_unsatisfiable == action for r in rest):
        raise fail(
            f"Duplicate value: '{{{c.topology_key}, {action}}}'",
            f"{where}.{{topologyKey, whenUnsatisfiable}}",
        )
    _min_domains(c, action, where)
    affinity_policy = _policy(c.node_affinity_policy, f"{where}.nodeAffinityPolicy")
    taints_policy = _policy(c.node_taints_policy, f"{where}.nodeTaintsPolicy")
    keys = _match_label_keys(c, where)
    if c.label_selector is not None:
        check_selector(c.label_selector, f"{where}.labelSelector")
    else:
        warn(f"{where}.labelSelector", "a null labelSelector results in matching no pod")
    return TopologySpreadConstraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        when_unsatisfiable=action,
        label_selector=c.label_selector.to_selector() if c.label_selector is not None else None,
        min_domains=c.min_domains,
        node_affinity_policy=affinity_policy,
        node_taints_policy=taints_policy,
        match_label_keys=keys,
    )


def topology_spread_constraints(
    items: Sequence[ConstraintModel] | None, path: str, warn: Warn
) -> tuple[TopologySpreadConstraint, ...]:
    """``path`` is the field's own path, e.g. ``spec.template.spec.topologySpreadConstraints``."""
    listed = list(items or ())
    return tuple(
        _constraint(c, f"{path}[{i}]", listed[i + 1 :], warn) for i, c in enumerate(listed)
    )
