"""Issue 16: hostile inputs end in one located message and exit code 2, never a traceback."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpuplane.cli.main import run
from tests.unit.cli.test_dra_cli import DRIVER, NODE, claim, exact, gpu, gpu_class, rslice, write


def _fails_located(argv: list[str], capsys: pytest.CaptureFixture[str], *where: str) -> str:
    assert run(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.replace("\n", "")
    assert "Traceback" not in captured.err + captured.out
    for part in where:
        assert part in err, err
    return err


def _scenario(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("allocatable", "field"),
    [
        ('{cpu: "1e400"}', "allocatable.cpu"),
        ('{cpu: 8, memory: "1e400"}', "allocatable.memory"),
        ('{cpu: 8, memory: "9Ei"}', None),  # capped at 2^63-1 like apimachinery: fits
    ],
)
def test_huge_pool_quantity_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], allocatable: str, field: str | None
) -> None:
    path = _scenario(
        tmp_path,
        f"name: x\nnode_pools:\n  - {{name: a, preset: seed-8gpu, count: 1, "
        f"allocatable: {allocatable}}}\n",
    )
    argv = ["simulate", str(path), "--until", "1m", "--out", str(tmp_path / "o")]
    if field is None:
        assert run(argv) == 0
        return
    _fails_located(argv, capsys, f"{path}:3", f"node_pools[0].{field}", "too large")


def test_huge_reserved_quantity_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(
        tmp_path,
        "name: x\nnode_pools:\n  - {name: a, preset: seed-8gpu, count: 1}\n"
        "control_plane:\n  eviction_hard: {memory.available: 1e400}\n",
    )
    argv = ["simulate", str(path), "--until", "1m", "--out", str(tmp_path / "o")]
    _fails_located(argv, capsys, "control_plane.eviction_hard.memory.available")


def test_recursive_alias_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(
        tmp_path,
        "name: x\nnode_pools:\n  - {name: a, preset: seed-8gpu, count: 1}\n"
        "cluster_policy:\n  apiVersion: nvidia.com/v1\n  kind: ClusterPolicy\n"
        "  metadata: &m {name: cluster-policy, self: *m}\n  spec: {}\n",
    )
    out = tmp_path / "o"
    argv = ["simulate", str(path), "--until", "1m", "--out", str(out)]
    _fails_located(argv, capsys, f"{path}:7", "cluster_policy.metadata.self", "recursive alias")
    assert not out.exists()


@pytest.mark.parametrize(
    "selector",
    [
        "(" * 2000 + "true" + ")" * 2000,
        "!" * 5000 + "true",
        "device.driver in " + "[" * 2000 + "]" * 2000,
    ],
    ids=["parentheses", "negations", "lists"],
)
def test_deep_cel_selector_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], selector: str
) -> None:
    docs = [gpu_class(), rslice("s", [gpu(0)]), claim("c", exact("gpu", 1, selector))]
    path = write(tmp_path, docs)
    err = _fails_located(
        ["dra", "allocate", str(path), "--node", NODE], capsys, "recursion limit exceeded: 100"
    )
    assert "column" in err and str(path) in err


def test_cel_selector_below_the_depth_limit_parses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    selector = "(" * 90 + f'device.driver == "{DRIVER}"' + ")" * 90
    docs = [gpu_class(), rslice("s", [gpu(0)]), claim("c", exact("gpu", 1, selector))]
    assert run(["dra", "allocate", str(write(tmp_path, docs)), "--node", NODE]) == 0


@pytest.mark.parametrize("command", [["kubelet", "merge-hints"], ["autoscale", "hpa-check"]])
def test_deep_json_on_stdin_is_located(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('\n{"a": "[[[", "b": ' + "[" * 100_000))
    _fails_located(command, capsys, "<stdin>:2", "nested more than 100 levels", "column 118")


def test_deep_json_series_file_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    series = tmp_path / "s.json"
    series.write_text('{"series": ' + "[" * 5000)
    argv = ["autoscale", "promql", "m", "--series", str(series)]
    _fails_located(argv, capsys, f"{series}:1", "nested more than 100 levels")


def test_deep_yaml_scenario_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for depth in (150, 100_000):
        path = _scenario(tmp_path, "name: x\nnode_pools:\n  - " + "[" * depth + "]" * depth + "\n")
        argv = ["simulate", str(path), "--out", str(tmp_path / "o")]
        _fails_located(argv, capsys, f"{path}:3", "nested more than 100 levels")


def test_non_utf8_keda_file_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "k.yaml"
    path.write_bytes(
        b"apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: caf\xe9}\n"
    )
    _fails_located(["autoscale", "keda-hpa", str(path)], capsys, f"{path}:3", "byte offset 68")


def test_non_utf8_series_file_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    series = tmp_path / "s.csv"
    series.write_bytes(b"t,name,value\n0,m,1\n1,m\xff,2\n")
    argv = ["autoscale", "promql", "m", "--series", str(series)]
    _fails_located(argv, capsys, f"{series}:3", "not UTF-8", "0xff")


@pytest.mark.parametrize("command", [["kubelet", "merge-hints"], ["autoscale", "hpa-check"]])
def test_non_utf8_stdin_under_a_strict_locale_is_located(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # PYTHONIOENCODING=utf-8:strict: sys.stdin decodes strictly; gpuplane reads its bytes.
    stdin = io.TextIOWrapper(io.BytesIO(b'{\n"policy": "\xc3("}\n'), "utf-8", errors="strict")
    monkeypatch.setattr("sys.stdin", stdin)
    _fails_located(command, capsys, "<stdin>:2", "byte offset 13")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["serving", "memory", "--weights-gib", "nan"], "--weights-gib"),
        (["serving", "memory", "--gpu-memory-gib", "inf"], "--gpu-memory-gib"),
        (["serving", "memory", "--non-torch-gib", "-1"], "--non-torch-gib"),
        (["serving", "memory", "--gpu-memory-utilization", "nan"], "--gpu-memory-utilization"),
        (["topo", "ring", "dgx-h100", "--gpus", "0,1", "--message-mib", "inf"], "--message-mib"),
        (["topo", "ring", "dgx-h100", "--gpus", "0,1", "--message-mib", "1e300"], "--message-mib"),
        (["serving", "kv-transfer", "--tokens", "100", "--nic-gbit", "nan"], "--nic-gbit"),
        (["serving", "kv-transfer", "--tokens", "100", "--nic-gbit", "0"], "--nic-gbit"),
    ],
)
def test_non_finite_numeric_options_name_the_option(
    capsys: pytest.CaptureFixture[str], argv: list[str], option: str
) -> None:
    model = ["--model", "Qwen/Qwen2.5-7B-Instruct"] if argv[0] == "serving" else []
    gpu = ["--gpu", "H100-80GB-SXM"] if argv[1] == "memory" else []
    err = _fails_located([*argv[:2], *model, *gpu, *argv[2:]], capsys, f"{option}:")
    assert "out of range" in err and "nan ms" not in err
