"""Read OpenB node and pod lists (fgd-openb.md §1) into arrays, with located errors.

Node list columns: ``sn,cpu_milli,memory_mib,gpu,model`` (empty model = no GPU model).
Pod list columns: ``name,cpu_milli,memory_mib,num_gpu,gpu_milli`` and optionally ``gpu_spec``
(allowed models separated by ``|``; empty or absent = any model); other columns (qos,
timestamps) are ignored, as the simulator's csv-to-yaml converter drops them. Columns are found
by header name. Rows come back in name order: the simulator sorts both lists by name before
shuffling pods and numbering nodes (fgd-openb.md §2 steps 2 and 4).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.scheduler.policies.types import MILLI_PER_GPU, IntArray, PodRequest

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
MAX_GPUS = 64  # per node or pod; OpenB has at most 8


@dataclass(frozen=True, slots=True)
class NodeTable:
    """The cluster: one row per node, in name order. ``model`` indexes ``model_names``."""

    source: str
    names: tuple[str, ...]
    cpu_milli: IntArray
    mem_mib: IntArray
    num_gpus: IntArray
    model: IntArray
    model_names: tuple[str, ...]

    @property
    def num_nodes(self) -> int:
        return len(self.names)

    @property
    def total_gpus(self) -> int:
        return int(self.num_gpus.sum())

    @property
    def max_gpus(self) -> int:
        return max(1, int(self.num_gpus.max()))


@dataclass(frozen=True, slots=True)
class PodTable:
    """The original pod list (before shuffle and tuning), one row per pod, in name order."""

    source: str
    names: tuple[str, ...]
    cpu_milli: IntArray
    mem_mib: IntArray
    num_gpu: IntArray
    gpu_milli: IntArray  # per GPU; 0 for CPU-only pods
    gpu_spec: tuple[str, ...]

    @property
    def num_pods(self) -> int:
        return len(self.names)

    @property
    def total_gpu_milli(self) -> IntArray:
        return self.num_gpu * self.gpu_milli

    def request(self, row: int, model_names: tuple[str, ...]) -> PodRequest:
        return PodRequest(
            cpu_milli=int(self.cpu_milli[row]),
            mem_mib=int(self.mem_mib[row]),
            num_gpu=int(self.num_gpu[row]),
            gpu_milli=int(self.gpu_milli[row]),
            models=spec_models(self.gpu_spec[row], model_names),
        )


def spec_allows(gpu_spec: str, node_model: str) -> bool:
    """May a pod with this ``gpu_spec`` use a node of this model (IsNodeAccessibleToPodByType)."""
    if not gpu_spec:
        return True
    if not node_model:
        return False
    names = [name for name in gpu_spec.split("|") if name]
    return not names or node_model in names


def spec_models(gpu_spec: str, model_names: tuple[str, ...]) -> frozenset[int] | None:
    """The model ids a ``gpu_spec`` allows (None: any model)."""
    if not gpu_spec:
        return None
    return frozenset(i for i, name in enumerate(model_names) if spec_allows(gpu_spec, name))


def load_nodes(path: Path) -> NodeTable:
    """Read a node list; InputError with file, line and column on any bad value."""
    source = str(path)
    rows = sorted(_rows(path, NODE_COLUMNS, ()), key=lambda r: r[1]["sn"])
    _check_unique(source, rows, "sn")
    cpu, mem, gpus, models = [], [], [], []
    for line, row in rows:
        cpu.append(_int(source, line, row, "cpu_milli", 0, None))
        mem.append(_int(source, line, row, "memory_mib", 0, None))
        gpus.append(_int(source, line, row, "gpu", 0, MAX_GPUS))
        models.append(row["model"])
    model_names = tuple(sorted(set(models)))
    model_id = {name: i for i, name in enumerate(model_names)}
    return NodeTable(
        source=source,
        names=tuple(row["sn"] for _, row in rows),
        cpu_milli=np.array(cpu, dtype=np.int64),
        mem_mib=np.array(mem, dtype=np.int64),
        num_gpus=np.array(gpus, dtype=np.int64),
        model=np.array([model_id[m] for m in models], dtype=np.int64),
        model_names=model_names,
    )


def load_pods(path: Path) -> PodTable:
    """Read a pod list; InputError with file, line and column on any bad value."""
    source = str(path)
    rows = sorted(_rows(path, POD_COLUMNS, ("gpu_spec",)), key=lambda r: r[1]["name"])
    _check_unique(source, rows, "name")
    cpu, mem, num, milli = [], [], [], []
    for line, row in rows:
        cpu.append(_int(source, line, row, "cpu_milli", 0, None))
        mem.append(_int(source, line, row, "memory_mib", 0, None))
        count = _int(source, line, row, "num_gpu", 0, MAX_GPUS)
        num.append(count)
        milli.append(_gpu_milli(source, line, row, count))
    return PodTable(
        source=source,
        names=tuple(row["name"] for _, row in rows),
        cpu_milli=np.array(cpu, dtype=np.int64),
        mem_mib=np.array(mem, dtype=np.int64),
        num_gpu=np.array(num, dtype=np.int64),
        gpu_milli=np.array(milli, dtype=np.int64),
        gpu_spec=tuple(row.get("gpu_spec", "") for _, row in rows),
    )


def _gpu_milli(source: str, line: int, row: dict[str, str], num_gpu: int) -> int:
    """gpu_milli is per GPU: 0 without GPUs, 1..1000 for one GPU, 1000 for several."""
    if num_gpu == 0:
        return _int(source, line, row, "gpu_milli", 0, 0, why="0 when num_gpu is 0")
    if num_gpu == 1:
        return _int(source, line, row, "gpu_milli", 1, MILLI_PER_GPU)
    why = f"{MILLI_PER_GPU} when num_gpu > 1 (multi-GPU pods take whole GPUs)"
    return _int(source, line, row, "gpu_milli", MILLI_PER_GPU, MILLI_PER_GPU, why=why)


def _rows(
    path: Path, required: tuple[str, ...], optional: tuple[str, ...]
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row by column name) for every non-blank data row."""
    source = str(path)
    try:
        text = read_user_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(
            f"cannot read the file: {problem}",
            expected="a readable UTF-8 CSV file",
            location=Location(source=source),
        ) from None
    reader = csv.reader(text.splitlines())
    header = [name.strip() for name in next(reader, [])]
    wanted = ",".join(required + tuple(f"[{o}]" for o in optional))
    for name in required:
        if name not in header:
            raise InputError(
                f"the header has no column {name!r}",
                expected=f"a header line with the columns {wanted}",
                location=Location(source=source, line=1, field=name),
            )
    count = 0
    for fields in reader:
        line = reader.line_num
        if not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise InputError(
                f"the row has {len(fields)} fields but the header has {len(header)}",
                expected=f"one value per header column ({','.join(header)})",
                location=Location(source=source, line=line),
            )
        count += 1
        yield line, {h: f.strip() for h, f in zip(header, fields, strict=True)}
    if count == 0:
        raise InputError(
            "the file has no data rows",
            expected=f"a header line ({wanted}) and at least one row",
            location=Location(source=source),
        )


def _int(
    source: str,
    line: int,
    row: dict[str, str],
    column: str,
    low: int,
    high: int | None,
    *,
    why: str | None = None,
) -> int:
    text = row[column]
    bounds = f"between {low} and {high}" if high is not None else f">= {low}"
    expected = f"a whole number {bounds}" + (f" ({why})" if why else "")
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < low or (high is not None and value > high):
        raise InputError(
            f"{text!r} is not valid",
            expected=expected,
            location=Location(source=source, line=line, field=f"column {column!r}"),
        )
    return value


def _check_unique(source: str, rows: list[tuple[int, dict[str, str]]], column: str) -> None:
    seen: dict[str, int] = {}
    for line, row in rows:
        name = row[column]
        if not name:
            raise InputError(
                "the name is empty",
                expected="a unique, non-empty name",
                location=Location(source=source, line=line, field=f"column {column!r}"),
            )
        if name in seen:
            raise InputError(
                f"{name!r} already appears on line {seen[name]}",
                expected="unique names",
                location=Location(source=source, line=line, field=f"column {column!r}"),
            )
        seen[name] = line
