"""``gpuplane autoscale``: hpa-check over every reference case, promql, keda-hpa.

The commands are exercised through a throwaway typer app (always) and through
``gpuplane.cli.main.run`` once the lead has registered the sub-app (skipped until then).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gpuplane.cli.autoscale import autoscale_app
from gpuplane.cli.main import COMMANDS, run
from gpuplane.core.errors import InputError

REF = Path(__file__).resolve().parents[4] / "shared/reference/hpa-examples.json"
EXAMPLES = json.loads(REF.read_text())
CASES = [(f, c) for f, cases in EXAMPLES.items() if f != "schema" for c in cases]
REGISTERED = "autoscale" in COMMANDS
assert REGISTERED, "the sub-command must be registered in cli/main.py"

throwaway = typer.Typer()
throwaway.add_typer(autoscale_app, name="autoscale")
runner = CliRunner()


def stripped(family: str, case: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    inputs = {k: v for k, v in case.items() if not k.startswith("expected")}
    inputs["family"] = family
    return json.dumps(inputs), {k: v for k, v in case.items() if k.startswith("expected")}


def test_hpa_check_every_reference_case() -> None:
    for family, case in CASES:
        text, expected = stripped(family, case)
        result = runner.invoke(throwaway, ["autoscale", "hpa-check"], input=text)
        assert result.exit_code == 0, result.output
        assert json.loads(result.output) == expected, (family, case["name"])


def test_hpa_check_unknown_family_is_an_input_error() -> None:
    result = runner.invoke(throwaway, ["autoscale", "hpa-check"], input='{"family": "x"}')
    assert isinstance(result.exception, InputError)
    assert "behavior_rate_cases" in str(result.exception)


SERIES = {
    "series": [
        {
            "name": "req_total",
            "labels": {"pod": "a"},
            "samples": [[0, 0], [15, 15], [30, 30], [45, 45], [60, 60]],
        },
        {
            "name": "req_total",
            "labels": {"pod": "b"},
            "samples": [[0, 0], [15, 30], [30, 60], [45, 90], [60, 120]],
        },
    ]
}


def test_promql_on_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SERIES))
    result = runner.invoke(
        throwaway, ["autoscale", "promql", "sum(rate(req_total[1m]))", "--series", str(path)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["resultType"] == "vector"
    (sample,) = data["result"]
    assert sample["metric"] == {} and sample["value"][0] == 60.0
    assert float(sample["value"][1]) == pytest.approx(3.0)
    scalar = runner.invoke(throwaway, ["autoscale", "promql", "1 + 1", "--series", str(path)])
    assert json.loads(scalar.output) == {"resultType": "scalar", "result": [60.0, "2"]}


def test_promql_on_a_csv_file(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("t,name,value,pod,zone\n0,gpu_util,50,a,\n0,gpu_util,70,b,east\n")
    result = runner.invoke(
        throwaway,
        ["autoscale", "promql", 'gpu_util{zone=""} > 10', "--series", str(path), "--time", "30"],
    )
    assert result.exit_code == 0, result.output
    (sample,) = json.loads(result.output)["result"]
    assert sample["metric"] == {"__name__": "gpu_util", "pod": "a"} and sample["value"] == [
        30.0,
        "50",
    ]


SO = """\
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: llm
spec:
  scaleTargetRef:
    name: vllm
  minReplicaCount: 1
  maxReplicaCount: 12
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus:9090
        query: sum(vllm:num_requests_waiting)
        threshold: "2.5"
"""


def test_keda_hpa(tmp_path: Path) -> None:
    path = tmp_path / "so.yaml"
    path.write_text(SO)
    result = runner.invoke(throwaway, ["autoscale", "keda-hpa", str(path)])
    assert result.exit_code == 0, result.output
    hpa = json.loads(result.output)
    assert hpa["metadata"]["name"] == "keda-hpa-llm"
    assert hpa["spec"]["minReplicas"] == 1 and hpa["spec"]["maxReplicas"] == 12
    (metric,) = hpa["spec"]["metrics"]
    assert metric["external"]["metric"]["name"] == "s0-prometheus"
    assert metric["external"]["target"] == {"type": "AverageValue", "averageValue": "2500m"}


def test_main_hpa_check_all_cases(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for family, case in CASES:
        text, expected = stripped(family, case)
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
        assert run(["autoscale", "hpa-check"]) == 0
        assert json.loads(capsys.readouterr().out) == expected


def test_main_unknown_family_exits_2_with_the_families(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"family": "nope"}'))
    assert run(["autoscale", "hpa-check"]) == 2
    err = capsys.readouterr().err
    assert "unknown family 'nope'" in err and "replica_calc_cases" in err


def test_main_bad_query_and_bad_manifest_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    series = tmp_path / "s.json"
    series.write_text(json.dumps(SERIES))
    assert run(["autoscale", "promql", "req_total offset 5m", "--series", str(series)]) == 2
    assert "offset modifier is not supported" in capsys.readouterr().err
    so = tmp_path / "so.yaml"
    so.write_text(SO.replace('threshold: "2.5"', "threshold: 2.5"))
    assert run(["autoscale", "keda-hpa", str(so)]) == 2
    assert f"{so}:15" in capsys.readouterr().err
