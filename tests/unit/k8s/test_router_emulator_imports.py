"""The router and the engine emulator are separate services: neither imports the other (what
both need, the OpenAI error response and the NixlConnector's kv_transfer_params constants, is in
``live.openai``)."""

from __future__ import annotations

import ast
from pathlib import Path

import gpuplane.k8s

K8S = Path(gpuplane.k8s.__file__).parent


def imports(package: str) -> set[str]:
    out: set[str] = set()
    for path in (K8S / package).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                out.add(node.module)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
    return out


def test_router_and_emulator_do_not_import_each_other() -> None:
    assert not {m for m in imports("router") if m.startswith("gpuplane.live.emulator")}
    assert not {m for m in imports("emulator") if m.startswith("gpuplane.live.router")}
