"""KEDA ScaledObjects as kedacore/keda runs them: the manifest model and its validation, the
Prometheus scaler, the HPA KEDA creates, the scale loop (activation, cooldown, idle replicas,
0 <-> 1), fallback and the metrics server's answers to the HPA.

Scaling between min and max is the HPA's (``autoscaler.hpa``); KEDA feeds it External metrics
and owns scaling to and from zero. Every decision is a pure function of a snapshot: the caller
polls the scalers (``scalers.Scaler.poll``) and applies the decision.
"""
