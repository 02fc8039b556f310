"""spec.topologySpreadConstraints read from manifests: values as the scheduler takes them, and
the API server's validation (v1.31 validateTopologySpreadConstraints) with located errors."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.api.selectors import from_match_fields
from gpuplane.api.topology_spread import TopologySpreadConstraint
from gpuplane.core.errors import InputError
from gpuplane.fit import workload_objects as wo
from gpuplane.k8s.manifests.parse import parse_manifest
from tests.unit.k8s.test_manifests import parse_text


def pod(*constraints: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "containers": [{"name": "c", "image": "busybox"}],
        "topologySpreadConstraints": list(constraints),
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


ZONE = {
    "maxSkew": 1,
    "topologyKey": "topology.kubernetes.io/zone",
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "web"}},
}


def template_of(doc: dict[str, Any]) -> wo.PodTemplate:
    obj = parse_manifest(doc).obj
    assert isinstance(obj, wo.PodSpecObject)
    return obj.template


def test_constraints_are_read_with_their_fields() -> None:
    full = {
        **ZONE,
        "minDomains": 3,
        "nodeAffinityPolicy": "Ignore",
        "nodeTaintsPolicy": "Honor",
        "matchLabelKeys": ["pod-template-hash"],
    }
    host = {
        "maxSkew": 2,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {},
    }
    parsed = parse_manifest(pod(full, host))
    assert parsed.warnings == ()
    assert isinstance(parsed.obj, wo.PodSpecObject)
    assert parsed.obj.template.topology_spread_constraints == (
        TopologySpreadConstraint(
            1,
            "topology.kubernetes.io/zone",
            "DoNotSchedule",
            from_match_fields({"app": "web"}, []),
            min_domains=3,
            node_affinity_policy="Ignore",
            node_taints_policy="Honor",
            match_label_keys=("pod-template-hash",),
        ),
        TopologySpreadConstraint(
            2, "kubernetes.io/hostname", "ScheduleAnyway", from_match_fields({}, [])
        ),
    )


def test_a_constraint_without_selector_warns() -> None:
    bare = {k: v for k, v in ZONE.items() if k != "labelSelector"}
    parsed = parse_manifest(pod(bare))
    assert parsed.warnings == (
        (
            "spec.topologySpreadConstraints[0].labelSelector",
            "a null labelSelector results in matching no pod",
        ),
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"maxSkew": 0}, "spec.topologySpreadConstraints[0].maxSkew: 0: must be greater than zero"),
        ({"topologyKey": ""}, "[0].topologyKey: Required value: can not be empty"),
        (
            {"whenUnsatisfiable": "Maybe"},
            "[0].whenUnsatisfiable: Unsupported value: 'Maybe'; expected \"DoNotSchedule\", "
            '"ScheduleAnyway"',
        ),
        ({"minDomains": 0}, "[0].minDomains: 0: must be greater than zero"),
        (
            {"minDomains": 2, "whenUnsatisfiable": "ScheduleAnyway"},
            "[0].minDomains: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not "
            "ScheduleAnyway",
        ),
        ({"nodeAffinityPolicy": "Always"}, "[0].nodeAffinityPolicy: Unsupported value: 'Always'"),
        ({"nodeTaintsPolicy": "honor"}, "[0].nodeTaintsPolicy: Unsupported value: 'honor'"),
        (
            {"matchLabelKeys": ["app"]},
            "[0].matchLabelKeys[0]: 'app': exists in both matchLabelKeys and labelSelector",
        ),
        ({"matchLabelKeys": ["bad key"]}, "[0].matchLabelKeys[0]: 'bad key'"),
        (
            {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
            "[0].labelSelector.matchExpressions[0].values: must be specified when `operator` is",
        ),
        ({"maxskew": 1}, "[0].maxskew"),
    ],
)
def test_validation_errors_are_located(change: dict[str, Any], expected: str) -> None:
    with pytest.raises(InputError) as info:
        parse_manifest(pod({**ZONE, **change}))
    assert expected in str(info.value)


def test_match_label_keys_need_a_selector() -> None:
    bare = {k: v for k, v in ZONE.items() if k != "labelSelector"}
    with pytest.raises(InputError, match="must not be specified when labelSelector is not set"):
        parse_manifest(pod({**bare, "matchLabelKeys": ["app"]}))


def test_a_repeated_key_and_action_is_refused_at_the_first() -> None:
    other = {**ZONE, "maxSkew": 2}
    with pytest.raises(InputError) as info:
        parse_manifest(pod(ZONE, other))
    assert (
        "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "
        "'{topology.kubernetes.io/zone, DoNotSchedule}'" in str(info.value)
    )


def test_errors_carry_the_line_in_a_template() -> None:
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: busybox}]
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: Sometimes
"""
    with pytest.raises(InputError) as info:
        parse_text(text)
    assert str(info.value).startswith(
        "m.yaml:13: spec.template.spec.topologySpreadConstraints[0].whenUnsatisfiable: "
        "Unsupported value: 'Sometimes'"
    )


def test_the_deployments_selector_is_kept() -> None:
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "front"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    d = parse_manifest(doc).obj
    assert isinstance(d, wo.DeploymentSpec)
    assert d.selector == from_match_fields({"app": "web"}, [])
    assert template_of(pod(ZONE)).topology_spread_constraints[0].max_skew == 1
