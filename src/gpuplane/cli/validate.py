"""``gpuplane validate SCENARIO`` (and ``--dry-run`` of ``simulate``/``demo``): every check a run
makes, no simulation.

The scenario is read with every mistake collected (``k8s.scenario.problems``): its shape, node pools
and their hardware, the ClusterPolicy and its updates, workloads and their manifests and traces, DRA
objects, MIG changes, the serving section, ScaledObjects and faults. Then the twin is built from
it (which checks what needs the whole cluster: scheduler profiles, autoscaling targets) but not
started. Warnings are printed and do not fail; any error exits with code 2, all of them listed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from gpuplane.cli.console import err, out
from gpuplane.core.errors import InputError, InputErrors
from gpuplane.k8s.scenario.loader import LoadedScenario, load_scenario_spec
from gpuplane.twin.build import simulation_from_spec


def check_scenario(path: Path) -> LoadedScenario:
    """The scenario read and its twin built, every mistake raised together (InputErrors)."""
    loaded = load_scenario_spec(path, every=True)
    try:
        simulation_from_spec(loaded.spec, seed=0)
    except InputError as exc:
        raise exc.located(str(path)) from None
    return loaded


def print_warnings(loaded: LoadedScenario) -> None:
    for warning in loaded.warnings:
        err.print(f"[yellow]warning:[/] {escape(warning)}", markup=True, highlight=False)


def report_valid(path: Path, loaded: LoadedScenario) -> None:
    spec = loaded.spec
    nodes = sum(p.count for p in spec.node_pools)
    warned = len(loaded.warnings)
    out.print(
        f"{path}: valid: {len(spec.node_pools)} node pools, {nodes} nodes, "
        f"{len(spec.workloads)} workloads, {len(spec.faults)} faults, "
        f"{warned} warning{'' if warned == 1 else 's'}",
        markup=False,
        highlight=False,
    )


def validate_command(
    scenario_paths: Annotated[
        list[Path], typer.Argument(metavar="SCENARIO...", help="Scenario YAML files.")
    ],
) -> None:
    """Check SCENARIO as a run would (files it names, manifests, pools, traces, faults,
    autoscaling objects) without simulating; print every problem at once, located. Exit code 2
    if any error; warnings do not fail."""
    errors: list[InputError] = []
    for path in scenario_paths:
        try:
            loaded = check_scenario(path)
        except InputErrors as many:
            errors.extend(many.errors)
            continue
        except InputError as one:
            errors.append(one)
            continue
        print_warnings(loaded)
        report_valid(path, loaded)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise InputErrors(errors)
