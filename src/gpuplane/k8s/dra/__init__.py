"""DRA's objects (resource.k8s.io/v1: DeviceClass, ResourceSlice, ResourceClaim and templates)
read into ``slicing.dra`` values (``manifests``, ``documents``), and ``dra allocate``'s answer
written as Kubernetes writes it (``allocation``, ``claim_output``)."""
