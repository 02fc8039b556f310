"""``gpuplane serve extender`` as a process: ready after the snapshot loads, JSON-line logs, and a
clean exit on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuplane.cli.main import run
from tests.integration.extender_server import get, post
from tests.integration.test_extender_http import EXAMPLES, numa_pod

pytestmark = pytest.mark.integration
SRC = Path(__file__).resolve().parents[2] / "src"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_answers_then_stops_on_sigterm(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    assert (
        run(
            ["snapshot", "save", "--from", str(EXAMPLES / "mixed-cluster.yaml"), "--out", str(snap)]
        )
        == 0
    )
    port = _free_port()
    args = ["serve", "extender", "--snapshot", str(snap), "--pools", str(EXAMPLES / "pools.yaml")]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuplane", *args, "--listen", f"127.0.0.1:{port}"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if get(base + "/readyz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        code, result = post(
            base + "/gpuplane/filter", {"Pod": numa_pod(), "NodeNames": ["gpu-h100-a"]}
        )
        assert code == 200 and "NUMA" in result["FailedNodes"]["gpu-h100-a"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    lines = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    assert lines[0]["msg"] == "listening" and lines[0]["port"] == port
    assert any(e.get("verb") == "filter" and e["code"] == 200 for e in lines)
