"""``gpuplane serve extender --kubeconfig``: the informers over real HTTP to a loopback API
server that streams watch events the tests write (``fake_apiserver.Watched``).

The cluster is the shipped example (examples/snapshot/mixed-cluster.yaml); the pod is the
2-GPU training pod that gpu-h100-a's kubelet rejects when its two free GPUs sit on different
NUMA nodes (see test_extender_http).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.live.extender.live_feed import LiveFeed, connect
from gpuplane.live.extender.state import ExtenderState
from tests.integration.extender_server import get, post, serving
from tests.integration.fake_apiserver import Obj, Served, Watched, kubeconfig_text, running_watched
from tests.integration.test_extender_http import NUMA_REASON, numa_pod
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "snapshot"
NODES, PODS = "/api/v1/nodes", "/api/v1/pods"
H100_A, SECOND = "gpu-h100-a", "pretrain-7b-1"
NOT_SEEN = "node not yet in gpuplane's cluster view"
PATHS = {"Node": NODES, "Pod": PODS, "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses"}


def _served() -> Served:
    items = yaml.safe_load((EXAMPLES / "mixed-cluster.yaml").read_text())["items"]
    lists: dict[str, list[Obj]] = {p: [] for p in PATHS.values()}
    for i, obj in enumerate(items):
        obj["metadata"].setdefault("resourceVersion", str(10 + i))
        lists[PATHS[obj["kind"]]].append(obj)
    for plural in ("namespaces", "services", "replicationcontrollers"):
        lists[f"/api/v1/{plural}"] = []
    groups = {"scheduling.k8s.io": ["v1"], "apps": ["v1"], "autoscaling": ["v2"]}
    for path in ("/apis/apps/v1/replicasets", "/apis/apps/v1/statefulsets"):
        lists[path] = []
    lists["/apis/autoscaling/v2/horizontalpodautoscalers"] = []
    return Served(lists=lists, groups=groups)


def _pod(served: Served, name: str) -> Obj:
    return next(p for p in served.lists[PODS] if p["metadata"]["name"] == name)


def _pending(pod: Obj) -> Obj:
    pod = copy.deepcopy(pod)
    del pod["spec"]["nodeName"]
    pod["status"] = {"phase": "Pending"}
    return pod


class Live:
    def __init__(self, served: Served, watched: Watched, url: str, feed: LiveFeed) -> None:
        self.served, self.watched, self.url, self.feed = served, watched, url, feed

    def filter(self, names: list[str]) -> dict[str, Any]:
        code, result = post(self.url + "/filter", {"Pod": numa_pod(), "NodeNames": names})
        assert code == 200
        return dict(result)


def until(check: Callable[[], bool], what: str) -> None:
    wait_until(check, what)


@pytest.fixture()
def live(tmp_path: Path) -> Iterator[Live]:
    served = _served()
    # gpu-h100-a starts with one 3-GPU pod: 5 free GPUs, so the 2-GPU pod fits there.
    served.lists[PODS] = [
        _pending(p) if p["metadata"]["name"] == SECOND else p for p in served.lists[PODS]
    ]
    watched = Watched(served, stream_s=0.5)
    with running_watched(served, watched) as api:
        config = tmp_path / "kubeconfig"
        config.write_text(kubeconfig_text({"fake": api}, "fake"))
        defaults = node_defaults(EXAMPLES / "pools.yaml", None)
        feed, _ = connect(str(config), None, resync_s=0, defaults=defaults)
        with serving(ExtenderState(ExtenderSettings(), defaults), feed=feed) as base:
            until(lambda: get(base + "/readyz")[0] == 200, "ready")
            yield Live(served, watched, base + "/gpuplane", feed)


def test_a_pod_bound_by_a_watch_event_changes_the_next_filter(live: Live) -> None:
    assert live.filter([H100_A])["NodeNames"] == [H100_A]
    bound = copy.deepcopy(_pod(live.served, SECOND))
    bound["spec"]["nodeName"] = H100_A
    bound["status"] = {"phase": "Running", "qosClass": "Guaranteed"}
    live.watched.emit(PODS, "MODIFIED", bound)
    until(lambda: live.filter([H100_A])["FailedNodes"] == {H100_A: NUMA_REASON}, "refused")
    # Read again: only the changed pod, not every object.
    assert live.feed.memo.reads < 2 * (6 + 17 + 1)


def test_a_node_added_by_a_watch_event_becomes_filterable(live: Live) -> None:
    assert live.filter(["gpu-h100-d"])["FailedNodes"] == {"gpu-h100-d": NOT_SEEN}
    node = copy.deepcopy(
        next(n for n in live.served.lists[NODES] if n["metadata"]["name"] == H100_A)
    )
    node["metadata"].update(name="gpu-h100-d", uid="uid-gpu-h100-d")
    live.watched.emit(NODES, "ADDED", node)
    until(lambda: live.filter(["gpu-h100-d"])["NodeNames"] == ["gpu-h100-d"], "filterable")
    live.watched.emit(NODES, "DELETED", node)
    until(lambda: live.filter(["gpu-h100-d"])["FailedNodes"] == {"gpu-h100-d": NOT_SEEN}, "gone")


def test_a_410_makes_the_informer_list_again(live: Live) -> None:
    assert len(live.watched.lists(PODS)) == 1
    # A change the watch never streams (as if lost in etcd's compacted window): only a relist
    # can show it.
    bound = copy.deepcopy(_pod(live.served, SECOND))
    bound["spec"]["nodeName"] = H100_A
    bound["status"] = {"phase": "Running"}
    bound["metadata"]["resourceVersion"] = "99"
    pods = live.served.lists[PODS]
    pods[:] = [p for p in pods if p["metadata"]["name"] != SECOND] + [bound]
    assert live.filter([H100_A])["NodeNames"] == [H100_A]
    live.watched.expire(PODS)
    until(lambda: len(live.watched.lists(PODS)) == 2, "listed again")
    until(lambda: live.filter([H100_A])["FailedNodes"] == {H100_A: NUMA_REASON}, "relisted")
    # The watch after the relist resumes from the new list's resourceVersion.
    listed_at = str(live.watched.version)
    until(
        lambda: any(q["resourceVersion"] == [listed_at] for q in live.watched.watches(PODS)),
        "watching from the relist",
    )
    assert len(live.watched.lists(NODES)) == 1  # the other informers went on watching


def test_bookmarks_and_ended_streams_resume_from_the_last_version(live: Live) -> None:
    live.watched.bookmark(NODES, kind="Node")
    marked = str(live.watched.version)
    informer = live.feed.live.informers["nodes"]
    until(lambda: informer.resource_version == marked, "bookmark taken")
    until(
        lambda: any(q["resourceVersion"] == [marked] for q in live.watched.watches(NODES)),
        "re-watched from the bookmark",
    )
    assert len(live.watched.lists(NODES)) == 1
    query = live.watched.watches(NODES)[0]
    assert query["allowWatchBookmarks"] == ["true"] and "timeoutSeconds" in query


def test_not_ready_until_every_resource_is_listed(tmp_path: Path) -> None:
    served = _served()
    served.forbidden.add(PODS)
    watched = Watched(served, stream_s=0.5)
    with running_watched(served, watched) as api:
        config = tmp_path / "kubeconfig"
        config.write_text(kubeconfig_text({"fake": api}, "fake"))
        feed, _ = connect(str(config), None, resync_s=0, defaults=node_defaults(None, None))
        with serving(ExtenderState(ExtenderSettings()), feed=feed) as base:
            until(lambda: len(watched.lists(NODES)) == 1 and len(served.requests) > 20, "nodes")
            assert get(base + "/readyz")[0] == 503
            _, result = post(base + "/gpuplane/filter", {"Pod": numa_pod(), "NodeNames": []})
            assert "not read the cluster yet" in result["Error"]
            served.forbidden.discard(PODS)  # the informer retries with backoff
            until(lambda: get(base + "/readyz")[0] == 200, "ready")
            assert get(base + "/readyz")[1] == "ok: 6 nodes"


@pytest.mark.parametrize("served_watch_list", [True, False])
def test_watch_list_streams_the_initial_state_or_falls_back_to_lists(
    tmp_path: Path, served_watch_list: bool
) -> None:
    """``--watch-list``: Nodes and Pods come from watch-list streams (no list request) when the
    server serves it, and from lists after its 422 when it does not; either way the extender
    answers from them and follows the events after."""
    served = _served()
    served.lists[PODS] = [
        _pending(p) if p["metadata"]["name"] == SECOND else p for p in served.lists[PODS]
    ]
    watched = Watched(served, stream_s=0.5, watch_list=served_watch_list)
    with running_watched(served, watched) as api:
        config = tmp_path / "kubeconfig"
        config.write_text(kubeconfig_text({"fake": api}, "fake"))
        defaults = node_defaults(EXAMPLES / "pools.yaml", None)
        feed, _ = connect(str(config), None, resync_s=0, defaults=defaults, watch_list=True)
        with serving(ExtenderState(ExtenderSettings(), defaults), feed=feed) as base:
            until(lambda: get(base + "/readyz")[0] == 200, "ready")
            live = Live(served, watched, base + "/gpuplane", feed)
            assert live.filter([H100_A])["NodeNames"] == [H100_A]
            bound = copy.deepcopy(_pod(served, SECOND))
            bound["spec"]["nodeName"] = H100_A
            bound["status"] = {"phase": "Running", "qosClass": "Guaranteed"}
            watched.emit(PODS, "MODIFIED", bound)
            until(lambda: live.filter([H100_A])["FailedNodes"] == {H100_A: NUMA_REASON}, "seen")
            informers = feed.live.informers
    first = watched.watches(PODS)[0]
    assert first["sendInitialEvents"] == ["true"]
    assert first["resourceVersionMatch"] == ["NotOlderThan"]
    assert first["allowWatchBookmarks"] == ["true"] and "resourceVersion" not in first
    for path, key in ((NODES, "nodes"), (PODS, "pods")):
        if served_watch_list:
            assert watched.lists(path) == [] and informers[key].num_watch_lists == 1
            assert informers[key].watch_list
        else:
            assert len(watched.lists(path)) == 1 and informers[key].num_watch_lists == 0
            assert not informers[key].watch_list


def test_watch_list_needs_a_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplane.cli.main import run

    code = run(
        ["serve", "extender", "--snapshot", str(EXAMPLES / "mixed-cluster.yaml"), "--watch-list"]
    )
    assert code == 2 and "--watch-list needs --kubeconfig" in capsys.readouterr().err
