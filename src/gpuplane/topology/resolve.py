"""Turn what a user typed (a preset name or a file path) into a NodeTopology.

- a preset name (``gpuplane topo presets`` lists them);
- a ``.yaml``/``.yml`` file: a hardware description in the preset format;
- any other file: saved ``nvidia-smi topo -m`` output.
"""

from __future__ import annotations

from pathlib import Path

from gpuplane.core.errors import InputError
from gpuplane.core.textio import exists, is_dir
from gpuplane.topology.from_matrix import load_topology_text_file
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_hardware_file, load_preset, preset_names

HARDWARE_SUFFIXES = (".yaml", ".yml")


def resolve_topology(ref: str, *, gpu_model: str | None = None) -> NodeTopology:
    if ref in preset_names():
        if gpu_model is not None:
            raise InputError(
                f"--gpu-model {gpu_model!r} cannot change preset {ref!r}",
                expected="--gpu-model only with a saved `nvidia-smi topo -m` file",
            )
        return load_preset(ref)
    path = Path(ref)
    if is_dir(path):
        raise InputError(f"{ref!r} is a directory", expected="a preset name or a file")
    if not exists(path):
        raise InputError(
            f"no preset or file named {ref!r}",
            expected=f"a preset ({', '.join(preset_names())}) or the path of a hardware YAML "
            "or saved `nvidia-smi topo -m` output",
        )
    if path.suffix.lower() in HARDWARE_SUFFIXES:
        if gpu_model is not None:
            raise InputError(
                "--gpu-model does not apply to a hardware YAML file",
                expected="the model in the file's gpu_model field",
            )
        return load_hardware_file(path)
    return load_topology_text_file(path, gpu_model=gpu_model)
