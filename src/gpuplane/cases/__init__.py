"""gpuplane's own JSON case formats, read and answered by CLI commands: ``autoscale hpa-check``
(shared/reference/hpa-examples.json) and ``kubelet merge-hints``
(topology-manager-examples.json). They call the decision packages' pure functions; the
decision packages know nothing of these formats."""
