"""``autoscale hpa-check --hpa HPA.yaml --metrics VALUES.yaml``: a real autoscaling/v2 HPA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuplane.cli.main import run

REPO = Path(__file__).resolve().parents[3]
HPA = REPO / "examples/autoscaling/hpa.yaml"
VALUES = REPO / "examples/autoscaling/hpa-metrics.yaml"


def check(
    capsys: pytest.CaptureFixture[str], hpa: Path = HPA, values: Path = VALUES
) -> dict[str, Any]:
    assert run(["autoscale", "hpa-check", "--hpa", str(hpa), "--metrics", str(values)]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    return answer


def test_the_example_scales_up_within_its_policy(capsys: pytest.CaptureFixture[str]) -> None:
    answer = check(capsys)
    status = answer["status"]
    # queue depth 12 per pod against 5: ceil(3 * 12 / 5) = 8, limited to 3 + 2 pods a minute
    assert status["currentReplicas"] == 3 and status["desiredReplicas"] == 5
    assert answer["rescale"] is True
    limited = next(c for c in status["conditions"] if c["type"] == "ScalingLimited")
    assert limited["reason"] == "ScaleUpLimit" and limited["status"] == "True"
    cpu = status["currentMetrics"][0]["resource"]
    assert cpu["name"] == "cpu" and cpu["current"]["averageUtilization"] == 70


def test_output_yaml_is_the_hpa_with_its_status(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["autoscale", "hpa-check", "--hpa", str(HPA), "--metrics", str(VALUES), "-o", "yaml"]
    assert run(argv) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    kubernetes_validate.validate(doc, "1.31.0", strict=True)
    assert doc["spec"] == yaml.safe_load(HPA.read_text())["spec"]
    assert doc["status"]["desiredReplicas"] == 5


def test_within_tolerance_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = yaml.safe_load(VALUES.read_text())
    values["metrics"]["pods"]["vllm_num_requests_waiting"] = {
        f"vllm-llama-{i}": "5" for i in range(3)
    }
    values["metrics"]["resource"]["cpu"] = {f"vllm-llama-{i}": "2800m" for i in range(3)}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    answer = check(capsys, values=path)
    assert answer["rescale"] is False and answer["status"]["desiredReplicas"] == 3


def test_missing_metric_is_the_controllers_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = yaml.safe_load(VALUES.read_text())
    del values["metrics"]["pods"]
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    answer = check(capsys, values=path)
    active = next(c for c in answer["status"]["conditions"] if c["type"] == "ScalingActive")
    # the CPU metric still gives a count (no scale-down while a metric is invalid); the failed
    # one is the sync's error and a FailedGetPodsMetric warning
    assert answer["status"]["desiredReplicas"] == 3 and active["status"] == "True"
    assert answer["error"].startswith("invalid metrics (1 invalid out of 2)")
    assert [e["reason"] for e in answer["events"]] == ["FailedGetPodsMetric"]


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("averageUtilization: 70", "averageUtilization: -3", ":22: spec.metrics[0].resource"),
        ("minReplicas: 2", "minReplicas: 20", "spec: maxReplicas must be greater"),
        ("type: Pods\n      pods:", "type: External\n      pods:", "spec.metrics[1]"),
        ("periodSeconds: 60", "periodSeconds: 6000", "periodSeconds"),
        ("kind: HorizontalPodAutoscaler", "kind: Deployment", "0 HorizontalPodAutoscaler"),
        ("  maxReplicas: 10", "  maxReplica: 10", "spec.maxReplica"),
    ],
)
def test_bad_manifests_are_located(
    old: str, new: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = HPA.read_text()
    assert old in text
    path = tmp_path / "hpa.yaml"
    path.write_text(text.replace(old, new))
    assert run(["autoscale", "hpa-check", "--hpa", str(path), "--metrics", str(VALUES)]) == 2
    message = capsys.readouterr().err
    assert str(path) in message and where in message and "Traceback" not in message


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ('cpu: "4"}}\n  - {name: vllm-llama-1', 'cpu: "4x"}}\n  - {name: vllm-llama-1', "pods[0]"),
        ("replicas: 3", "replicas: -1", "replicas"),
        ("  resource:", "  resources:", "metrics.resources"),
    ],
)
def test_bad_values_are_located(
    old: str, new: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = VALUES.read_text()
    assert old in text
    path = tmp_path / "values.yaml"
    path.write_text(text.replace(old, new))
    assert run(["autoscale", "hpa-check", "--hpa", str(HPA), "--metrics", str(path)]) == 2
    message = capsys.readouterr().err
    assert str(path) in message and where in message


def test_hpa_without_metrics_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["autoscale", "hpa-check", "--hpa", str(HPA)]) == 2
    assert "--metrics is missing" in capsys.readouterr().err
