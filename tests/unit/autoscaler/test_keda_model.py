"""ScaledObject manifests: defaults, KEDA's validation rules, located errors, the HPA KEDA makes."""

from __future__ import annotations

import pytest

from gpuplane.autoscaler.hpa.spec import (
    MetricSourceType,
    MetricTargetType,
    SelectPolicy,
    hpa_to_dict,
)
from gpuplane.autoscaler.keda.hpa_generation import hpa_for
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.keda.scalers import build_scaler, quantity_milli, target_milli
from gpuplane.autoscaler.keda.validation import scaled_object_from_dict
from gpuplane.core.errors import InputError
from gpuplane.k8s.manifests.scaled_object import scaled_objects_from_text

YAML = """\
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: vllm
  namespace: serving
spec:
  scaleTargetRef:
    name: vllm-llama
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus:9090
        query: sum(vllm:num_requests_waiting{model="llama"})
        threshold: "5"
"""


def so_of(text: str = YAML) -> ScaledObjectIn:
    (so,) = scaled_objects_from_text(text, "so.yaml")
    return so


def with_spec(extra: str) -> str:
    return YAML.replace("spec:\n", "spec:\n" + extra, 1)


def test_defaults() -> None:
    so = so_of()
    assert so.spec.pollingInterval == 30 and so.spec.cooldownPeriod == 300
    assert so.spec.initialCooldownPeriod == 0 and so.min_replicas() == 0
    assert so.hpa_min_replicas() == 1 and so.hpa_max_replicas() == 100
    assert so.spec.triggers[0].target_type() == "AverageValue"
    assert so.hpa_name() == "keda-hpa-vllm"


def test_the_hpa_keda_creates() -> None:
    so = so_of()
    scalers = tuple(build_scaler(t, i, None) for i, t in enumerate(so.spec.triggers))
    hpa = hpa_for(so, scalers)
    (metric,) = hpa.metrics
    assert metric.type is MetricSourceType.EXTERNAL and metric.metric_name == "s0-prometheus"
    assert metric.target.type is MetricTargetType.AVERAGE_VALUE
    assert metric.target.average_value_milli == 5000
    assert metric.selector == (("scaledobject.keda.sh/name", "vllm"),)
    assert (hpa.min_replicas, hpa.max_replicas, hpa.behavior) == (1, 100, None)
    manifest = hpa_to_dict(hpa)
    assert manifest["metadata"] == {"name": "keda-hpa-vllm", "namespace": "serving"}


def test_value_metric_type_and_behavior_and_paused_annotations() -> None:
    text = with_spec(
        "  minReplicaCount: 2\n  maxReplicaCount: 8\n"
        "  advanced:\n    horizontalPodAutoscalerConfig:\n      name: custom\n"
        "      behavior:\n        scaleDown:\n          stabilizationWindowSeconds: 60\n"
    ).replace("    - type: prometheus\n", "    - type: prometheus\n      metricType: Value\n")
    text = text.replace(
        "  namespace: serving\n",
        "  namespace: serving\n  annotations:\n    autoscaling.keda.sh/paused-scale-in: 'true'\n",
    )
    so = so_of(text)
    hpa = hpa_for(so, tuple(build_scaler(t, i, None) for i, t in enumerate(so.spec.triggers)))
    assert hpa.name == "custom" and (hpa.min_replicas, hpa.max_replicas) == (2, 8)
    assert hpa.metrics[0].target.type is MetricTargetType.VALUE
    assert hpa.behavior is not None
    assert hpa.behavior.scale_down.stabilization_window_s == 60
    assert hpa.behavior.scale_down.select_policy is SelectPolicy.DISABLED
    assert hpa.behavior.scale_up.policies is not None  # defaults filled in


def test_threshold_in_milli_truncates_and_clamps() -> None:
    assert target_milli(0.0015) == 1 and target_milli(2.5) == 2500
    assert target_milli(float("nan")) == 0 and target_milli(-1) == 0
    assert quantity_milli("500m") == 500 and quantity_milli("1Gi") == 2**30 * 1000
    assert quantity_milli("abc") is None


@pytest.mark.parametrize(
    ("extra", "message", "line"),
    [
        (
            "  minReplicaCount: 5\n  maxReplicaCount: 3\n",
            "MinReplicaCount=5 must be less than MaxReplicaCount=3",
            7,
        ),
        (
            "  minReplicaCount: 2\n  idleReplicaCount: 2\n",
            "IdleReplicaCount=2 must be less than MinReplicaCount=2",
            8,
        ),
        ("  idleReplicaCount: 0\n", "IdleReplicaCount=0 must be less than MinReplicaCount=0", 7),
        ("  pollingInterval: 0\n", "pollingInterval", 7),
        (
            "  fallback:\n    failureThreshold: -1\n    replicas: 2\n",
            "greater than or equal to 0",
            8,
        ),
    ],
)
def test_replica_counts_and_fields_are_checked(extra: str, message: str, line: int) -> None:
    with pytest.raises(InputError) as err:
        so_of(with_spec(extra))
    assert message in str(err.value)
    assert err.value.location.line == line and err.value.location.source == "so.yaml"


