"""The part of the GPU Operator's ``ClusterPolicy`` that changes what happens on a node.

Field names follow ``api/nvidia/v1/clusterpolicy_types.go`` (NVIDIA/gpu-operator @ 0266f00f) and
``api/upgrade/v1alpha1/upgrade_spec.go`` (NVIDIA/k8s-operator-libs @ 1bd97770), in snake_case.
Defaults are the ones the real operator ends up with:

- ``enabled`` of driver, toolkit, devicePlugin, dcgmExporter, gfd and migManager is a ``*bool``
  whose ``IsEnabled()`` answers true when unset; the validator has no ``enabled`` field and always
  runs.
- ``upgradePolicy`` unset means no automatic upgrade (the upgrade controller checks
  ``UpgradePolicy == nil || !AutoUpgrade``). When it is set, the CRD's kubebuilder defaults fill
  ``autoUpgrade: false``, ``maxParallelUpgrades: 1``, ``maxUnavailable: "25%"``; inside
  ``podDeletion`` and ``drain`` ``timeoutSeconds: 300``, ``force``/``deleteEmptyDir``/``enable``
  false; ``waitForCompletion.timeoutSeconds: 0`` (wait forever). The Helm chart (not the CRD) turns
  ``autoUpgrade`` on and spells ``podDeletion`` as ``gpuPodDeletion`` in its values.
- ``mig.strategy`` has no CRD default; left empty, the device plugin's own default ``none``
  applies (the Helm chart writes ``single``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.api.strategies import MigStrategy

PERCENT = re.compile(r"^(\d+)%$")


def percent_or_int(value: int | str, total: int) -> int:
    """``maxUnavailable`` resolved against ``total`` nodes.

    As apimachinery ``intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)``, which the
    upgrade code calls (k8s-operator-libs ``inplace/upgrade_inplace.go``): an int is taken as is, a
    ``"N%"`` string is ``ceil(N * total / 100)``, any other string is an error.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an int or a percentage")
    if isinstance(value, int):
        return value
    match = PERCENT.match(value)
    if match is None:
        raise ValueError(f"{value!r} is not an int or a percentage like '25%'")
    # Integer ceiling: the Go code's float ceil agrees for every value an int32 percent can take.
    return -(-int(match.group(1)) * total // 100)


@dataclass(frozen=True, slots=True)
class WaitForCompletionSpec:
    """``upgradePolicy.waitForCompletion``: wait for these pods before touching the node."""

    pod_selector: str = ""
    timeout_s: int = 0  # 0: wait forever


@dataclass(frozen=True, slots=True)
class PodDeletionSpec:
    """``upgradePolicy.podDeletion`` (Helm: ``gpuPodDeletion``): delete GPU pods on the node."""

    pod_selector: str = ""  # extra pods to delete, OR'd with the GPU-pod filter
    force: bool = False  # also delete pods without a controller
    timeout_s: int = 300  # 0: wait forever
    delete_empty_dir: bool = False  # also delete pods with emptyDir volumes


@dataclass(frozen=True, slots=True)
class DrainSpec:
    """``upgradePolicy.drain``: ``kubectl drain`` the node (the fallback; off by default)."""

    enable: bool = False
    force: bool = False
    pod_selector: str = ""
    timeout_s: int = 300  # 0: wait forever
    delete_empty_dir: bool = False


@dataclass(frozen=True, slots=True)
class DriverUpgradePolicy:
    """``driver.upgradePolicy`` with the CRD defaults of a policy that is present."""

    auto_upgrade: bool = False
    max_parallel_upgrades: int = 1  # 0: no limit
    max_unavailable: int | str = "25%"
    pod_deletion: PodDeletionSpec | None = None
    wait_for_completion: WaitForCompletionSpec | None = None
    drain: DrainSpec | None = None


@dataclass(frozen=True, slots=True)
class DriverSpec:
    enabled: bool = True  # false: a driver preinstalled on the host
    version: str = ""
    repository: str = ""
    image: str = ""
    use_precompiled: bool = False  # precompiled kernel modules: no compile step at start
    kernel_module_type: str = "auto"
    upgrade_policy: DriverUpgradePolicy | None = None


@dataclass(frozen=True, slots=True)
class ComponentSpec:
    """A DaemonSet component with nothing but ``enabled`` and the image that matter here."""

    enabled: bool = True
    version: str = ""
    repository: str = ""
    image: str = ""


@dataclass(frozen=True, slots=True)
class TimeSlicing:
    """``sharing.timeSlicing`` of the device plugin config the ConfigMap names.

    Not part of the ClusterPolicy itself (it lives in the ConfigMap ``devicePlugin.config.name``);
    the scenario loader fills it in when the scenario gives the config.
    """

    replicas: int
    resource: str = NVIDIA_GPU
    rename_by_default: bool = False
    fail_requests_greater_than_one: bool = False


@dataclass(frozen=True, slots=True)
class DevicePluginSpec:
    enabled: bool = True
    version: str = ""
    repository: str = ""
    image: str = ""
    config_name: str = ""  # devicePlugin.config.name: ConfigMap with plugin/GFD configs
    config_default: str = ""  # devicePlugin.config.default: the config used without a node label
    time_slicing: TimeSlicing | None = None


@dataclass(frozen=True, slots=True)
class MigManagerSpec:
    enabled: bool = True
    version: str = ""
    config_name: str = "default-mig-parted-config"  # kubebuilder default of config.name
    config_default: str = "all-disabled"  # kubebuilder default of config.default


@dataclass(frozen=True, slots=True)
class ClusterPolicy:
    """``spec`` of ``nvidia.com/v1 ClusterPolicy``, reduced to what the twin simulates."""

    name: str = "cluster-policy"
    driver: DriverSpec = field(default_factory=DriverSpec)
    toolkit: ComponentSpec = field(default_factory=ComponentSpec)
    device_plugin: DevicePluginSpec = field(default_factory=DevicePluginSpec)
    dcgm_exporter: ComponentSpec = field(default_factory=ComponentSpec)
    gfd: ComponentSpec = field(default_factory=ComponentSpec)
    mig_manager: MigManagerSpec = field(default_factory=MigManagerSpec)
    validator: ComponentSpec = field(default_factory=ComponentSpec)  # always enabled
    mig_strategy: MigStrategy = MigStrategy.NONE
    # sandboxWorkloads.enabled: the upgrade controller then clears its labels and does nothing.
    sandbox_workloads: bool = False

    @property
    def auto_upgrade(self) -> bool:
        """The upgrade controller's on switch (``upgradePolicy != nil && autoUpgrade``)."""
        policy = self.driver.upgrade_policy
        return bool(
            self.driver.enabled
            and not self.sandbox_workloads
            and policy is not None
            and policy.auto_upgrade
        )
