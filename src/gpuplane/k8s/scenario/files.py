"""The files a scenario names: where they are and their text, in one place.

A reference is absolute or relative to the scenario file's directory (``resolve_relative``);
the pools' topology files (``pool_topology_ref``), workload manifests, the ClusterPolicy, DRA
objects, ScaledObjects and traces are all resolved here, and the YAML ones read here
(``read_text``), so a missing or unreadable file is reported at the field that named it the same
way everywhere. The readers of the contents (manifests, traces) take the resolved path.
"""

from __future__ import annotations

from pathlib import Path

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.k8s.field_errors import LineOf
from gpuplane.twin.scenario.schema import NodePool


def resolve_relative(ref: str, scenario_path: Path) -> Path:
    """A file named in the scenario: absolute, or relative to the scenario's directory."""
    path = Path(ref)
    return path if path.is_absolute() else scenario_path.parent / path


def pool_topology_ref(pool: NodePool, scenario_path: Path) -> str:
    """What to pass to ``resolve_topology``: the preset, or the file relative to the scenario."""
    if pool.preset is not None:
        return pool.preset
    assert pool.topology_file is not None
    return str(resolve_relative(pool.topology_file, scenario_path))


def read_text(path: Path, what: str, source: str, line_of: LineOf, field: str) -> str:
    """A file named at ``field`` of ``source``; a missing file is reported at that field."""
    try:
        return read_user_text(path)
    except FileNotFoundError:
        problem = f"{path} not found"
    except IsADirectoryError:
        problem = f"{path} is a directory"
    except (OSError, UnicodeDecodeError) as err:
        problem = f"cannot read {path} ({err})"
    raise InputError(problem, expected=what, location=Location(source, line_of(field), field))
