"""Read a scenario file completely: shape, node pools, ClusterPolicy, operator, faults, workloads.

:func:`load_scenario_spec` is the one entry point the CLI uses. Every mistake, in the scenario or
in a file it names, is an InputError with the file, the line, the full field path (for example
``workloads[3].manifest.spec.template.spec.containers[0].resources.limits.nvidia.com/gpu``) and
what was expected; nothing else escapes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.core.errors import InputError, InputErrors, Location
from gpuplane.core.yamlio import LineIndex, parse_yaml, read_yaml_document
from gpuplane.k8s.dra.manifests import load_dra_manifests
from gpuplane.k8s.field_errors import LineOf, fail, relocate, validate_model
from gpuplane.k8s.manifests.scaled_object import scaled_objects_from_text
from gpuplane.k8s.scenario.cluster_policy import parse_cluster_policy
from gpuplane.k8s.scenario.fault_checks import fault_warnings
from gpuplane.k8s.scenario.files import read_text, resolve_relative
from gpuplane.k8s.scenario.node_pools import node_pool_spec
from gpuplane.k8s.scenario.priority import apply_priorities, check_priority_classes
from gpuplane.k8s.scenario.problems import Problems
from gpuplane.k8s.scenario.scaled_object_checks import scaled_object_warnings
from gpuplane.k8s.scenario.serving_section import serving_spec
from gpuplane.k8s.scenario.workload_entries import workload_specs
from gpuplane.operator.cluster_policy import ClusterPolicy
from gpuplane.slicing.dra.claims import DeviceClass, ResourceClaim, ResourceClaimTemplate
from gpuplane.slicing.mig.node_devices import layouts_from_config
from gpuplane.twin.scenario.dra import DraObjectsSpec
from gpuplane.twin.scenario.mig import MigConfigChange
from gpuplane.twin.scenario.schema import ControlPlane, Scenario
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import NodePoolSpec, ScenarioSpec

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    scenario: Scenario
    spec: ScenarioSpec
    # Each ``file:line: field: text``: what was accepted but is not modelled, or looks wrong.
    warnings: tuple[str, ...] = ()


def _read_scenario(path: Path) -> tuple[Any, LineIndex]:
    return read_yaml_document(path, "scenario")


def _control_plane(control: ControlPlane) -> TwinSettings:
    return TwinSettings(
        scheduler_name=control.scheduler_name,
        pod_initial_backoff_s=float(control.pod_initial_backoff_seconds),
        pod_max_backoff_s=float(control.pod_max_backoff_seconds),
        metrics_interval_s=control.metrics_interval,
        kubelet_admission_delay_s=control.kubelet_admission_delay,
        scheduler_profiles=tuple(control.scheduler_profiles or ()),
    )


def _cluster_policy(
    doc: dict[str, Any] | None, scenario_path: Path, line_of: LineOf
) -> tuple[ClusterPolicy | None, list[str], dict[str, Any] | None]:
    """Inline under ``cluster_policy:``, or ``cluster_policy: {path: file.yaml}``; also the
    manifest itself, which ``cluster_policy_updates`` patch."""
    if doc is None:
        return None, [], None
    if set(doc) != {"path"}:
        policy, warnings = parse_cluster_policy(doc, str(scenario_path), line_of, "cluster_policy")
        return policy, warnings, doc
    field = "cluster_policy.path"
    ref = doc["path"]
    if not isinstance(ref, str) or not ref:
        raise InputError(
            f"got {ref!r}",
            expected="the ClusterPolicy file, relative to the scenario",
            location=Location(str(scenario_path), line_of(field), field),
        )
    file = resolve_relative(ref, scenario_path)
    text = read_text(file, "a ClusterPolicy YAML file", str(scenario_path), line_of, field)
    node, data = parse_yaml(text, str(file))
    if node is None or data is None:
        raise InputError(
            "the file is empty",
            expected="a ClusterPolicy manifest",
            location=Location(str(file), 1),
        )
    policy, warnings = parse_cluster_policy(data, str(file), LineIndex(node, str(file)).line_of, "")
    return policy, warnings, data if isinstance(data, dict) else None


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: mappings merge recursively, null deletes, anything else
    replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _or_line(line_of: LineOf, fallback: str) -> LineOf:
    def find(field: str) -> int | None:
        return line_of(field) or line_of(fallback)

    return find


def _policy_updates(
    scenario: Scenario,
    manifest: dict[str, Any] | None,
    base: ClusterPolicy | None,
    path: Path,
    line_of: LineOf,
) -> tuple[tuple[tuple[float, ClusterPolicy], ...], list[str]]:
    updates: list[tuple[float, ClusterPolicy]] = []
    warnings: list[str] = []
    current = manifest
    for i, update in sorted(enumerate(scenario.cluster_policy_updates), key=lambda u: u[1].at):
        current = merge_patch(current, update.patch)
        prefix = f"cluster_policy_updates[{i}].patch"
        # Lines point at the patch entry; fields the patch did not touch are reported there too.
        policy, found = parse_cluster_policy(current, str(path), _or_line(line_of, prefix), prefix)
        before = updates[-1][1] if updates else base
        if before is not None and before.driver.version and not policy.driver.version:
            # The operator builds the driver image as <repository>/<image>:<version>; with no
            # version it fails ("empty image path provided through both ClusterPolicy CR and
            # ENV"), where the twin would upgrade every node to an empty version.
            raise InputError(
                f"the patch removes driver.version (was {before.driver.version!r})",
                expected="a driver version to upgrade to, e.g. {spec: {driver: {version: "
                "550.90.07}}}",
                location=Location(str(path), line_of(prefix), f"{prefix}.spec.driver.version"),
            )
        updates.append((update.at, policy))
        warnings.extend(found)
    return tuple(updates), warnings


def _dra_objects(scenario: Scenario, path: Path, line_of: LineOf) -> DraObjectsSpec | None:
    """The DRA objects of the files ``dra:`` lists (ResourceSlices come from the nodes)."""
    if not scenario.dra:
        return None
    classes: list[DeviceClass] = []
    templates: list[ResourceClaimTemplate] = []
    claims: list[ResourceClaim] = []
    for i, ref in enumerate(scenario.dra):
        file = resolve_relative(ref, path)
        text = read_text(file, "a DRA manifest file", str(path), line_of, f"dra[{i}]")
        objects = load_dra_manifests(text, str(file))
        if objects.slices:
            raise InputError(
                "ResourceSlices are published by the nodes' DRA driver",
                expected="DeviceClass, ResourceClaimTemplate or ResourceClaim objects",
                location=Location(str(file), 1),
            )
        classes.extend(objects.classes)
        templates.extend(objects.templates)
        claims.extend(objects.claims)
    return DraObjectsSpec(tuple(classes), tuple(templates), tuple(claims))


def _mig_changes(
    scenario: Scenario, pools: tuple[NodePoolSpec, ...], source: str, line_of: LineOf
) -> tuple[MigConfigChange, ...]:
    by_name = {p.name: p for p in pools}
    out: list[MigConfigChange] = []
    for i, change in enumerate(scenario.mig_config_changes):
        where = f"mig_config_changes[{i}]"
        pool = by_name.get(change.pool)
        if pool is None or pool.mig is None:
            mig_pools = ", ".join(p.name for p in pools if p.mig is not None) or "none"
            raise relocate(
                fail(f"{change.pool!r} is not a MIG pool", f"{where}.pool", mig_pools),
                source,
                line_of,
            )
        if pool.mig.strategy != "mixed":
            raise relocate(
                fail("the twin reconfigures only mixed-strategy pools", f"{where}.pool"),
                source,
                line_of,
            )
        try:
            layouts_from_config(pool.topology, change.config)
        except InputError as err:
            raise relocate(err, source, line_of, f"{where}.config") from None
        out.append(MigConfigChange(change.at, change.pool, change.config, pool.mig.reconfigure_s))
    return tuple(sorted(out, key=lambda c: c.t_s))


def _scaled_objects(
    scenario: Scenario, path: Path, line_of: LineOf
) -> tuple[tuple[str, ScaledObjectIn], ...]:
    out: list[tuple[str, ScaledObjectIn]] = []
    for i, ref in enumerate(scenario.autoscaling):
        file = resolve_relative(ref, path)
        text = read_text(file, "a ScaledObject file", str(path), line_of, f"autoscaling[{i}]")
        out.extend((str(file), so) for so in scaled_objects_from_text(text, str(file)))
    return tuple(out)


def _relocated(run: Callable[[], T], source: str, line_of: LineOf) -> Callable[[], T]:
    def located() -> T:
        try:
            return run()
        except InputErrors as many:
            raise InputErrors([relocate(e, source, line_of) for e in many.errors]) from None
        except InputError as err:
            raise relocate(err, source, line_of) from None

    return located


def load_scenario_spec(path: Path, *, every: bool = False) -> LoadedScenario:
    """The scenario at ``path`` with everything it names read, translated and checked.

    ``every``: collect every mistake (``gpuplane validate``) and raise them together as an
    InputErrors; otherwise the first one is raised.
    """
    data, index = _read_scenario(path)
    return scenario_from_data(data, index, path, every=every)


def read_scenario_data(path: Path) -> tuple[Any, LineIndex]:
    """The scenario file's data as parsed and its line index, for callers that change fields
    before :func:`scenario_from_data` (``gpuplane sweep``)."""
    return _read_scenario(path)


def scenario_from_data(
    data: Any, index: LineIndex, path: Path, *, every: bool = False
) -> LoadedScenario:
    """The scenario from already parsed ``data`` (lines from ``index``; files it names relative
    to ``path``), checked exactly as :func:`load_scenario_spec` checks the file."""
    problems = Problems(collect=every)
    source, line_of = str(path), index.line_of
    scenario = _relocated(lambda: validate_model(Scenario, data, every=every), source, line_of)()
    classes = scenario.priority_classes
    problems.step(_relocated(lambda: check_priority_classes(classes), source, line_of))
    read_pools = [
        problems.step(partial(node_pool_spec, pool, i, path, scenario.control_plane, line_of))
        for i, pool in enumerate(scenario.node_pools)
    ]
    pools = tuple(p for p, _ in read_pools if p is not None)
    pools_ok = all(ok for _, ok in read_pools)
    read_policy, policy_ok = problems.step(
        lambda: _cluster_policy(scenario.cluster_policy, path, line_of)
    )
    policy, policy_warnings, manifest = read_policy or (None, [], None)
    updates: tuple[tuple[float, ClusterPolicy], ...] = ()
    if policy_ok:
        read_updates, _ = problems.step(
            lambda: _policy_updates(scenario, manifest, policy, path, line_of)
        )
        updates, update_warnings = read_updates or ((), [])
        policy_warnings.extend(update_warnings)
    before = len(problems.errors)
    read_workloads, _ = problems.step(lambda: workload_specs(scenario, path, line_of, problems))
    workloads_ok = len(problems.errors) == before
    workloads, workload_warnings = read_workloads or ((), ())
    with_priority, _ = problems.step(lambda: apply_priorities(workloads, classes))
    workloads = with_priority if with_priority is not None else workloads
    dra, _ = problems.step(lambda: _dra_objects(scenario, path, line_of))
    mig_changes: tuple[MigConfigChange, ...] = ()
    faults: list[str] = []
    if pools_ok:
        read_changes, _ = problems.step(lambda: _mig_changes(scenario, pools, source, line_of))
        mig_changes = read_changes or ()
        fault_checks = partial(
            fault_warnings,
            list(scenario.faults),
            pools,
            gfd_labels_known=policy is None,
            source=source,
            line_of=line_of,
        )
        faults = problems.step(fault_checks)[0] or []
    serving = None
    if workloads_ok:
        serving = problems.step(lambda: serving_spec(scenario.serving, workloads, path, line_of))[0]
    read_scaled, scaled_ok = problems.step(lambda: _scaled_objects(scenario, path, line_of))
    scaled = read_scaled or ()
    scaling: list[str] = []
    if scaled_ok and workloads_ok:
        scaling = problems.step(lambda: scaled_object_warnings(scaled, workloads))[0] or []
    problems.raise_if_any()
    spec = ScenarioSpec(
        name=scenario.name,
        description=scenario.description,
        source=source,
        node_pools=pools,
        control_plane=_control_plane(scenario.control_plane),
        cluster_policy=policy,
        operator=scenario.operator,
        workloads=workloads,
        faults=tuple(scenario.faults),
        cluster_policy_updates=updates,
        dra=dra,
        mig_config_changes=mig_changes,
        serving=serving,
        scaled_objects=tuple(so for _, so in scaled),
    )
    return LoadedScenario(
        scenario=scenario,
        spec=spec,
        warnings=(*policy_warnings, *workload_warnings, *faults, *scaling),
    )
