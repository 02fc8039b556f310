"""twin.dra: claims made from templates when a pod appears, allocated when it is bound, and
released when it ends.

The node is the seed's 8-GPU box under NVIDIA's DRA driver; its NVLink islands are GPUs 0-3
and 4-7, so a 4-GPU claim constrained to one ``gpuplane.io/nvlinkDomain`` takes a whole island.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from gpuplane.slicing.dra.claims import ResourceClaim
from tests.unit.twin.minitwin import MiniTwin, pool, run_twin, scenario

ISLANDS = ({f"gpu-{i}" for i in range(4)}, {f"gpu-{i}" for i in range(4, 8)})

GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]},
}


def template(name: str, count: int, *, same_island: bool) -> dict[str, Any]:
    devices: dict[str, Any] = {
        "requests": [
            {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count}}
        ]
    }
    if same_island:
        devices["constraints"] = [{"matchAttribute": "gpuplane.io/nvlinkDomain"}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": devices}},
    }


def claiming_pod(name: str, claim_template: str, *, at: str, run: str | None) -> dict[str, Any]:
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": claim_template}],
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi"},
                        "claims": [{"name": "gpus"}],
                    },
                }
            ],
        },
    }
    duration = {"until_end": True} if run is None else {"fixed": run}
    return {"manifest": manifest, "arrival": {"at": at}, "duration": duration}


def dra_twin(tmp_path: Path, until_s: float) -> MiniTwin:
    workloads = [
        claiming_pod("a", "island", at="0s", run=None),
        claiming_pod("b", "island", at="0s", run="10s"),
        claiming_pod("c", "one", at="1s", run=None),
    ]
    objects = [
        GPU_CLASS,
        template("island", 4, same_island=True),
        template("one", 1, same_island=False),
    ]
    return run_twin(
        tmp_path,
        scenario(pool(dra=True), workloads=workloads, dra=["dra.yaml"]),
        until_s=until_s,
        files={"dra.yaml": objects},
    )


def claim_of(twin: MiniTwin, pod: str) -> ResourceClaim:
    (claim,) = [c for c in twin.dra.claims.values() if c.owner_pod_uid == twin.pod(pod).uid]
    return claim


def test_claims_are_allocated_when_their_pods_are_bound(tmp_path: Path) -> None:
    twin = dra_twin(tmp_path, until_s=5.0)
    # The DRA driver owns the GPUs: the device plugin advertises none.
    assert twin.node("gpu-0").num_devices == 0
    a, b, c = twin.pod("a"), twin.pod("b"), twin.pod("c")
    assert a.phase is PodPhase.RUNNING and b.phase is PodPhase.RUNNING
    # Each island claim holds one whole NVLink island; the two do not overlap.
    assert {frozenset(a.dra_devices), frozenset(b.dra_devices)} == {frozenset(i) for i in ISLANDS}
    for pod in (a, b):
        claim = claim_of(twin, pod.name)
        assert claim.status.allocation is not None
        allocated = {r.device for r in claim.status.allocation.devices.results}
        assert allocated == set(pod.dra_devices)
        assert claim.is_reserved_for(pod.uid)
    # Every GPU is taken: c's claim exists (made from its template) but is not allocated.
    assert c.phase is PodPhase.PENDING and c.dra_devices == ()
    assert claim_of(twin, "c").status.allocation is None


def test_a_finished_pod_gives_its_devices_to_the_next_claim(tmp_path: Path) -> None:
    twin = dra_twin(tmp_path, until_s=60.0)
    b, c = twin.pod("b"), twin.pod("c")
    assert b.phase is PodPhase.SUCCEEDED
    # b owned its claim: the controller deleted it, which freed b's island for c.
    assert [cl for cl in twin.dra.claims.values() if cl.owner_pod_uid == b.uid] == []
    assert c.phase is PodPhase.RUNNING and len(c.dra_devices) == 1
    assert set(c.dra_devices) <= set(b.dra_devices)
    assert len(twin.dra.claims) == 2
