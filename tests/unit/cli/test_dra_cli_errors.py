"""``gpuplane dra allocate``: "error" (the DynamicResources plugin answers Error, so
kube-scheduler fails the pod's attempt; exit 1) against "unsatisfiable" (the pod is
unschedulable; exit 0), in JSON and in the table output."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.cli import main as cli_main
from tests.unit.cli.test_dra_cli import (
    DRIVER,
    NODE,
    Runner,
    allocate_json,
    claim,
    exact,
    gpu,
    gpu_class,
    node_gpus,
    rslice,
    run_throwaway,
    write,
)


@pytest.fixture(params=[run_throwaway, cli_main.run], ids=["throwaway", "main"])
def cli(request: pytest.FixtureRequest) -> Runner:
    runner: Runner = request.param
    return runner


def table(cli: Runner, capsys: pytest.CaptureFixture[str], path: Path, exit_code: int) -> str:
    assert cli(["dra", "allocate", str(path), "--node", NODE]) == exit_code
    return capsys.readouterr().out


def test_cel_runtime_error_is_reported_as_error(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """gpu-0 has productName, gpu-1 does not: evaluating gpu-1 is a CEL runtime error (no such
    key), which fails the scheduling attempt; it is not "unsatisfiable"."""
    selector = f'device.attributes["{DRIVER}"].productName == "NVIDIA H200"'
    devices = [gpu(0, productName="NVIDIA H100 80GB HBM3"), gpu(1)]
    docs = [gpu_class(), rslice("s", devices), claim("c", exact("gpu", 1, selector))]
    data = allocate_json(cli, capsys, write(tmp_path, docs), exit_code=1)
    assert set(data) == {"error"}
    # kubernetes allocator: "claim <ns>/<name>: selector #<i>: CEL runtime error: <cel error>".
    assert data["error"].startswith("claim default/c: selector #0")
    assert "CEL runtime error: no such key: productName" in data["error"]
    text = table(cli, capsys, write(tmp_path, docs), 1)
    assert text.startswith("error: claim default/c: selector #0: CEL runtime error")
    assert "fails the pod's scheduling attempt" in text and "unsatisfiable" not in text
    # has() guards the optional attribute: no error, and nothing matches.
    guarded = f'has(device.attributes["{DRIVER}"].productName) && {selector}'
    docs[2] = claim("c", exact("gpu", 1, guarded))
    assert allocate_json(cli, capsys, write(tmp_path, docs))["unsatisfiable"] is True


def test_too_many_devices_is_an_error(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [gpu_class(), node_gpus(2), claim("c", exact("gpu", 33))]
    data = allocate_json(cli, capsys, write(tmp_path, docs), exit_code=1)
    assert data == {
        "error": "claim default/c: number of requested devices 33 exceeds the claim limit of 32"
    }


def test_all_devices_of_an_incomplete_pool_is_an_error(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One of the pool's two slices is missing: "all" cannot be known (kubernetes 1.36 returns
    a plain error here, so the attempt fails)."""
    half = node_gpus(2)
    half["spec"]["pool"]["resourceSliceCount"] = 2
    every = {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "allocationMode": "All"}}
    data = allocate_json(
        cli, capsys, write(tmp_path, [gpu_class(), half, claim("c", every)]), exit_code=1
    )
    assert data == {
        "error": f"claim default/c, request gpu: asks for all devices, but resource pool "
        f"{DRIVER}/{NODE} is currently being updated"
    }


def test_unsatisfiable_answers_exit_zero_and_say_so(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """No solution, a missing class (PreFilter) and an invalid pool are all "unsatisfiable":
    kube-scheduler reports the pod unschedulable, not an error."""
    wrong = claim("c", {"name": "gpu", "exactly": {"deviceClassName": "nope.example.com"}})
    halves = [rslice(f"half-{i}", [gpu(0)]) for i in range(2)]
    for half in halves:
        half["spec"]["pool"]["resourceSliceCount"] = 2
    cases = {
        "cannot allocate all claims": [gpu_class(), node_gpus(1), claim("c", exact("gpu", 2))],
        "request gpu: device class nope.example.com does not exist": [gpu_class(), wrong],
        "invalid resource pools were encountered": [gpu_class(), *halves, claim("c")],
    }
    for reason, docs in cases.items():
        text = table(cli, capsys, write(tmp_path, docs), 0)
        assert text.startswith(f"unsatisfiable on node {NODE}: {reason}"), text
        assert "error" not in text
