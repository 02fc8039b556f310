"""Layer 3: what the NVIDIA GPU Operator does to a GPU node, as pure decisions the twin applies.

- :mod:`cluster_policy`: the ``ClusterPolicy`` fields that change behaviour, with the defaults the
  real operator applies (``api/nvidia/v1/clusterpolicy_types.go`` in NVIDIA/gpu-operator and
  ``api/upgrade/v1alpha1/upgrade_spec.go`` in NVIDIA/k8s-operator-libs).
- :mod:`lifecycle` (states and table in :mod:`lifecycle_state`): a GPU node from join to ready
  (driver, toolkit, validator, device plugin, DCGM exporter, GFD), with failures and kubelet
  crash-loop back-off.
- :mod:`upgrade` (states, names and value types in :mod:`upgrade_state`): the driver upgrade
  controller of k8s-operator-libs ``pkg/upgrade`` (state label
  ``nvidia.com/gpu-driver-upgrade-state``), one reconcile per call.
- :mod:`selector`: Kubernetes label selectors, for the upgrade policy's ``podSelector`` fields.
- :mod:`faults`: node loss and GPU XID errors planned from the scenario's ``faults:`` list.
- :mod:`settings`: twin-only timing (how long each component takes, how often it fails).

Assumptions: every function here is pure. Time comes in as numbers (``time_in_state_s``), never
from a clock; randomness comes in as a ``numpy.random.Generator``; nothing here reads files or
Kubernetes. The caller (the twin, or a live adapter in ``k8s``) builds the snapshot, calls the
decision and applies it. Only ``gpuplane.core`` and ``gpuplane.topology`` may be imported.
"""
