"""Benchmark: the scheduler extender's filter and prioritize latency per call.

Run: ``.venv/bin/python bench/extender_latency.py`` (options: ``--nodes 1000 5000``,
``--pods-per-node 2``, ``--calls 200``). For each cluster size (``bench/cluster_dump.py
large_cluster``: 8-GPU H100 nodes with bound GPU pods, hardware and kubelet config from
examples/snapshot/pools.yaml, i.e. DGX H100 under single-numa-node) and each request form
(nodeCacheCapable: ``NodeNames`` only; full: a ``NodeList`` of every node), one 2-GPU
Guaranteed pod offered every node is timed:

- http: ``POST /gpuplane/filter`` and ``/prioritize`` over a kept-alive loopback connection
  (what kube-scheduler does), body already encoded, to the service in a forked process;
- in process: the same body through ``handlers.handle`` (JSON decode + decision + result), and
  the decision alone (``ExtenderState.filter``/``prioritize`` on parsed arguments), side by side;
  "stdlib json" is the path before msgspec (``json.loads`` of the whole body, the decision,
  ``json.dumps`` of the answer), the baseline for the full form.

p50/p99 over ``--calls`` calls after one warm-up call (whose time is shown as "first": the
verdict cache is cold then); in process, also the p99 of the call's CPU time (the client's,
for http, would say nothing of the server's). Goal (issue 14): p99 < 10 ms at 5,000 nodes,
nodeCacheCapable.

``--burst [N]`` (N = 1,000 by default) times instead a burst of N pending pods as kube-scheduler
sends them, nodeCacheCapable, back to back over one kept-alive connection: each pod (distinct
uid, asking 1, 2, 4 or 8 GPUs in turn) gets a ``filter`` of the nodes kube's scheduling cycle
would have found feasible (``percentageOfNodesToScore``'s adaptive default: max(100, n x
max(5, 50 - n/125) %) names, starting where the previous cycle stopped, as kube's
``nextStartNodeIndex`` does), then a ``prioritize`` of the nodes the filter kept when more than
one is left. The extender assumes each pod on its top node, so the burst fills the cluster as a
real one would. Printed: total time, calls/s and p50/p99 per verb over HTTP; then the same burst
in process through ``handlers.handle``, the service's path (assumed pods in an overlay kept in
place) and the reference path (``ExtenderState(reference=True)``: a copy of the view with every
assumed node replayed, per call) called alternately, each call's wall and CPU time (the CPU
time leaves out the time the process waited for a core on a busy machine).

``--watch [N]`` (N = 20 batches by default) times how fast watch events reach the extender's
view: each batch MODIFIES that many bound pods (a new resourceVersion and a label, as a status
update does) in the informers' objects, then does what the service does after a burst of
events: fit's values built again through the memo (only the changed objects are read) and
``ExtenderState.load`` (only the changed pods' nodes replayed). Batches of 1, 10 and 100
events; printed: ms per rebuild (p50, max) and events applied per second.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_memo import FitMemo
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.live.extender.handlers import handle
from gpuplane.live.extender.service import settle_heap
from gpuplane.live.extender.state import ExtenderState, node_versions
from gpuplane.live.extender.wire import (
    extender_args,
    filter_result,
    priority_json,
    read_extender_args,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cluster_dump import large_cluster
from tests.integration.extender_server import serving

ROOT = Path(__file__).resolve().parents[1]

KINDS = {"Node": "nodes", "Pod": "pods", "PriorityClass": "priorityClasses"}
GIB = "128Gi"


def _snapshot(objs: list[dict[str, Any]]) -> ClusterSnapshot:
    by: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        by.setdefault(KINDS[o["kind"]], []).append(o)
    return ClusterSnapshot(
        "bench", "2026-12-01T00:00:00Z", None, {}, (), {k: tuple(v) for k, v in by.items()}
    )


def _pod() -> dict[str, Any]:
    res = {"nvidia.com/gpu": "2", "cpu": "16", "memory": GIB}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bench", "namespace": "t", "uid": "bench-uid"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]},
        "status": {"phase": "Pending", "qosClass": "Guaranteed"},
    }


def _stats(fn: Callable[[], object], calls: int) -> tuple[float, float, float, float]:
    """(first, p50, p99) wall ms and the p99 CPU ms of this thread (for an in-process call,
    its own work; the wall time also counts waits for a core on a busy machine)."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    times, cpus = [], []
    for _ in range(calls):
        start, cpu = time.perf_counter(), time.thread_time()
        fn()
        cpus.append(time.thread_time() - cpu)
        times.append(time.perf_counter() - start)
    return first * 1000, _pct(times, 0.5), _pct(times, 0.99), _pct(cpus, 0.99)


