"""The SLO-aware scaler: replica counts for LLM-serving pools from latency targets, not from a
utilisation threshold.

A threshold on ``num_requests_waiting`` or KV usage (the KEDA/HPA recipes) reacts after the
queue has formed, and a replica started then serves only after its cold start (image pull,
weight load, compile, CUDA-graph capture: minutes). This scaler instead asks a capacity model
how many replicas keep TTFT p90 and ITL p99 within the SLO (or, told the per-request objective,
enough requests within TTFT and mean-TPOT thresholds: ``per_request.py``) at the arrival rate
forecast over the cold-start horizon, adds replicas to drain a backlog, reacts to KV pressure,
and scales down only after a stabilisation window of consistently lower need. Under prefill/decode
disaggregation each pool (a Deployment) is scaled on its own signals.

``scaler.decide(snapshot, settings) -> SloDecision`` is pure: the caller (the twin, or a live
adapter) gathers the signals and the capacity model into an ``SloSnapshot``, writes the desired
replica counts and keeps each pool's ``memory`` for the next call. The autoscaler layer may not
import ``gpuplane.serving``; the serving model reaches the scaler through the ``CapacityModel``
protocol (``capacity.py``). ``analytic.AnalyticCapacity`` is a closed-form reference model.
"""
