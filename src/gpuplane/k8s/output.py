"""Kubernetes objects as text a user can hand to ``kubectl apply -f``: ``-o yaml`` / ``-o json``.

As kubectl prints them (``kubectl get -o yaml|json``): one object as itself; several objects as
a ``v1`` ``List`` (``apiVersion: v1``, ``kind: List``, ``metadata: {resourceVersion: ""}``,
``items``), which ``kubectl apply -f`` accepts and expands. JSON is indented by 4 spaces as
kubectl's printer does; YAML is block style with keys in the order the objects were built
(apiVersion, kind, metadata, spec, status), quantities quoted as strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import yaml


class OutputFormat(StrEnum):
    YAML = "yaml"
    JSON = "json"


def as_list(objects: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One object as itself, several (or none) as a ``v1`` ``List``."""
    if len(objects) == 1:
        return objects[0]
    return {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": list(objects),
    }


class _Dumper(yaml.SafeDumper):
    """Block-style YAML that indents sequences under their key, as kubectl writes them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """Multi-line text (a ConfigMap's file) as a literal block (``|``), as kubectl prints it."""
    if "\n" in value and not any(line != line.rstrip() for line in value.splitlines()):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def dump_yaml(obj: Any) -> str:
    return yaml.dump(
        obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )


def dump_json(obj: Any) -> str:
    return json.dumps(obj, indent=4, ensure_ascii=False) + "\n"


def render(objects: Sequence[dict[str, Any]], fmt: OutputFormat | str) -> str:
    """The objects (a v1 List when several) as ``fmt`` text."""
    doc = as_list(objects)
    return dump_json(doc) if OutputFormat(fmt) is OutputFormat.JSON else dump_yaml(doc)
