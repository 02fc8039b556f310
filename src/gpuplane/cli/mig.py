"""``gpuplane mig``: MIG profiles, layouts, the device plugin's view, mig-parted files, planner."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from gpuplane.api.strategies import MigStrategy
from gpuplane.cli.console import err, out, print_json
from gpuplane.cli.html_out import write_html
from gpuplane.cli.numbers import finite
from gpuplane.cli.output_option import OutputOpt, emit
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.live.migctl.parted_objects import (
    CUSTOM_CONFIG_MAP,
    DEFAULT_CONFIG_MAP,
    OPERATOR_NAMESPACE,
    parted_config_map,
    plan_config,
)
from gpuplane.report.html.mig_plan_page import mig_plan_page
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.current_file import read_current_layouts
from gpuplane.slicing.mig.demand import parse_demand
from gpuplane.slicing.mig.parted_check import check_parted_config, first_problem
from gpuplane.slicing.mig.parted_config import dump_parted_config, read_parted_config
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.plan_types import GpuState, MigPlanSettings, make_snapshot
from gpuplane.slicing.mig.planner import decide
from gpuplane.slicing.mig.profiles import MigGpu
from gpuplane.slicing.mig.serialize import (
    checks_to_dict,
    layouts_to_dict,
    plan_to_dict,
    plugin_view_to_dict,
    profiles_to_dict,
)
from gpuplane.slicing.mig.strategy import NodeGpu, plugin_view

mig_app = typer.Typer(
    help="NVIDIA MIG: profiles, valid layouts, device-plugin resources, mig-parted configs, "
    "and an exact planner for target layouts.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

GpuOpt = Annotated[
    str,
    typer.Option(
        "--gpu",
        help="MIG GPU model: A100-40GB, H100-80GB, H200-141GB, B200... "
        "or the name NVML reports (e.g. 'NVIDIA H100 80GB HBM3').",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
CurrentOpt = Annotated[
    Path | None,
    typer.Option(
        "--current",
        help="YAML/JSON file with the GPUs' current instances "
        "(gpus: [{index, model, instances: [{profile, start, in_use}]}]).",
    ),
]


def _unverified(gpu: MigGpu) -> str:
    return "" if gpu.placements_verified else f"  [unverified: {gpu.placements_note}]"


def _read(path: Path) -> str:
    try:
        return read_user_text(path)
    except OSError as exc:
        raise InputError(
            f"cannot read {path}: {exc.strerror}",
            expected="a readable file",
            location=Location(source=str(path)),
        ) from None
    except UnicodeDecodeError:
        raise InputError(
            f"{path} is not UTF-8 text",
            expected="a YAML or JSON file",
            location=Location(source=str(path)),
        ) from None


@mig_app.command("profiles")
def profiles_command(gpu: GpuOpt, json_out: JsonOpt = False) -> None:
    """The GPU instance profiles of a model: slices, valid starts, instances, memory, SMs."""
    model = get_mig_gpu(gpu)
    data = profiles_to_dict(model)
    if json_out:
        print_json(data)
        return
    table = Table(title=f"MIG profiles of {model.name}{_unverified(model)}")
    for col in (
        "profile",
        "ID",
        "compute",
        "memory slices",
        "starts",
        "max",
        "GiB",
        "SMs",
        "resource",
    ):
        table.add_column(col)
    for p in data["profiles"]:
        table.add_row(
            p["name"],
            str(p["id"]),
            str(p["compute_slices"]),
            str(p["memory_slices"]),
            ",".join(map(str, p["starts"])),
            str(p["max_instances"]),
            _num(p["memory_gib"]),
            _num(p["sm_count"]),
            p["resource"],
        )
    out.print(table)


def _num(value: Any) -> str:
    return "?" if value is None else f"{value:g}"


@mig_app.command("layouts")
def layouts_command(
    gpu: GpuOpt,
    maximal: Annotated[
        bool, typer.Option(help="Only layouts no instance can be added to.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Every valid layout (full and partial) of a model, or only the maximal ones."""
    model = get_mig_gpu(gpu)
    data = layouts_to_dict(model, maximal_only=maximal)
    if json_out:
        print_json(data)
        return
    table = Table(
        title=f"{data['count']} {'maximal ' if maximal else ''}layouts of "
        f"{model.name} ({data['maximal_layouts']} maximal of {data['total_layouts']})"
        f"{_unverified(model)}"
    )
    for col in ("#", "instances (profile@start)", "compute", "memory", "maximal"):
        table.add_column(col)
    for i, row in enumerate(data["layouts"]):
        text = " + ".join(f"{x['profile']}@{x['start']}" for x in row["instances"]) or "(none)"
        table.add_row(
            str(i),
            text,
            f"{row['compute_slices']}/7",
            f"{row['memory_slices']}/8",
            "yes" if row["maximal"] else "",
        )
    out.print(table)


