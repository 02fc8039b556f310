"""A twin pod's default spread selector: what kube-scheduler v1.31's DefaultSelector
(framework/plugins/helper/spread.go) builds for it, the labels of the Services selecting the pod
merged, then the selector of the pod's controller (its controller ownerReference: a
ReplicationController's labels merged in, a ReplicaSet's or StatefulSet's requirements added).
PodTopologySpread's system default constraints spread a pod over the pods this selects; an empty
result means no default spreading.

In the twin a pod's controller is a ReplicaSet: a Deployment's carries the Deployment's
``spec.selector`` plus its ``pod-template-hash`` (as the Deployment controller writes it), a bare
one its own. Job pods and bare pods get none (DefaultSelector knows no Jobs). The twin has no
Services, ReplicationControllers or StatefulSets; a Service selecting a Deployment's pods by
template labels would add requirements that every pod the ReplicaSet's selector picks meets, so
the pods counted would be the same.
"""

from __future__ import annotations

from gpuplane.api.selectors import LabelSelector
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.cluster.store import ObjectStore

REPLICA_SET = "ReplicaSet"  # the owner kind the twin's ReplicaSet controller writes


def default_selector(store: ObjectStore, pod: Pod) -> LabelSelector | None:
    """None: nothing selects the pod (or only by an empty selector)."""
    owner = pod.owner
    if owner is None or owner.kind != REPLICA_SET:
        return None
    rs = store.replica_sets.get(f"{owner.namespace}/{owner.name}")
    if rs is None or rs.selector is None or rs.selector.is_empty:
        return None
    return rs.selector
