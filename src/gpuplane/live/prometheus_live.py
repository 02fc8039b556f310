"""A real Prometheus (Debian's ``/usr/bin/prometheus``) as a subprocess on loopback, scraping
gpuplane's live servers: for ``make demo-live`` and the integration test against it.

``write_config`` writes a ``prometheus.yml`` (scrape and evaluation every second, one job per
group of targets, optional recording rules); ``start_prometheus`` runs the binary on a free
loopback port with its TSDB in a given folder; ``PrometheusClient`` asks its HTTP API.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

PROMETHEUS_BINARY = "prometheus"
Json = dict[str, Any]  # the API's JSON bodies, read by key


def prometheus_binary() -> str | None:
    """The prometheus binary on PATH (or Debian's /usr/bin/prometheus), None without one."""
    found = shutil.which(PROMETHEUS_BINARY)
    if found is None and Path("/usr/bin/prometheus").is_file():
        found = "/usr/bin/prometheus"
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def host_port(url: str) -> str:
    """``http://127.0.0.1:8000`` -> ``127.0.0.1:8000`` (a scrape target)."""
    return url.split("://", 1)[-1].rstrip("/")


def write_config(
    folder: Path, jobs: Mapping[str, list[str]], rules: list[Json] | None = None
) -> Path:
    """``prometheus.yml`` in ``folder`` (JSON is YAML): ``jobs`` maps job names to base URLs."""
    config: Json = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [host_port(u) for u in urls]}]}
            for job, urls in jobs.items()
        ],
    }
    if rules:
        rule_file = folder / "rules.yml"
        rule_file.write_text(json.dumps({"groups": [{"name": "gpuplane", "rules": rules}]}))
        config["rule_files"] = [str(rule_file)]
    path = folder / "prometheus.yml"
    path.write_text(json.dumps(config, indent=2))
    return path


@dataclass
class RunningPrometheus:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; idempotent."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_prometheus(binary: str, config: Path, data: Path) -> RunningPrometheus:
    port = free_port()
    log = data.parent / "prometheus.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return RunningPrometheus(process, f"http://127.0.0.1:{port}", log)


class PrometheusClient:
    """The few calls of Prometheus's HTTP API the demo and the test make."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url

    async def _get(self, path: str, params: Mapping[str, str] | None = None) -> Json:
        async with self.session.get(self.url + path, params=params) as resp:
            body: Json = await resp.json()
        if body.get("status") != "success":
            raise RuntimeError(f"Prometheus {path}: {body.get('error', body)}")
        data: Json = body["data"]
        return data

    async def wait_ready(self, process: RunningPrometheus, timeout_s: float = 30.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            if process.process.poll() is not None:
                raise RuntimeError(f"prometheus exited: {process.log.read_text()[-2000:]}")
            try:
                async with self.session.get(self.url + "/-/ready") as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if loop.time() > deadline:
                raise TimeoutError("prometheus did not become ready")
            await asyncio.sleep(0.1)

    async def targets_up(self) -> dict[str, str]:
        """scrapeUrl -> health of the active targets."""
        data = await self._get("/api/v1/targets", {"state": "active"})
        return {t["scrapeUrl"]: t["health"] for t in data["activeTargets"]}

    async def query(self, expr: str, at: float | None = None) -> Json:
        params = {"query": expr} if at is None else {"query": expr, "time": f"{at:.3f}"}
        return await self._get("/api/v1/query", params)

    async def scalar(self, expr: str, at: float | None = None) -> float | None:
        """The value of a one-sample vector or a scalar; None when the vector is empty."""
        data = await self.query(expr, at)
        if data["resultType"] == "scalar":
            return float(data["result"][1])
        result = data["result"]
        if not result:
            return None
        if len(result) != 1:
            raise RuntimeError(f"{expr} has {len(result)} series")
        return float(result[0]["value"][1])