def _cluster(gpu: str | None, count: int | None, current: Path | None) -> list[GpuState]:
    model = get_mig_gpu(gpu) if gpu is not None else None
    states: list[GpuState] = []
    if current is not None:
        states = read_current_layouts(
            _read(current), str(current), default_model=model, num_gpus=count
        )
    if count is None:
        if not states:
            raise InputError("--count is missing", expected="--count N (the number of GPUs)")
        count = max(s.index for s in states) + 1
    given = {s.index for s in states}
    if model is None and len(given) < count:
        raise InputError("--gpu is missing", expected="--gpu MODEL for the GPUs not in --current")
    if model is not None:
        states.extend(GpuState(i, model) for i in range(count) if i not in given)
    return sorted(states, key=lambda s: s.index)


@mig_app.command("plan")
def plan_command(
    gpu: Annotated[str | None, typer.Option("--gpu", help="MIG GPU model of the GPUs.")] = None,
    count: Annotated[
        int | None, typer.Option("--count", min=1, max=4096, help="Number of GPUs.")
    ] = None,
    demand: Annotated[
        str, typer.Option("--demand", help="Pending instances, e.g. '1g.10gb=7,3g.40gb=2'.")
    ] = "",
    current: CurrentOpt = None,
    allow_evict: Annotated[bool, typer.Option(help="May remove in-use instances.")] = False,
    mode: Annotated[
        str,
        typer.Option(
            help="nvml (per-instance changes) or mig-parted (changed GPUs are rebuilt from counts)."
        ),
    ] = "nvml",
    time_limit: Annotated[
        float, typer.Option(help="Solver seconds per stage.", callback=finite(minimum=0.1))
    ] = 30.0,
    json_out: JsonOpt = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html", metavar="FILE", help="Also write the plan as a self-contained HTML page."
        ),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Target layouts serving the demand on the fewest GPUs (then fewest reconfigured, then fewest
    evicted), proven optimal by an integer program. -o yaml|json prints the mig-parted ConfigMap
    (custom-mig-parted-config in gpu-operator: NVIDIA's named defaults plus the plan's config)
    and names on stderr the nvidia.com/mig.config label value that applies it."""
    if mode not in ("nvml", "mig-parted"):
        raise InputError(f"--mode {mode!r}", expected="nvml or mig-parted")
    states = _cluster(gpu, count, current)
    models = list({s.model.key: s.model for s in states}.values())
    wanted = parse_demand(demand, models)
    settings = MigPlanSettings(
        allow_evict=allow_evict,
        apply_mode=mode,
        time_limit_s=time_limit,
    )
    plan = decide(make_snapshot(states, wanted), settings)
    data = plan_to_dict(plan, models, wanted)
    if html is not None:
        by_name = {m.name: m for m in models}
        write_html(html, mig_plan_page(plan, by_name, wanted, data["notes"]))
    if output is not None:
        name, config = plan_config(plan, models)
        emit([parted_config_map(config, CUSTOM_CONFIG_MAP, OPERATOR_NAMESPACE)], output)
        err.print(
            f"apply it: kubectl apply -f FILE; then kubectl label node NODE "
            f"nvidia.com/mig.config={name} --overwrite (and point ClusterPolicy "
            f"spec.migManager.config.name at {CUSTOM_CONFIG_MAP})",
            markup=False,
        )
    elif json_out:
        print_json(data)
    else:
        _print_plan(data)


def _changes(t: dict[str, Any]) -> str:
    evicts = f"evicts {len(t['evicted'])}" if t["evicted"] else ""
    if not t["reconfigured"]:
        return evicts
    return ", ".join(x for x in (f"+{len(t['create'])} -{len(t['destroy'])}", evicts) if x)


def _print_plan(data: dict[str, Any]) -> None:
    verdict = "optimal" if data["optimal"] else f"not proven optimal ({data['status']})"
    out.print(
        f"{data['gpus_used']} GPUs used (lower bound {data['lower_bound']}, {verdict}); "
        f"{data['reconfigured']} reconfigured, {data['evicted']} evicted"
    )
    left = {k: v for k, v in data["unplaced"].items() if v}
    if left:
        out.print("unplaced: " + ", ".join(f"{v} x {k}" for k, v in left.items()))
    for note in data["notes"]:
        out.print(f"note: {note}")
    table = Table()
    for col in ("GPU", "target layout (profile@start, * = in use)", "serves", "changes"):
        table.add_column(col)
    for t in data["layouts"]:
        inst = " + ".join(
            f"{i['profile']}@{i['start']}{'*' if i['in_use'] else ''}" for i in t["instances"]
        )
        serves = ", ".join(f"{v} x {k}" for k, v in t["serves"].items())
        table.add_row(str(t["gpu"]), inst or "(none)", serves, _changes(t))
    out.print(table)


@mig_app.command("check-config")
def check_config_command(
    file: Annotated[Path, typer.Argument(help="A mig-parted config file (version: v1).")],
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu",
            help="Check for this GPU model only (default: the models each entry can apply to).",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Check a mig-parted config: format, profiles of the model, counts that fit, and the layout
    mig-parted would create. Exits 2 on the first problem."""
    config = read_parted_config(_read(file), str(file))
    model = get_mig_gpu(gpu) if gpu is not None else None
    checks = check_parted_config(config, model)
    if json_out:
        print_json(checks_to_dict(str(file), checks))
    else:
        table = Table(title=f"mig-parted configs in {file}")
        for col in ("config", "entry", "model", "result", "layout mig-parted creates"):
            table.add_column(col)
        for c in checks:
            result = "ok" if c.ok else "; ".join(c.problems)
            if c.notes:
                result += f" ({'; '.join(c.notes)})"
            table.add_row(
                c.config,
                str(c.entry),
                c.model or "-",
                result,
                c.layout.describe() if c.layout is not None else "-",
            )
        out.print(table)
    problem = first_problem(config, checks)
    if problem is not None:
        raise problem


