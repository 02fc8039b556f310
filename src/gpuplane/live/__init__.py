"""The services that run against real systems: the scheduler extender (``extender``), the MIG
repartitioning controller (``migctl``), the engine emulator (``emulator``), the router
(``router``), the KEDA external scaler (``scaler``, with KEDA's protocol in
``scaler.keda_grpc``), and ``deploy`` (their manifests). Shared by several of them: the
OpenAI-compatible wire (``openai``), the aiohttp serving helpers (``http``), a real Prometheus
for tests and the demo (``prometheus_live``) and ``make demo-live`` (``demo_live``).

Each service is a wall-clock caller of the same pure decisions the twin calls (the loops they
share with the twin live below both), so ``live`` never imports ``gpuplane.twin``, and the five
services import none of each other (import-linter contracts in pyproject.toml). Kubernetes
objects are read and written through ``gpuplane.k8s``; only ``gpuplane.cli`` imports ``live``.
"""
