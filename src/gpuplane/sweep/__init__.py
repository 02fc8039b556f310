"""Sweeps: many what-ifs from one base, on a local process pool or on Ray.

A sweep file (``gpuplane sweep SWEEP.yaml``, docs/sweep.md) names a base, the parameters to vary,
a search (grid or seeded random) and the figures to collect. This package is the engine and the
bases, usable from Python without the CLI::

    from gpuplane.sweep import LocalPool, RayPool, load_sweep, run_sweep

    sweep = load_sweep(Path("examples/sweeps/openb-grid.yaml"), bases)  # located InputErrors
    result = run_sweep(sweep, LocalPool(workers=2), Path("out/sweep/openb-grid"))
    result.rows        # every point in point order, as the table's text (Row.cells)
    result.records()   # [{column: value}], values read back from the table
    best(result.records(), sweep.file.objectives, sweep.file.constraints, 5)
    pareto_front(result.records(), "gpu_hours", "slo_attainment", sweep.file.objectives)

- ``bases`` maps a base kind (the key under ``base:``) to a factory ``(settings, folder, field)
  -> SweepBase``; the registry (``gpuplane.sweep.bases.registry.bases()``) holds openb, scenario,
  fit and autoscaling. A new base implements :class:`SweepBase` (check its parameters and values,
  name its figures, evaluate one :class:`Point`) as a frozen, picklable value that holds its input.
- Executors (:class:`Executor`): :class:`InProcess`, :class:`LocalPool` (processes on this
  machine, all CPUs by default) and :class:`RayPool` (Ray Core tasks, one per point; Ray is the
  optional ``gpuplane[ray]`` extra). All give the same table, byte for byte.
- Resume: ``run_sweep`` keeps each finished point in ``out/results.csv`` as it comes back and
  skips the points already there on the next run (``restart=True`` discards them); the
  ``sweep.json`` digest beside it refuses rows another sweep made.

Two rooms. ``engine``: the pure parts (spec, expand, point, pareto) do no I/O; ``table`` and
``runner`` write the results folder; ``executor`` and ``ray_pool`` start processes; it imports
``core`` alone (an import-linter contract): Ray and multiprocessing stay out of every decision.
``bases``: what a point runs (the OpenB replay, a twin run of a scenario, a ``fit`` answer, the
autoscaling benchmark), with the readers it needs (``k8s``) and the twin.
"""

from gpuplane.sweep.engine.base import BaseFactory, BaseRegistry, SweepBase
from gpuplane.sweep.engine.executor import Executor, InProcess, LocalPool, available_cpus
from gpuplane.sweep.engine.expand import expand
from gpuplane.sweep.engine.load import Sweep, load_sweep
from gpuplane.sweep.engine.outcome import Outcome
from gpuplane.sweep.engine.pareto import best, meets, pareto_front
from gpuplane.sweep.engine.point import Cell, Point, Value, format_cell, parse_cell
from gpuplane.sweep.engine.ray_pool import RayPool, import_ray
from gpuplane.sweep.engine.runner import PointFailed, SweepResult, run_sweep
from gpuplane.sweep.engine.spec import ParameterSpec, SweepFile
from gpuplane.sweep.engine.table import RESULTS_FILE, ResultsStore, Row

__all__ = [
    "RESULTS_FILE",
    "BaseFactory",
    "BaseRegistry",
    "Cell",
    "Executor",
    "InProcess",
    "LocalPool",
    "Outcome",
    "ParameterSpec",
    "Point",
    "PointFailed",
    "RayPool",
    "ResultsStore",
    "Row",
    "Sweep",
    "SweepBase",
    "SweepFile",
    "SweepResult",
    "Value",
    "available_cpus",
    "best",
    "expand",
    "format_cell",
    "import_ray",
    "load_sweep",
    "meets",
    "pareto_front",
    "parse_cell",
    "run_sweep",
]
