"""No import circle joins two rooms of the twin (docs/architecture.md, "Twin rooms").

The layers contract in pyproject.toml orders the rooms; this test says the same thing in the
graph's own terms, and names the circle when there is one.
"""

from __future__ import annotations

import grimp

TWIN = "gpuplane.twin"


def room(module: str) -> str:
    return module.removeprefix(f"{TWIN}.").split(".")[0]


def strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[set[str]]:
    """Tarjan's components of the import graph restricted to ``modules``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v) & modules:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: set[str] = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            found.append(component)

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return found


def test_no_import_circle_joins_two_twin_rooms() -> None:
    graph = grimp.build_graph("gpuplane", cache_dir=None)
    modules = {m for m in graph.modules if m.startswith(f"{TWIN}.")}
    joining = [c for c in strongly_connected(graph, modules) if len({room(m) for m in c}) > 1]
    assert not joining, f"import circles across rooms: {[sorted(c) for c in joining]}"
