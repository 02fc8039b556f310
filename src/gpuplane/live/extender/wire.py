"""The extender/v1 wire format, read and written as kube-scheduler does.

The Go structs have no json tags, so their keys are the Go field names (``Pod``, ``NodeNames``)
and Go's encoding/json matches them case-insensitively (an exact match first): ``nodenames``
and ``NODENAMES`` are ``NodeNames``. Nil pointers travel as ``null``. The objects inside (Pod,
NodeList) carry their own camelCase keys, read as the API server writes them.

Results are written with the Go names and every field present, as the scheduler's own encoder
would write them (``null`` for nil).

Bodies are read with msgspec (docs/dependencies.md): ``read_extender_args`` decodes the top
level into raw values first, so a full-form request's Node objects stay bytes
(:mod:`gpuplane.live.extender.wire_nodes`); ``extender_args`` reads an already decoded mapping
the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from gpuplane.fit.extender.decide import MAX_PRIORITY, FilterDecision, HostScore
from gpuplane.fit.extender.fast_scores import Scores
from gpuplane.live.extender.wire_nodes import WireNode, nodes_of_list


class WireError(Exception):
    """A request kube-scheduler (or whoever sent it) got wrong; answered in the Error field."""


def _field(obj: Mapping[str, Any], name: str) -> Any:
    if name in obj:
        return obj[name]
    folded = name.casefold()
    for key, value in obj.items():
        if isinstance(key, str) and key.casefold() == folded:
            return value
    return None


_ANY = msgspec.json.Decoder()
_RAW_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_NAMES = msgspec.json.Decoder(list[str])
_JSON_TYPES = {dict: "object", list: "list", str: "str", int: "int", float: "float"}


def _not_json(exc: Exception) -> WireError:
    return WireError(f"the request body is not JSON: {exc}")


def _not_object(data: Any) -> WireError:
    kind = "null" if data is None else _JSON_TYPES.get(type(data), type(data).__name__)
    return WireError(f"the request body is a JSON {kind}, not an object")


def decode(body: bytes) -> dict[str, Any]:
    try:
        data = _ANY.decode(body)
    except msgspec.DecodeError as exc:
        raise _not_json(exc) from None
    if not isinstance(data, dict):
        raise _not_object(data)
    return data


def encode(obj: Any) -> bytes:
    """A result as JSON (``msgspec.Raw`` values are written as the bytes they hold)."""
    return msgspec.json.encode(obj)


def _is_null(raw: msgspec.Raw | None) -> bool:
    return raw is None or (len(raw) == 4 and bytes(raw) == b"null")


def _raw_nodes(raw: msgspec.Raw) -> tuple[WireNode, ...]:
    fast = nodes_of_list(raw)
    if fast is not None:
        return fast
    try:
        node_list = _RAW_OBJECT.decode(raw)
    except msgspec.DecodeError:
        raise WireError("Nodes is not an object") from None
    items_raw = _field(node_list, "items")
    if _is_null(items_raw):
        return ()
    try:
        items = _RAW_LIST.decode(items_raw)
    except msgspec.DecodeError:
        raise WireError("Nodes.items is not a list") from None
    out = []
    for i, item in enumerate(items):
        node = WireNode.from_raw(item)
        if node is None:
            raise WireError(f"Nodes.items[{i}] is not an object")
        out.append(node)
    return tuple(out)


def read_extender_args(body: bytes) -> ExtenderArgs:
    """``extender_args(decode(body))``, but a full form's Node objects are left as bytes."""
    try:
        top = _RAW_OBJECT.decode(body)
    except msgspec.ValidationError:
        raise _not_object(decode(body)) from None
    except msgspec.DecodeError as exc:
        raise _not_json(exc) from None
    pod_raw, nodes_raw = _field(top, "Pod"), _field(top, "Nodes")
    pod = _object(None if _is_null(pod_raw) else _ANY.decode(pod_raw), "Pod")
    nodes = None if _is_null(nodes_raw) else _raw_nodes(nodes_raw)
    names_raw = _field(top, "NodeNames")
    names: tuple[str, ...] | None = None
    if not _is_null(names_raw):
        try:
            names = tuple(_NAMES.decode(names_raw))
        except msgspec.ValidationError:
            raise WireError("NodeNames is not a list of node names") from None
    return ExtenderArgs(pod, nodes, names)


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(f"{what} is {'missing' if value is None else 'not an object'}")
    return value


