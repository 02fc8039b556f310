"""The Node objects of a full-form request (``nodeCacheCapable: false``), read lazily.

kube-scheduler then sends every offered Node object (about 2 KiB each: 10 MiB at 5,000 nodes)
on every call, and reads the kept ones back from the answer's ``Nodes``. Decoding all of them
into Python objects and encoding the kept ones again cost 0.2-0.5 s a call at 5,000 nodes. So
with msgspec (docs/dependencies.md) each item stays the bytes it came as (``msgspec.Raw``):

- only its ``metadata.name`` and ``metadata.resourceVersion`` are decoded (a struct that skips
  every other field); a node the extender already read at that resourceVersion is not decoded
  again (``ExtenderState``), any other is decoded in full when it is first needed;
- the answer's ``Nodes.items`` are written from those very bytes (``msgspec.json.encode``
  copies a ``Raw`` verbatim), which is also what kube-scheduler sent: the kept objects come back
  unchanged, field for field.

An item whose metadata is not an object, or has no name, takes the plain path (decoded in full
and read as before); its error, if any, names the item.
"""

from __future__ import annotations

from typing import Any

import msgspec


class _Meta(msgspec.Struct):
    name: Any = None
    resourceVersion: Any = None


class _Head(msgspec.Struct):
    metadata: _Meta | None = None


class _ListItems(msgspec.Struct):
    items: list[msgspec.Raw] | None = None


class _ListHeads(msgspec.Struct):
    items: list[_Head] | None = None


_HEAD = msgspec.json.Decoder(_Head)
_ANY = msgspec.json.Decoder()
_LIST_ITEMS = msgspec.json.Decoder(_ListItems)
_LIST_HEADS = msgspec.json.Decoder(_ListHeads)


def nodes_of_list(node_list: msgspec.Raw) -> tuple[WireNode, ...] | None:
    """The items of a NodeList whose key is ``items`` exactly, in two passes in C (the items'
    bytes, then every item's head); None when that does not apply (no such key, ``null``, an
    item or metadata that is not an object): the caller then reads the list key by key."""
    try:
        items = _LIST_ITEMS.decode(node_list).items
        heads = _LIST_HEADS.decode(node_list).items if items is not None else None
    except msgspec.ValidationError:
        return None
    if items is None or heads is None or len(heads) != len(items):
        return None
    out = []
    for raw, head in zip(items, heads, strict=True):
        meta = head.metadata
        if meta is not None and meta.name:
            out.append(WireNode(_text(meta.name), _text(meta.resourceVersion), raw, None))
            continue
        node = WireNode.from_raw(raw)
        if node is None:
            return None
        out.append(node)
    return tuple(out)


def _text(value: Any) -> str:
    return str(value or "")


class WireNode:
    """One offered Node: its name and resourceVersion, and the object (bytes or decoded)."""

    __slots__ = ("_obj", "name", "raw", "version")

    def __init__(
        self, name: str, version: str, raw: msgspec.Raw | None, obj: dict[str, Any] | None
    ) -> None:
        self.name, self.version, self.raw, self._obj = name, version, raw, obj

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> WireNode:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        return cls(_text(meta.get("name")), _text(meta.get("resourceVersion")), None, obj)

    @classmethod
    def from_raw(cls, raw: msgspec.Raw) -> WireNode | None:
        """``raw`` (one item of ``Nodes.items``, valid JSON); None when it is not an object."""
        try:
            head = _HEAD.decode(raw)
        except msgspec.DecodeError:
            head = None
        if head is not None and head.metadata is not None and head.metadata.name:
            meta = head.metadata
            return cls(_text(meta.name), _text(meta.resourceVersion), raw, None)
        obj = _ANY.decode(raw)  # valid JSON: the enclosing list decoded
        return cls.from_dict(obj) if isinstance(obj, dict) else None

    def obj(self) -> dict[str, Any]:
        """The Node object, decoded on first use."""
        if self._obj is None:
            assert self.raw is not None
            found = _ANY.decode(self.raw)
            self._obj = found if isinstance(found, dict) else {}
        return self._obj

    @property
    def decoded(self) -> bool:
        """Whether the object was decoded (a node read before at its version is not)."""
        return self._obj is not None

    def as_sent(self) -> msgspec.Raw | dict[str, Any]:
        """What to write back in the answer: the very bytes when there are some."""
        return self.raw if self.raw is not None else self.obj()
