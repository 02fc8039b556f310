"""The router's engines from a Kubernetes Service: its EndpointSlices, listed and watched.

``--service NAMESPACE/NAME[:PORT]`` (and ``--prefill-service``/``--decode-service``) follows the
EndpointSlices (``discovery.k8s.io/v1``, GA since Kubernetes 1.21) labelled
``kubernetes.io/service-name=NAME`` in the namespace, as kube-proxy and the Gateway API
inference extension's endpoint pickers do, so the router sees every pod of the Service instead
of the Service's one virtual IP:

- an endpoint is routed to while ``conditions.ready`` is true or absent (the API: a nil value is
  an unknown state, which "in most cases consumers should interpret as ready"); a terminating
  pod's endpoint is not ready (unless the Service sets ``publishNotReadyAddresses``), so a pod
  scaled down stops receiving new requests as soon as the EndpointSlice controller says so;
- of an endpoint's ``addresses`` the first is used (the API: they "are all assumed to be
  fungible and clients may choose to only use the first element"); IPv6 addresses are
  bracketed in the URL; ``FQDN`` slices are used as host names;
- the port: ``PORT`` as a name picks the slice port of that name (the Service port's name), as a
  number the slice port with that number (the pod's port); without ``PORT`` the slice's only
  port, else the one named ``http``; a slice without a matching port contributes nothing, and
  the router says so in its log;
- the same address in two slices (while the controller moves endpoints) is one engine.

The slices are kept by an :class:`~gpuplane.k8s.cluster.informer.Informer` (list, then watch
with bookmarks, relist on 410, backoff) on a daemon thread; each change is handed to the
router's event loop. Needs ``list`` and ``watch`` on ``endpointslices`` in the namespace.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gpuplane.core.errors import InputError
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.informer import Informer, InformerSettings
from gpuplane.k8s.cluster.kube_lister import KubernetesApiLister
from gpuplane.k8s.cluster.live_store import LiveStore
from gpuplane.serving.routing.router import Role

log = logging.getLogger("gpuplane.router.discovery")
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
_DNS_LABEL = "a lowercase RFC 1123 label (a-z, 0-9, '-', starting and ending alphanumeric)"


def _is_dns_label(text: str) -> bool:
    ok = all(c.isdigit() or ("a" <= c <= "z") or c == "-" for c in text)
    return ok and 0 < len(text) <= 63 and text[0] != "-" and text[-1] != "-"


@dataclass(frozen=True, slots=True)
class ServiceRef:
    """``NAMESPACE/NAME[:PORT]`` and the role of the engines behind it."""

    namespace: str
    name: str
    port: str | int | None
    role: Role

    @property
    def key(self) -> str:
        return f"{self.role}:{self.namespace}/{self.name}"

    @property
    def path(self) -> str:
        selector = quote(f"{SERVICE_NAME_LABEL}={self.name}", safe="")
        return (
            f"/apis/discovery.k8s.io/v1/namespaces/{self.namespace}/endpointslices"
            f"?labelSelector={selector}"
        )


def parse_service_ref(text: str, role: Role, option: str) -> ServiceRef:
    """``NAMESPACE/NAME[:PORT]``, checked as the API server checks the names."""
    expected = f"{option} NAMESPACE/NAME[:PORT], e.g. llm/vllm-engine:http"
    ref, _, port_text = text.partition(":")
    namespace, slash, name = ref.partition("/")
    if not slash:
        raise InputError(f"{option} {text!r} names no namespace", expected=expected)
    for what, value in (("namespace", namespace), ("Service name", name)):
        if not _is_dns_label(value):
            raise InputError(f"{option} {text!r}: {what} {value!r}", expected=_DNS_LABEL)
    port: str | int | None = None
    if port_text:
        if port_text.isdigit():
            port = int(port_text)
            if not 1 <= port <= 65535:
                raise InputError(f"{option} {text!r}: port {port}", expected="1-65535")
        elif _is_dns_label(port_text) and len(port_text) <= 15:
            port = port_text
        else:
            raise InputError(
                f"{option} {text!r}: port {port_text!r}",
                expected="a port number or an IANA_SVC_NAME (at most 15 characters, a-z0-9-)",
            )
    return ServiceRef(namespace, name, port, role)


def _port(slice_: RawObject, ref: ServiceRef) -> int | None:
    ports = [p for p in slice_.get("ports") or [] if isinstance(p, dict)]
    ports = [p for p in ports if (p.get("protocol") or "TCP") == "TCP" and p.get("port")]
    if isinstance(ref.port, int):
        chosen = [p for p in ports if p.get("port") == ref.port]
    elif isinstance(ref.port, str):
        chosen = [p for p in ports if (p.get("name") or "") == ref.port]
    else:
        chosen = ports if len(ports) == 1 else [p for p in ports if p.get("name") == "http"]
    return int(chosen[0]["port"]) if chosen else None


def _host(address: str, address_type: str) -> str:
    if address_type == "IPv6" or (address_type != "FQDN" and ":" in address):
        return f"[{ipaddress.IPv6Address(address)}]"
    return address


def endpoint_urls(slices: Iterable[RawObject], ref: ServiceRef) -> tuple[list[str], list[str]]:
    """The ready engines' base URLs (sorted, each once) and what was skipped, in words."""
    urls: set[str] = set()
    skipped: list[str] = []
    for s in sorted(slices, key=lambda s: str((s.get("metadata") or {}).get("name"))):
        name = (s.get("metadata") or {}).get("name")
        port = _port(s, ref)
        if port is None:
            want = ref.port if ref.port is not None else "its only port or one named http"
            skipped.append(f"EndpointSlice {ref.namespace}/{name} has no TCP port {want}")
            continue
        address_type = str(s.get("addressType") or "IPv4")
        for endpoint in s.get("endpoints") or []:
            if not isinstance(endpoint, dict):
                continue
            conditions = endpoint.get("conditions") or {}
            addresses = endpoint.get("addresses") or []
            if conditions.get("ready") is False or not addresses:
                continue
            try:
                urls.add(f"http://{_host(str(addresses[0]), address_type)}:{port}")
            except ValueError:
                skipped.append(f"EndpointSlice {ref.namespace}/{name}: address {addresses[0]!r}")
    return sorted(urls), skipped


