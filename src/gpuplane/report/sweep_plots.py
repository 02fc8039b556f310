"""A sweep's plots: each figure against each parameter, and the Pareto fronts it asks for.

Static SVG through the report's matplotlib settings (``report.html.svg``: fixed ids, no date), one
file per plot, so the same table gives the same files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

from gpuplane.report.html.svg import new_figure, style, svg_text
from gpuplane.sweep import SweepResult, pareto_front

Record = dict[str, object]


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _positions(xs: Sequence[object]) -> tuple[list[object], dict[object, float], bool]:
    """The parameter's values in order (numbers by value, others as first seen), where each
    goes on the x axis, and whether the axis is numeric."""
    order: list[object] = []
    for x in xs:
        if x not in order:
            order.append(x)
    numbers = {x: _num(x) for x in order}
    if all(v is not None for v in numbers.values()):
        order.sort(key=lambda v: numbers[v] or 0.0)
        return order, {x: numbers[x] or 0.0 for x in order}, True
    return order, {x: float(i) for i, x in enumerate(order)}, False


def figure_vs_parameter(records: Sequence[Record], figure: str, parameter: str) -> str | None:
    """Every point (dots) and the mean over the other parameters per value (line); None when
    the figure has no number. A parameter whose values are not all numbers is categorical."""
    pairs: list[tuple[object, float]] = []
    for r in records:
        y = _num(r.get(figure))
        if y is not None:
            pairs.append((r[parameter], y))
    if not pairs:
        return None
    order, position, numeric = _positions([x for x, _ in pairs])
    means = []
    for x in order:
        ys = [y for v, y in pairs if v == x]
        means.append(sum(ys) / len(ys))
    with style():
        fig = new_figure(6.0, 3.6)
        ax = fig.add_subplot()
        ax.scatter([position[x] for x, _ in pairs], [y for _, y in pairs], s=8, alpha=0.35)
        ax.plot([position[x] for x in order], means, marker="o", linewidth=1.4, label="mean")
        if not numeric:
            ax.set_xticks([position[x] for x in order], [str(x) for x in order], rotation=30)
        ax.set_xlabel(parameter)
        ax.set_ylabel(figure)
        ax.set_title(f"{figure} vs {parameter}")
        ax.legend(loc="best", fontsize=8)
        return svg_text(fig)


def pareto_plot(records: Sequence[Record], x: str, y: str, directions: dict[str, str]) -> str:
    front = [
        (_num(r[x]) or 0.0, _num(r[y]) or 0.0) for r in pareto_front(records, x, y, directions)
    ]
    clean: list[tuple[float, float]] = []
    for r in records:
        a, b = _num(r.get(x)), _num(r.get(y))
        if a is not None and b is not None:
            clean.append((a, b))
    with style():
        fig = new_figure(6.0, 3.6)
        ax = fig.add_subplot()
        ax.scatter([a for a, _ in clean], [b for _, b in clean], s=8, alpha=0.35, label="points")
        ax.plot(
            [a for a, _ in front],
            [b for _, b in front],
            marker="o",
            drawstyle="steps-post",
            linewidth=1.4,
            color="#d9534f",
            label="Pareto front",
        )
        ax.set_xlabel(f"{x} ({directions[x]})")
        ax.set_ylabel(f"{y} ({directions[y]})")
        ax.set_title(f"Pareto front: {x} vs {y}")
        ax.legend(loc="best", fontsize=8)
        return svg_text(fig)


def write_plots(result: SweepResult, folder: Path) -> list[Path]:
    """``FIGURE--vs--PARAMETER.svg`` for every pair with numbers, ``pareto--X--Y.svg`` per pair."""
    records = result.records()
    sweep = result.sweep
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for figure in sweep.figures:
        for parameter in sweep.parameter_names:
            svg = figure_vs_parameter(records, figure, parameter)
            if svg is not None:
                path = folder / f"{_safe(figure)}--vs--{_safe(parameter)}.svg"
                path.write_text(svg + "\n")
                written.append(path)
    for x, y in sweep.file.pareto:
        path = folder / f"pareto--{_safe(x)}--{_safe(y)}.svg"
        path.write_text(pareto_plot(records, x, y, dict(sweep.file.objectives)) + "\n")
        written.append(path)
    return written
