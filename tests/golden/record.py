"""Record the golden hashes: ``.venv/bin/python -m tests.golden.record [NAME_SUBSTRING ...]``.

Run it only when an output changes on purpose, and say why in the commit. The full outputs go to
``out/golden-recorded/`` (not in git) so that a later mismatch can be diffed.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ProcessPoolExecutor

from tests.golden.cases import Case, all_cases
from tests.golden.runner import GOLDEN_FILE, RECORDED_DIR, run_case


def _one(case: Case) -> tuple[str, dict[str, str]]:
    return case.name, run_case(case, keep_in=RECORDED_DIR)


def main(argv: list[str]) -> int:
    cases = [c for c in all_cases() if not argv or any(a in c.name for a in argv)]
    golden = json.loads(GOLDEN_FILE.read_text()) if GOLDEN_FILE.exists() else {}
    with ProcessPoolExecutor(max_workers=2) as pool:
        for name, hashes in pool.map(_one, cases):
            golden[name] = hashes
            print(name, file=sys.stderr)
    known = {c.name for c in all_cases()}
    golden = {k: v for k, v in sorted(golden.items()) if k in known}
    GOLDEN_FILE.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
