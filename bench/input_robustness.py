"""Benchmark: how fast every command answers a bad input (issue 16's per-command time budget).

Run: ``.venv/bin/python bench/input_robustness.py`` (``--only TEXT``: the targets whose name
contains TEXT; ``--budget-s``: the per-case budget, default 2 s). Results: docs/benchmarks.md,
"Input robustness".

It runs the mutation corpus of ``tests/robustness`` (every valid example input of every command,
mutated: fields deleted or of the wrong type, NaN/inf/1e400, misspelt keys, duplicate keys, bad
encodings, truncation, deep nesting, alias bombs, 1-2 MB values, junk) in this process, one case
after another, and prints per command: the cases, the p50 and max wall time per case, the same
command on its valid input (the baseline, run in the same process before its mutants), the ratio
max / valid, and whether every mutant was answered within the budget. A case that gives a wrong
answer (traceback, hang, unlocated message, a must-refuse input accepted) is listed too: the
suite ``tests/robustness/test_mutations.py`` asserts those, this script only times them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.robustness.corpus import Case, cases, judge, valid_case


def _run(case: Case) -> tuple[float, list[str]]:
    with tempfile.TemporaryDirectory() as work:
        ans, found = judge(case, Path(work))
    return ans.seconds, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="targets whose name contains this text")
    parser.add_argument("--budget-s", type=float, default=2.0, help="per-case budget (seconds)")
    args = parser.parse_args()
    by_target: dict[str, list[Case]] = defaultdict(list)
    for case in cases():
        if args.only in case.target.name:
            by_target[case.target.name].append(case)
    times: dict[str, list[float]] = defaultdict(list)
    slowest: dict[str, tuple[float, str]] = {}
    valid: dict[str, list[float]] = defaultdict(list)
    wrong: list[str] = []
    start = time.perf_counter()
    for name, group in by_target.items():
        command = group[0].target.command
        seconds, found = _run(valid_case(group[0].target))
        valid[command].append(seconds)
        wrong += [f"{name}/valid: {p}" for p in found]
        for case in group:
            seconds, found = _run(case)
            times[command].append(seconds)
            if seconds > slowest.get(command, (0.0, ""))[0]:
                slowest[command] = (seconds, case.id)
            wrong += [f"{case.id}: {p[:160]}" for p in found]
    total = time.perf_counter() - start
    head = f"{'command':<26}{'cases':>6}{'p50 s':>8}{'max s':>8}{'valid s':>9}{'max/valid':>10}"
    print(f"{head}  within {args.budget_s:g} s")
    for command, values in times.items():
        base = max(valid[command]) if valid[command] else None
        ratio = f"{max(values) / base:>10.1f}" if base else f"{'-':>10}"
        ok = "yes" if max(values) <= args.budget_s else "NO"
        print(
            f"{command:<26}{len(values):>6}{statistics.median(values):>8.3f}{max(values):>8.2f}"
            f"{(f'{base:.3f}' if base else '-'):>9}{ratio}  {ok}"
        )
    count = sum(len(v) for v in times.values())
    print(f"{count} cases in {total:.1f} s wall; wrong answers: {len(wrong)}")
    for line in wrong:
        print("  " + line)
    print("slowest case per command:")
    for seconds, case_id in slowest.values():
        print(f"  {seconds:6.2f} s  {case_id[:110]}")


if __name__ == "__main__":
    main()
