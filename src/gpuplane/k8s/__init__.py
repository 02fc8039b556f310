"""Side layer: the only package that reads or writes Kubernetes object kinds (YAML/JSON manifests
such as NodeResourceTopology) and holds the API client seam.

Rooms: ``scenario`` (the scenario file's readers, and ``scenario.files``, the one module that
resolves and reads the files a scenario names), ``manifests`` (Pods, workloads, Nodes, NRTs,
HPAs, ScaledObjects, scheduler configurations and the API's value rules), ``dra`` (DRA objects
and claim output), ``fit`` (``gpuplane fit``'s workload file, its harness ``fit.run`` and the
``-o yaml`` answer) and
``cluster`` (snapshots, the API client seam, informers, writers). The shared readers
(``yaml_documents``, ``field_errors``, ``output``) sit at the top of the package.

It may import any layer below ``cli``; only ``gpuplane.cli``, ``gpuplane.live`` and
``gpuplane.sweep`` import it, so the simulation and decision code never depends on an API
version or a server. ``manifests.hpa_check`` is ``autoscale hpa-check --hpa``'s harness.
Renderers here take gpuplane's frozen dataclasses and follow the upstream API types field for
field; each module names the source it was checked against.
"""
