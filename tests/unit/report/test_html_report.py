"""report.html: self-contained, deterministic, and showing summary.json's numbers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplane.cli.report import write_html_report
from gpuplane.report.html.pool_view import pools_from_spec
from gpuplane.report.html.run_report import lookup
from tests.unit.report.report_run import small_pools, write_small_run
from tests.unit.report.self_contained import FETCHES


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_run(tmp_path_factory.mktemp("run"))


@pytest.fixture(scope="module")
def html(run_dir: Path) -> str:
    path = write_html_report(run_dir, run_dir / "report.html", pools_from_spec(small_pools()))
    return path.read_text(encoding="utf-8")


def test_the_page_fetches_nothing(html: str) -> None:
    assert html.startswith("<!DOCTYPE html>")
    assert FETCHES.search(html) is None
    assert "<svg" in html  # the plots are inline


def test_the_same_run_gives_the_same_bytes(run_dir: Path, html: str) -> None:
    again = write_html_report(run_dir, run_dir / "again.html", pools_from_spec(small_pools()))
    assert again.read_text(encoding="utf-8") == html


def test_another_process_gives_the_same_bytes(run_dir: Path) -> None:
    # The CLI resolves the pool from resolved-config.yaml (a preset): the same page.
    out = run_dir / "cli.html"
    cmd = "from gpuplane.cli.main import main; main()"
    args = [sys.executable, "-c", cmd, "report", str(run_dir), "--out", str(out)]
    proc = subprocess.run(args, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == (run_dir / "report.html").read_bytes()


def test_the_numbers_are_summary_json_s(run_dir: Path, html: str) -> None:
    summary = json.loads((run_dir / "summary.json").read_text())
    shown = dict(re.findall(r'data-key="([^"]+)">([^<]*)<', html))
    assert {"scenario", "seed", "until_s", "gpus.capacity", "pods.created"} <= set(shown)
    for key, text in shown.items():
        assert text == str(lookup(summary, key)), key
    assert summary["pods"]["at_end"]["pending"] == 1  # the run the test means to have


def test_the_page_has_its_sections(html: str) -> None:
    for text in (
        "a warning to show",
        "Cluster GPUs",
        "Pending pods",
        "Node states",
        "Tensor-parallel groups",
        "GPU Feature Discovery labels",
        "NodeResourceTopology zones",
        "LLM serving: not in this run.",
    ):
        assert text in html, text
