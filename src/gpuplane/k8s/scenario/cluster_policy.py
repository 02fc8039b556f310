"""Read an ``nvidia.com/v1 ClusterPolicy`` manifest into :class:`gpuplane.operator.ClusterPolicy`.

Field names and types follow NVIDIA/gpu-operator ``api/nvidia/v1/clusterpolicy_types.go``
@ 0266f00f and, for ``driver.upgradePolicy``, NVIDIA/k8s-operator-libs
``api/upgrade/v1alpha1/upgrade_spec.go`` @ 1bd97770 (read through the code index). Types are
checked as the API server's schema checks them (a quoted ``"2"`` is not an integer, an unquoted
``550.54`` is not a string). Sections gpuplane does not simulate (``operator``, ``dcgm``, ``cdi``,
probes, env, resources, ...) are accepted and ignored. A field the schema does not define is a
warning, as the API server would drop it.

Departures: every section is optional (the CRD requires ``operator``, ``driver``, ... to be
present, empty or not); ``maxUnavailable`` strings other than ``N%`` are rejected here rather than
failing each reconcile of the real controller.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic import field_validator as _field_validator

from gpuplane.api.strategies import MigStrategy
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import describe_error
from gpuplane.core.yamlio import LineIndex, field_path, parse_yaml
from gpuplane.operator import cluster_policy as cp
from gpuplane.operator.selector import parse_label_selector

API_VERSION = "nvidia.com/v1"
KIND = "ClusterPolicy"
Opaque = dict[str, Any] | None  # a real field whose content gpuplane ignores

# Names people copy from the Helm chart's values.yaml that are not ClusterPolicy fields.
_HELM_HINTS = {
    "gpuPodDeletion": "the Helm value driver.upgradePolicy.gpuPodDeletion is the field podDeletion",
    "create": "devicePlugin.config.create and .data are Helm values, not ClusterPolicy fields",
    "data": "devicePlugin.config.create and .data are Helm values, not ClusterPolicy fields",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


def _selector(value: str) -> str:
    try:
        parse_label_selector(value)
    except ValueError as err:
        raise ValueError(f"{err}; expected a label selector like 'app=x,tier!=db'") from None
    return value


class WaitForCompletion(_Model):
    podSelector: StrictStr = ""
    timeoutSeconds: StrictInt = Field(0, ge=0)
    _sel = _field_validator("podSelector")(_selector)


class PodDeletion(_Model):
    podSelector: StrictStr = ""
    force: StrictBool = False
    timeoutSeconds: StrictInt = Field(300, ge=0)
    deleteEmptyDir: StrictBool = False
    _sel = _field_validator("podSelector")(_selector)


class Drain(_Model):
    enable: StrictBool = False
    force: StrictBool = False
    podSelector: StrictStr = ""
    timeoutSeconds: StrictInt = Field(300, ge=0)
    deleteEmptyDir: StrictBool = False
    _sel = _field_validator("podSelector")(_selector)


_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST = re.compile(r"^(sha256:)?[a-f0-9]{64}$")


class UpgradePolicy(_Model):
    autoUpgrade: StrictBool = False
    maxParallelUpgrades: StrictInt = Field(1, ge=0)
    maxUnavailable: StrictInt | StrictStr = "25%"
    podDeletion: PodDeletion | None = None
    waitForCompletion: WaitForCompletion | None = None
    drain: Drain | None = None

    @_field_validator("maxUnavailable")
    @classmethod
    def _int_or_percent(cls, value: int | str) -> int | str:
        bad_int = isinstance(value, int) and value < 0
        if bad_int or (isinstance(value, str) and not cp.PERCENT.match(value)):
            raise ValueError(f"{value!r} is not an integer >= 0 or a percentage like '25%'")
        if isinstance(value, str) and int(value[:-1]) > 100:
            # apps/v1 validation's IsNotMoreThan100Percent, the rule for every maxUnavailable.
            raise ValueError(f"Invalid value: {value!r}: must not be greater than 100%")
        return value


class _Image(_Model):
    repository: StrictStr | None = None
    image: StrictStr | None = None
    version: StrictStr | None = None

    @_field_validator("version")
    @classmethod
    def _image_tag(cls, value: str | None) -> str | None:
        # The operator writes <repository>/<image>:<version> (or @<version> for a digest), so
        # the version must be an image tag (distribution/reference: [\w][\w.-]{0,127}) or a
        # digest; anything else makes every pod of the component fail with InvalidImageName.
        if value is not None and not (_TAG.match(value) or _DIGEST.match(value)):
            raise ValueError(
                f"{value!r} is not a valid image tag (invalid reference format): use letters, "
                "digits, '_', '.' and '-', at most 128 characters, not starting with '.' or '-'"
            )
        return value

    imagePullPolicy: StrictStr | None = None
    imagePullSecrets: list[StrictStr] | None = None
    resources: Opaque = None
    args: list[StrictStr] | None = None
    env: list[dict[str, Any]] | None = None


class _Component(_Image):
    enabled: StrictBool | None = None


class Driver(_Component):
    useNvidiaDriverCRD: StrictBool | None = None
    usePrecompiled: StrictBool | None = None
    useOpenKernelModules: StrictBool | None = None
    kernelModuleType: Literal["auto", "open", "proprietary"] | None = None
    startupProbe: Opaque = None
    livenessProbe: Opaque = None
    readinessProbe: Opaque = None
    rdma: Opaque = None
    upgradePolicy: UpgradePolicy | None = None
    manager: Opaque = None
    repoConfig: Opaque = None
    certConfig: Opaque = None
    licensingConfig: Opaque = None
    virtualTopology: Opaque = None
    kernelModuleConfig: Opaque = None
    secretEnv: StrictStr | None = None


class Toolkit(_Component):
    installDir: StrictStr | None = None


class NamedConfig(_Model):
    name: StrictStr | None = None
    default: StrictStr | None = None


class DevicePlugin(_Component):
    config: NamedConfig | None = None
    mps: Opaque = None


class DCGMExporter(_Component):
    podAnnotations: dict[str, StrictStr] | None = None
    podLabels: dict[str, StrictStr] | None = None
    config: Opaque = None
    serviceMonitor: Opaque = None
    service: Opaque = None
    hostPID: StrictBool | None = None
    hostNetwork: StrictBool | None = None
    hpcJobMapping: Opaque = None


class MIGManager(_Component):
    config: NamedConfig | None = None
    gpuClientsConfig: Opaque = None


class Validator(_Image):
    plugin: Opaque = None
    toolkit: Opaque = None
    driver: Opaque = None
    cuda: Opaque = None
    vfioPCI: Opaque = None
    vgpuManager: Opaque = None
    vgpuDevices: Opaque = None


class MIG(_Model):
    strategy: Literal["none", "single", "mixed"] | None = None


class SandboxWorkloads(_Model):
    enabled: StrictBool | None = None
    defaultWorkload: Literal["container", "vm-passthrough", "vm-vgpu"] | None = None


class Spec(_Model):
    operator: Opaque = None
    daemonsets: Opaque = None
    driver: Driver | None = None
    toolkit: Toolkit | None = None
    devicePlugin: DevicePlugin | None = None
    dcgmExporter: DCGMExporter | None = None
    dcgm: Opaque = None
    nodeStatusExporter: Opaque = None
    gfd: _Component | None = None
    mig: MIG | None = None
    migManager: MIGManager | None = None
    psp: Opaque = None
    psa: Opaque = None
    validator: Validator | None = None
    gds: Opaque = None
    gdrcopy: Opaque = None
    sandboxWorkloads: SandboxWorkloads | None = None
    vfioManager: Opaque = None
    sandboxDevicePlugin: Opaque = None
    vgpuManager: Opaque = None
    vgpuDeviceManager: Opaque = None
    cdi: Opaque = None
    kataManager: Opaque = None
    ccManager: Opaque = None
    hostPaths: Opaque = None


class Metadata(_Model):
    name: StrictStr | None = None
    namespace: StrictStr | None = None  # ignored: ClusterPolicy is cluster-scoped
    labels: dict[str, StrictStr] | None = None
    annotations: dict[str, StrictStr] | None = None
    uid: StrictStr | None = None
    resourceVersion: StrictStr | None = None
    generation: StrictInt | None = None
    creationTimestamp: StrictStr | None = None
    generateName: StrictStr | None = None
    finalizers: list[StrictStr] | None = None
    ownerReferences: list[dict[str, Any]] | None = None
    managedFields: list[dict[str, Any]] | None = None


class ClusterPolicyManifest(_Model):
    apiVersion: StrictStr
    kind: StrictStr
    metadata: Metadata | None = None
    spec: Spec | None = None
    status: Opaque = None


# ----- manifest -> dataclass -----


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix.rstrip(".")
    return prefix + path if prefix.endswith((".", "[")) else f"{prefix}.{path}"


def _unknown_fields(model: BaseModel, path: str) -> list[str]:
    """Field paths (relative) of keys no model defines, depth first in document order."""
    found: list[str] = []
    for key in model.model_extra or {}:
        found.append(f"{path}.{key}" if path else str(key))
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            found += _unknown_fields(value, f"{path}.{name}" if path else name)
    return found


def _component(spec: _Component | _Image | None) -> cp.ComponentSpec:
    if spec is None:
        return cp.ComponentSpec()
    enabled = getattr(spec, "enabled", None)
    return cp.ComponentSpec(
        enabled=True if enabled is None else enabled,  # IsEnabled(): nil -> true
        version=spec.version or "",
        repository=spec.repository or "",
        image=spec.image or "",
    )


def _upgrade_policy(up: UpgradePolicy | None) -> cp.DriverUpgradePolicy | None:
    if up is None:
        return None
    pd, wfc, dr = up.podDeletion, up.waitForCompletion, up.drain
    return cp.DriverUpgradePolicy(
        auto_upgrade=up.autoUpgrade,
        max_parallel_upgrades=up.maxParallelUpgrades,
        max_unavailable=up.maxUnavailable,
        pod_deletion=(
            cp.PodDeletionSpec(pd.podSelector, pd.force, pd.timeoutSeconds, pd.deleteEmptyDir)
            if pd
            else None
        ),
        wait_for_completion=cp.WaitForCompletionSpec(wfc.podSelector, wfc.timeoutSeconds)
        if wfc
        else None,
        drain=cp.DrainSpec(
            dr.enable, dr.force, dr.podSelector, dr.timeoutSeconds, dr.deleteEmptyDir
        )
        if dr
        else None,
    )


def _driver(d: Driver | None) -> cp.DriverSpec:
    if d is None:
        return cp.DriverSpec()
    base = _component(d)
    return cp.DriverSpec(
        enabled=base.enabled,
        version=base.version,
        repository=base.repository,
        image=base.image,
        use_precompiled=bool(d.usePrecompiled),
        kernel_module_type=d.kernelModuleType or "auto",
        upgrade_policy=_upgrade_policy(d.upgradePolicy),
    )


def _to_dataclass(m: ClusterPolicyManifest) -> cp.ClusterPolicy:
    spec = m.spec or Spec()
    dp, mm = spec.devicePlugin, spec.migManager
    dp_base, mm_base = _component(dp), _component(mm)
    dp_config = dp.config if dp else None
    mm_config = mm.config if mm else None
    return cp.ClusterPolicy(
        name=(m.metadata.name if m.metadata else None) or "cluster-policy",
        driver=_driver(spec.driver),
        toolkit=_component(spec.toolkit),
        device_plugin=cp.DevicePluginSpec(
            enabled=dp_base.enabled,
            version=dp_base.version,
            repository=dp_base.repository,
            image=dp_base.image,
            config_name=(dp_config.name if dp_config else None) or "",
            config_default=(dp_config.default if dp_config else None) or "",
        ),
        dcgm_exporter=_component(spec.dcgmExporter),
        gfd=_component(spec.gfd),
        mig_manager=cp.MigManagerSpec(
            enabled=mm_base.enabled,
            version=mm_base.version,
            config_name=(mm_config.name if mm_config else None) or "default-mig-parted-config",
            config_default=(mm_config.default if mm_config else None) or "all-disabled",
        ),
        validator=_component(spec.validator),
        mig_strategy=MigStrategy(spec.mig.strategy if spec.mig and spec.mig.strategy else "none"),
        sandbox_workloads=bool(spec.sandboxWorkloads and spec.sandboxWorkloads.enabled),
    )


def _policy_warnings(policy: cp.ClusterPolicy, where: Callable[[str], str]) -> list[str]:
    up = policy.driver.upgrade_policy
    if up is None or not policy.auto_upgrade:
        return []
    out = []
    if up.drain is None:
        out.append(
            f"{where('spec.driver.upgradePolicy')}: autoUpgrade is on but drain is not set; the "
            "real upgrade controller reads drain.podSelector unconditionally and fails every "
            "reconcile (gpu-operator controllers/upgrade_controller.go); gpuplane treats drain "
            "as disabled"
        )
    if up.pod_deletion is None:
        out.append(
            f"{where('spec.driver.upgradePolicy')}: autoUpgrade is on but podDeletion is not "
            "set; the real controller stops with 'pod deletion spec should not be empty' once a "
            "node reaches pod-deletion-required; gpuplane uses force=false, timeoutSeconds=300, "
            "deleteEmptyDir=false"
        )
    return out


def _check_kind(doc: dict[str, Any], loc: Callable[[str], Location]) -> None:
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if key not in doc:
            raise InputError(
                f"required key {key!r} is missing", expected=f"{key}: {want}", location=loc("")
            )
        if doc[key] != want:
            raise InputError(f"got {doc[key]!r}", expected=want, location=loc(key))


def parse_cluster_policy(
    doc: object,
    source: str,
    line_of: Callable[[str], int | None],
    prefix: str = "",
) -> tuple[cp.ClusterPolicy, list[str]]:
    """The ClusterPolicy in ``doc`` and warnings (unknown fields, policies the real operator
    trips on), each ``file:line: field.path: text``.

    ``prefix`` is the path of ``doc`` inside its file (e.g. ``cluster_policy``); ``line_of`` gets
    full, prefixed paths. Wrong types, values out of range and a wrong apiVersion/kind are located
    InputErrors.
    """

    def loc(path: str) -> Location:
        full = _join(prefix, path)
        return Location(source, line_of(full), full or None)

    def where(path: str) -> str:
        return loc(path).render()

    if not isinstance(doc, dict):
        raise InputError(
            f"got {type(doc).__name__} {str(doc)[:40]!r}",
            expected="a ClusterPolicy manifest: a mapping with apiVersion, kind, metadata, spec",
            location=loc(""),
        )
    _check_kind(doc, loc)
    try:
        manifest = ClusterPolicyManifest.model_validate(doc)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        problem, expected = describe_error(ClusterPolicyManifest, first)
        if err.error_count() > 1:
            problem += f" (first of {err.error_count()} problems)"
        raise InputError(
            problem, expected=expected, location=loc(field_path(first["loc"]))
        ) from None
    unknown: list[tuple[int, str]] = []
    for path in _unknown_fields(manifest, ""):
        key = path.rpartition(".")[2]
        text = f"{where(path)}: unknown field {key!r} ignored (not in the ClusterPolicy schema)"
        hint = _HELM_HINTS.get(key)
        unknown.append((loc(path).line or 0, f"{text}; {hint}" if hint else text))
    policy = _to_dataclass(manifest)
    warnings = [text for _, text in sorted(unknown, key=lambda item: item[0])]
    return policy, warnings + _policy_warnings(policy, where)


def parse_cluster_policy_yaml(text: str, source: str) -> tuple[cp.ClusterPolicy, list[str]]:
    """A ClusterPolicy YAML file (one document)."""
    node, data = parse_yaml(text, source)
    if node is None:
        raise InputError(
            "the file is empty", expected="a ClusterPolicy manifest", location=Location(source, 1)
        )
    return parse_cluster_policy(data, source, LineIndex(node, source).line_of)
