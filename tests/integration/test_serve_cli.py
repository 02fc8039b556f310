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


def _ready(proc: subprocess.Popen[bytes], base: str) -> bool:
    """Whether the server answers /readyz before it exits. No fixed wait: on a busy machine
    its start-up (imports, the snapshot) can take far longer than on an idle one."""
    deadline = time.monotonic() + 300
    while proc.poll() is None:
        assert time.monotonic() < deadline, "not ready in 300 s"
        try:
            if get(base + "/readyz")[0] == 200:
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def _started_ready(args: list[str]) -> tuple[subprocess.Popen[bytes], str, int]:
    """The server started and ready on a free port. A port found free can be taken by another
    process before the server binds it (the machine is shared); the server then exits at once,
    and is started again on another port."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    for _ in range(3):
        port = _free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuplane", *args, "--listen", f"127.0.0.1:{port}"],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        if _ready(proc, base):
            return proc, base, port
        _, err = proc.communicate(timeout=30)
        assert b"address already in use" in err.lower(), err.decode()
    raise AssertionError("no free port in 3 tries")


def test_serve_answers_then_stops_on_sigterm(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    assert (
        run(
            ["snapshot", "save", "--from", str(EXAMPLES / "mixed-cluster.yaml"), "--out", str(snap)]
        )
        == 0
    )
    args = ["serve", "extender", "--snapshot", str(snap), "--pools", str(EXAMPLES / "pools.yaml")]
    proc, base, port = _started_ready(args)
    try:
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
