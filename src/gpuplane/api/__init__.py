"""One Kubernetes vocabulary: the values every layer above speaks, as Kubernetes defines them.

What belongs here: resource names (``cpu``, ``nvidia.com/gpu``, ``nvidia.com/mig-<profile>``),
``Quantity`` and its one exact parser, ``Taint``/``Toleration`` and the toleration rule,
``PodPhase``, ``QosClass``, owner references, label selectors and their matching, the device
plugin's MIG and sharing strategy names. Each is a frozen value or an enum with the rule
Kubernetes attaches to it (apimachinery, k8s.io/api core/v1), nothing more.

What does not: file formats. Reading or writing YAML/JSON (manifests, pydantic shapes of a file)
stays in ``gpuplane.k8s`` (Kubernetes kinds) or in the package whose file it is; those readers
produce these values. The layer sits just above ``core``, the only package it imports.
"""
