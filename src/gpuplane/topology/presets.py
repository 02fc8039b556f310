"""Hardware presets (``data/presets/<name>.yaml``) and a user's own hardware description files.

Both go through the same loader (``hardware_spec.load_hardware_spec``) and builder
(``build.build_topology``), so a preset is nothing more than a checked-in example of the format.
Several presets reproduce a real ``nvidia-smi topo -m`` capture exactly; each file says which.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import resources
from pathlib import Path

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.topology.build import build_topology
from gpuplane.topology.hardware_spec import HardwareSpec, load_hardware_spec
from gpuplane.topology.model import NodeTopology

_PACKAGE = "gpuplane.topology"
_PRESET_DIR = "data/presets"
_SUFFIX = ".yaml"


def preset_names() -> list[str]:
    """Names of the bundled presets, sorted."""
    root = resources.files(_PACKAGE).joinpath(_PRESET_DIR)
    return sorted(
        entry.name.removesuffix(_SUFFIX) for entry in root.iterdir() if entry.name.endswith(_SUFFIX)
    )


def preset_spec(name: str) -> HardwareSpec:
    """The hardware description of preset ``name``; unknown names list the valid ones."""
    if name not in preset_names():
        raise InputError(f"unknown preset {name!r}", expected=f"one of {', '.join(preset_names())}")
    text = resources.files(_PACKAGE).joinpath(f"{_PRESET_DIR}/{name}{_SUFFIX}").read_text("utf-8")
    return load_hardware_spec(text, _preset_source(name))


# Presets are frozen values read from the installed package, so one build per process suffices.
@cache
def load_preset(name: str) -> NodeTopology:
    """The NodeTopology of preset ``name`` (see :func:`preset_names`)."""
    return build_topology(preset_spec(name), source=_preset_source(name))


def load_hardware_file(path: str | os.PathLike[str]) -> NodeTopology:
    """Build the node described by the user's YAML file at ``path``."""
    source = str(path)
    try:
        text = read_user_text(Path(path))
    except UnicodeDecodeError:
        raise InputError(
            "the file is not UTF-8 text",
            expected="a YAML hardware description",
            location=Location(source=source),
        ) from None
    except OSError as err:
        raise InputError(
            f"cannot read the file: {err.strerror or err}", location=Location(source=source)
        ) from None
    return build_topology(load_hardware_spec(text, source), source=source)


def _preset_source(name: str) -> str:
    return f"gpuplane/topology/{_PRESET_DIR}/{name}{_SUFFIX}"
