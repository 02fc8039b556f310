"""A ``fit`` question as a sweep base: one point = ``gpuplane fit`` with the point's values.

Settings (under ``base: {fit: ...}``), the command's inputs and options: ``snapshot`` and
``workload`` (files relative to the sweep file, as ``--snapshot`` and the WORKLOAD argument take
them), ``pools``, ``kubelet_config``, ``scheduler_config`` (optional files), ``profile``
(``default`` or ``gpuplane``), ``message_mib``, ``capacity_limit`` and ``remedies``. Every one of
them but the three optional files is also a knob a parameter may vary: a snapshot or workload
knob's values are files (the same question on several clusters, or several workloads on one).

A parameter with ``path`` sets a field of the workload file: the path's first part picks the
document, ``[NAME]`` by ``metadata.name`` (``[Kind/NAME]`` where two documents share a name) or
``[N]`` by position (0 is the first document), the rest is a path in that object:
``[qwen-72b].spec.replicas``,
``[qwen-72b].spec.template.spec.containers[vllm].resources.limits[nvidia.com/gpu]``.
The changed workload is read as ``fit`` reads a file, so a value it would refuse is refused
before any point runs.

Figures: the answer's summary (:data:`SUMMARY_FIGURES`) or any path into ``fit --json``'s answer
(``counts.unschedulable``, ``pods[0].gpus.kubelet.bottleneckGBps``). Every file is read once, in
the driver; the workers get the clusters and documents in the base and read nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_named_file
from gpuplane.core.validation import validate_model
from gpuplane.fit.expand import expand
from gpuplane.fit.model import FitCluster
from gpuplane.fit.workload import FitSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.snapshot_file import read_snapshot
from gpuplane.k8s.fit.run import Profile, Profiles, profiles_for, run_fit
from gpuplane.k8s.fit.workload import Workload, workload_from_text
from gpuplane.k8s.yaml_documents import read_documents
from gpuplane.sweep.bases.fit_figures import SUMMARY_FIGURES, fit_figures
from gpuplane.sweep.engine.checks import no_knob, relocated, settings_at, with_knob
from gpuplane.sweep.engine.paths import set_path, split_path
from gpuplane.sweep.engine.point import Cell, Point, Value
from gpuplane.sweep.engine.spec import ParameterSpec
from gpuplane.topology.collective import MAX_MESSAGE_MIB

KNOBS = ("snapshot", "workload", "profile", "message_mib", "capacity_limit", "remedies")
FILE_KNOBS = ("snapshot", "workload")


class FitBaseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    snapshot: str = Field(description="a snapshot file (gpuplane snapshot save), as --snapshot")
    workload: str = Field(description="the workload YAML, as fit's WORKLOAD argument")
    pools: str | None = Field(None, description="as --pools")
    kubelet_config: str | None = Field(None, description="as --kubelet-config")
    scheduler_config: str | None = Field(None, description="as --scheduler-config")
    profile: Profile = Profile.DEFAULT
    message_mib: float = Field(256.0, ge=0.0, le=MAX_MESSAGE_MIB, allow_inf_nan=False)
    capacity_limit: int = Field(256, ge=0, le=100_000)
    remedies: bool = True


def _digest_of(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class WorkloadFile:
    source: str
    documents: tuple[Any, ...]  # each YAML document's data, in order
    digest: str


def _read_workload_file(path: Path) -> WorkloadFile:
    text = read_named_file(path, "workload YAML file")
    workload_from_text(text, str(path))  # refused here as fit refuses it
    docs = tuple(d.data for d in read_documents(text, str(path)))
    return WorkloadFile(str(path), docs, _digest_of(text.encode()))


def _document_index(docs: tuple[Any, ...], part: str | int, path: str, field: str) -> int:
    """The document a path's first part picks: ``[N]``, ``[NAME]`` or ``[Kind/NAME]``."""
    names = [
        (str(d.get("kind")), str((d.get("metadata") or {}).get("name")))
        for d in docs
        if isinstance(d, dict)
    ]
    if isinstance(part, int):
        if 0 <= part < len(docs):
            return part
    elif part.startswith("["):
        wanted = part[1:-1]
        hits = [i for i, (kind, name) in enumerate(names) if wanted in (name, f"{kind}/{name}")]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise InputError(
                f"{path!r}: {len(hits)} documents are named {wanted!r}",
                expected="[Kind/NAME] or [N] to pick one",
                location=Location(field=field),
            )
    listed = ", ".join(f"[{kind}/{name}]" for kind, name in names)
    raise InputError(
        f"{path!r}: {part!r} picks no document of the workload",
        expected=f"[N] (0-{len(docs) - 1}), [NAME] or [Kind/NAME]: {listed}",
        location=Location(field=field),
    )


