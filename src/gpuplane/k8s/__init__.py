"""Side layer: the only package that reads or writes Kubernetes object kinds (YAML/JSON manifests
such as NodeResourceTopology) or talks to live endpoints (Prometheus, KEDA external scaler gRPC,
scheduler extender HTTP, engine emulator, router).

It may import any layer; only ``gpuplane.cli`` imports it, so the simulation and decision code
never depends on an API version or a server. Renderers here take gpuplane's frozen dataclasses
and follow the upstream API types field for field; each module names the source it was checked
against.
"""
