"""``ApiWriter`` on the official ``kubernetes`` client (the second and last module importing it).

It shares the lister's ``ApiClient`` (one kubeconfig, one connection pool) and sends raw JSON
through the generic ``call_api``, as the lister reads: the bodies are exactly what the callers
built.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from gpuplane.core.errors import UnavailableError
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.api_writer import WriteFailed
from gpuplane.k8s.cluster.kube_lister import REQUEST_TIMEOUT_S, KubernetesApiLister

MERGE_PATCH = "application/merge-patch+json"
JSON = "application/json"


class KubernetesApiWriter:
    def __init__(self, client: ApiClient, server: str) -> None:
        self._client = client
        self.server = server

    @classmethod
    def for_lister(cls, lister: KubernetesApiLister) -> KubernetesApiWriter:
        return cls(lister.client, lister.server)

    def _send(self, method: str, path: str, body: Any, content_type: str = JSON) -> tuple[int, Any]:
        m, url, headers, data, post = self._client.param_serialize(
            method,
            path,
            header_params={"Accept": JSON, "Content-Type": content_type},
            body=body,
            auth_settings=["BearerToken"],
        )
        try:
            resp = self._client.call_api(
                m,
                url,
                header_params=headers,
                body=data,
                post_params=post,
                _request_timeout=REQUEST_TIMEOUT_S,
            )
            raw = resp.read()  # type: ignore[no-untyped-call]
        except (urllib3.exceptions.HTTPError, ApiException, OSError) as exc:
            raise UnavailableError(f"cannot reach the API server at {self.server}: {exc}") from exc
        try:
            decoded = json.loads(raw) if raw else None
        except ValueError:
            decoded = None
        return resp.status, decoded

    def _ok(self, method: str, path: str, status: int, data: Any) -> None:
        if status >= 300:
            detail = str(data.get("message") or "") if isinstance(data, dict) else ""
            raise WriteFailed(method, path, status, detail)

    def patch_node_labels(self, node: str, labels: Mapping[str, str | None]) -> None:
        path = f"/api/v1/nodes/{node}"
        body = {"metadata": {"labels": dict(labels)}}
        self._ok("PATCH", path, *self._send("PATCH", path, body, MERGE_PATCH))

    def upsert_config_map(self, namespace: str, name: str, body: RawObject) -> str:
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        status, data = self._send("POST", path, body)
        if status != 409:
            self._ok("POST", path, status, data)
            return "created"
        status, data = self._send("PUT", f"{path}/{name}", body)
        self._ok("PUT", f"{path}/{name}", status, data)
        return "replaced"

    def create_event(self, namespace: str, body: RawObject) -> None:
        path = f"/api/v1/namespaces/{namespace}/events"
        self._ok("POST", path, *self._send("POST", path, body))

    def evict_pod(self, namespace: str, name: str) -> bool:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        status, data = self._send("POST", path, body)
        if status == 429:
            return False
        self._ok("POST", path, status, data)
        return True

    def bind_pod(self, namespace: str, name: str, uid: str, node: str) -> None:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
        # The uid makes the server refuse a binding meant for an older pod of the same name.
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        self._ok("POST", path, *self._send("POST", path, body))
