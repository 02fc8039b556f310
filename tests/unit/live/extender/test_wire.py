"""extender/v1 wire parsing: Go field names matched case-insensitively, nil as null, both
victim forms, and what a bad request is told."""

from __future__ import annotations

import json

import pytest

from gpuplane.fit.extender.decide import FilterDecision
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.live.extender.request_pod import needs_of
from gpuplane.live.extender.wire import (
    WireError,
    binding_args,
    decode,
    encode,
    extender_args,
    filter_result,
    preemption_args,
    read_extender_args,
)

POD = {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": []}}


def test_exact_names_win_over_folded_ones() -> None:
    args = extender_args({"nodenames": ["a"], "NodeNames": ["b"], "Pod": POD})
    assert args.node_names == ("b",)
    assert extender_args({"POD": POD, "NODENAMES": None}).node_names is None


def test_full_form_names_come_from_the_items() -> None:
    nodes = {"metadata": {}, "items": [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n2"}}]}
    args = extender_args({"Pod": POD, "Nodes": nodes, "NodeNames": None})
    assert args.names == ("n1", "n2")
    result = filter_result(FilterDecision(("n2",), {"n1": "x"}, {}), args)
    assert result["Nodes"] == {"metadata": {}, "items": [{"metadata": {"name": "n2"}}]}
    assert result["NodeNames"] is None and result["FailedNodes"] == {"n1": "x"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "not JSON"),
        (b"[1]", "a JSON list, not an object"),
        (b"{}", "Pod is missing"),
        (b'{"Pod": 3}', "Pod is not an object"),
        (b'{"Pod": {}, "NodeNames": "a"}', "NodeNames is not a list"),
        (b'{"Pod": {}, "Nodes": {"items": 1}}', "Nodes.items is not a list"),
    ],
)
def test_bad_requests_say_what_is_wrong(body: bytes, message: str) -> None:
    with pytest.raises(WireError, match=message):
        extender_args(decode(body))
    with pytest.raises(WireError, match=message):
        read_extender_args(body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"Pod": {}, "NodeNames": ["a", 1]}', "NodeNames is not a list of node names"),
        (b'{"Pod": {}, "Nodes": {"items": [{}, 2]}}', r"Nodes.items\[1\] is not an object"),
        (b'{"Pod": {}, "Nodes": []}', "Nodes is not an object"),
        (b'{"Pod": null}', "Pod is missing"),
        (b'{"Pod": {}, "NodeNames": [', "not JSON"),
        (b"null", "a JSON null, not an object"),
    ],
)
def test_bad_raw_requests_say_what_is_wrong(body: bytes, message: str) -> None:
    with pytest.raises(WireError, match=message):
        read_extender_args(body)


def _node(name: str, version: str, **extra: object) -> dict[str, object]:
    return {"metadata": {"name": name, "resourceVersion": version}, "spec": {}, **extra}


def test_raw_requests_match_go_names_case_insensitively() -> None:
    body = json.dumps({"pOD": POD, "nodenames": ["a"], "NodeNames": ["b"]}).encode()
    args = read_extender_args(body)
    assert args.pod == POD and args.node_names == ("b",) and args.nodes is None
    nodes = {"ITEMS": [_node("n1", "7")]}
    args = read_extender_args(json.dumps({"POD": POD, "NODES": nodes}).encode())
    assert args.names == ("n1",) and args.node_names is None
    assert read_extender_args(b'{"Pod": {}, "Nodes": {"items": null}}').nodes == ()


def test_full_form_answer_returns_the_nodes_byte_for_byte() -> None:
    # Spacing and key order as sent: the kept objects go back as the very bytes.
    kept = b'{ "metadata" : {"resourceVersion":"9","name":"n2"},"status":{"x": 1.50}}'
    body = (
        b'{"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":['
        + b'{"metadata":{"name":"n1","resourceVersion":"3"}},'
        + kept
        + b"]}}"
    )
    args = read_extender_args(body)
    assert args.names == ("n1", "n2")
    assert args.nodes is not None and args.nodes[1].version == "9"
    assert args.nodes[1].obj() == {
        "metadata": {"resourceVersion": "9", "name": "n2"},
        "status": {"x": 1.5},
    }
    out = encode(filter_result(FilterDecision(("n2",), {"n1": "x"}, {}), args))
    assert b'"items":[' + kept + b"]" in out
    assert json.loads(out) == {
        "Nodes": {"metadata": {}, "items": [json.loads(kept)]},
        "NodeNames": None,
        "FailedNodes": {"n1": "x"},
        "FailedAndUnresolvableNodes": {},
        "Error": "",
    }


def test_an_item_whose_metadata_is_odd_takes_the_plain_path() -> None:
    body = b'{"Pod":{},"Nodes":{"items":[{"metadata":{"name":3}},{"metadata":7},{}]}}'
    args = read_extender_args(body)
    assert args.nodes is not None
    assert [n.name for n in args.nodes] == ["3", "", ""]
    assert args.nodes[1].obj() == {"metadata": 7}


def test_victims_in_both_forms() -> None:
    meta = preemption_args(
        {
            "Pod": POD,
            "NodeNameToMetaVictims": {"n": {"Pods": [{"UID": "v1"}], "NumPDBViolations": 2}},
        }
    )
    assert meta.victims["n"].uids == ("v1",) and meta.victims["n"].num_pdb_violations == 2
    full = preemption_args(
        {
            "pod": POD,
            "nodenametovictims": {"n": {"pods": [{"metadata": {"uid": "v2"}}]}},
            "NodeNameToMetaVictims": None,
        }
    )
    assert full.victims["n"].uids == ("v2",)


def test_binding_args_need_names() -> None:
    args = binding_args({"podname": "p", "PodNamespace": "", "PodUID": "u", "Node": "n"})
    assert (args.pod_name, args.node) == ("p", "n")
    with pytest.raises(WireError, match="Node is missing"):
        binding_args({"PodName": "p", "PodNamespace": "t", "PodUID": "u"})


def test_needs_annotations() -> None:
    assert needs_of({}) == GpuNeeds()
    assert needs_of({"gpuplane.io/nvlink-island": "True", "gpuplane.io/min-ring-gbps": "300"}) == (
        GpuNeeds(True, 300.0)
    )
    with pytest.raises(WireError, match="expected GB/s"):
        needs_of({"gpuplane.io/min-ring-gbps": "fast"})
    with pytest.raises(WireError, match="expected true/false"):
        needs_of({"gpuplane.io/nvlink-island": "yes"})
