"""Benchmark: the same benchmark script at two commits, side by side in one run, and their ratio.

Run: ``.venv/bin/python bench/compare_commits.py BASE_REF BENCH [--repeat N] [-- ARGS...]``, for
example ``bench/compare_commits.py c3b380a twin_kernel`` or
``bench/compare_commits.py c3b380a twin_speed -- --hours 0.25``; ``--new REF`` compares with
another commit instead of the working tree; ``--native`` runs the new side with its compiled
modules (``GPUPLANE_NATIVE=1``, built first; see ``gpuplane.core.native``) and the base side plain.

A refactor must not make the house slower, and absolute seconds on a shared two-core machine say
little. This checks BASE_REF out into a scratch worktree, then runs ``bench/BENCH.py`` of the base
and of the working tree alternately (base, new, base, new, ...), each in its own interpreter with
its own ``src`` first on ``PYTHONPATH``, so both sides see the same load. It prints each run's
wall time, CPU time (user + system of the child; on a shared machine the steadier figure) and
headline lines, the best times per side and the ratios new / base (below 1: faster).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class Run:
    side: str
    wall_s: float
    output: str
    cpu_s: float = 0.0


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _env(tree: Path, native: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GPUPLANE_NATIVE"}
    env.update({"PYTHONPATH": str(tree / "src"), "PYTHONHASHSEED": "0"})
    if native:
        env["GPUPLANE_NATIVE"] = "1"
    return env


def build_native(tree: Path) -> None:
    """Build (or find up to date) the tree's compiled modules."""
    cmd = [sys.executable, "-m", "gpuplane.core.native_build", "build"]
    proc = subprocess.run(
        cmd, cwd=tree, env=_env(tree, False), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"building the compiled modules failed:\n{proc.stderr[-2000:]}")


def run_side(side: str, tree: Path, bench: str, args: list[str], native: bool = False) -> Run:
    env = _env(tree, native)
    script = tree / "bench" / f"{bench}.py"
    c0 = _children_cpu_s()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - t0, _children_cpu_s() - c0
    if proc.returncode != 0:
        raise SystemExit(f"{side}: {script} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    if proc.stderr.strip():
        print(f"{side} stderr: {proc.stderr.strip()[-2000:]}", file=sys.stderr)
    return Run(side, wall, proc.stdout, cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the commit to compare against (any git ref)")
    parser.add_argument("bench", help="a script under bench/, without .py")
    parser.add_argument("--repeat", type=int, default=2, help="runs per side (best one counts)")
    parser.add_argument("--new", help="compare with this commit instead of the working tree")
    parser.add_argument(
        "--native", action="store_true", help="the new side with its compiled modules"
    )
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    ns = parser.parse_args(argv[:cut])
    ns.args = argv[cut + 1 :]  # everything after -- goes to the benchmark
    if not (REPO / "bench" / f"{ns.bench}.py").exists():
        parser.error(f"no bench/{ns.bench}.py in this tree")
    with tempfile.TemporaryDirectory(prefix="gpuplane-base-") as tmp:
        base_tree = Path(tmp) / "base"
        # Benchmarks read ../shared beside the repository: give the base tree the same neighbour.
        (Path(tmp) / "shared").symlink_to(REPO.parent / "shared")
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(base_tree), ns.base],
            cwd=REPO,
            check=True,
        )
        new_tree = REPO
        if ns.new:
            new_tree = Path(tmp) / "new"
            subprocess.run(
                ["git", "worktree", "add", "--detach", "-q", str(new_tree), ns.new],
                cwd=REPO,
                check=True,
            )
        try:
            if ns.native:
                build_native(new_tree)
            runs: list[Run] = []
            for _ in range(ns.repeat):
                runs.append(run_side("base", base_tree, ns.bench, ns.args))
                runs.append(run_side("new", new_tree, ns.bench, ns.args, ns.native))
        finally:
            for tree in {base_tree, new_tree} - {REPO}:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False
                )
    new = (ns.new or "the working tree") + (" (compiled modules)" if ns.native else "")
    report(ns.base, new, ns.bench, ns.args, runs)
    return 0


def report(base: str, new: str, bench: str, args: list[str], runs: list[Run]) -> None:
    print(f"bench/{bench}.py {' '.join(args)}: base {base} vs {new}")
    for r in runs:
        print(f"--- {r.side}: {r.wall_s:.1f} s wall, {r.cpu_s:.1f} s CPU")
        for line in r.output.strip().splitlines():
            print(f"    {line}")
    best = {side: min(r.wall_s for r in runs if r.side == side) for side in ("base", "new")}
    cpu = {side: min(r.cpu_s for r in runs if r.side == side) for side in ("base", "new")}
    print(
        f"best wall: base {best['base']:.1f} s, new {best['new']:.1f} s, "
        f"ratio new/base {best['new'] / best['base']:.3f}"
    )
    print(
        f"best CPU: base {cpu['base']:.1f} s, new {cpu['new']:.1f} s, "
        f"ratio new/base {cpu['new'] / cpu['base']:.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
