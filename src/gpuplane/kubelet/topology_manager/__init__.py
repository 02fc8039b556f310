"""kubelet Topology Manager (pkg/kubelet/cm/topologymanager), ported rule for rule.

The specification followed is shared/reference/k8s-algorithms.md section A, which cites the
kubelet source files; every example case in shared/reference/topology-manager-examples.json is
a test.
"""
