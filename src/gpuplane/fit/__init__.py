"""``gpuplane fit``: will these pods fit this cluster, where, on which GPUs, and if not, why and
what would make them fit. The cluster comes from a snapshot (``gpuplane.k8s.cluster``) as the
values of :mod:`gpuplane.fit.model`; the answer is a pure function of those values."""
