"""Issue 16's mutation suite: every mutant of every command's valid inputs ends cleanly.

Cleanly means: exit 0 where the mutant may be valid, otherwise exit 2 with a message naming the
file (or flag, or ``<stdin>``) and a line or field; never a traceback, a leaked exception name,
a hang past ``harness.HARD_LIMIT_S`` or silence about an input that must be refused (except the
mutants listed in ``pending.PENDING``). The corpus (``corpus.cases()``) is generated, not
checked in; ``bench/input_robustness.py`` times it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.corpus import Case, cases, judge

# Half the field and line mutants of the benchmark's corpus: the suite's CPU stays about a
# minute on two cores (bench/input_robustness.py runs the whole corpus).
SUITE_SCALE = 0.5
CASES = cases(SUITE_SCALE)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_mutant_ends_cleanly(case: Case, tmp_path: Path) -> None:
    _, found = judge(case, tmp_path)
    assert not found, f"{case.id}: {found}"
