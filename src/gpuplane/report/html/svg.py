"""Deterministic SVG from matplotlib: fixed ids, no date, text kept as text."""

from __future__ import annotations

import io
from contextlib import AbstractContextManager

import matplotlib
from matplotlib.figure import Figure

# The hash salt fixes the ids of clip paths and glyphs (else random per process); text as
# <text> elements instead of embedded glyph paths keeps every plot a few kilobytes smaller.


def style() -> AbstractContextManager[None]:
    """The report's matplotlib settings; build and save every figure inside it."""
    return matplotlib.rc_context(
        {
            "svg.hashsalt": "gpuplane-report",
            "svg.fonttype": "none",
            "font.size": 9,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )


def new_figure(width_in: float = 9.0, height_in: float = 3.0) -> Figure:
    return Figure(figsize=(width_in, height_in), layout="constrained")


def svg_text(fig: Figure) -> str:
    """The figure as an inline <svg> element (no XML prolog, no doctype, no date)."""
    buf = io.StringIO()
    with style():
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]
