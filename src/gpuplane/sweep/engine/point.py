"""A point of a sweep (its parameter values) and the text form of values in the results table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

Value = bool | int | float | str
Cell = Value | None
Figures = Mapping[str, Cell]


@dataclass(frozen=True, slots=True)
class Point:
    """Point ``index`` of the expansion (its row in the table) and its values, in the sweep
    file's parameter order."""

    index: int
    params: tuple[tuple[str, Value], ...]

    def value(self, name: str) -> Value:
        for key, value in self.params:
            if key == name:
                return value
        raise KeyError(name)

    def as_dict(self) -> dict[str, Value]:
        return dict(self.params)

    def label(self) -> str:
        """``policy=fgd, seed=42``: how errors and progress name the point."""
        return ", ".join(f"{k}={format_cell(v)}" for k, v in self.params)


def format_cell(value: Cell) -> str:
    """The table's text of one value: the same value, the same bytes, whichever worker made it.

    Floats are Python's shortest round-trip repr (``0.1``, ``1e-05``); a missing figure is empty.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value)
    return str(value)


def parse_cell(text: str) -> Cell:
    """The inverse of :func:`format_cell` as far as the text allows (``"42"`` reads as 42)."""
    if text == "":
        return None
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text
