"""The file describing GPUs' current MIG layouts (``gpuplane mig plan --current FILE``).

YAML or JSON::

    gpus:
      - index: 0                # optional: defaults to the position in the list
        model: H100-80GB        # optional: defaults to --gpu
        instances:
          - {profile: 3g.40gb, start: 4, in_use: true}
          - {profile: 1g.10gb, start: 0}        # in_use defaults to false

``start`` is the first memory slice, as ``nvidia-smi mig -lgipp`` / ``-lgi`` report placements.
GPUs of the cluster the file does not mention have MIG enabled and no instances. Every mistake is
reported as ``file:line: field: problem``, including layout rule violations (overlaps, invalid
starts, too many compute slices...).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model
from gpuplane.core.yamlio import LineIndex, parse_yaml
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.layout import Instance, make_layout
from gpuplane.slicing.mig.plan_types import GpuState
from gpuplane.slicing.mig.profiles import NUM_MEMORY_SLICES, MigGpu


class _InstanceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    profile: str = Field(description="GPU instance profile, e.g. 3g.40gb")
    start: int = Field(ge=0, lt=NUM_MEMORY_SLICES, description="first memory slice (0-7)")
    in_use: bool = Field(default=False, description="a running pod uses this instance")


class _GpuSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    index: int | None = Field(default=None, ge=0, description="GPU index on the node")
    model: str | None = Field(default=None, description="MIG GPU model (default: --gpu)")
    instances: list[_InstanceSpec] = []


class _CurrentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    gpus: list[_GpuSpec] = Field(description="one item per GPU with instances")


def _located(index: LineIndex, source: str, field: str, err: InputError) -> InputError:
    loc = Location(source, index.line_of(field), field)
    return InputError(err.problem, expected=err.expected, location=loc)


def _model(g: _GpuSpec, default_model: MigGpu | None) -> MigGpu:
    if g.model is not None:
        try:
            return get_mig_gpu(g.model)
        except InputError as err:
            raise InputError(
                err.problem, expected=err.expected, location=Location(field="model")
            ) from None
    if default_model is None:
        raise InputError("no GPU model", expected="model: <MIG GPU model> here, or --gpu")
    return default_model


def _state(g: _GpuSpec, gpu_index: int, default_model: MigGpu | None) -> GpuState:
    """One GPU; errors carry a field relative to the GPU's item (``model``, ``instances[2]``)."""
    model = _model(g, default_model)
    instances = [Instance(i.start, i.profile) for i in g.instances]
    layout = make_layout(model, instances, location=Location(field="instances"))
    in_use = frozenset(
        Instance(i.start, model.profile(i.profile).name) for i in g.instances if i.in_use
    )
    return GpuState(gpu_index, model, layout, in_use)


def read_current_layouts(
    text: str, source: str, *, default_model: MigGpu | None, num_gpus: int | None = None
) -> list[GpuState]:
    """The GPUs the file describes (sorted by index); see the module docstring."""
    node, data = parse_yaml(text, source)
    if node is None or data is None:
        raise InputError(
            "the file is empty",
            expected="gpus: [...] with each GPU's instances",
            location=Location(source, 1),
        )
    index = LineIndex(node, source)
    try:
        spec = validate_model(_CurrentSpec, data)
    except InputError as err:
        raise _located(index, source, err.location.field or "", err) from None
    states: dict[int, GpuState] = {}
    for pos, g in enumerate(spec.gpus):
        where = f"gpus[{pos}]"
        gpu_index = pos if g.index is None else g.index
        if num_gpus is not None and gpu_index >= num_gpus:
            raise _located(
                index,
                source,
                f"{where}.index",
                InputError(
                    f"GPU index {gpu_index} but the cluster has {num_gpus} GPUs",
                    expected=f"an index in 0..{num_gpus - 1} (or raise --count)",
                ),
            )
        if gpu_index in states:
            raise _located(
                index,
                source,
                where,
                InputError(f"GPU {gpu_index} is described twice", expected="each GPU index once"),
            )
        try:
            states[gpu_index] = _state(g, gpu_index, default_model)
        except InputError as err:
            field = f"{where}.{err.location.field}" if err.location.field else where
            raise _located(index, source, field, err) from None
    return [states[k] for k in sorted(states)]
