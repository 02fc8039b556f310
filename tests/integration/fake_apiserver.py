"""A loopback stand-in for kube-apiserver's read side, for the snapshot tests.

It answers ``/version``, group discovery (``/apis/GROUP``) and cluster-wide list paths with
API-shaped JSON built only from the objects a test hands it: ``limit``/``continue`` paging
(opaque tokens, ``remainingItemCount``), ``Status`` bodies for 403 and 404 as the real server
words them, and 405 for anything but GET, recorded so a test can assert nothing was written.
With ``accept_writes`` it takes the controllers' writes instead (``_accept_write``) and records
their bodies in ``writes``.
It runs on 127.0.0.1, an OS-chosen port, in a thread that stops when the context ends.
``running_watched`` adds watches (``Watched``): lists at a resourceVersion and a watch stream
of the events a test writes.
"""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from gpuplane.k8s.cluster.api_watcher import INITIAL_EVENTS_END

Obj = dict[str, Any]


@dataclass(frozen=True)
class Written:
    """One write request as the server received it."""

    method: str
    path: str
    content_type: str
    body: Any


@dataclass
class Served:
    """What the fake server holds and what it saw."""

    lists: dict[str, list[Obj]]  # list path -> objects, e.g. "/api/v1/nodes"
    groups: dict[str, list[str]]  # API group -> versions served, preferred first
    forbidden: set[str] = field(default_factory=set)  # paths answering 403
    git_version: str = "v1.31.2"
    max_page: int = 10_000  # the server's own cap on a page, below any client limit
    requests: list[tuple[str, str, dict[str, list[str]], str]] = field(default_factory=list)
    # Writes (see _answer_write): off by default, so a read-only test gets 405 for any write.
    accept_writes: bool = False
    writes: list[Written] = field(default_factory=list)
    refuse_evictions: set[str] = field(default_factory=set)  # "namespace/name" answering 429
    bound: dict[str, str] = field(default_factory=dict)  # "namespace/name" -> node, by Bindings


def _status(code: int, reason: str, message: str) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _forbidden(path: str) -> Obj:
    parts = path.strip("/").split("/")
    group = "" if parts[0] == "api" else parts[1]
    resource = parts[-1]
    return _status(
        403,
        "Forbidden",
        f'{resource} is forbidden: User "system:serviceaccount:default:reader" cannot list '
        f'resource "{resource}" in API group "{group}" at the cluster scope',
    )


def _page(served: Served, path: str, query: dict[str, list[str]]) -> Obj:
    items = served.lists[path]
    start = int(base64.b64decode(query["continue"][0]).decode()) if "continue" in query else 0
    limit = int(query.get("limit", ["0"])[0]) or len(items)
    end = min(start + min(limit, served.max_page), len(items))
    meta: Obj = {"resourceVersion": "4242"}
    if end < len(items):
        meta["continue"] = base64.b64encode(str(end).encode()).decode()
        meta["remainingItemCount"] = len(items) - end
    kind = (items[0]["kind"] if items else "Object") + "List"
    api_version = items[0]["apiVersion"] if items else "v1"
    return {"kind": kind, "apiVersion": api_version, "metadata": meta, "items": items[start:end]}


def _answer(served: Served, path: str, query: dict[str, list[str]]) -> tuple[int, Obj]:
    if path == "/version":
        return 200, {"major": "1", "minor": "31", "gitVersion": served.git_version}
    if path in served.forbidden:
        return 403, _forbidden(path)
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[0] == "apis":
        versions = served.groups.get(parts[1])
        if versions is None:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        listed = [{"groupVersion": f"{parts[1]}/{v}", "version": v} for v in versions]
        return 200, {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": parts[1],
            "versions": listed,
            "preferredVersion": listed[0],
        }
    if path in served.lists:
        return 200, _page(served, path, query)
    return 404, _status(404, "NotFound", "the server could not find the requested resource")


