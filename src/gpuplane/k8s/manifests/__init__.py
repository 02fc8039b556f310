"""Kubernetes manifests read and written the way the API server does: Pods and workload
controllers (``parse``, ``pod``, ``workloads``, ``api_types``, ``container_checks``,
``inference_args``), labels, topology spread, resources and quantities; Nodes, NRTs and HPAs
rendered (``node``, ``nrt``, ``hpa``); ScaledObjects and KubeSchedulerConfigurations read."""
