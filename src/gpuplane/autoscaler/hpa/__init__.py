"""The HorizontalPodAutoscaler exactly as kube-controller-manager computes it.

``controller.decide(HpaSnapshot, HpaControllerSettings) -> HpaDecision`` is one 15 s sync of one
HPA: the per-metric replica proposals (``replica_calculator``), the choice among metrics, the
stabilization windows and scaling policies (``normalize``) and the status conditions. The
controller's memory between syncs (recommendations, scale events, conditions) travels in
``HpaState`` inside the snapshot and the decision, so the twin can keep it and the decision stays
pure. Sources: kubernetes/kubernetes ``pkg/controller/podautoscaler`` (``horizontal.go``,
``replica_calculator.go``, ``metrics/``) and ``pkg/apis/autoscaling/v2/defaults.go``.
"""
