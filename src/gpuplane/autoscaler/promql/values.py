"""PromQL results: a scalar, or an instant vector of (labels, value) samples.

Label sets here include the metric name as the ``__name__`` label, as in Prometheus; they are
tuples of (name, value) pairs sorted by name, without empty values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NAME = "__name__"

LabelSet = tuple[tuple[str, str], ...]


def label_set(pairs: Iterable[tuple[str, str]] | Mapping[str, str]) -> LabelSet:
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return tuple(sorted((k, v) for k, v in items if v != ""))


def get(labels: LabelSet, name: str) -> str:
    for k, v in labels:
        if k == name:
            return v
    return ""


def drop_name(labels: LabelSet) -> LabelSet:
    return tuple((k, v) for k, v in labels if k != NAME)


def without(labels: LabelSet, names: Iterable[str]) -> LabelSet:
    drop = set(names)
    return tuple((k, v) for k, v in labels if k not in drop)


def keep(labels: LabelSet, names: Iterable[str]) -> LabelSet:
    wanted = set(names)
    return tuple((k, v) for k, v in labels if k in wanted)


def render(labels: LabelSet) -> str:
    """``name{a="1", b="2"}`` as Prometheus prints a series."""
    name = get(labels, NAME)
    rest = ", ".join(f'{k}="{v}"' for k, v in labels if k != NAME)
    return f"{name}{{{rest}}}"


@dataclass(frozen=True, slots=True)
class Sample:
    labels: LabelSet
    value: float

    def labels_dict(self) -> dict[str, str]:
        return dict(self.labels)


@dataclass(frozen=True, slots=True)
class Scalar:
    value: float


@dataclass(frozen=True, slots=True)
class Vector:
    samples: tuple[Sample, ...]

    def __len__(self) -> int:
        return len(self.samples)

    def values(self) -> list[float]:
        return [s.value for s in self.samples]


@dataclass(frozen=True, slots=True)
class RangeSeries:
    """The samples of one series inside a range selector's window (times in seconds)."""

    labels: LabelSet
    times: tuple[float, ...]
    values: tuple[float, ...]


Value = Scalar | Vector