@dataclass(frozen=True, slots=True)
class FitBase:
    settings: FitBaseSettings
    folder: Path
    profiles: Profiles
    defaults_digest: str
    # file (as written in the sweep file) -> what it holds; every file a point may name.
    clusters: dict[str, tuple[FitCluster, str]]
    workloads: dict[str, WorkloadFile]
    targets: dict[str, ParameterSpec] = dataclasses.field(default_factory=dict)

    kind = "fit"

    def check_parameter(self, name: str, spec: ParameterSpec) -> None:
        where = f"parameters.{name}"
        if spec.keda is not None:
            raise InputError(
                "the fit base has no ScaledObject",
                expected="path: a workload field, or a knob: " + ", ".join(KNOBS),
                location=Location(field=f"{where}.keda"),
            )
        if spec.path is not None:
            parts = split_path(spec.path, f"{where}.path")
            if len(parts) < 2:
                raise InputError(
                    f"{spec.path!r} names a whole document",
                    expected="[NAME] or [N] then a field, e.g. [qwen-72b].spec.replicas",
                    location=Location(field=f"{where}.path"),
                )
        elif name not in KNOBS:
            raise no_knob("fit", name, KNOBS, where, "path: a workload field")
        self.targets[name] = spec

    def check_value(self, name: str, spec: ParameterSpec, value: Value, field: str) -> None:
        if spec.path is not None:
            self.workload(((name, value),), field)
            return
        with_knob(self.settings, name, value, field)
        if name == "snapshot":
            self._load_cluster(str(value), field)
        elif name == "workload":
            self._load_workload(str(value), field)

    def _load_cluster(self, file: str, field: str) -> None:
        if file in self.clusters:
            return
        path = self.folder / file
        try:
            snapshot = read_snapshot(path)
            cluster = fit_cluster(snapshot, self._defaults())
        except InputError as exc:
            raise relocated(exc, field, f"the snapshot {file}") from None
        self.clusters[file] = (cluster, _digest_of(path.read_bytes()))

    def _load_workload(self, file: str, field: str) -> None:
        if file in self.workloads:
            return
        try:
            self.workloads[file] = _read_workload_file(self.folder / file)
        except InputError as exc:
            raise relocated(exc, field, f"the workload {file}") from None

    def _defaults(self) -> Any:
        s = self.settings
        pools = self.folder / s.pools if s.pools else None
        kubelet = self.folder / s.kubelet_config if s.kubelet_config else None
        return node_defaults(pools, kubelet)

    def workload(
        self, params: tuple[tuple[str, Value], ...], field: str, file: str | None = None
    ) -> Workload:
        """The workload file with the path parameters set, read as fit reads a file."""
        wf = self.workloads[file or self.settings.workload]
        docs = list(wf.documents)
        for name, value in params:
            spec = self.targets.get(name)
            if spec is None or spec.path is None:
                continue
            first = split_path(spec.path, field)[0]
            i = _document_index(wf.documents, first, spec.path, field)
            docs[i] = set_path(docs[i], _rest_path(spec.path, first), value, field)
        text = yaml.safe_dump_all(docs, sort_keys=False)
        try:
            return workload_from_text(text, wf.source)
        except InputError as exc:
            # The lines are the changed text's, not the file's: only the field is told.
            bare = InputError(
                exc.problem, expected=exc.expected, location=Location(field=exc.location.field)
            )
            raise relocated(bare, field, "the workload with these values") from None

    def default_figures(self) -> tuple[str, ...]:
        return ("all_fit", "placed", "unschedulable", "victims", "min_bottleneck_gbps")

    def check_figure(self, name: str, field: str) -> None:
        if name in SUMMARY_FIGURES:
            return
        first = split_path(name, field)[0]
        if first not in _ANSWER_KEYS:
            raise InputError(
                f"{name!r} is not a figure of a fit answer",
                expected="one of " + ", ".join(SUMMARY_FIGURES) + ", or a path into fit's "
                "--json answer starting with one of " + ", ".join(_ANSWER_KEYS),
                location=Location(field=field),
            )

    def digest(self) -> str:
        files = {k: v[1] for k, v in sorted(self.clusters.items())}
        files.update({k: v.digest for k, v in sorted(self.workloads.items())})
        text = json.dumps(
            [self.settings.model_dump(mode="json"), self.defaults_digest, files], sort_keys=True
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def evaluate(self, point: Point, figures: tuple[str, ...]) -> dict[str, Cell]:
        values = {k: v for k, v in point.params if k in KNOBS}
        knobs = validate_model(FitBaseSettings, {**self.settings.model_dump(), **values})
        where = f"point {point.index}"
        cluster = self.clusters[knobs.snapshot][0]
        read = self.workload(point.params, where, knobs.workload)
        profiles = self.profiles
        if knobs.profile is not self.settings.profile and self.settings.scheduler_config is None:
            profiles = profiles_for(None, knobs.profile)
        settings = FitSettings(
            message_bytes=int(knobs.message_mib * 2**20),
            capacity_limit=knobs.capacity_limit,
            remedies=knobs.remedies,
        )
        answer = run_fit(cluster, read, profiles, settings).answer
        return fit_figures(answer.as_dict(), figures)

    def check_workload_expands(self, field: str) -> None:
        """The base's own workload on its own cluster: the scheduler names it knows."""
        cluster = self.clusters[self.settings.snapshot][0]
        read = self.workload((), field)
        expand([d.parsed for d in read.documents], cluster, read.templates)


_ANSWER_KEYS = (
    "allFit",
    "capacity",
    "counts",
    "gangs",
    "nodes",
    "pods",
    "remedies",
    "profile",
    "kubernetesVersion",
)


def _rest_path(path: str, first: str | int) -> str:
    """``path`` without its first part (the document pick)."""
    head = f"[{first}]" if isinstance(first, int) else first
    return path[len(head) :].lstrip(".")


def fit_base(settings: Any, folder: Path, where: str) -> FitBase:
    """The base from its settings: every file it names read and checked once, here."""
    s = settings_at(FitBaseSettings, settings, where)
    config = folder / s.scheduler_config if s.scheduler_config else None
    try:
        profiles = profiles_for(config, s.profile)
    except InputError as exc:
        raise relocated(exc, f"{where}.scheduler_config", "the scheduler config") from None
    optional: list[bytes] = []
    for key in ("pools", "kubelet_config", "scheduler_config"):
        name = getattr(s, key)
        if name is None:
            continue
        try:
            optional.append((folder / name).read_bytes())
        except OSError as exc:
            raise InputError(
                f"cannot read {name}: {exc.strerror}",
                expected="a readable file, relative to the sweep file",
                location=Location(field=f"{where}.{key}"),
            ) from None
    base = FitBase(s, folder, profiles, _digest_of(*optional), {}, {})
    try:
        base._defaults()
    except InputError as exc:
        field = f"{where}.pools" if s.pools else f"{where}.kubelet_config"
        raise relocated(exc, field, "the node defaults") from None
    base._load_cluster(s.snapshot, f"{where}.snapshot")
    base._load_workload(s.workload, f"{where}.workload")
    try:
        base.check_workload_expands(f"{where}.workload")
    except InputError as exc:
        raise relocated(exc, f"{where}.workload", "the workload") from None
    return base
