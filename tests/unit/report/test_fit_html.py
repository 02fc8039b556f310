"""``gpuplane fit --html FILE`` on the shipped examples: one self-contained page, the same bytes
for the same inputs (in this process and another), and the answer's numbers on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cli.main import run
from tests.unit.report.self_contained import assert_self_contained

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "snapshot"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fit-html") / "mixed.json"
    args = ["snapshot", "save", "--from", str(EXAMPLES / "mixed-cluster.yaml"), "--out", str(out)]
    assert run(args) == 0
    return out


def _args(snapshot: Path, workload: str, page: Path) -> list[str]:
    return [
        "fit",
        str(EXAMPLES / "workloads" / workload),
        "--snapshot",
        str(snapshot),
        "--pools",
        str(EXAMPLES / "pools.yaml"),
        "--json",
        "--html",
        str(page),
    ]


def _fit(
    snapshot: Path, workload: str, page: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], str]:
    """The --json answer (stdout stays pure JSON) and the page."""
    assert run(_args(snapshot, workload, page)) == 0
    captured = capsys.readouterr()
    assert f"wrote {page}" in captured.err
    answer: dict[str, Any] = json.loads(captured.out)
    return answer, page.read_text(encoding="utf-8")


def _topology_svgs(html: str) -> list[str]:
    return [s for s in html.split("<svg")[1:] if "topology" in s.split(">", 1)[0]]


def test_tp4_page_highlights_the_kubelet_s_gpu_set(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, html = _fit(snapshot, "tp4-fits.yaml", tmp_path / "tp4.html", capsys)
    assert_self_contained(html)
    (pod,) = answer["pods"]
    kubelet = pod["gpus"]["kubelet"]
    ids = ",".join(map(str, kubelet["gpus"]))
    assert pod["node"] == "gpu-h100-b" and ids == "4,5,6,7"
    assert "<b>gpu-h100-b</b>" in html and f"{ids} (assumed)" in html
    assert f"the kubelet&#x27;s GPUs {ids} (assumed) highlighted" in html
    assert f"{kubelet['bottleneckGBps']:.0f}" in html and f"{kubelet['allReduceMs']:.2f}" in html
    assert "single-numa-node/pod" in html
    (svg,) = _topology_svgs(html)
    assert svg.count('fill="#f28e2b"') == 4  # the four chosen GPUs, and only they
    # the same inputs give the same bytes, here and in another process
    again = tmp_path / "again.html"
    assert run(_args(snapshot, "tp4-fits.yaml", again)) == 0
    capsys.readouterr()
    assert again.read_bytes() == (tmp_path / "tp4.html").read_bytes()
    other = tmp_path / "other.html"
    cmd = "from gpuplane.cli.main import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", cmd, *_args(snapshot, "tp4-fits.yaml", other)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert other.read_bytes() == again.read_bytes()


def test_mig_page_draws_the_repartition(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, html = _fit(snapshot, "mig-3g.yaml", tmp_path / "mig.html", capsys)
    assert_self_contained(html)
    fit_error = answer["pods"][0]["fitError"]
    assert fit_error.startswith("0/6 nodes are available")
    assert f"<code>{fit_error}</code>" in html
    (remedy,) = [r for r in answer["remedies"] if r["kind"] == "mig-repartition"]
    (change,) = remedy["migChanges"]
    assert change["node"] == "gpu-a100-mig" and change["gpu"] == 2
    assert change["after"] == "3g.40gb@0 + 3g.40gb@4"
    assert 'aria-label="MIG layouts"' in html
    assert f"GPU 2: {change['before']} -&gt; {change['after']}" in html
    assert ">GPU 2 now<" in html and ">GPU 2 after<" in html
    assert html.count(">3g.40gb</text>") == 2  # the two new instances, drawn after
    assert "dev/notebook-9" in html  # the pods it may disrupt
    # the second replica repeats the first: said in one line, not drawn again
    assert "dev/mistral-7b-1: as dev/mistral-7b-0." in html


def test_numa_page_shows_the_kubelet_s_rejection(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, html = _fit(snapshot, "numa-fails.yaml", tmp_path / "numa.html", capsys)
    assert_self_contained(html)
    (pod,) = answer["pods"]
    kubelet = pod["kubelet"]
    assert pod["outcome"] == "rejected-by-kubelet" and pod["node"] == "gpu-h100-a"
    assert f"{kubelet['reason']}: {kubelet['message']}" in html
    assert kubelet["explanation"] in html
    assert "no GPU set admitted" in html
    (svg,) = _topology_svgs(html)
    free = pod["gpus"]["freeAssumed"]
    assert svg.count('stroke-dasharray="4 2"') == len(free) == 2
    assert "kubelet-aligned-nodes" in html  # the remedy that was tried


def test_an_unwritable_path_is_an_input_error(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert run(_args(snapshot, "tp4-fits.yaml", blocker / "page.html")) == 2
    assert "cannot write" in capsys.readouterr().err