def _accept_write(served: Served, method: str, path: str, write: Written) -> tuple[int, Obj]:
    """Record a write and answer as kube-apiserver would for the paths the controllers use:
    PATCH a node, POST (409 when it exists) and PUT a ConfigMap, POST an Event, POST an
    Eviction (429 for pods in ``refuse_evictions``), POST a Binding (409 when the pod is already
    in ``bound``, worded as the registry's BindingREST does)."""
    served.writes.append(write)
    parts = path.strip("/").split("/")
    body = write.body if isinstance(write.body, dict) else {}
    if method == "PATCH" and parts[:3] == ["api", "v1", "nodes"] and len(parts) == 4:
        return 200, {"kind": "Node", "apiVersion": "v1", "metadata": {"name": parts[3]}}
    if method == "POST" and parts[-1] == "configmaps":
        existing = served.lists.setdefault(path, [])
        name = body.get("metadata", {}).get("name")
        if any(o.get("metadata", {}).get("name") == name for o in existing):
            return 409, _status(409, "AlreadyExists", f'configmaps "{name}" already exists')
        existing.append(body)
        return 201, body
    if method == "PUT" and len(parts) >= 2 and parts[-2] == "configmaps":
        listed = served.lists.setdefault("/" + "/".join(parts[:-1]), [])
        listed[:] = [o for o in listed if o.get("metadata", {}).get("name") != parts[-1]]
        listed.append(body)
        return 200, body
    if method == "POST" and parts[-1] == "events":
        return 201, body
    if method == "POST" and parts[-1] == "eviction":
        if f"{parts[3]}/{parts[5]}" in served.refuse_evictions:
            return 429, _status(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
            )
        return 201, _status(201, "", "")
    if method == "POST" and parts[-1] == "binding" and len(parts) == 7:
        key, node = f"{parts[3]}/{parts[5]}", body.get("target", {}).get("name", "")
        if key in served.bound:
            return 409, _status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{parts[5]}": pod {parts[5]} is '
                f'already assigned to node "{served.bound[key]}"',
            )
        served.bound[key] = node
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    return 404, _status(404, "NotFound", "the server could not find the requested resource")


class _Handler(BaseHTTPRequestHandler):
    served: Served  # set on the subclass ``_handler`` makes

    def _reply(self, code: int, body: Obj) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> tuple[str, dict[str, list[str]]]:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        auth = self.headers.get("Authorization", "")
        self.served.requests.append((self.command, url.path, query, auth))
        return url.path, query

    def do_GET(self) -> None:
        path, query = self._record()
        self._reply(*_answer(self.served, path, query))

    def _refuse(self) -> None:
        path, _ = self._record()
        if self.served.accept_writes and self.command != "DELETE":
            self._reply(*_accept_write(self.served, self.command, path, self._body()))
            return
        self._reply(405, _status(405, "MethodNotAllowed", "the fake server only reads"))

    def _body(self) -> Written:
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size) if size else b""
        body = json.loads(raw) if raw else None
        kind = self.headers.get("Content-Type", "")
        return Written(self.command, urlsplit(self.path).path, kind, body)

    do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: pytest runs with -W error and a clean output."""


def _handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        pass

    Handler.served = served
    return Handler


@contextmanager
def running(served: Served) -> Iterator[str]:
    """Serve ``served`` on 127.0.0.1 and yield its ``http://127.0.0.1:PORT`` URL."""
    with _serving(_handler(served)) as url:
        yield url


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def kubeconfig_text(contexts: dict[str, str], current: str, token: str = "test-token") -> str:
    """A kubeconfig with one cluster per context (name -> server URL), a bearer token user."""
    clusters = [{"name": n, "cluster": {"server": url}} for n, url in contexts.items()]
    ctxs = [{"name": n, "context": {"cluster": n, "user": "reader"}} for n in contexts]
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": clusters,
            "users": [{"name": "reader", "user": {"token": token}}],
            "contexts": ctxs,
            "current-context": current,
        }
    )


@dataclass
class Watched:
    """The watch side of the fake server: one resourceVersion counter for every path, and the
    events a test writes (``emit``, ``bookmark``, ``expire``), kept per path as the API
    server's watch cache keeps them, so a watch from RV streams those after RV."""

    served: Served
    version: int = 100
    stream_s: float | None = None  # end every stream after this, if before timeoutSeconds
    # Watch-list (sendInitialEvents=true), as Kubernetes 1.32 serves it; False: refused with
    # the 422 of a server without the WatchList feature gate.
    watch_list: bool = True
    events: dict[str, list[tuple[int, Obj]]] = field(default_factory=dict)
    closing: bool = False
    cond: threading.Condition = field(default_factory=threading.Condition)

    def _add(self, path: str, event: Obj) -> None:
        with self.cond:
            self.version += 1
            self.events.setdefault(path, []).append((self.version, event))
            self.cond.notify_all()

    def emit(self, path: str, kind: str, obj: Obj) -> None:
        """ADDED, MODIFIED or DELETED ``obj`` at the next resourceVersion: the list of ``path``
        changes with it, and watches of ``path`` stream it."""
        with self.cond:
            obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.version + 1)}}
            name = (obj["metadata"].get("namespace"), obj["metadata"]["name"])
            listed = self.served.lists.setdefault(path, [])
            listed[:] = [o for o in listed if _name(o) != name]
            if kind != "DELETED":
                listed.append(obj)
            self._add(path, {"type": kind, "object": obj})

    def bookmark(self, path: str, kind: str = "Pod", api_version: str = "v1") -> None:
        meta = {"resourceVersion": str(self.version + 1)}
        self._add(
            path,
            {
                "type": "BOOKMARK",
                "object": {"kind": kind, "apiVersion": api_version, "metadata": meta},
            },
        )

    def expire(self, path: str) -> None:
        """An ERROR 410 to the watches of ``path``, as when their version left etcd's window."""
        status = _status(410, "Expired", "too old resource version: 1 (100)")
        self._add(path, {"type": "ERROR", "object": status})

    def watches(self, path: str) -> list[dict[str, list[str]]]:
        """The queries of the watch requests seen for ``path``."""
        return [q for m, p, q, _ in self.served.requests if p == path and "watch" in q]

    def lists(self, path: str) -> list[dict[str, list[str]]]:
        return [q for m, p, q, _ in self.served.requests if p == path and "watch" not in q]


