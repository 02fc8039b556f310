"""The ``autoscaling`` sweep base: scaler configurations by name, their mistakes located in the
sweep file, a small run, and the same table in-process and on a worker process."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.cli.main import run
from gpuplane.core.errors import InputError
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.sweep import InProcess, LocalPool, load_sweep, run_sweep
from gpuplane.sweep.bases.autoscale_configs import keda_object, oracle_targets, parse_config
from gpuplane.sweep.bases.registry import bases

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples/autoscaling"
TRACE = REPO / "examples/traces/azure_conv_20min.csv"


def sweep_file(tmp_path: Path, configs: str, base_extra: str = "", figures: str = "") -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: tiny-autoscaling\n"
        "base:\n"
        "  autoscaling:\n"
        f"    keda_scenario: {EXAMPLES / 'scenario.yaml'}\n"
        f"    slo_scenario: {EXAMPLES / 'scenario-slo.yaml'}\n"
        f"    traces: {{conv: {{file: {TRACE}, rate_scale: 2}}}}\n"
        "    cold_starts: {short: {image_pull: 10s, storage_gbps: 4, init: 41s}}\n"
        "    traffic: 2m\n"
        f"{base_extra}"
        "parameters:\n"
        f"  config: {{values: {configs}}}\n"
        f"{figures}"
    )
    return path


@pytest.mark.parametrize(
    ("configs", "line", "field", "text"),
    [
        ("[keda, kedda]", 10, "parameters.config.values[1]", "unknown scaler family 'kedda'"),
        ("[keda, 'keda:kv=0.5,ttft=1']", 10, "parameters.config.values[1]", "no knob 'ttft'"),
        ("['keda:up=2/60s']", 10, "parameters.config.values[0]", "scale-up policy"),
        ("['keda:polling=0']", 10, "parameters.config.values[0]", "pollingInterval"),
        ("['slo:target_margin=1.5']", 10, "parameters.config.values[0]", "target_margin"),
        ("['slo:objective=p95']", 10, "parameters.config.values[0]", "objective"),
        ("['slo:signals=exact']", 10, "parameters.config.values[0]", "deployable or oracle"),
        ("['oracle:request_attainment=1']", 10, "parameters.config.values[0]", "attainment"),
        ("['keda:queue']", 10, "parameters.config.values[0]", "KNOB=VALUE"),
    ],
)
def test_config_mistakes_are_located(
    tmp_path: Path, configs: str, line: int, field: str, text: str
) -> None:
    path = sweep_file(tmp_path, configs)
    with pytest.raises(InputError) as err:
        load_sweep(path, bases())
    assert err.value.location.field == field
    assert err.value.location.line == line
    assert text in err.value.render()


def test_base_mistakes_are_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sweep_file(tmp_path, "[keda]", "    warmup: -1m\n")
    assert run(["sweep", str(path), "--list"]) == 2
    assert "base.autoscaling.warmup" in capsys.readouterr().err
    path.write_text(path.read_text().replace(str(TRACE), str(tmp_path / "missing.csv")))
    assert run(["sweep", str(path), "--list"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "base.autoscaling.traces.conv.file" in err and "missing.csv" in err
    text = sweep_file(tmp_path, "[keda]").read_text() + "  trace: {values: [conv, code]}\n"
    (tmp_path / "two.yaml").write_text(text)
    with pytest.raises(InputError) as e:
        load_sweep(tmp_path / "two.yaml", bases())
    assert e.value.location.field == "parameters.trace.values[1]"
    assert "one of conv" in e.value.render()


def test_scaled_object_variants() -> None:
    (so,) = load_scenario_spec(EXAMPLES / "scenario.yaml").spec.scaled_objects
    ttft = keda_object(so, parse_config("keda-ttft:ttft=1.5,polling=15", "f"), "f")
    (trigger,) = ttft.spec.triggers
    assert "vllm:time_to_first_token_seconds_bucket" in trigger.metadata["query"]
    assert trigger.metadata["threshold"] == "1.5" and ttft.spec.pollingInterval == 15
    both = keda_object(so, parse_config("keda:kv=0.5,up=2pods/60s,down_window=60", "f"), "f")
    assert [t.metadata["threshold"] for t in both.spec.triggers] == ["5", "0.5"]
    behavior = both.spec.advanced.horizontalPodAutoscalerConfig.behavior  # type: ignore[union-attr]
    assert behavior is not None and behavior.scaleUp is not None and behavior.scaleDown is not None
    assert behavior.scaleUp.policies is not None
    assert (behavior.scaleUp.policies[0].type, behavior.scaleUp.policies[0].value) == ("Pods", 2)
    assert behavior.scaleDown.stabilizationWindowSeconds == 60
    queue = keda_object(so, parse_config("keda-queue:queue=2,cooldown=30", "f"), "f")
    assert [t.metadata["threshold"] for t in queue.spec.triggers] == ["2"]
    assert queue.spec.cooldownPeriod == 30
    assert oracle_targets(2.0, 0.2, parse_config("oracle", "f"), "f").request_attainment is None
    told = oracle_targets(2.0, 0.2, parse_config("oracle:objective=per_request", "f"), "f")
    assert told.request_attainment == 0.95


CONFIGS = (
    "[keda, 'slo:objective=per_request,request_attainment=0.9', 'oracle:objective=per_request']"
)
FIGURES = "figures: [gpu_hours, attainment, windows_met, arrived, scale_events, mean_replicas]\n"


def test_a_small_run_is_the_same_in_process_and_on_a_worker(tmp_path: Path) -> None:
    sweep = load_sweep(sweep_file(tmp_path, CONFIGS, figures=FIGURES), bases())
    here = run_sweep(sweep, InProcess(), tmp_path / "here")
    there = run_sweep(sweep, LocalPool(workers=1), tmp_path / "there")
    assert here.path.read_bytes() == there.path.read_bytes()
    records = here.records()
    assert [r["config"] for r in records] == [
        "keda",
        "slo:objective=per_request,request_attainment=0.9",
        "oracle:objective=per_request",
    ]
    for r in records:
        assert isinstance(r["gpu_hours"], float) and r["gpu_hours"] > 0
        assert isinstance(r["attainment"], float) and 0.0 <= r["attainment"] <= 1.0
        assert isinstance(r["arrived"], int) and r["arrived"] > 100
    assert len({r["arrived"] for r in records}) == 1  # the same requests for every scaler
