"""``gpuplane bench openb``: the FGD paper's OpenB experiment for one policy over seeds.

Protocol (fgd-openb.md §2, §6): tune the trace's GPU demand to 1.3 x the cluster, shuffled
arrival, arrive-only, failed pods dropped; the metric is the unallocated GPU % at arrived = 100 %.
Without ``--nodes``/``--pods`` it reads the default trace from ``shared/data/openb`` next to the
repository.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import MofNCompleteColumn
from rich.table import Table

from gpuplane.cli.console import err, out, print_json
from gpuplane.cli.numbers import finite
from gpuplane.cli.progress import INTERRUPTED_EXIT, Interruptible, progress_bar
from gpuplane.core.errors import InputError, Location
from gpuplane.scheduler.openb.data_dir import DATA_SUBDIR, default_data_dir
from gpuplane.scheduler.openb.experiment import (
    PAPER_SEEDS,
    ProtocolResult,
    SeedResult,
    run_protocol,
)
from gpuplane.scheduler.openb.simulator import Progress as ProgressFn
from gpuplane.scheduler.openb.trace import load_nodes, load_pods
from gpuplane.scheduler.openb.workload import TUNE_RATIO
from gpuplane.scheduler.policies import POLICY_NAMES

bench_app = typer.Typer(
    help="Benchmarks that reproduce published scheduling experiments.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

DEFAULT_NODES = "openb_node_list_gpu_node.csv"
DEFAULT_PODS = "openb_pod_list_default.csv"


def parse_seeds(text: str) -> tuple[int, ...]:
    """``42,43`` or ``42-51`` (inclusive) or a mix; InputError on anything else."""
    seeds: list[int] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            first, last = -1, -1
        if first < 0 or last < first:
            raise InputError(
                f"{part.strip()!r} is not a seed or seed range",
                expected="comma-separated whole numbers >= 0 or ranges like 42-51",
                location=Location(field="--seeds"),
            )
        seeds.extend(range(first, last + 1))
    return tuple(seeds)


def _resolve(path: Path | None, name: str, flag: str) -> Path:
    if path is not None:
        return path
    data = default_data_dir()
    if data is None:
        raise InputError(
            f"no {flag[2:]} list given and no {DATA_SUBDIR} directory found beside the repository",
            expected=f"{flag} PATH to an OpenB CSV file",
            location=Location(field=flag),
        )
    return data / name


def _check_policy(policy: str) -> None:
    if policy not in POLICY_NAMES:
        raise InputError(
            f"unknown policy {policy!r}",
            expected="one of " + ", ".join(POLICY_NAMES),
            location=Location(field="--policy"),
        )


def result_json(
    result: ProtocolResult, nodes: Path, pods: Path, tune_ratio: float, curves: bool
) -> dict[str, Any]:
    per_seed: list[dict[str, Any]] = []
    for s in result.seeds:
        entry: dict[str, Any] = {
            "seed": s.seed,
            "unallocated_pct_at_100": s.unallocated_pct_at_100,
            "arrivals": s.num_arrivals,
            "failed_pods": s.num_failed,
            "wall_s": round(s.wall_s, 3),
        }
        if s.frag_pct_at_100 is not None:
            entry["frag_pct_at_100"] = s.frag_pct_at_100
        if curves:
            entry["unallocated_curve"] = [
                None if v != v else float(v) for v in s.unallocated_curve.tolist()
            ]
        per_seed.append(entry)
    mean, sd = result.mean_at_100, result.sd_at_100
    return {
        "policy": result.policy,
        "nodes": str(nodes),
        "pods": str(pods),
        "tune_ratio": tune_ratio,
        "seeds": [s.seed for s in result.seeds],
        "unallocated_pct_at_100": None if mean is None else round(mean, 4),
        "unallocated_pct_at_100_sd": None if sd is None else round(sd, 4),
        "per_seed": per_seed,
        "wall_s": round(result.wall_s, 3),
    }


def _table(data: dict[str, Any]) -> Table:
    table = Table(title=f"OpenB, policy {data['policy']}, pods {Path(data['pods']).name}")
    for column in ("seed", "unallocated % at 100", "arrivals", "failed pods", "wall s"):
        table.add_column(column, justify="right")
    for s in data["per_seed"]:
        value = s["unallocated_pct_at_100"]
        table.add_row(
            str(s["seed"]),
            "-" if value is None else f"{value:.2f}",
            str(s["arrivals"]),
            str(s["failed_pods"]),
            f"{s['wall_s']:.2f}",
        )
    mean, sd = data["unallocated_pct_at_100"], data["unallocated_pct_at_100_sd"]
    summary = "-" if mean is None else f"{mean:.2f} ± {sd:.2f}"
    table.add_row("mean ± sd", summary, "", "", f"{data['wall_s']:.2f}", style="bold")
    return table


def _run_seeds(
    run: Callable[..., ProtocolResult], policy: str, seeds: Sequence[int]
) -> tuple[ProtocolResult, bool]:
    """Each seed in turn, with one progress bar (done share and ETA over all seeds) on a
    terminal. The first Ctrl-C stops after the running seed, a second one at once; either way
    the seeds completed so far come back, with True for "interrupted"."""
    done: list[SeedResult] = []
    with (
        Interruptible("the OpenB run") as stop,
        progress_bar(MofNCompleteColumn()) as bar,
    ):
        task = bar.add_task(f"OpenB {policy}", total=len(seeds))

        def on_seed(index: int) -> ProgressFn:
            return lambda pods_done, pods_total: bar.update(
                task, completed=index + pods_done / max(pods_total, 1)
            )

        try:
            for index, seed in enumerate(seeds):
                part = run(seeds=(seed,), on_seed=lambda _s, i=index: on_seed(i))
                done.extend(part.seeds)
                bar.update(task, completed=index + 1)
                if stop() and index + 1 < len(seeds):
                    break
        except KeyboardInterrupt:
            pass
    return ProtocolResult(policy=policy, seeds=tuple(done)), len(done) < len(seeds)


@bench_app.command("openb")
def openb_command(
    nodes: Annotated[
        Path | None, typer.Option("--nodes", help="Node list CSV (default: the GPU node list).")
    ] = None,
    pods: Annotated[
        Path | None, typer.Option("--pods", help="Pod list CSV (default: the default trace).")
    ] = None,
    policy: Annotated[
        str, typer.Option(help="One of: " + ", ".join(POLICY_NAMES) + ".")
    ] = "gpuplane",
    seeds: Annotated[
        str, typer.Option(help="Seeds: comma-separated numbers or ranges, e.g. 42-51.")
    ] = f"{PAPER_SEEDS[0]}-{PAPER_SEEDS[-1]}",
    tune_ratio: Annotated[
        float,
        typer.Option(
            help="Total GPU demand / cluster GPUs (0: no tuning).", callback=finite(minimum=0.0)
        ),
    ] = TUNE_RATIO,
    frag: Annotated[bool, typer.Option(help="Also track fragmentation (slower).")] = False,
    curves: Annotated[bool, typer.Option(help="Include each seed's 0-130 % curve.")] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of a table.")
    ] = False,
) -> None:
    """Run the OpenB protocol (tune 1.3, shuffled arrival, arrive-only) for one policy and print
    the unallocated GPU % at arrived = 100 % per seed and its mean."""
    _check_policy(policy)
    seed_list = parse_seeds(seeds)
    nodes_path = _resolve(nodes, DEFAULT_NODES, "--nodes")
    pods_path = _resolve(pods, DEFAULT_PODS, "--pods")
    node_table, pod_table = load_nodes(nodes_path), load_pods(pods_path)
    started = time.perf_counter()
    run = partial(
        run_protocol, node_table, pod_table, policy, tune_ratio=tune_ratio, track_frag=frag
    )
    result, interrupted = _run_seeds(run, policy, seed_list)
    if interrupted and not result.seeds:
        err.print("interrupted before the first seed completed: nothing to report", markup=False)
        raise typer.Exit(INTERRUPTED_EXIT)
    data = result_json(result, nodes_path, pods_path, tune_ratio, curves)
    data["wall_s"] = round(time.perf_counter() - started, 3)
    if interrupted:
        data["interrupted"] = True
        data["seeds_requested"] = list(seed_list)
    if json_out:
        print_json(data)
    else:
        out.print(_table(data))
    if interrupted:
        err.print(
            f"interrupted: {len(result.seeds)} of {len(seed_list)} seeds completed; the figures "
            "above are over those seeds only",
            markup=False,
        )
        raise typer.Exit(INTERRUPTED_EXIT)
