"""``serving.slo_scalers[].signals``: deployable by default, oracle on request, anything else a
located mistake; a run names oracle signals in its summary and report."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.report.run_view import _slo_name
from gpuplane.twin.autoscaling.summary import SloScalerSummary
from gpuplane.twin.scenario.serving_spec import SignalSource

EXAMPLES = Path(__file__).resolve().parents[4] / "examples/autoscaling"
ENTRY = "    - {service: qwen-chat, min_replicas: 2, max_replicas: 16"


def with_entry(tmp_path: Path, extra: str) -> Path:
    text = (EXAMPLES / "scenario-slo.yaml").read_text()
    assert ENTRY in text
    path = tmp_path / "scenario-slo.yaml"
    path.write_text(text.replace(ENTRY, ENTRY + extra))
    for name in ("vllm-qwen-72b-instruct.yaml",):
        (tmp_path / name).write_text((EXAMPLES / name).read_text())
    (tmp_path.parent / "traces").mkdir(exist_ok=True)
    trace = EXAMPLES.parent / "traces/azure_conv_20min.csv"
    (tmp_path.parent / "traces" / trace.name).write_text(trace.read_text())
    return path


def test_deployable_by_default_and_oracle_on_request(tmp_path: Path) -> None:
    spec = load_scenario_spec(EXAMPLES / "scenario-slo.yaml").spec
    assert spec.serving is not None
    assert spec.serving.slo_scalers[0].signals is SignalSource.DEPLOYABLE
    oracle = load_scenario_spec(with_entry(tmp_path, ", signals: oracle")).spec
    assert oracle.serving is not None
    assert oracle.serving.slo_scalers[0].signals is SignalSource.ORACLE


def test_an_unknown_source_is_located(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        load_scenario_spec(with_entry(tmp_path, ", signals: exact"))
    text = err.value.render()
    assert "signals" in text and "deployable" in text and "oracle" in text


def test_the_report_names_oracle_signals() -> None:
    plain = SloScalerSummary("chat", 3, 5, 1.0, 1.0)
    assert plain.as_dict()["signals"] == "deployable" and _slo_name(plain) == "SLO scaler chat"
    oracle = SloScalerSummary("chat", 3, 5, 1.0, 1.0, signals="oracle")
    assert _slo_name(oracle) == "SLO scaler chat (oracle signals)"