OnChange = Callable[[ServiceRef, list[str]], None]


class ServiceDiscovery:
    """Mutable owner of the informers (one per Service) and their threads."""

    def __init__(
        self,
        refs: Sequence[ServiceRef],
        lister: Any,
        settings: InformerSettings | None = None,
    ) -> None:
        self.refs = tuple(refs)
        self.lister = lister
        self.store = LiveStore()
        self.informers = [
            Informer(lister, self.store, ref.key, ref.path, settings) for ref in self.refs
        ]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._seen: dict[str, tuple[str, ...]] = {}

    @classmethod
    def connect(
        cls, refs: Sequence[ServiceRef], kubeconfig: Path | None, context: str | None
    ) -> ServiceDiscovery:
        """Through the kubeconfig, or the pod's service account without one."""
        if kubeconfig is None:
            lister = KubernetesApiLister.in_cluster()
        else:
            lister = KubernetesApiLister.from_kubeconfig(kubeconfig, context)
        return cls(refs, lister)

    def current(self) -> dict[ServiceRef, list[str]]:
        _, objects = self.store.read()
        out: dict[ServiceRef, list[str]] = {}
        for ref in self.refs:
            urls, skipped = endpoint_urls(objects.get(ref.key, ()), ref)
            for why in skipped:
                log.warning("endpoint skipped", extra={"service": ref.key, "why": why})
            out[ref] = urls
        return out

    def start(self, loop: asyncio.AbstractEventLoop, on_change: OnChange) -> None:
        def changed() -> None:
            loop.call_soon_threadsafe(self._deliver, on_change)

        self.store.subscribe(changed)
        for informer in self.informers:
            t = threading.Thread(
                target=informer.run, args=(self._stop,), daemon=True, name=f"eps-{informer.key}"
            )
            t.start()
            self._threads.append(t)

    def _deliver(self, on_change: OnChange) -> None:
        for ref, urls in self.current().items():
            if self.store.listed([ref.key]) and self._seen.get(ref.key) != tuple(urls):
                self._seen[ref.key] = tuple(urls)
                log.info("engines", extra={"service": ref.key, "engines": urls})
                on_change(ref, urls)

    def stop(self) -> None:
        self._stop.set()
        close = getattr(self.lister, "close", None)
        if close is not None:
            close()
