"""``gpuplane bench openb``: the FGD paper's OpenB experiment for one policy over seeds.

Protocol (fgd-openb.md §2, §6): tune the trace's GPU demand to 1.3 x the cluster, shuffled
arrival, arrive-only, failed pods dropped; the metric is the unallocated GPU % at arrived = 100 %.
Without ``--nodes``/``--pods`` it reads the default trace from ``shared/data/openb`` next to the
repository.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

import gpuplane
from gpuplane.cli.console import err, out, print_json
from gpuplane.cli.numbers import finite
from gpuplane.core.errors import InputError, Location
from gpuplane.scheduler.openb.experiment import PAPER_SEEDS, ProtocolResult, run_protocol
from gpuplane.scheduler.openb.simulator import Progress as ProgressFn
from gpuplane.scheduler.openb.trace import load_nodes, load_pods
from gpuplane.scheduler.openb.workload import TUNE_RATIO
from gpuplane.scheduler.policies import POLICY_NAMES

bench_app = typer.Typer(
    help="Benchmarks that reproduce published scheduling experiments.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

DATA_SUBDIR = Path("shared/data/openb")
DEFAULT_NODES = "openb_node_list_gpu_node.csv"
DEFAULT_PODS = "openb_pod_list_default.csv"


def default_data_dir() -> Path | None:
    """``shared/data/openb`` beside the repository: searched upward from the installed package,
    then as ``../shared`` from the current directory."""
    package = Path(gpuplane.__file__).resolve()
    candidates = [parent / DATA_SUBDIR for parent in package.parents]
    candidates.append(Path.cwd().parent / DATA_SUBDIR)
    return next((c for c in candidates if c.is_dir()), None)


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


def _with_progress_bar(run: Callable[..., ProtocolResult], policy: str) -> ProtocolResult:
    """``run(on_seed=...)`` with one rich progress bar per seed, on stderr."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as bar:

        def on_seed(seed: int) -> ProgressFn:
            task = bar.add_task(f"{policy} seed {seed}", total=None)
            return lambda done, total: bar.update(task, completed=done, total=total)

        return run(on_seed=on_seed)


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
        run_protocol,
        node_table,
        pod_table,
        policy,
        seed_list,
        tune_ratio=tune_ratio,
        track_frag=frag,
    )
    result = run() if json_out else _with_progress_bar(run, policy)
    data = result_json(result, nodes_path, pods_path, tune_ratio, curves)
    data["wall_s"] = round(time.perf_counter() - started, 3)
    if json_out:
        print_json(data)
    else:
        out.print(_table(data))
