"""Workload controllers (kube-controller-manager's): ReplicaSet, Deployment, Job, PodGroup."""
