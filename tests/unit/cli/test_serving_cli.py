from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cli import main as cli_main

REGISTERED = "serving" in [g.name for g in cli_main.app.registered_groups]
assert REGISTERED, "the sub-command must be registered in cli/main.py"
VIDUR = Path(__file__).resolve().parents[4] / "shared/data/vidur"


def run_serving(args: list[str]) -> int:
    """The CLI entry point (its error boundary included)."""
    return cli_main.run(args)


def json_of(capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    assert run_serving(args) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


WORKED_EXAMPLE = [
    "serving",
    "memory",
    "--model",
    "meta-llama/Llama-2-7b-hf",
    "--gpu",
    "A100-80GB",
    "--tp",
    "1",
    "--gpu-memory-utilization",
    "0.9",
    "--gpu-memory-gib",
    "79.19",
    "--weights-gib",
    "12.55",
    "--activation-gib",
    "2.38",
    "--non-torch-gib",
    "0.16",
    "--json",
]


@pytest.mark.parametrize(
    "cmd", [[], ["models"], ["memory"], ["step"], ["calibrate"], ["kv-transfer"]]
)
def test_help(cmd: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_serving(["serving", *cmd, "--help"]) == 0
    assert "Usage" in capsys.readouterr().out


def test_memory_json_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    data = json_of(capsys, WORKED_EXAMPLE)
    assert data["num_gpu_blocks"] == 7191
    assert data["kv_cache_tokens"] == 7191 * 16
    assert data["kv_bytes_per_token"] == 524_288
    assert data["max_concurrency"] == pytest.approx(28.09, abs=0.005)
    assert data["weights_gib"] == 12.55 and data["non_torch_gib"] == 0.16
    assert data["activation_gib"] == 2.38 and data["kv_cache_gib"] == pytest.approx(56.18, abs=0.01)
    assert data["sources"]["weights"] == "given"
    assert "Maximum concurrency for 4,096 tokens per request: 28.09x" in data["log"]


def test_memory_text_prints_vllm_log_lines(capsys: pytest.CaptureFixture[str]) -> None:
    args = [a for a in WORKED_EXAMPLE if a != "--json"]
    assert run_serving(args) == 0
    text = capsys.readouterr().out
    assert "GPU KV cache size: 115,056 tokens" in text
    assert "num_gpu_blocks 7,191" in text


def test_memory_with_a_config_file_and_fp8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_attention_heads": 32,
                "num_hidden_layers": 32,
                "num_key_value_heads": 8,
                "max_position_embeddings": 8192,
                "vocab_size": 128256,
                "torch_dtype": "bfloat16",
            }
        )
    )
    base = ["serving", "memory", "--model", str(config), "--gpu", "H100", "--json"]
    auto = json_of(capsys, base)
    fp8 = json_of(capsys, [*base, "--kv-cache-dtype", "fp8"])
    assert fp8["kv_bytes_per_token"] * 2 == auto["kv_bytes_per_token"] == 131_072
    assert fp8["kv_cache_tokens"] > 1.9 * auto["kv_cache_tokens"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "Llama-3.1-70B", "--gpu", "A100-80GB"], "CUDA out of memory"),
        (["--model", "Llama-9-1B", "--gpu", "A100"], "unknown model 'Llama-9-1B'"),
        (["--model", "Llama-2-7B", "--gpu", "Z100"], "unknown GPU model 'Z100'"),
        (["--model", "Qwen2.5-7B", "--gpu", "H100", "--tp", "8"], "must be divisible"),
        (
            ["--model", "Llama-3.1-8B", "--gpu", "A100", "--gpu-memory-utilization", "0.3"],
            "larger than the available KV cache memory",
        ),
        (
            ["--model", "Llama-2-7B", "--gpu", "A100", "--gpu-memory-utilization", "1.5"],
            "--gpu-memory-utilization",
        ),
        (
            ["--model", "Llama-2-7B", "--gpu", "A100", "--kv-cache-dtype", "int4"],
            "--kv-cache-dtype",
        ),
        (["--model", "Llama-2-7B", "--gpu", "A100", "--block-size", "12"], "--block-size"),
    ],
)
def test_memory_errors_exit_2(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_serving(["serving", "memory", *args]) == 2
    assert needle in capsys.readouterr().err


def test_step_json_has_the_documented_fields(capsys: pytest.CaptureFixture[str]) -> None:
    data = json_of(
        capsys,
        [
            "serving",
            "step",
            "--model",
            "Llama-3.1-70B",
            "--gpu",
            "H100",
            "--tp",
            "4",
            "--decode-batch",
            "16",
            "--context",
            "2048",
            "--json",
        ],
    )
    assert {
        "step_ms",
        "compute_ms",
        "memory_ms",
        "communication_ms",
        "overhead_ms",
        "per_operator",
        "bottleneck",
    } <= data.keys()
    parts = data["compute_ms"] + data["memory_ms"] + data["communication_ms"] + data["overhead_ms"]
    assert data["step_ms"] == pytest.approx(parts)
    assert data["bottleneck"] == "memory" and data["tokens"] == 16
    assert data["per_operator"]["all_reduce"]["count"] == 2 * 80 + 1
    assert data["interconnect"]["link_kind"] == "nvlink"
    assert data["calibration"]["family"] == "h100"


def test_step_prefill_is_compute_bound(capsys: pytest.CaptureFixture[str]) -> None:
    data = json_of(
        capsys,
        [
            "serving",
            "step",
            "--model",
            "Llama-3.1-8B",
            "--gpu",
            "A100",
            "--prefill-tokens",
            "4096,512@2048",
            "--json",
        ],
    )
    assert data["bottleneck"] == "compute"
    assert data["prefills"] == [[4096, 0], [512, 2048]]


def test_step_topology_and_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    common = [
        "serving",
        "step",
        "--model",
        "Llama-3.1-70B",
        "--gpu",
        "H100",
        "--tp",
        "4",
        "--decode-batch",
        "32",
        "--context",
        "1024",
        "--topology",
        "seed-8gpu",
        "--json",
    ]
    near = json_of(capsys, [*common, "--gpus", "0,1,2,3"])
    far = json_of(capsys, [*common, "--gpus", "0,1,4,5"])
    assert far["communication_ms"] > near["communication_ms"]
    assert far["step_ms"] > near["step_ms"]


def test_step_uncalibrated_and_extrapolated(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "serving",
        "step",
        "--model",
        "Llama-3.1-8B",
        "--gpu",
        "H200",
        "--decode-batch",
        "1",
        "--context",
        "100",
        "--json",
    ]
    calibrated = json_of(capsys, args)
    pure = json_of(capsys, [*args, "--uncalibrated"])
    assert calibrated["calibration"]["extrapolated"] is True
    assert pure["step_ms"] < calibrated["step_ms"] and pure["overhead_ms"] == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "the step is empty"),
        (["--prefill-tokens", "12,x"], "--prefill-tokens"),
        (["--prefill-tokens", "0"], "--prefill-tokens"),
        (["--decode-batch", "1", "--tp", "2", "--topology", "dgx-h100", "--gpus", "0"], "--tp 2"),
        (
            ["--decode-batch", "1", "--topology", "dgx-a100"],
            "is model A100-SXM4-80GB, not H100-80GB-SXM",
        ),
        (["--decode-batch", "1", "--gpus", "0,1"], "--gpus without --topology"),
        (["--decode-batch", "1", "--topology", "no-such-node"], "no preset or file"),
        (["--decode-batch", "1", "--calibration", "/nonexistent.json"], "calibration"),
    ],
)
def test_step_errors_exit_2(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["serving", "step", "--model", "Llama-3.1-8B", "--gpu", "H100"]
    assert run_serving([*base, *args]) == 2
    assert needle in capsys.readouterr().err


def test_kv_transfer(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["serving", "kv-transfer", "--model", "Llama-3.1-70B", "--tokens", "4096", "--json"]
    nic = json_of(capsys, [*base, "--nic-gbit", "400"])
    assert nic["bytes"] == 4096 * 327_680
    four = json_of(capsys, [*base, "--nic-gbit", "400", "--ranks", "4"])
    assert four["transfer_ms"] < nic["transfer_ms"] / 3
    nvlink = json_of(capsys, [*base, "--topology", "dgx-h100", "--gpus", "0,4"])
    assert nvlink["transfer_ms"] < nic["transfer_ms"]
    fp8 = json_of(capsys, [*base, "--nic-gbit", "400", "--kv-cache-dtype", "fp8"])
    assert fp8["bytes"] * 2 == nic["bytes"]
    assert run_serving(base) == 2
    assert "--nic-gbit or --topology" in capsys.readouterr().err


def test_models_list(capsys: pytest.CaptureFixture[str]) -> None:
    rows = json_of(capsys, ["serving", "models", "--json"])
    by_name = {r["name"]: r for r in rows}
    assert by_name["Llama-2-7B"]["kv_bytes_per_token"] == 524_288
    assert by_name["Mixtral-8x7B"]["moe"] is True
    assert run_serving(["serving", "models"]) == 0
    assert "Qwen2.5-72B-Instruct" in capsys.readouterr().out


@pytest.mark.skipif(not VIDUR.is_dir(), reason="shared/data/vidur not present")
def test_calibrate_writes_the_packaged_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "cal.json"
    assert run_serving(["serving", "calibrate", "--vidur", str(VIDUR), "--out", str(target)]) == 0
    assert "qkv_proj" in capsys.readouterr().out
    written = json.loads(target.read_text())
    assert set(written["families"]) == {"a100", "h100"}
    step = [
        "serving",
        "step",
        "--model",
        "Llama-2-7B",
        "--gpu",
        "A100",
        "--prefill-tokens",
        "1024",
        "--json",
    ]
    own = json_of(capsys, [*step, "--calibration", str(target)])
    packaged = json_of(capsys, step)
    assert own["step_ms"] == pytest.approx(packaged["step_ms"], rel=1e-6)


def test_calibrate_without_data_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_serving(["serving", "calibrate", "--vidur", str(tmp_path / "none")]) == 2
    assert "no Vidur data folder" in capsys.readouterr().err


def test_through_the_real_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.run(WORKED_EXAMPLE) == 0
    assert json.loads(capsys.readouterr().out)["num_gpu_blocks"] == 7191
    bad = ["serving", "memory", "--model", "Llama-3.1-70B", "--gpu", "A100-80GB"]
    assert cli_main.run(bad) == 2
    assert "CUDA out of memory" in capsys.readouterr().err
    step = [
        "serving",
        "step",
        "--model",
        "Llama-3.1-8B",
        "--gpu",
        "H100",
        "--decode-batch",
        "1",
        "--context",
        "10",
        "--json",
    ]
    assert cli_main.run(step) == 0
    assert json.loads(capsys.readouterr().out)["bottleneck"] == "memory"
