"""Autoscalers in the twin: KEDA and the HPA on the cluster's series, the SLO-aware scaler."""