def _name(obj: Obj) -> tuple[object, object]:
    meta = obj.get("metadata", {})
    return meta.get("namespace"), meta.get("name")


def _watch_list_refusal(watched: Watched, query: dict[str, list[str]]) -> str | None:
    if not watched.watch_list:
        return (
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the "
            "WatchList feature gate is enabled"
        )
    if query.get("resourceVersionMatch") != ["NotOlderThan"]:
        return "resourceVersionMatch: Forbidden: sendInitialEvents requires NotOlderThan"
    return None


def _watch_handler(served: Served, watched: Watched) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        protocol_version = "HTTP/1.1"  # chunked streams, as the real server sends watches

        def do_GET(self) -> None:
            path, query = self._record()
            if query.get("watch", [""])[0] in ("1", "true"):
                if query.get("sendInitialEvents", [""])[0] == "true":
                    self._watch_list(path, query)
                    return
                self._stream(path, query)
                return
            code, body = _answer(served, path, query)
            if code == 200 and "items" in body:
                body["metadata"]["resourceVersion"] = str(watched.version)
            self._reply(code, body)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _watch_list(self, path: str, query: dict[str, list[str]]) -> None:
            """The objects of ``path`` as ADDED events, the initial-events-end bookmark at the
            current version, then the watch from it."""
            refusal = _watch_list_refusal(watched, query)
            if refusal is not None:
                self._reply(422, _status(422, "Invalid", refusal))
                return
            with watched.cond:
                at = watched.version
                objects = [copy.deepcopy(o) for o in served.lists.get(path, [])]
            end = {"resourceVersion": str(at), "annotations": {INITIAL_EVENTS_END: "true"}}
            first = [{"type": "ADDED", "object": o} for o in objects]
            kind = objects[0].get("kind", "Pod") if objects else "Pod"
            first.append({"type": "BOOKMARK", "object": {"kind": kind, "metadata": end}})
            self._stream(path, {**query, "resourceVersion": [str(at)]}, first)

        def _stream(
            self, path: str, query: dict[str, list[str]], first: list[Obj] | None = None
        ) -> None:
            sent = int(query.get("resourceVersion", ["0"])[0] or 0)
            limit = float(query.get("timeoutSeconds", ["300"])[0])
            if watched.stream_s is not None:
                limit = min(limit, watched.stream_s)
            deadline = time.monotonic() + limit
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in first or ():
                self._chunk(json.dumps(event).encode() + b"\n")
            ended = False
            while not ended and not watched.closing and time.monotonic() < deadline:
                with watched.cond:
                    todo = [(v, e) for v, e in watched.events.get(path, []) if v > sent]
                    if not todo:
                        watched.cond.wait(0.05)
                for version, event in todo:
                    self._chunk(json.dumps(event).encode() + b"\n")
                    sent = version
                    if event["type"] == "ERROR":  # the server ends a watch after an ERROR
                        ended = True
                        break
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

    Handler.served = served
    return Handler


@contextmanager
def running_watched(served: Served, watched: Watched) -> Iterator[str]:
    """``running``, with watches: ``GET PATH?watch=1`` streams ``watched``'s events for PATH
    (newline-delimited JSON, chunked, ending at ``timeoutSeconds``), and lists say the current
    resourceVersion."""
    try:
        with _serving(_watch_handler(served, watched)) as url:
            yield url
    finally:
        watched.closing = True
