"""A container's ports, probes and command as the API server checks them on create.

kubernetes ``pkg/apis/core/validation/validation.go`` (v1.33, read through the code index):
``validateContainerPorts`` (port numbers 1..65535, IANA service names, unique names, protocol
TCP/UDP/SCTP after defaulting), ``validateProbe``/``validateHandler`` (exactly one handler, port
number or name, HTTP/HTTPS scheme, non-negative timings, ``successThreshold`` 1 for liveness and
startup probes). The twin does not run probes; a probe the API server would refuse is still an
error, because the object would never be created.
"""

from __future__ import annotations

from gpuplane.api.validation import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    port_name_errors,
    port_num_errors,
    render_value,
    required,
)
from gpuplane.k8s.field_errors import fail
from gpuplane.k8s.manifests.api_types import Container, Probe

PROTOCOLS = ("TCP", "UDP", "SCTP")
SCHEMES = ("HTTP", "HTTPS")


def check_ports(container: Container, where: str) -> None:
    names: set[str] = set()
    for i, port in enumerate(container.ports or ()):
        at = f"{where}.ports[{i}]"
        if port.name:
            for problem in port_name_errors(port.name):
                raise fail(invalid(port.name, problem), f"{at}.name")
            if port.name in names:
                raise fail(duplicate(port.name), f"{at}.name")
            names.add(port.name)
        if port.container_port == 0:
            raise fail(required(), f"{at}.containerPort")
        for problem in port_num_errors(port.container_port):
            raise fail(invalid(port.container_port, problem), f"{at}.containerPort")
        if port.host_port:
            for problem in port_num_errors(port.host_port):
                raise fail(invalid(port.host_port, problem), f"{at}.hostPort")
        if port.protocol is not None and port.protocol not in PROTOCOLS:
            raise fail(not_supported(port.protocol, PROTOCOLS), f"{at}.protocol")


def _port(value: int | str, at: str) -> None:
    problems = port_num_errors(value) if isinstance(value, int) else port_name_errors(value)
    for problem in problems:
        raise fail(invalid(value, problem), at)


def _handler(probe: Probe, at: str) -> None:
    handlers = [
        name
        for name, given in (
            ("exec", probe.exec_),
            ("httpGet", probe.http_get),
            ("tcpSocket", probe.tcp_socket),
            ("grpc", probe.grpc),
        )
        if given is not None
    ]
    if not handlers:
        raise fail(required("must specify a handler type"), at)
    if len(handlers) > 1:
        raise fail(forbidden("may not specify more than 1 handler type"), f"{at}.{handlers[1]}")
    if probe.exec_ is not None and not probe.exec_.command:
        raise fail(required(), f"{at}.exec.command")
    if probe.http_get is not None:
        get = probe.http_get
        if not get.path:
            raise fail(required(), f"{at}.httpGet.path")
        _port(get.port, f"{at}.httpGet.port")
        if get.scheme is not None and get.scheme not in SCHEMES:
            raise fail(not_supported(get.scheme, SCHEMES), f"{at}.httpGet.scheme")
    if probe.tcp_socket is not None:
        _port(probe.tcp_socket.port, f"{at}.tcpSocket.port")
    if probe.grpc is not None:
        _port(probe.grpc.port, f"{at}.grpc.port")


def check_probe(probe: Probe | None, at: str, *, readiness: bool) -> None:
    if probe is None:
        return
    _handler(probe, at)
    for key, value in (
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ):
        if value is not None and value < 0:
            raise fail(invalid(value, "must be greater than or equal to 0"), f"{at}.{key}")
    if not readiness and probe.success_threshold not in (None, 1):
        raise fail(invalid(probe.success_threshold, "must be 1"), f"{at}.successThreshold")


def check_container(container: Container, where: str) -> None:
    """Ports and probes of one container (``where``: its field path)."""
    check_ports(container, where)
    check_probe(container.liveness_probe, f"{where}.livenessProbe", readiness=False)
    check_probe(container.readiness_probe, f"{where}.readinessProbe", readiness=True)
    check_probe(container.startup_probe, f"{where}.startupProbe", readiness=False)


def check_claim_names(containers: list[Container], pod_claims: list[str], path: str) -> None:
    """``validateResourceClaimNames``: a container's ``resources.claims[].name`` must be one of
    the pod's ``spec.resourceClaims`` (else the container would get no device)."""
    for i, container in enumerate(containers):
        refs = container.resources.claims if container.resources is not None else None
        seen: set[tuple[str, str | None]] = set()
        for j, ref in enumerate(refs or ()):
            at = f"{path}[{i}].resources.claims[{j}]"
            if not ref.name:
                raise fail(required(), f"{at}.name")
            if (ref.name, ref.request) in seen:
                raise fail(duplicate(ref.name), at)
            seen.add((ref.name, ref.request))
            if ref.name not in pod_claims:
                listed = ", ".join(pod_claims) if pod_claims else None
                detail = "must be one of the names in pod.spec.resourceClaims" + (
                    f": {listed}" if listed else " which is empty"
                )
                raise fail(f"Not found: {render_value(ref.name)}: {detail}", at)
