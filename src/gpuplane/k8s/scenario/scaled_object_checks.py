"""The scenario's ScaledObjects against the workloads that exist.

KEDA (v2.16, ``controllers/keda/scaledobject_controller.go`` and the admission webhook in
``apis/keda/v1alpha1/scaledobject_webhook.go``, read through the code index) handles two mistakes
differently: a ``scaleTargetRef`` naming a Deployment that does not exist is accepted by the API
server and the controller then keeps the ScaledObject not Ready (``ScaledObjectCheckFailed``,
"Target resource doesn't exist"): here a warning, because the ScaledObject does nothing. Two
ScaledObjects scaling the same workload are refused by the webhook ("the workload ... is already
managed by the ScaledObject ..."): here an error. The twin scales Deployments only.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.core.errors import InputError, Location
from gpuplane.fit import workload_objects as wo
from gpuplane.twin.scenario import spec as tw


def scaled_object_warnings(
    objects: Sequence[tuple[str, ScaledObjectIn]], workloads: Sequence[tw.Workload]
) -> list[str]:
    """``(file, ScaledObject)`` pairs -> warnings; a second ScaledObject on a target raises."""
    deployments = {
        (w.obj.namespace, w.obj.name) for w in workloads if isinstance(w.obj, wo.DeploymentSpec)
    }
    managed: dict[tuple[str, str], str] = {}
    warnings: list[str] = []
    for source, so in objects:
        ns, ref = so.metadata.namespace, so.spec.scaleTargetRef
        key = (ns, ref.name)
        if ref.kind == "Deployment" and key in managed:
            raise InputError(
                f"the workload '{ref.name}' of type 'apps/v1.Deployment' is already managed by "
                f"the ScaledObject '{managed[key]}'",
                expected="one ScaledObject per Deployment",
                location=Location(source, None, "spec.scaleTargetRef.name"),
            )
        managed[key] = so.metadata.name
        if ref.kind != "Deployment" or key not in deployments:
            warnings.append(
                f"{source}: ScaledObject {ns}/{so.metadata.name}: spec.scaleTargetRef: "
                f"{ref.kind} {ref.name!r} does not exist in namespace {ns!r} (no workload "
                "creates it); KEDA keeps the ScaledObject not Ready (Target resource doesn't "
                "exist) and nothing is scaled"
            )
    return warnings
