"""MIG layouts as SVG: per GPU a bar of its memory slices, each instance drawn over the slices
its placement takes (``3g.40gb@4`` covers slices 4..7 of an A100-40GB's 8)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuplane.report.html.page import esc
from gpuplane.slicing.mig.profiles import MigGpu

SLICE_W, ROW_H, LABEL_W = 46, 26, 150
_INSTANCE = re.compile(r"([0-9a-z.+]+)@(\d+)")
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")


def memory_slices(gpu: MigGpu) -> int:
    return max(p.starts[-1] + p.memory_slices for p in gpu.profiles if p.starts)


def parse_layout(described: str) -> list[tuple[str, int]]:
    """``1g.10gb@0 + 3g.40gb@4`` -> [("1g.10gb", 0), ("3g.40gb", 4)]; empty for none."""
    return [(m.group(1), int(m.group(2))) for m in _INSTANCE.finditer(described)]


def mig_svg(gpu: MigGpu, rows: Sequence[tuple[str, str]]) -> str:
    """``rows``: (label, Layout.describe()) per GPU and moment, drawn top to bottom."""
    slices = memory_slices(gpu)
    profiles = sorted({p for _, d in rows for p, _ in parse_layout(d)})
    colour = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(profiles)}
    width = LABEL_W + slices * SLICE_W + 10
    height = 18 + ROW_H * len(rows)
    parts = [
        f'<text x="{LABEL_W + i * SLICE_W + SLICE_W / 2}" y="12" font-size="9" '
        f'text-anchor="middle">mem {i}</text>'
        for i in range(slices)
    ]
    for r, (label, described) in enumerate(rows):
        y = 18 + r * ROW_H
        parts.append(f'<text x="4" y="{y + 16}" font-size="10">{esc(label)}</text>')
        for i in range(slices):
            parts.append(
                f'<rect x="{LABEL_W + i * SLICE_W}" y="{y}" width="{SLICE_W}" '
                f'height="{ROW_H - 4}" fill="#f1f1f1" stroke="#bbb"/>'
            )
        for profile, start in parse_layout(described):
            size = gpu.profile(profile).memory_slices
            x = LABEL_W + start * SLICE_W + 2
            w = size * SLICE_W - 4
            parts.append(
                f'<rect x="{x}" y="{y + 2}" width="{w}" height="{ROW_H - 8}" rx="3" '
                f'fill="{colour[profile]}"/>'
            )
            parts.append(
                f'<text x="{x + w / 2}" y="{y + 15}" font-size="9" fill="#fff" '
                f'text-anchor="middle">{esc(profile)}</text>'
            )
    body = "".join(parts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
        f'aria-label="MIG layouts">{body}</svg>'
    )
