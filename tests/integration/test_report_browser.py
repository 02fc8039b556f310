"""report.html in a real headless browser: it loads from disk, fetches nothing, draws a page.

Needs Debian's ``chromium`` (``.ci/run`` installs it when it can); skipped without it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from gpuplane.cli.report import write_html_report
from gpuplane.report.html.pool_view import pools_from_spec
from tests.unit.report.report_run import small_pools, write_small_run

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="no chromium (apt-get install -y chromium; .ci/run installs it as root)",
    ),
]
# Chromium's own requests (component updates, time) have no page origin; the netlog marks them.
_BROWSER_INITIATOR = "not an origin"


def _page_requests(netlog: Path) -> list[str]:
    data = json.loads(netlog.read_text(encoding="utf-8"))
    urls = set()
    for event in data.get("events", []):
        params = event.get("params") or {}
        url, initiator = str(params.get("url", "")), params.get("initiator")
        from_page = initiator is not None and initiator != _BROWSER_INITIATOR
        if from_page and not url.startswith(("file:", "data:", "about:", "chrome:")):
            urls.add(url)
    return sorted(urls)


def test_the_page_loads_offline_and_draws(tmp_path: Path) -> None:
    run_dir = write_small_run(tmp_path / "run")
    page = write_html_report(run_dir, run_dir / "report.html", pools_from_spec(small_pools()))
    shot, netlog = tmp_path / "shot.png", tmp_path / "netlog.json"
    common = [
        CHROMIUM,
        "--headless=new",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--disable-background-networking",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    proc = subprocess.run(
        [
            *common,
            f"--log-net-log={netlog}",
            "--window-size=1200,1600",
            f"--screenshot={shot}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert _page_requests(netlog) == []
    with Image.open(shot) as image:
        stat = ImageStat.Stat(image.convert("L"))
    assert stat.stddev[0] > 5.0  # not a blank page
    dom = subprocess.run(
        [*common, "--dump-dom", page.resolve().as_uri()],
        capture_output=True,
        timeout=120,
        check=False,
    ).stdout.decode()
    assert "Cluster GPUs" in dom and "<svg" in dom
