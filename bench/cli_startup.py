"""Benchmark: how long ``gpuplane --version`` takes with lazy command loading (issue 16), against
the eager registration it replaced, side by side in the same run.

Run: ``.venv/bin/python bench/cli_startup.py [--repeat N]``. Each sample is a fresh interpreter:
``lazy`` runs ``gpuplane --version`` as shipped (cli/main.py imports no command module);
``eager`` first imports every command module, as cli/main.py did before, then runs the same
``--version``. Reported: the median wall time of each and their ratio. Results in
docs/benchmarks.md ("CLI start-up").
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from gpuplane.cli.main import COMMANDS

LAZY = "from gpuplane.cli.main import run; run(['--version'])"
EAGER = (
    "import importlib\n"
    + "".join(f"importlib.import_module({spec.module!r})\n" for spec in COMMANDS.values())
    + LAZY
)


def _wall_s(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    lazy, eager = [], []
    for _ in range(args.repeat):  # interleaved, so both see the same machine load
        lazy.append(_wall_s(LAZY))
        eager.append(_wall_s(EAGER))
    lazy_s, eager_s = statistics.median(lazy), statistics.median(eager)
    print(f"gpuplane --version, median of {args.repeat} fresh interpreters:")
    print(f"  lazy (as shipped)      {lazy_s:6.2f} s")
    print(f"  eager (every command)  {eager_s:6.2f} s")
    print(f"  eager / lazy           {eager_s / lazy_s:6.1f}x")


if __name__ == "__main__":
    main()
