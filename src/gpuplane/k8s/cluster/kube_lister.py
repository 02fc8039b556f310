"""``ApiLister`` on the official ``kubernetes`` Python client (see docs/dependencies.md).

The client loads the kubeconfig (contexts, certificates, tokens, exec plugins) and sends the
requests; the generic ``call_api`` is used rather than the generated per-kind methods so that
every object stays the raw JSON the server sent (the generated models drop fields they do not
know, such as a newer server's) and CRDs, discovery and core kinds go one way. Paging is done
here with ``limit``/``continue`` so that no list is ever fetched whole.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import urllib3
from kubernetes import config as kube_config
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from gpuplane.core.errors import InputError, Location, UnavailableError
from gpuplane.core.textio import is_file
from gpuplane.k8s.cluster.api_lister import ListForbidden, ListNotFound, RawObject
from gpuplane.k8s.cluster.api_watcher import (
    EVENT_TYPES,
    Listed,
    WatchEvent,
    WatchExpired,
    WatchListRefused,
)

REQUEST_TIMEOUT_S = 30.0


class KubernetesApiLister:
    """Lists and watches through one ``kubernetes.client.ApiClient`` built from a kubeconfig
    (``ApiLister`` and ``ApiWatcher``)."""

    def __init__(self, client: ApiClient, server: str) -> None:
        self._client = client
        self.server = server

    @classmethod
    def from_kubeconfig(cls, path: Path, context: str | None) -> KubernetesApiLister:
        if not is_file(path):
            raise InputError("no such kubeconfig file", location=Location(source=str(path)))
        try:
            # The loader is one of the client's few unannotated functions.
            client = kube_config.new_client_from_config(  # type: ignore[no-untyped-call]
                config_file=str(path), context=context, persist_config=False
            )
        except (ConfigException, ValueError, KeyError, OSError) as exc:
            where = Location(source=str(path), field=f"contexts[{context}]" if context else None)
            raise InputError(f"cannot use this kubeconfig: {exc}", location=where) from exc
        client.configuration.retries = 1
        return cls(client, str(client.configuration.host))

    @classmethod
    def in_cluster(cls) -> KubernetesApiLister:
        """The pod's own service account (``--kubeconfig in-cluster``)."""
        try:
            kube_config.load_incluster_config()  # type: ignore[no-untyped-call]
        except ConfigException as exc:
            raise InputError(f"not running in a cluster: {exc}") from exc
        client = ApiClient()
        client.configuration.retries = 1
        return cls(client, str(client.configuration.host))

    @property
    def client(self) -> ApiClient:
        """The client, for the writer that shares its connection (``kube_writer``)."""
        return self._client

    def close(self) -> None:
        self._client.close()  # type: ignore[no-untyped-call]

    def _send(self, path: str, query: list[tuple[str, str]], timeout: Any) -> Any:
        # A path may carry its own query (``...?labelSelector=k%3Dv``): kept, before the pager's.
        path, _, own = path.partition("?")
        method, url, headers, body, post = self._client.param_serialize(
            "GET",
            path,
            query_params=[*parse_qsl(own), *query],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            return self._client.call_api(
                method,
                url,
                header_params=headers,
                body=body,
                post_params=post,
                _request_timeout=timeout,
            )
        except (urllib3.exceptions.HTTPError, ApiException, OSError) as exc:
            raise UnavailableError(
                f"cannot reach the API server at {self.server}: {_reason(exc)}"
            ) from exc

    def _get(self, path: str, query: list[tuple[str, str]]) -> tuple[int, Any]:
        resp = self._send(path, query, REQUEST_TIMEOUT_S)
        try:
            raw = resp.read()
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise UnavailableError(
                f"cannot reach the API server at {self.server}: {_reason(exc)}"
            ) from exc
        return int(resp.status), _decode(raw)

    def server_version(self) -> str | None:
        status, data = self._get("/version", [])
        if status != 200 or not isinstance(data, dict):
            return None
        version = data.get("gitVersion")
        return version if isinstance(version, str) else None

    def group_versions(self, group: str) -> tuple[str, ...] | None:
        status, data = self._get(f"/apis/{group}", [])
        if status == 404:
            return None
        self._check(status, f"/apis/{group}", data)
        versions = data.get("versions") if isinstance(data, dict) else None
        if not isinstance(versions, list):
            return ()
        return tuple(str(v["version"]) for v in versions if isinstance(v, dict) and "version" in v)

    def list(self, path: str, *, limit: int) -> Iterator[RawObject]:
        for items, _ in self._pages(path, limit):
            yield from items

    def list_versioned(self, path: str, *, limit: int) -> Listed:
        items: builtins.list[RawObject] = []
        version = ""
        for page, page_version in self._pages(path, limit):
            items.extend(page)
            version = page_version
        return Listed(tuple(items), version)

    def _pages(self, path: str, limit: int) -> Iterator[tuple[builtins.list[RawObject], str]]:
        """Each page's objects and the list's resourceVersion as that page gives it."""
        token = ""
        while True:
            query = [("limit", str(limit))] + ([("continue", token)] if token else [])
            status, data = self._get(path, query)
            self._check(status, path, data)
            if not isinstance(data, dict):
                raise UnavailableError(f"{self.server}{path} did not answer with a JSON list")
            items = [i for i in data.get("items") or [] if isinstance(i, dict)]
            meta = data.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            yield items, str(meta.get("resourceVersion") or "")
            token = str(meta.get("continue") or "")
            if not token:
                return

    def watch(self, path: str, resource_version: str, *, timeout_s: int) -> Iterator[WatchEvent]:
        query = [
            ("watch", "1"),
            ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(timeout_s)),
        ]
        return self._watch(path, query, timeout_s, watch_list=False)

    def watch_list(self, path: str, *, timeout_s: int) -> Iterator[WatchEvent]:
        # No resourceVersion: NotOlderThan "" is the most recent state (a consistent read).
        query = [
            ("watch", "1"),
            ("sendInitialEvents", "true"),
            ("resourceVersionMatch", "NotOlderThan"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(timeout_s)),
        ]
        return self._watch(path, query, timeout_s, watch_list=True)

    def _watch(
        self, path: str, query: builtins.list[tuple[str, str]], timeout_s: int, *, watch_list: bool
    ) -> Iterator[WatchEvent]:
        # The read timeout is past the server's own end of the stream, so a silent but live
        # watch is not cut; a dead connection still ends within it.
        resp = self._send(path, query, (REQUEST_TIMEOUT_S, timeout_s + REQUEST_TIMEOUT_S))
        raw = resp.response  # urllib3's response, not read yet (the client never preloads)
        try:
            if resp.status == 410:
                raise WatchExpired(path, _message(_decode(raw.data)))
            if watch_list and resp.status in (400, 422):
                raise WatchListRefused(path, _message(_decode(raw.data)))
            if resp.status != 200:
                self._check(resp.status, path, _decode(raw.data))
                raise UnavailableError(f"{self.server}{path} answered {resp.status} to a watch")
            yield from _events(raw.stream(amt=None, decode_content=True), path, self.server)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise UnavailableError(f"the watch of {path} dropped: {_reason(exc)}") from exc
        finally:
            raw.release_conn()

    def _check(self, status: int, path: str, data: Any) -> None:
        if status == 403:
            raise ListForbidden(path, _message(data))
        if status == 404:
            raise ListNotFound(path)
        if status >= 300:
            raise UnavailableError(
                f"the API server at {self.server} answered {status} for {path}: {_message(data)}"
            )


def _events(chunks: Iterator[bytes], path: str, server: str) -> Iterator[WatchEvent]:
    """Newline-delimited JSON watch events from a byte stream (chunks split anywhere)."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                yield _event(line, path, server)
    if buffer.strip():
        yield _event(buffer, path, server)


def _event(line: bytes, path: str, server: str) -> WatchEvent:
    try:
        data = json.loads(line)
    except ValueError:
        raise UnavailableError(f"{server}{path}: a watch line is not JSON") from None
    kind, obj = (data.get("type"), data.get("object")) if isinstance(data, dict) else (None, None)
    if kind not in EVENT_TYPES or not isinstance(obj, dict):
        raise UnavailableError(f"{server}{path}: a watch event without a known type and object")
    return WatchEvent(kind, obj)


def _decode(raw: bytes | None) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _message(data: Any) -> str:
    """The ``message`` of a ``Status`` body, or the body itself."""
    if isinstance(data, dict):
        return str(data.get("message") or "")
    return str(data or "").strip()[:200]


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason) if reason is not None else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__
