"""``gpuplane serve engine`` as a process: the listening line names both ports, a streamed
answer arrives whole through the precise wake (time scale 1), the DCGM endpoint answers with
the pod labels from the environment, SIGTERM stops it cleanly; a taken DCGM port is a located
error (exit 2), not a traceback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
SRC = Path(__file__).resolve().parents[2] / "src"
ARGS = [sys.executable, "-m", "gpuplane", "serve", "engine", "--model", "Llama-3.1-8B"]
ARGS += ["--gpu", "H100-80GB", "--served-model-name", "m", "--port", "0", "--load-time", "0"]
ENV = {**os.environ, "PYTHONPATH": str(SRC), "POD_NAME": "m-0", "POD_NAMESPACE": "llm"}


def test_serves_streams_and_its_dcgm_endpoint_then_stops_on_sigterm() -> None:
    proc = subprocess.Popen([*ARGS, "--dcgm-port", "0"], stderr=subprocess.PIPE, env=ENV)
    try:
        assert proc.stderr is not None
        line = json.loads(proc.stderr.readline())
        base = f"http://127.0.0.1:{line['port']}"
        body = {"model": "m", "prompt": "hi", "max_tokens": 40, "ignore_eos": True, "stream": True}
        req = urllib.request.Request(
            base + "/v1/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=60) as resp:
            events = [x for x in resp.read().decode().split("\n\n") if x.startswith("data: {")]
        assert len(events) == 40
        dcgm = f"http://127.0.0.1:{line['dcgm_port']}/metrics"
        with urllib.request.urlopen(dcgm, timeout=30) as resp:
            text = resp.read().decode()
        assert 'namespace="llm",pod="m-0"}' in text and "DCGM_FI_DEV_GPU_UTIL{" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
        if proc.stderr is not None:
            proc.stderr.close()
    assert rc == 0


def test_a_taken_dcgm_port_is_a_located_error() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [*ARGS, "--dcgm-port", str(port)], capture_output=True, env=ENV, timeout=120
        )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert f"127.0.0.1:{port} for the DCGM endpoint" in err and "Traceback" not in err
