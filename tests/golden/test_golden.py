"""Byte-for-byte comparison of every golden case with the recorded hashes (see cases.py)."""

from __future__ import annotations

import difflib
import json

import pytest

from tests.golden.cases import Case, all_cases
from tests.golden.runner import GOLDEN_FILE, RECORDED_DIR, run_case

GOLDEN: dict[str, dict[str, str]] = json.loads(GOLDEN_FILE.read_text())
CASES = all_cases()


def _diff(case: Case, name: str, tmp: str) -> str:
    old = RECORDED_DIR / case.name / name
    if not old.exists():
        return "(no recorded copy under out/golden-recorded to diff against)"
    new = (RECORDED_DIR.parent / tmp / case.name / name).read_text(errors="replace")
    lines = difflib.unified_diff(
        old.read_text(errors="replace").splitlines(), new.splitlines(), "recorded", "now", n=1
    )
    return "\n".join(list(lines)[:40])


def test_every_case_is_recorded() -> None:
    assert sorted(GOLDEN) == sorted(c.name for c in CASES)


@pytest.mark.golden
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_output_is_byte_identical(case: Case) -> None:
    tmp = "golden-now"
    got = run_case(case, keep_in=RECORDED_DIR.parent / tmp)
    expected = GOLDEN[case.name]
    changed = sorted(k for k in expected.keys() | got.keys() if expected.get(k) != got.get(k))
    assert not changed, "\n".join(f"{k} differs:\n{_diff(case, k, tmp)}" for k in changed)