@mig_app.command("defaults")
def defaults_command(gpu: GpuOpt, output: OutputOpt = None) -> None:
    """NVIDIA's named mig-parted configs (all-disabled, all-<profile>, all-balanced...) for a
    model, as a mig-parted YAML file; -o yaml|json: as the GPU Operator's
    default-mig-parted-config ConfigMap (namespace gpu-operator, key config.yaml)."""
    config = default_configs(get_mig_gpu(gpu))
    if output is None:
        print(dump_parted_config(config), end="")
    else:
        emit([parted_config_map(config, DEFAULT_CONFIG_MAP, OPERATOR_NAMESPACE)], output)


@mig_app.command("resources")
def resources_command(
    strategy: Annotated[
        str, typer.Option(help="Device plugin --mig-strategy: none, single, mixed.")
    ] = "mixed",
    gpu: Annotated[str | None, typer.Option("--gpu", help="MIG GPU model of the GPUs.")] = None,
    count: Annotated[
        int | None, typer.Option("--count", min=1, max=64, help="GPUs on the node.")
    ] = None,
    current: CurrentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """What the NVIDIA device plugin advertises for one node's MIG layouts, and GFD's MIG labels."""
    try:
        chosen = MigStrategy(strategy)
    except ValueError:
        raise InputError(f"--strategy {strategy!r}", expected="none, single or mixed") from None
    states = _cluster(gpu, count, current)
    view = plugin_view([NodeGpu(s.index, s.model, True, s.layout) for s in states], chosen)
    data = plugin_view_to_dict(view)
    if json_out:
        print_json(data)
        return
    if view.error:
        out.print(f"the device plugin would not start: {view.error}")
    for name, n in data["resources"].items():
        out.print(f"{name}: {n}")
    for key, value in data["labels"].items():
        out.print(f"{key}={value}")
