"""Side layer: the only package that reads or writes Kubernetes object kinds (YAML/JSON manifests
such as NodeResourceTopology) or talks to live endpoints (Prometheus, KEDA external scaler gRPC,
scheduler extender HTTP, engine emulator, router).

It may import any layer below ``sweep``; only ``gpuplane.cli`` and ``gpuplane.sweep`` (whose
bases read scenarios, snapshots and workloads) import it, so the simulation and decision code
never depends on an API version or a server. ``fit_run`` and ``hpa_manifest_check`` are the
harnesses of ``gpuplane fit`` and ``autoscale hpa-check --hpa``: they answer from the Kubernetes
objects read here. Renderers here take gpuplane's frozen dataclasses
and follow the upstream API types field for field; each module names the source it was checked
against.
"""
