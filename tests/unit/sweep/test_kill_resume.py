"""A sweep killed mid-run (SIGKILL, as an OOM killer or a lost node would) resumes: the rerun
keeps the points the first run finished, runs only the rest, and ends with the same table."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.unit.sweep.sweep_factories import openb_sweep

# 24 points, each a fraction of a second on the small data.
PARAMETERS = "  policy: {values: [bestfit, packing]}\n  seed: {values: 42-53}\n"


def gpuplane(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpuplane", *args]


def rows(path: Path) -> list[str]:
    text = path.read_text() if path.exists() else ""
    return [line for line in text.splitlines(keepends=True)[1:] if line.endswith("\n")]


def test_killed_sweep_resumes(tmp_path: Path) -> None:
    sweep = openb_sweep(tmp_path, PARAMETERS)
    reference = tmp_path / "reference"
    subprocess.run(
        gpuplane("sweep", str(sweep), "--workers", "1", "--no-plots", "--out", str(reference)),
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    out = tmp_path / "killed"
    args = gpuplane("sweep", str(sweep), "--workers", "2", "--no-plots", "--out", str(out))
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 300
    try:
        while len(rows(out / "results.csv")) < 3 and proc.poll() is None:
            assert time.monotonic() < deadline, "no point finished in 300 s"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its pool workers
        proc.wait(timeout=60)
    done = rows(out / "results.csv")
    assert 3 <= len(done) < 24, "killed mid-sweep"
    resumed = subprocess.run(args, check=True, capture_output=True, text=True, timeout=600)
    summary = " ".join(resumed.stdout.split())
    assert f"({24 - len(done)} run now, {len(done)} kept from an earlier run)" in summary
    assert (out / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()