def _http(port: int, path: str, body: bytes) -> Callable[[], object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}

    def call() -> object:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        assert resp.status == 200, data[:200]
        return data

    return call


def _serve_child(state: ExtenderState, conn: Connection) -> None:
    with serving(state) as url:
        conn.send(url)
        conn.recv()  # until the parent is done


@contextmanager
def _server_process(state: ExtenderState) -> Iterator[str]:
    """The service in a forked process (it inherits ``state``), so the client's work here does
    not share a GIL with the server's."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve_child, args=(state, child), daemon=True)
    proc.start()
    try:
        yield str(parent.recv())
    finally:
        parent.send("stop")
        proc.join(30)


def _plain(state: ExtenderState, verb: str, body: bytes) -> bytes:
    """The path before msgspec, as the baseline: the whole body through ``json.loads`` (every
    Node object decoded), the decision, the answer through ``json.dumps``."""
    args = extender_args(json.loads(body))
    if verb == "filter":
        return json.dumps(filter_result(state.filter(args, 0.0), args)).encode()
    return priority_json(state.prioritize(args, 0.0))


def bench(n_nodes: int, pods_per_node: int, calls: int) -> list[str]:
    objs = large_cluster(n_nodes, n_nodes * pods_per_node)
    snap = _snapshot(objs)
    defaults = node_defaults(ROOT / "examples" / "snapshot" / "pools.yaml", None)
    state = ExtenderState(ExtenderSettings(), defaults)
    start = time.perf_counter()
    state.load(fit_cluster(snap, defaults), node_versions(snap))
    load_s = time.perf_counter() - start
    settle_heap()  # as the service does after every load
    names = [n["metadata"]["name"] for n in snap.of("nodes")]
    forms = {
        "nodeCacheCapable": {"Pod": _pod(), "Nodes": None, "NodeNames": names},
        "full Nodes": {"Pod": _pod(), "Nodes": {"metadata": {}, "items": list(snap.of("nodes"))}},
    }
    rows = [f"{n_nodes} nodes, {len(snap.of('pods'))} bound pods; cluster load {load_s:.2f} s"]
    with _server_process(state) as url:
        port = int(url.rsplit(":", 1)[1])
        for form, body in forms.items():
            raw = json.dumps(body).encode()
            args = read_extender_args(raw)
            for verb in ("filter", "prioritize"):
                decide = getattr(state, verb)
                cells = {
                    "http": _stats(_http(port, f"/gpuplane/{verb}", raw), calls),
                    "handle": _stats(lambda v=verb, b=raw: handle(state, v, b, 0.0), calls),
                    "decision": _stats(lambda d=decide, a=args: d(a, 0.0), calls),
                    "stdlib json": _stats(lambda v=verb, b=raw: _plain(state, v, b), calls),
                }
                text = " | ".join(
                    f"{k} p50 {p50:.2f} p99 {p99:.2f} (first {first:.1f}"
                    + ("" if k == "http" else f", cpu p99 {cpu:.2f}")
                    + ")"
                    for k, (first, p50, p99, cpu) in cells.items()
                )
                rows.append(f"  {form:16s} {verb:10s} ms: {text}; body {len(raw) / 2**20:.1f} MiB")
    return rows


def _burst_pod(i: int) -> dict[str, Any]:
    pod = _pod()
    gpus = str((1, 2, 4, 8)[i % 4])
    for c in pod["spec"]["containers"]:
        c["resources"]["requests"]["nvidia.com/gpu"] = gpus
        c["resources"]["limits"]["nvidia.com/gpu"] = gpus
    pod["metadata"] |= {"name": f"burst-{i}", "uid": f"burst-uid-{i}"}
    return pod


def _feasible_to_find(n_nodes: int) -> int:
    """kube-scheduler's numFeasibleNodesToFind with the adaptive percentageOfNodesToScore."""
    if n_nodes < 100:
        return n_nodes
    pct = max(5, 50 - n_nodes // 125)
    return min(n_nodes, max(100, n_nodes * pct // 100))


def _post(conn: http.client.HTTPConnection, path: str, body: Any) -> tuple[Any, float]:
    raw = json.dumps(body).encode()
    start = time.perf_counter()
    conn.request("POST", path, body=raw, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    took = time.perf_counter() - start
    assert resp.status == 200, data[:200]
    return json.loads(data), took


def _pct(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000 if ordered else 0.0


def _loaded(snap: ClusterSnapshot, *, reference: bool = False) -> ExtenderState:
    defaults = node_defaults(ROOT / "examples" / "snapshot" / "pools.yaml", None)
    state = ExtenderState(ExtenderSettings(), defaults, reference=reference)
    state.load(fit_cluster(snap, defaults), node_versions(snap))
    settle_heap()
    return state


class _Timed:
    """One state's calls: wall and CPU milliseconds per verb."""

    def __init__(self, state: ExtenderState) -> None:
        self.state = state
        self.wall: dict[str, list[float]] = {"filter": [], "prioritize": []}
        self.cpu: dict[str, list[float]] = {"filter": [], "prioritize": []}

    def call(self, verb: str, body: bytes, now_s: float) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        reply = handle(self.state, verb, body, now_s)
        self.cpu[verb].append(time.thread_time() - cpu)
        self.wall[verb].append(time.perf_counter() - wall)
        return json.loads(reply.body)

    def rows(self, label: str) -> list[str]:
        return [
            f"  {label:9s} {verb:10s} ms: wall p50 {_pct(w, 0.5):.2f} p99 {_pct(w, 0.99):.2f} "
            f"max {_pct(w, 1.0):.2f} | cpu p50 {_pct(c, 0.5):.2f} p99 {_pct(c, 0.99):.2f}; "
            f"total wall {sum(w):.2f} s"
            for verb, w, c in ((v, self.wall[v], self.cpu[v]) for v in self.wall)
        ]


def burst_in_process(n_nodes: int, pods_per_node: int, n_pods: int) -> list[str]:
    """The burst through ``handle``: the overlay and the reference path, call by call."""
    snap = _snapshot(large_cluster(n_nodes, n_nodes * pods_per_node))
    fast, ref = _Timed(_loaded(snap)), _Timed(_loaded(snap, reference=True))
    names = [n["metadata"]["name"] for n in snap.of("nodes")]
    offered_n, start_at = _feasible_to_find(len(names)), 0
    for i in range(n_pods):
        pod = _burst_pod(i)
        offered = [names[(start_at + k) % len(names)] for k in range(offered_n)]
        start_at = (start_at + offered_n) % len(names)
        body = json.dumps({"Pod": pod, "NodeNames": offered}).encode()
        now = i * 0.005  # 200 pods/s: the burst stays within the assumptions' 30 s
        kept = [t.call("filter", body, now)["NodeNames"] or [] for t in (fast, ref)]
        assert kept[0] == kept[1], f"pod {i}: the two paths kept different nodes"
        if len(kept[0]) > 1:
            body = json.dumps({"Pod": pod, "NodeNames": kept[0]}).encode()
            scores = [t.call("prioritize", body, now) for t in (fast, ref)]
            assert scores[0] == scores[1], f"pod {i}: the two paths scored differently"
    ratio = sum(map(sum, ref.wall.values())) / max(sum(map(sum, fast.wall.values())), 1e-9)
    return [
        f"in process, same burst, both paths alternately (answers identical): reference / "
        f"overlay total wall {ratio:.1f}x",
        *fast.rows("overlay"),
        *ref.rows("reference"),
    ]


def burst(n_nodes: int, pods_per_node: int, n_pods: int) -> list[str]:
    """``n_pods`` filter (+ prioritize) rounds over HTTP, nodeCacheCapable; see the docstring."""
    snap = _snapshot(large_cluster(n_nodes, n_nodes * pods_per_node))
    state = _loaded(snap)
    names = [n["metadata"]["name"] for n in snap.of("nodes")]
    offered_n, start_at = _feasible_to_find(len(names)), 0
    times: dict[str, list[float]] = {"filter": [], "prioritize": []}
    placed = 0
    with _server_process(state) as url:
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=30)
        wall = time.perf_counter()
        for i in range(n_pods):
            pod = _burst_pod(i)
            offered = [names[(start_at + k) % len(names)] for k in range(offered_n)]
            start_at = (start_at + offered_n) % len(names)
            result, took = _post(conn, "/gpuplane/filter", {"Pod": pod, "NodeNames": offered})
            times["filter"].append(took)
            kept = result["NodeNames"] or []
            placed += bool(kept)
            if len(kept) > 1:
                _, took = _post(conn, "/gpuplane/prioritize", {"Pod": pod, "NodeNames": kept})
                times["prioritize"].append(took)
        wall = time.perf_counter() - wall
        conn.close()
    calls = sum(len(t) for t in times.values())
    rows = [
        f"burst: {n_pods} pods, {n_nodes} nodes ({offered_n} offered per filter), "
        f"{len(snap.of('pods'))} bound pods; {placed} pods kept a node",
        f"  total {wall:.2f} s, {calls} calls, {calls / wall:.0f} calls/s, "
        f"{n_pods / wall:.0f} pods/s",
    ]
    rows += [
        f"  {verb:10s} {len(t)} calls, ms p50 {_pct(t, 0.5):.2f} p99 {_pct(t, 0.99):.2f} "
        f"max {_pct(t, 1.0):.2f}"
        for verb, t in times.items()
    ]
    return rows


def _modified(pod: dict[str, Any], version: int) -> dict[str, Any]:
    meta = {**pod["metadata"], "resourceVersion": str(version)}
    meta["labels"] = {**(meta.get("labels") or {}), "gpuplane.io/bench-update": str(version)}
    return {**pod, "metadata": meta}


def watch_apply(n_nodes: int, pods_per_node: int, batches: int) -> list[str]:
    """Watch events applied to the view, as ``serve extender --kubeconfig`` does after a burst."""
    objs = large_cluster(n_nodes, n_nodes * pods_per_node)
    snap = _snapshot(objs)
    defaults = node_defaults(ROOT / "examples" / "snapshot" / "pools.yaml", None)
    memo = FitMemo()
    state = ExtenderState(ExtenderSettings(), defaults)
    state.load(fit_cluster(snap, defaults, memo), node_versions(snap))
    settle_heap()
    pods = list(snap.of("pods"))
    version, at = 10**6, 0
    rows = [f"watch events: {n_nodes} nodes, {len(pods)} bound pods; MODIFIED pods, per rebuild"]
    for size in (1, 10, 100):
        times, cpus = [], []
        for _ in range(batches):
            for _ in range(size):
                version += 1
                pods[at % len(pods)] = _modified(pods[at % len(pods)], version)
                at += 7919  # a prime: the batch's pods are spread over the nodes
            objects = {**snap.objects, "pods": tuple(pods)}
            changed = ClusterSnapshot("bench", snap.read_at, None, {}, (), objects)
            start, cpu = time.perf_counter(), time.thread_time()
            state.load(fit_cluster(changed, defaults, memo), node_versions(changed))
            cpus.append(time.thread_time() - cpu)
            times.append(time.perf_counter() - start)
        wall, cpu_mean = sum(times) / len(times), sum(cpus) / len(cpus)
        rows.append(
            f"  batch {size:3d}: ms wall p50 {_pct(times, 0.5):.1f} max {_pct(times, 1.0):.1f}, "
            f"cpu p50 {_pct(cpus, 0.5):.1f}; {size / wall:,.0f} events/s "
            f"({size / cpu_mean:,.0f} per CPU second)"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--pods-per-node", type=int, default=2)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--burst", type=int, nargs="?", const=1000, default=None, metavar="N")
    parser.add_argument("--watch", type=int, nargs="?", const=20, default=None, metavar="N")
    opts = parser.parse_args()
    for n in opts.nodes:
        if opts.watch is not None:
            for row in watch_apply(n, opts.pods_per_node, opts.watch):
                print(row, flush=True)
            continue
        if opts.burst is not None:
            for row in burst(n, opts.pods_per_node, opts.burst):
                print(row, flush=True)
            for row in burst_in_process(n, opts.pods_per_node, opts.burst):
                print(row, flush=True)
            continue
        for row in bench(n, opts.pods_per_node, opts.calls):
            print(row, flush=True)


if __name__ == "__main__":
    main()