def _names(value: Any, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise WireError(f"{what} is not a list of node names")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class ExtenderArgs:
    pod: dict[str, Any]
    nodes: tuple[WireNode, ...] | None  # the full form (nodeCacheCapable false)
    node_names: tuple[str, ...] | None  # the name form (nodeCacheCapable true)

    @property
    def names(self) -> tuple[str, ...]:
        if self.node_names is not None:
            return self.node_names
        return tuple(n.name for n in self.nodes or ())


def extender_args(data: Mapping[str, Any]) -> ExtenderArgs:
    pod = _object(_field(data, "Pod"), "Pod")
    raw_nodes = _field(data, "Nodes")
    nodes: tuple[WireNode, ...] | None = None
    if raw_nodes is not None:
        items = _field(_object(raw_nodes, "Nodes"), "items")
        if items is not None and not isinstance(items, list):
            raise WireError("Nodes.items is not a list")
        nodes = tuple(
            WireNode.from_dict(_object(n, f"Nodes.items[{i}]")) for i, n in enumerate(items or [])
        )
    return ExtenderArgs(pod, nodes, _names(_field(data, "NodeNames"), "NodeNames"))


@dataclass(frozen=True, slots=True)
class BindingArgs:
    pod_name: str
    pod_namespace: str
    pod_uid: str
    node: str


def binding_args(data: Mapping[str, Any]) -> BindingArgs:
    values = {k: _field(data, k) for k in ("PodName", "PodNamespace", "PodUID", "Node")}
    for key, value in values.items():
        if not isinstance(value, str) or (key != "PodNamespace" and not value):
            raise WireError(f"{key} is {'missing' if value is None else 'not a string'}")
    return BindingArgs(*(str(v) for v in values.values()))


@dataclass(frozen=True, slots=True)
class Victims:
    uids: tuple[str, ...]
    num_pdb_violations: int


def _victims(node: str, value: Any, full: bool) -> Victims:
    entry = _object(value, f"victims of {node}")
    pods = _field(entry, "Pods") or []
    if not isinstance(pods, list):
        raise WireError(f"the victims of {node}: Pods is not a list")
    uids = []
    for p in pods:
        p = _object(p, f"a victim of {node}")
        uid = (p.get("metadata") or {}).get("uid") if full else _field(p, "UID")
        uids.append(str(uid or ""))
    count = _field(entry, "NumPDBViolations") or 0
    return Victims(tuple(uids), int(count) if isinstance(count, int) else 0)


@dataclass(frozen=True, slots=True)
class PreemptionArgs:
    pod: dict[str, Any]
    victims: Mapping[str, Victims]


def preemption_args(data: Mapping[str, Any]) -> PreemptionArgs:
    pod = _object(_field(data, "Pod"), "Pod")
    meta = _field(data, "NodeNameToMetaVictims")
    full = _field(data, "NodeNameToVictims")
    source, is_full = (meta, False) if meta is not None else (full, True)
    victims = {
        str(node): _victims(str(node), v, is_full)
        for node, v in _object(source or {}, "NodeNameToMetaVictims").items()
    }
    return PreemptionArgs(pod, victims)


def filter_result(decision: FilterDecision, args: ExtenderArgs, error: str = "") -> dict[str, Any]:
    """Nodes answered in the form they came in: names for names, the Node objects for objects
    (a nodeCacheCapable=false scheduler reads only ``Nodes``)."""
    nodes: dict[str, Any] | None = None
    names: list[str] | None = None
    if args.node_names is not None:
        names = list(decision.kept)
    elif args.nodes is not None:
        keep = set(decision.kept)
        nodes = {"metadata": {}, "items": [n.as_sent() for n in args.nodes if n.name in keep]}
    return {
        "Nodes": nodes,
        "NodeNames": names,
        "FailedNodes": dict(decision.failed),
        "FailedAndUnresolvableNodes": dict(decision.unresolvable),
        "Error": error,
    }


def filter_error(message: str) -> dict[str, Any]:
    return {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": {},
        "FailedAndUnresolvableNodes": {},
        "Error": message,
    }


def priority_list(scores: Sequence[HostScore]) -> list[dict[str, Any]]:
    return [{"Host": s.host, "Score": s.score} for s in scores]


def preemption_result(victims: Mapping[str, Victims]) -> dict[str, Any]:
    return {
        "NodeNameToMetaVictims": {
            node: {"Pods": [{"UID": u} for u in v.uids], "NumPDBViolations": v.num_pdb_violations}
            for node, v in victims.items()
        }
    }


_HOST_FRAGMENTS: dict[str, bytes] = {}  # name -> b'{"Host":"name","Score":'
_SCORE_ENDS = tuple(f"{i}}}".encode() for i in range(MAX_PRIORITY + 1))
MAX_FRAGMENTS = 100_000


def _fragment(name: str) -> bytes:
    if len(_HOST_FRAGMENTS) >= MAX_FRAGMENTS:
        _HOST_FRAGMENTS.clear()
    frag = _HOST_FRAGMENTS[name] = b'{"Host":' + json.dumps(name).encode() + b',"Score":'
    return frag


def priority_json(scores: Scores) -> bytes:
    """``priority_list`` encoded: the bare ``[{"Host","Score"}]`` array, written from one
    pre-encoded fragment per node name (kept across calls) and one per score value."""
    frags = [_HOST_FRAGMENTS.get(n) or _fragment(n) for n in scores.names]
    ends = [_SCORE_ENDS[v] for v in scores.values.tolist()]
    return b"[" + b",".join(map(bytes.__add__, frags, ends)) + b"]"
