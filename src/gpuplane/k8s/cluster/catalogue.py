"""What a snapshot reads: each resource's snapshot key, kind, API group and acceptable versions.

Versions are in preference order. For groups listed with more than one version
(``resource.k8s.io``) the reader asks the group's discovery document which of them the server
serves and takes the first; a group the server does not serve at all (a CRD that is not
installed) is skipped with a note rather than failing the read.
"""

from __future__ import annotations

from dataclasses import dataclass

DRA_VERSIONS = ("v1", "v1beta2", "v1beta1")


@dataclass(frozen=True, slots=True)
class ListedResource:
    key: str  # the snapshot's key for these objects, e.g. "resourceSlices"
    kind: str
    group: str  # "" for the core group
    versions: tuple[str, ...]
    plural: str
    optional: bool  # a CRD or newer API that a cluster may lack: absent means skipped

    def path(self, version: str) -> str:
        """The cluster-wide list path (every namespace for namespaced resources)."""
        if not self.group:
            return f"/api/{version}/{self.plural}"
        return f"/apis/{self.group}/{version}/{self.plural}"

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version


READ_RESOURCES: tuple[ListedResource, ...] = (
    ListedResource("nodes", "Node", "", ("v1",), "nodes", False),
    ListedResource("pods", "Pod", "", ("v1",), "pods", False),
    ListedResource(
        "priorityClasses", "PriorityClass", "scheduling.k8s.io", ("v1",), "priorityclasses", False
    ),
    # What selects pods (kube-scheduler's DefaultSelector for the system default spreading:
    # Services, ReplicationControllers, ReplicaSets, StatefulSets) and the namespaces' labels
    # (pod affinity's namespaceSelector).
    ListedResource("namespaces", "Namespace", "", ("v1",), "namespaces", False),
    ListedResource("services", "Service", "", ("v1",), "services", False),
    ListedResource(
        "replicationControllers",
        "ReplicationController",
        "",
        ("v1",),
        "replicationcontrollers",
        False,
    ),
    ListedResource("replicaSets", "ReplicaSet", "apps", ("v1",), "replicasets", False),
    ListedResource("statefulSets", "StatefulSet", "apps", ("v1",), "statefulsets", False),
    ListedResource(
        "nodeResourceTopologies",
        "NodeResourceTopology",
        "topology.node.k8s.io",
        ("v1alpha2",),
        "noderesourcetopologies",
        True,
    ),
    ListedResource(
        "resourceSlices", "ResourceSlice", "resource.k8s.io", DRA_VERSIONS, "resourceslices", True
    ),
    ListedResource(
        "deviceClasses", "DeviceClass", "resource.k8s.io", DRA_VERSIONS, "deviceclasses", True
    ),
    ListedResource(
        "resourceClaims", "ResourceClaim", "resource.k8s.io", DRA_VERSIONS, "resourceclaims", True
    ),
    ListedResource(
        "resourceClaimTemplates",
        "ResourceClaimTemplate",
        "resource.k8s.io",
        DRA_VERSIONS,
        "resourceclaimtemplates",
        True,
    ),
    ListedResource(
        "podGroups", "PodGroup", "scheduling.x-k8s.io", ("v1alpha1",), "podgroups", True
    ),
    ListedResource(
        "scaledObjects", "ScaledObject", "keda.sh", ("v1alpha1",), "scaledobjects", True
    ),
    ListedResource(
        "horizontalPodAutoscalers",
        "HorizontalPodAutoscaler",
        "autoscaling",
        ("v2",),
        "horizontalpodautoscalers",
        False,
    ),
    ListedResource(
        "clusterPolicies", "ClusterPolicy", "nvidia.com", ("v1",), "clusterpolicies", True
    ),
)

SNAPSHOT_KEYS: tuple[str, ...] = tuple(r.key for r in READ_RESOURCES)


def resource_for_kind(api_version: str, kind: str) -> ListedResource | None:
    """The catalogue entry for an object's apiVersion and kind (any listed version of its group)."""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    for res in READ_RESOURCES:
        if res.kind == kind and res.group == group:
            return res
    return None
