"""The exact integer program behind the MIG planner, solved with HiGHS in lexicographic stages.

Variables: ``x[c, o]`` = how many GPUs of class c take option o (integer, the class sizes sum
up), ``a[c, p]`` = how many instances of profile p the GPUs of class c serve (integer).

Constraints: a class serves at most what its options supply and at least the in-use pods they
keep in place; over all classes no profile is served more than it is wanted (pending demand plus
every in-use pod); every GPU counted as used serves at least one instance.

Stages, each an exact MIP with the earlier optima fixed: (1) most instances placed, (2) fewest
GPUs used, (3) fewest GPUs reconfigured, (4) fewest pods evicted. Gaps are set to zero, so a
stage reported ``optimal`` is proven optimal; its dual bound is reported either way (the lower
bound on GPUs used comes from stage 2).
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import highspy
import numpy as np

from gpuplane.slicing.mig.plan_options import GpuClass, Option
from gpuplane.slicing.mig.plan_types import StageResult

_INF = highspy.kHighsInf
_banner_lock = threading.Lock()
_banner_done = False


def _new_highs() -> highspy.Highs:
    """A silent solver. HiGHS prints a banner on stdout (file descriptor 1) the first time a
    solver is built in a process; that would corrupt ``--json`` output, so the first one is
    built with descriptor 1 pointed at /dev/null."""
    global _banner_done
    with _banner_lock:
        if not _banner_done:
            sys.stdout.flush()
            saved = os.dup(1)
            try:
                with open(os.devnull, "w") as devnull:
                    os.dup2(devnull.fileno(), 1)
                    highspy.Highs()  # type: ignore[no-untyped-call]
            finally:
                os.dup2(saved, 1)
                os.close(saved)
            _banner_done = True
    h = highspy.Highs()  # type: ignore[no-untyped-call]
    h.setOptionValue("output_flag", False)
    return h


@dataclass(frozen=True, slots=True)
class Solution:
    counts: list[list[int]]  # counts[c][o]: GPUs of class c taking option o
    served: list[dict[str, int]]  # served[c][profile]: instances class c serves
    stages: tuple[StageResult, ...]


class _Model:
    def __init__(self) -> None:
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.rows: list[tuple[float, float, dict[int, float]]] = []

    def var(self, lower: float, upper: float) -> int:
        self.lower.append(lower)
        self.upper.append(upper)
        return len(self.lower) - 1

    def row(self, lower: float, upper: float, coefs: dict[int, float]) -> None:
        self.rows.append((lower, upper, {k: v for k, v in coefs.items() if v}))


def _build(
    classes: Sequence[GpuClass], options: Sequence[Sequence[Option]], wanted: dict[str, int]
) -> tuple[_Model, list[list[int]], list[dict[str, int]]]:
    m = _Model()
    x = [[m.var(0, cls.size) for _ in opts] for cls, opts in zip(classes, options, strict=True)]
    a: list[dict[str, int]] = []
    for c, cls in enumerate(classes):
        names = [p.name for p in cls.model.profiles]
        served: dict[str, int] = {}
        for k, name in enumerate(names):
            top = max((o.supply[k] for o in options[c]), default=0) * cls.size
            if wanted.get(name, 0) and top:
                served[name] = m.var(0, min(top, wanted[name]))
        a.append(served)
        m.row(cls.size, cls.size, {v: 1.0 for v in x[c]})
        for name, var in served.items():
            k = names.index(name)
            supply = {x[c][o]: -float(opt.supply[k]) for o, opt in enumerate(options[c])}
            m.row(-_INF, 0.0, {var: 1.0, **supply})
            kept = {x[c][o]: -float(opt.kept[k]) for o, opt in enumerate(options[c])}
            m.row(0.0, _INF, {var: 1.0, **kept})
        used = {x[c][o]: -1.0 for o, opt in enumerate(options[c]) if opt.used}
        m.row(0.0, _INF, {**{v: 1.0 for v in served.values()}, **used})
    for name, n in wanted.items():
        cols = {s[name]: 1.0 for s in a if name in s}
        if cols:
            m.row(-_INF, float(n), cols)
    return m, x, a


def _load(m: _Model) -> highspy.Highs:
    h = _new_highs()
    n = len(m.lower)
    h.addVars(n, np.array(m.lower, dtype=float), np.array(m.upper, dtype=float))
    idx = np.arange(n, dtype=np.int32)
    h.changeColsIntegrality(n, idx, np.array([highspy.HighsVarType.kInteger] * n))
    for lower, upper, coefs in m.rows:
        cols = np.array(list(coefs), dtype=np.int32)
        h.addRow(lower, upper, len(cols), cols, np.array(list(coefs.values()), dtype=float))
    return h


def _objectives(
    options: Sequence[Sequence[Option]], x: list[list[int]], a: list[dict[str, int]]
) -> list[tuple[str, dict[int, float], bool]]:
    """(name, coefficients, maximise) for every stage."""
    placed = {v: 1.0 for s in a for v in s.values()}
    used: dict[int, float] = {}
    reconf: dict[int, float] = {}
    evicted: dict[int, float] = {}
    for c, opts in enumerate(options):
        for o, opt in enumerate(opts):
            if opt.used:
                used[x[c][o]] = 1.0
            if opt.reconfigured:
                reconf[x[c][o]] = 1.0
            if opt.evicted:
                evicted[x[c][o]] = float(opt.evicted)
    return [
        ("placed", placed, True),
        ("gpus_used", used, False),
        ("reconfigured", reconf, False),
        ("evicted", evicted, False),
    ]


def _start(
    classes: Sequence[GpuClass],
    options: Sequence[Sequence[Option]],
    x: list[list[int]],
    a: list[dict[str, int]],
    n: int,
) -> list[float]:
    """A feasible starting point: every GPU stays as it is, serving only its own pods."""
    values = [0.0] * n
    for c, cls in enumerate(classes):
        stay = next(
            o
            for o, opt in enumerate(options[c])
            if opt.kind in ("keep", "idle") and (opt.kind == "keep") == bool(cls.in_use)
        )
        values[x[c][stay]] = float(cls.size)
        names = [p.name for p in cls.model.profiles]
        for name, var in a[c].items():
            values[var] = float(options[c][stay].kept[names.index(name)] * cls.size)
    return values


def _run_stage(
    h: highspy.Highs,
    name: str,
    coefs: dict[int, float],
    maximise: bool,
    incumbent: list[float],
) -> tuple[StageResult, list[float]]:
    """One stage. ``incumbent`` satisfies every earlier stage's bound; it stands when HiGHS
    runs out of time without anything better. (HiGHS's own warm start, ``setSolution``, is not
    used: after the model is modified between stages it can report a stale optimum.)"""
    n = len(incumbent)
    costs = np.zeros(n)
    for var, value in coefs.items():
        costs[var] = -value if maximise else value
    h.changeColsCost(n, np.arange(n, dtype=np.int32), costs)
    h.run()
    status = h.getModelStatus()
    info = h.getInfo()

    def score(values: list[float]) -> int:
        return round(sum(coefs.get(i, 0.0) * v for i, v in enumerate(values)))

    values = incumbent
    found = list(h.getSolution().col_value)
    feasible = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    if feasible and len(found) == n:
        better = score(found) >= score(incumbent) if maximise else score(found) <= score(incumbent)
        values = found if better else incumbent
    value = score(values)
    optimal = status == highspy.HighsModelStatus.kOptimal
    raw = float(info.mip_dual_bound)  # bound on the minimised cost (-objective if maximising)
    if math.isfinite(raw):
        bound = -raw if maximise else raw
    else:  # nothing proven: only the trivial bound
        bound = math.inf if maximise else -math.inf
    result = StageResult(
        name, value, float(value) if optimal else bound, h.modelStatusToString(status), optimal
    )
    return result, values


def solve(
    classes: Sequence[GpuClass],
    options: Sequence[Sequence[Option]],
    wanted: dict[str, int],
    *,
    time_limit_s: float,
) -> Solution:
    """Solve the four stages, each started from the previous stage's answer (the first from
    "every GPU stays as it is"), so a time limit never leaves the plan without a solution."""
    m, x, a = _build(classes, options, wanted)
    h = _load(m)
    for option, value in (
        ("mip_rel_gap", 0.0),
        ("mip_abs_gap", 0.0),
        ("threads", 1),
        ("time_limit", float(time_limit_s)),
        ("random_seed", 0),
    ):
        h.setOptionValue(option, value)
    n = len(m.lower)
    stages: list[StageResult] = []
    values = _start(classes, options, x, a, n)
    for name, coefs, maximise in _objectives(options, x, a):
        result, values = _run_stage(h, name, coefs, maximise, values)
        stages.append(result)
        cols = np.array(list(coefs), dtype=np.int32)
        if len(cols):  # fix this stage's value for the next ones
            vals = np.array(list(coefs.values()), dtype=float)
            lo, hi = (result.value, _INF) if maximise else (-_INF, result.value)
            h.addRow(lo, hi, len(cols), cols, vals)
    counts = [[round(values[v]) for v in row] for row in x]
    served = [{name: round(values[v]) for name, v in s.items()} for s in a]
    return Solution(counts, served, tuple(stages))


def ceil_bound(bound: float) -> int:
    """An integer lower bound from a dual bound (tolerating solver round-off)."""
    if not math.isfinite(bound):
        return 0
    return max(0, math.ceil(bound - 1e-6))
