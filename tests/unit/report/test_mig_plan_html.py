"""``gpuplane mig plan --html FILE``: the plan's layouts before and after drawn over the memory
slices, what is placed and unplaced, the counts; self-contained and the same bytes twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cli.main import run
from tests.unit.report.self_contained import assert_self_contained

CURRENT = """\
gpus:
  - index: 0
    instances:
      - {profile: 3g.40gb, start: 4, in_use: true}
      - {profile: 3g.40gb, start: 0}
  - index: 1
    instances: [{profile: 1g.10gb, start: 6, in_use: true}, {profile: 1g.10gb, start: 0}]
"""


def _plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], page: Path, demand: str
) -> tuple[dict[str, Any], str]:
    current = tmp_path / "current.yaml"
    current.write_text(CURRENT)
    args = ["mig", "plan", "--gpu", "H100-80GB", "--count", "3", "--current", str(current)]
    assert run([*args, "--demand", demand, "--json", "--html", str(page)]) == 0
    captured = capsys.readouterr()
    data: dict[str, Any] = json.loads(captured.out)
    return data, page.read_text(encoding="utf-8")


def test_the_plan_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demand = "3g.40gb=2,7g.80gb=1,1g.10gb=2"
    data, html = _plan(tmp_path, capsys, tmp_path / "plan.html", demand)
    assert_self_contained(html)
    assert data["gpus_used"] == 3 and data["lower_bound"] == 3
    counts = (
        ("GPUs used", data["gpus_used"]),
        ("lower bound on GPUs used", data["lower_bound"]),
        ("GPUs reconfigured", data["reconfigured"]),
        ("instances evicted", data["evicted"]),
    )
    for label, value in counts:
        assert f'<td>{label}</td><td class="n">{value}</td>' in html
    assert "proven optimal" in html
    assert html.count('aria-label="MIG layouts"') == 1  # one model, one drawing
    for t in data["layouts"]:
        assert f">GPU {t['gpu']} now<" in html
        assert f">GPU {t['gpu']} after" in html
    assert "(unchanged)" in html  # GPU 0 already serves two 3g.40gb
    assert ">7g.80gb</text>" in html
    for profile, n in data["placed"].items():
        asked = data["demand"].get(profile, 0)
        assert f'<td>{profile}</td><td class="n">{asked}</td><td class="n">{n}</td>' in html
    again = tmp_path / "again.html"
    _plan(tmp_path, capsys, again, demand)
    assert again.read_bytes() == (tmp_path / "plan.html").read_bytes()


def test_unplaced_demand_is_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, html = _plan(tmp_path, capsys, tmp_path / "over.html", "7g.80gb=3")
    assert data["unplaced"]["7g.80gb"] > 0
    assert f"Unplaced: {data['unplaced']['7g.80gb']} x 7g.80gb." in html
