"""Who imports whom inside ``gpuplane.serving``: traffic knows requests, not engines."""

from __future__ import annotations

import ast
from pathlib import Path

import gpuplane.serving

SERVING = Path(gpuplane.serving.__file__).parent


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_traffic_does_not_import_the_engine() -> None:
    for path in sorted((SERVING / "traffic").glob("*.py")):
        engine = [m for m in _imports(path) if m.startswith("gpuplane.serving.engine")]
        assert not engine, f"{path.name} imports {engine}"


def test_the_engine_does_not_import_routing_or_the_event_kernel() -> None:
    # The engine is driven through advance / add_request / next_event_time (by the simulation
    # or by a clock), so it must not depend on the loop that drives it.
    for path in sorted((SERVING / "engine").glob("*.py")):
        bad = [
            m
            for m in _imports(path)
            if m.startswith("gpuplane.serving.routing") or m == "gpuplane.core.kernel"
        ]
        assert not bad, f"{path.name} imports {bad}"