def test_idle_zero_with_min_zero_is_allowed_like_keda() -> None:
    # KEDA compares idle against the HPA floor, which turns minReplicaCount 0 into 1.
    so = so_of(with_spec("  minReplicaCount: 0\n  idleReplicaCount: 0\n"))
    assert so.spec.idleReplicaCount == 0


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('threshold: "5"', "threshold: 5", "threshold"),
        ('threshold: "5"', 'threshold: "five"', 'unable to parse "threshold"'),
        ('threshold: "5"', 'threshold: "0"', "must be a number > 0"),
        (
            "        serverAddress: http://prometheus:9090\n",
            "",
            'missing required parameter "serverAddress"',
        ),
        ('threshold: "5"', 'threshold: "5"\n        ignoreNullValues: "maybe"', "as a boolean"),
        (
            'threshold: "5"',
            'threshold: "5"\n        treshold: "5"',
            "unknown prometheus trigger parameter",
        ),
        (
            'sum(vllm:num_requests_waiting{model="llama"})',
            "rate(x[5m] offset 1m)",
            "offset modifier",
        ),
        ("type: prometheus", "type: kafka", "no scaler found for type: kafka"),
        (
            "type: prometheus",
            "type: prometheus\n      metricType: Utilization",
            "'Utilization' metric type",
        ),
    ],
)
def test_trigger_errors_are_located(old: str, new: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        so_of(YAML.replace(old, new))
    assert message in str(err.value)
    assert err.value.location.field is not None and err.value.location.field.startswith(
        "spec.triggers[0]"
    )
    assert err.value.location.line is not None and err.value.location.line >= 9


def test_cpu_memory_triggers() -> None:
    text = YAML.replace(
        "  triggers:\n",
        "  triggers:\n    - type: cpu\n      metricType: Utilization\n"
        '      metadata:\n        value: "60"\n',
    )
    so = so_of(text)
    scalers = tuple(build_scaler(t, i, None) for i, t in enumerate(so.spec.triggers))
    hpa = hpa_for(so, scalers)
    # External sorts before Resource; the prometheus trigger keeps its index s1.
    assert [m.type for m in hpa.metrics] == [MetricSourceType.EXTERNAL, MetricSourceType.RESOURCE]
    assert hpa.metrics[0].metric_name == "s1-prometheus"
    assert hpa.metrics[1].target.average_utilization == 60
    bad = text.replace('value: "60"', 'value: "sixty"')
    with pytest.raises(InputError, match="not a utilization percentage"):
        so_of(bad)


def test_fallback_needs_a_non_resource_trigger() -> None:
    data = so_of().model_dump()
    data["spec"]["triggers"] = [
        {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50"}}
    ]
    data["spec"]["fallback"] = {"failureThreshold": 3, "replicas": 2}
    with pytest.raises(InputError, match=r"at least one trigger \(that is not cpu or memory\)"):
        scaled_object_from_dict(data)


def test_scaling_modifiers_rules() -> None:
    base = so_of().model_dump(exclude_none=True)
    base["spec"]["triggers"][0]["name"] = "waiting"
    base["spec"]["advanced"] = {"scalingModifiers": {"formula": "waiting / 2", "target": "4"}}
    so = scaled_object_from_dict(base)
    scalers = tuple(build_scaler(t, i, None) for i, t in enumerate(so.spec.triggers))
    (metric,) = hpa_for(so, scalers).metrics
    assert metric.metric_name == "composite-metric" and metric.target.average_value_milli == 4000
    for formula, target, message in (
        ("waiting / 2", "", "Target is mandatory"),
        ("", "4", "Formula is mandatory"),
        ("waiting / 2", "four", "error converting target"),
        ("queue * 2", "4", "unknown name queue"),
        ("waiting +", "4", "unexpected end of expression"),
    ):
        base["spec"]["advanced"]["scalingModifiers"] = {"formula": formula, "target": target}
        with pytest.raises(InputError, match=message):
            scaled_object_from_dict(base)


def test_not_a_scaled_object() -> None:
    with pytest.raises(InputError, match="no ScaledObject in the file"):
        scaled_objects_from_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "x.yaml")
    with pytest.raises(InputError, match="unknown key 'triggerz'"):
        so_of(YAML.replace("  triggers:", "  triggerz:"))
