"""The syntax tree of gpuplane's CEL subset for DRA selectors (see ``cel.parser``).

Every node keeps the 1-based column where it starts, so an unsupported construct or a type
mistake is reported where the user wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lit:
    value: int | str | bool
    col: int


@dataclass(frozen=True, slots=True)
class Ident:
    name: str
    col: int


@dataclass(frozen=True, slots=True)
class Select:
    operand: Node
    field: str
    col: int


@dataclass(frozen=True, slots=True)
class Index:
    operand: Node
    index: Node
    col: int


@dataclass(frozen=True, slots=True)
class Call:
    """``name(args)`` (``target`` None) or ``target.name(args)``."""

    target: Node | None
    name: str
    args: tuple[Node, ...]
    col: int


@dataclass(frozen=True, slots=True)
class ListLit:
    items: tuple[Node, ...]
    col: int


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node
    col: int


@dataclass(frozen=True, slots=True)
class Binary:
    """``==, !=, <, <=, >, >=, in, &&, ||``."""

    op: str
    left: Node
    right: Node
    col: int


@dataclass(frozen=True, slots=True)
class Has:
    """The ``has(e.f)`` macro: whether field ``f`` of ``e`` exists (no error if it does not)."""

    select: Select
    col: int


Node = Lit | Ident | Select | Index | Call | ListLit | Not | Binary | Has
