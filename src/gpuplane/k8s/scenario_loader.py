"""Read a scenario file completely: shape, node pools, ClusterPolicy, operator, faults, workloads.

:func:`load_scenario_spec` is the one entry point the CLI uses. Every mistake, in the scenario or
in a file it names, is an InputError with the file, the line, the full field path (for example
``workloads[3].manifest.spec.template.spec.containers[0].resources.limits.nvidia.com/gpu``) and
what was expected; nothing else escapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.core.yamlio import LineIndex, parse_yaml
from gpuplane.k8s.cluster_policy import parse_cluster_policy
from gpuplane.k8s.dra_manifests import load_dra_manifests
from gpuplane.k8s.field_errors import LineOf, fail, relocate, validate_model
from gpuplane.k8s.node_pools import node_pool_spec
from gpuplane.k8s.priority import apply_priorities
from gpuplane.k8s.scaled_object import scaled_objects_from_text
from gpuplane.k8s.serving_section import serving_spec
from gpuplane.k8s.workload_entries import read_text, workload_specs
from gpuplane.operator.cluster_policy import ClusterPolicy
from gpuplane.slicing.dra.claims import DeviceClass, ResourceClaim, ResourceClaimTemplate
from gpuplane.twin.cluster.mig_devices import layouts_from_config
from gpuplane.twin.scenario.dra import DraObjectsSpec
from gpuplane.twin.scenario.mig import MigConfigChange
from gpuplane.twin.scenario.schema import ControlPlane, Scenario, resolve_relative
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import NodePoolSpec, ScenarioSpec


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    scenario: Scenario
    spec: ScenarioSpec
    # Each ``file:line: field: text``: what was accepted but is not modelled, or looks wrong.
    warnings: tuple[str, ...] = ()


def _read_scenario(path: Path) -> tuple[Any, LineIndex]:
    source = str(path)
    try:
        text = read_user_text(path)
    except FileNotFoundError:
        raise InputError(
            "file not found", expected="a scenario YAML file", location=Location(source)
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(
            f"cannot read the file ({err})",
            expected="a UTF-8 scenario YAML file",
            location=Location(source),
        ) from None
    node, data = parse_yaml(text, source)
    if node is None or data is None:
        raise InputError(
            "the file is empty", expected="a scenario document", location=Location(source, 1)
        )
    return data, LineIndex(node, source)


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
    scenario: Scenario, manifest: dict[str, Any] | None, path: Path, line_of: LineOf
) -> tuple[tuple[tuple[float, ClusterPolicy], ...], list[str]]:
    updates: list[tuple[float, ClusterPolicy]] = []
    warnings: list[str] = []
    current = manifest
    for i, update in sorted(enumerate(scenario.cluster_policy_updates), key=lambda u: u[1].at):
        current = merge_patch(current, update.patch)
        prefix = f"cluster_policy_updates[{i}].patch"
        # Lines point at the patch entry; fields the patch did not touch are reported there too.
        policy, found = parse_cluster_policy(current, str(path), _or_line(line_of, prefix), prefix)
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


def _scaled_objects(scenario: Scenario, path: Path, line_of: LineOf) -> tuple[ScaledObjectIn, ...]:
    out: list[ScaledObjectIn] = []
    for i, ref in enumerate(scenario.autoscaling):
        file = resolve_relative(ref, path)
        text = read_text(file, "a ScaledObject file", str(path), line_of, f"autoscaling[{i}]")
        out.extend(scaled_objects_from_text(text, str(file)))
    return tuple(out)


def load_scenario_spec(path: Path) -> LoadedScenario:
    """The scenario at ``path`` with everything it names read, translated and checked."""
    data, index = _read_scenario(path)
    return scenario_from_data(data, index, path)


def read_scenario_data(path: Path) -> tuple[Any, LineIndex]:
    """The scenario file's data as parsed and its line index, for callers that change fields
    before :func:`scenario_from_data` (``gpuplane sweep``)."""
    return _read_scenario(path)


def scenario_from_data(data: Any, index: LineIndex, path: Path) -> LoadedScenario:
    """The scenario from already parsed ``data`` (lines from ``index``; files it names relative
    to ``path``), checked exactly as :func:`load_scenario_spec` checks the file."""
    source = str(path)
    try:
        scenario = validate_model(Scenario, data)
    except InputError as err:
        raise relocate(err, source, index.line_of) from None
    pools = tuple(
        node_pool_spec(pool, i, path, scenario.control_plane, index.line_of)
        for i, pool in enumerate(scenario.node_pools)
    )
    policy, policy_warnings, manifest = _cluster_policy(
        scenario.cluster_policy, path, index.line_of
    )
    updates, update_warnings = _policy_updates(scenario, manifest, path, index.line_of)
    policy_warnings.extend(update_warnings)
    workloads, workload_warnings = workload_specs(scenario, path, index.line_of)
    workloads = apply_priorities(workloads, scenario.priority_classes)
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
        dra=_dra_objects(scenario, path, index.line_of),
        mig_config_changes=_mig_changes(scenario, pools, source, index.line_of),
        serving=serving_spec(scenario.serving, workloads, path, index.line_of),
        scaled_objects=_scaled_objects(scenario, path, index.line_of),
    )
    return LoadedScenario(
        scenario=scenario, spec=spec, warnings=(*policy_warnings, *workload_warnings)
    )
