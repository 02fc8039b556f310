"""``gpuplane fit``: will these pods fit this cluster, where, on which GPUs, and if not, why and
what would make them fit. The cluster comes from a snapshot (``gpuplane.k8s.cluster``) as the
values of :mod:`gpuplane.fit.model`; the answer is a pure function of those values.

A decision layer below the twin and above the decision packages (scheduler, kubelet, slicing,
serving): it imports no twin module, and the twin imports from it the workload objects
(``workload_objects``) and the pod request arithmetic (``resources``) both run on.
``extender`` holds the scheduler extender's decisions, made from the same values."""
