"""``gpuplane serve scaler``: the SLO-aware scaler (``autoscaler.slo.decide``, unchanged) served to
KEDA as an external scaler (``externalscaler.ExternalScaler`` over gRPC).

Per ScaledObject the trigger's metadata names the Deployment, the SLO, the capacity figures and
the Prometheus queries (``metadata``); each decision reads them over Prometheus's HTTP API
(``prom_api``, ``readings``), builds the same ``SloSnapshot`` the twin builds (``snapshot``),
keeps the scaler's memory between decisions (``state``) and answers the metric that makes KEDA's
HPA land on the decided count (``autoscaler.keda.replica_metric``). docs/live.md, "KEDA
external scaler", is the user's page.
"""
