"""Autoscaling: HPA and KEDA as Kubernetes runs them, PromQL on the twin, SLO-aware scaler."""
