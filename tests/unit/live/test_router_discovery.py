"""The router's Service discovery: ``NAMESPACE/NAME[:PORT]`` checked, and EndpointSlices read
as the API documents them (ready nil is ready, first address, port by name or number)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.core.errors import InputError
from gpuplane.live.router.discovery import ServiceRef, endpoint_urls, parse_service_ref


def ref(port: str | int | None = None) -> ServiceRef:
    return ServiceRef("llm", "engine", port, "both")


def eps(
    name: str, port: list[dict[str, Any]], *endpoints: dict[str, Any], kind: str = "IPv4"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/service-name": "engine"}},
        "addressType": kind,
        "ports": port,
        "endpoints": list(endpoints),
    }


def ep(address: str, ready: bool | None = True) -> dict[str, Any]:
    conditions = {} if ready is None else {"ready": ready}
    return {"addresses": [address, "10.9.9.9"], "conditions": conditions}


HTTP = [{"name": "http", "port": 8000, "protocol": "TCP"}]


def test_ready_endpoints_first_address_each_once() -> None:
    slices = [
        eps("engine-a", HTTP, ep("10.0.0.1"), ep("10.0.0.2", None), ep("10.0.0.3", False)),
        eps("engine-b", HTTP, ep("10.0.0.1")),  # the same pod in two slices, while moving
    ]
    urls, skipped = endpoint_urls(slices, ref())
    assert urls == ["http://10.0.0.1:8000", "http://10.0.0.2:8000"]
    assert skipped == []


def test_ports_by_name_number_or_the_only_one() -> None:
    two = [{"name": "metrics", "port": 9400}, {"name": "http", "port": 8000}]
    urls, _ = endpoint_urls([eps("a", two, ep("10.0.0.1"))], ref())
    assert urls == ["http://10.0.0.1:8000"]  # no port given: the one named http
    assert endpoint_urls([eps("a", two, ep("10.0.0.1"))], ref("metrics"))[0] == [
        "http://10.0.0.1:9400"
    ]
    assert endpoint_urls([eps("a", two, ep("10.0.0.1"))], ref(9400))[0] == ["http://10.0.0.1:9400"]
    unnamed = [{"name": "", "port": 8080}]
    assert endpoint_urls([eps("a", unnamed, ep("10.0.0.1"))], ref())[0] == ["http://10.0.0.1:8080"]
    udp = [{"name": "http", "port": 8000, "protocol": "UDP"}]
    urls, skipped = endpoint_urls([eps("a", udp, ep("10.0.0.1"))], ref("http"))
    assert urls == [] and skipped == ["EndpointSlice llm/a has no TCP port http"]


def test_ipv6_is_bracketed_and_fqdn_kept() -> None:
    urls, _ = endpoint_urls([eps("a", HTTP, ep("fd00::1"), kind="IPv6")], ref())
    assert urls == ["http://[fd00::1]:8000"]
    urls, _ = endpoint_urls([eps("a", HTTP, ep("engine-0.llm.svc"), kind="FQDN")], ref())
    assert urls == ["http://engine-0.llm.svc:8000"]


def test_the_path_selects_the_service_slices() -> None:
    assert ref().path == (
        "/apis/discovery.k8s.io/v1/namespaces/llm/endpointslices"
        "?labelSelector=kubernetes.io%2Fservice-name%3Dengine"
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("engine", "names no namespace"),
        ("LLM/engine", "namespace 'LLM'"),
        ("llm/-engine", "Service name '-engine'"),
        ("llm/engine:0", "port 0"),
        ("llm/engine:70000", "port 70000"),
        ("llm/engine:http_port", "port 'http_port'"),
        ("llm/engine:a-very-long-port-name", "port 'a-very-long-port-name'"),
    ],
)
def test_bad_references_are_refused(text: str, words: str) -> None:
    with pytest.raises(InputError) as info:
        parse_service_ref(text, "both", "--service")
    assert words in str(info.value) and "--service" in str(info.value)


def test_good_references() -> None:
    assert parse_service_ref("llm/engine", "decode", "--decode-service") == ServiceRef(
        "llm", "engine", None, "decode"
    )
    assert parse_service_ref("llm/engine:8000", "both", "--service").port == 8000
    assert parse_service_ref("llm/engine:http", "both", "--service").port == "http"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--service", "engine"], "--service 'engine' names no namespace"),
        (["--engine", "http://a:1", "--kubeconfig", "k"], "--kubeconfig and --context need"),
        (["--prefill-service", "llm/p"], "no engine to serve requests"),
        (["--service", "llm/e", "--context", "c"], "--context needs --kubeconfig"),
        (["--service", "llm/e", "--kubeconfig", "/nonexistent"], "no such kubeconfig file"),
    ],
)
def test_the_command_refuses_bad_discovery_options(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplane.cli.main import run

    assert run(["serve", "router", *args]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert words in err and "Traceback" not in err
