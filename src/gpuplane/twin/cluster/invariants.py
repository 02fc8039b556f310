"""Conservation checks, run after every event in test mode (and on demand).

- A node's ``requested`` equals the sum of the charges of the pods holding resources on it, and
  never exceeds what it can give (cpu, memory, pods; GPUs counted by owner).
- Every GPU index has at most one owner, owned GPUs are exactly the pods' ``gpu_ids``, and a pod
  owns as many GPUs as it requests. A GPU's shares (``gpuplane.io/gpu-milli``) are the sum of its
  fractional pods' shares, at most 1000, and never on an owned GPU.
- A pod holds resources on a node iff it is bound, not terminal and not deleted.
- Every pod ever created is in the store (none lost).
"""

from __future__ import annotations

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.fit import resources as res
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.cluster.store import GPU_MILLI, MILLI_PER_GPU, ObjectStore


def _node_violations(store: ObjectStore, node: Node) -> list[str]:
    out: list[str] = []
    holders = [store.pods[u] for u in node.pods]
    charged = {k: v for k, v in res.total(store.charge(p) for p in holders).items() if v}
    requested = {k: v for k, v in node.requested.items() if v}
    if charged != requested:
        out.append(f"{node.name}: requested {requested} != sum of its pods {charged}")
    for k in (CPU, MEMORY, PODS):
        if requested.get(k, 0) > node.allocatable.get(k, 0):
            out.append(
                f"{node.name}: {k} over-committed {requested.get(k)} > {node.allocatable.get(k)}"
            )
    owners: dict[str, list[int]] = {}
    for g, uid in enumerate(node.gpu_owner):
        if uid is not None:
            owners.setdefault(uid, []).append(g)
    for p in holders:
        if tuple(sorted(owners.get(p.uid, []))) != tuple(sorted(p.gpu_ids)):
            out.append(f"{node.name}: GPUs owned by {p.key} {owners.get(p.uid)} != {p.gpu_ids}")
        if len(p.gpu_ids) != p.requests.get(NVIDIA_GPU, 0):
            out.append(
                f"{p.key}: holds {len(p.gpu_ids)} GPUs, requests {p.requests.get(NVIDIA_GPU)}"
            )
        if not p.holds_resources:
            out.append(f"{p.key}: on {node.name}'s books but is {p.phase}/deleted")
    out.extend(_ext_violations(store, node, holders, owners))
    stray = set(owners) - node.pods
    if stray:
        out.append(f"{node.name}: GPUs owned by pods not on the node: {sorted(stray)}")
    out.extend(_share_violations(store, node, holders))
    return out


def _ext_violations(
    store: ObjectStore, node: Node, holders: list[Pod], owners: dict[str, list[int]]
) -> list[str]:
    """Devices of other device resources: each owned by a pod that lists it, as requested."""
    out: list[str] = []
    for name, ext_owners in node.ext_owner.items():
        for d, uid in enumerate(ext_owners):
            if uid is None:
                continue
            owners.setdefault(uid, [])
            if d not in store.pods[uid].ext_device_ids.get(name, ()):
                out.append(f"{node.name}: {name} device {d} owned by {uid} not in its devices")
    for p in holders:
        for name, ids in p.ext_device_ids.items():
            if len(ids) != p.requests.get(name, 0):
                out.append(f"{p.key}: holds {len(ids)} {name}, requests {p.requests.get(name)}")
    return out


def _share_violations(store: ObjectStore, node: Node, holders: list[Pod]) -> list[str]:
    out: list[str] = []
    expected = [0] * node.num_devices
    for p in holders:
        share = store.share_of.get(p.uid)
        if p.requests.get(GPU_MILLI, 0) != (share[1] if share else 0):
            out.append(f"{p.key}: requests {p.requests.get(GPU_MILLI)} milli, holds {share}")
        if share is not None:
            expected[share[0]] += share[1]
    shares = store.gpu_shares[node.name]
    if shares != expected:
        out.append(f"{node.name}: GPU shares {shares} != sum of its pods' shares {expected}")
    for g, milli in enumerate(shares):
        if milli > MILLI_PER_GPU or (milli and node.gpu_owner[g] is not None):
            out.append(
                f"{node.name}: GPU {g} has {milli} milli shared and owner {node.gpu_owner[g]}"
            )
    return out


def violations(store: ObjectStore, pods_created: int) -> list[str]:
    out: list[str] = []
    if pods_created != len(store.pods):
        out.append(f"{pods_created} pods created but {len(store.pods)} in the store")
    for node in store.nodes.values():
        out.extend(_node_violations(store, node))
    active = {u for u, p in store.pods.items() if p.is_active}
    if active != store.active:
        out.append(f"active-pod index out of step: {sorted(active ^ store.active)[:5]}")
    for p in store.pods.values():
        if p.holds_resources and (
            p.node_name is None or p.uid not in store.nodes[p.node_name].pods
        ):
            out.append(f"{p.key}: bound and active but not on its node's books")
    return out
