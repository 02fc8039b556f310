"""Mutants of one valid input: structural (per field), textual (encoding, size, syntax), per line.

Each mutant is built lazily (``build()``), so collecting thousands of cases stays cheap. A
mutant says whether a faithful reader must refuse it (``must_fail``): a list where a scalar was,
a NaN, bad bytes, a duplicate key... Mutants a reader may accept (a deleted optional field, a
truncation that happens to end on a line) only have to end cleanly: exit 0, or exit 2 located.

The choice of fields and lines is seeded by the input's name, so the corpus is the same on
every run and every pytest-xdist worker.
"""

from __future__ import annotations

import copy as copy_module
import json
import random
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import yaml

# Maps whose keys are the user's own (labels, resource names, trigger metadata): a new or
# misspelt key there is data, not a mistake.
FREE_FORM = frozenset(
    {
        "labels",
        "annotations",
        "matchLabels",
        "nodeSelector",
        "data",
        "selector",
        "limits",
        "requests",
        "allocatable",
        "capacity",
        "metadata",
        "attributes",
        "parameters",
        "kube_reserved",
        "eviction_hard",
        "patch",
        "spec",
        "providers_hints",
        "env",
    }
)

Path_ = tuple[int | str, ...]
# libyaml where installed: the big dumps load in milliseconds, not a second.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutated input: a stable name, whether it must be refused, and its bytes on demand."""

    name: str
    must_fail: bool
    build: Callable[[], bytes]


def rng_for(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


# ----- values swapped in at a field -----
# Raw tokens are written into the dumped text in place of a marker string, for what the dumpers
# cannot write: a float beyond double range, 5,000 nested lists, an alias bomb.
_RAW = "@@raw{}@@"
DEEP = "[" * 5000 + "]" * 5000
ALIAS_BOMB = (
    "[&a [x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a], "
    "&c [*b, *b, *b, *b, *b, *b, *b, *b, *b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c], "
    "&e [*d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, *e, *e, *e, *e], "
    "&g [*f, *f, *f, *f, *f, *f, *f, *f, *f], &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]]"
)


@dataclass(frozen=True, slots=True)
class Raw:
    token: str


# name -> (replacement, must a reader refuse it where a number was)
NUMBERS: dict[str, tuple[Any, bool]] = {
    "neg": (-1, False),
    "zero": (0, False),
    "nan": (float("nan"), True),
    "inf": (float("inf"), True),
    "neginf": (float("-inf"), True),
    "1e400": (Raw("1.0e+400"), True),
    "2e70": (2**70, False),
    "float": (0.5, False),
}
# name -> replacement, for any field: a container where a scalar was (or the reverse) is refused.
TYPES: dict[str, Any] = {
    "str": "not-a-number!",
    "num": 7,
    "bool": True,
    "list": ["x", 1],
    "map": {"x": 1},
    "null": None,
}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "num"
    if isinstance(value, str):
        return "str"
    return "list" if isinstance(value, list) else "map"


def _type_must_fail(old: str, new: str) -> bool:
    containers = ("list", "map")
    if new == "null":
        return False
    return (old in containers) != (new in containers) or {old, new} == set(containers)


# ----- walking and editing documents -----
def paths(docs: list[Any], limit: int = 5000) -> list[Path_]:
    """Every field and item below each document's root, in document order."""
    found: list[Path_] = []
    stack: list[tuple[Path_, Any]] = [((i,), d) for i, d in reversed(list(enumerate(docs)))]
    while stack and len(found) < limit:
        path, value = stack.pop()
        if len(path) > 1:
            found.append(path)
        if isinstance(value, dict):
            children = [((*path, k), v) for k, v in value.items() if isinstance(k, str)]
        elif isinstance(value, list):
            children = [((*path, j), v) for j, v in enumerate(value)]
        else:
            children = []
        stack.extend(reversed(children))
    return found


def _get(docs: list[Any], path: Path_) -> Any:
    value: Any = docs
    for part in path:
        value = value[part]
    return value


Edit = Callable[[Any, int | str], None]


def _set(new: Any) -> Edit:
    def edit(parent: Any, key: int | str) -> None:
        parent[key] = new

    return edit


def _set_long(parent: Any, key: int | str) -> None:
    parent[key] = "x" * 1_000_000


def _delete(parent: Any, key: int | str) -> None:
    del parent[key]


def _rename(parent: Any, key: int | str) -> None:
    parent[_typo(str(key))] = parent.pop(key)


def _unknown(parent: Any, key: int | str) -> None:
    parent["unknownFieldX"] = 1


def _typo(key: str) -> str:
    return key[1] + key[0] + key[2:] if len(key) > 1 and key[0] != key[1] else key + "s"


def _label(path: Path_) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:]).lstrip(".")


def field_mutants(
    docs: list[Any], path: Path_, lenient: bool = False
) -> list[tuple[str, bool, Edit]]:
    """(name, must_fail, edit of the parent) for one field. ``lenient``: the reader decodes as
    Kubernetes clients do (unknown fields ignored), so a new or misspelt key is not refused."""
    value = _get(docs, path)
    parent_key = next((p for p in reversed(path[:-1]) if isinstance(p, str)), "")
    free = parent_key in FREE_FORM
    label = _label(path)
    found: list[tuple[str, bool, Edit]] = [(f"{label}:delete", False, _delete)]
    old = _kind(value)
    for name, new in TYPES.items():
        if name != old:
            found.append(
                (f"{label}:type-{name}", _type_must_fail(old, name) and not free, _set(new))
            )
    if old == "num":
        for name, (new, must) in NUMBERS.items():
            found.append((f"{label}:{name}", must and not free, _set(new)))
    if old == "str":
        found.append((f"{label}:1e400", False, _set("1e400")))
        found.append((f"{label}:long", False, _set_long))
    if isinstance(path[-1], str):
        found.append((f"{label}:misspelt", not (free or lenient), _rename))
        found.append((f"{label}:unknown-sibling", not (free or lenient), _unknown))
    found.append((f"{label}:deep", True, _set(Raw(DEEP))))
    if isinstance(value, list) and value:
        found.append((f"{label}:x1000", False, _set(value[:1] * 1000)))
    return found


def _with_markers(data: Any, raws: list[str]) -> Any:
    if isinstance(data, Raw):
        raws.append(data.token)
        return _RAW.format(len(raws) - 1)
    if isinstance(data, dict):
        return {k: _with_markers(v, raws) for k, v in data.items()}
    if isinstance(data, list):
        return [_with_markers(v, raws) for v in data]
    return data


def _fill(text: str, raws: list[str]) -> str:
    for i, token in enumerate(raws):
        marker = _RAW.format(i)
        text = text.replace(f"'{marker}'", token).replace(f'"{marker}"', token)
    return text


def dump(docs: list[Any], fmt: str) -> bytes:
    raws: list[str] = []
    marked = [_with_markers(d, raws) for d in docs]
    if fmt == "json":
        text = json.dumps(marked[0], indent=2)
    else:
        text = yaml.dump_all(
            marked, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=1_000_000
        )
    return _fill(text, raws).encode()


def structural(
    name: str, data: bytes, fmt: str, budget: int, lenient: bool = False
) -> list[Mutant]:
    """``budget`` field mutants of a YAML (multi-document) or JSON input, seeded by ``name``."""
    text = data.decode()
    docs = [json.loads(text)] if fmt == "json" else list(yaml.load_all(text, Loader=_LOADER))
    # A field, then one of its mutants: each draw costs one field's mutants, not the file's.
    rng = rng_for(name)
    all_paths = paths(docs)
    out: list[Mutant] = []
    for index in sorted(rng.sample(range(len(all_paths)), min(budget, len(all_paths)))):
        path = all_paths[index]
        mname, must, edit = rng.choice(field_mutants(docs, path, lenient))

        def build(path: Path_ = path, edit: Edit = edit) -> bytes:
            copy = copy_module.deepcopy(docs)
            edit(_get(copy, path[:-1]), path[-1])
            return dump(copy, fmt)

        out.append(Mutant(mname, must, build))
    return out


# ----- whole-input mutants -----
_KEY_LINE = re.compile(rb"^( *)([A-Za-z_][\w.-]*):( |$)", re.MULTILINE)


def _dup_key(data: bytes, fmt: str) -> bytes:
    if fmt == "json":
        obj = json.loads(data)
        if not isinstance(obj, dict) or not obj:
            return data
        k, v = next(iter(obj.items()))
        return b"{" + json.dumps({k: v})[1:-1].encode() + b", " + json.dumps(obj)[1:].encode()
    lines = data.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if _KEY_LINE.match(line) and i > 0:
            return b"".join([*lines[: i + 1], line, *lines[i + 1 :]])
    return data


def _middle_of_a_line(data: bytes) -> int:
    lines = data.splitlines(keepends=True)
    i = len(lines) // 2
    return sum(len(x) for x in lines[:i]) + max(len(lines[i].rstrip()) // 2, 0) if lines else 0


def textual(name: str, data: bytes, fmt: str) -> list[Mutant]:
    """Encoding, size and syntax mutants of any text input."""
    mid = _middle_of_a_line(data)
    junk = bytes(rng_for(name).randrange(256) for _ in range(512))
    text_ok = fmt in ("yaml", "json")

    def utf16() -> bytes:
        return data.decode().encode("utf-16")

    mutants = [
        Mutant("empty", True, lambda: b""),
        Mutant("blank", True, lambda: b"\n   \n\t\n"),
        Mutant("bom", False, lambda: b"\xef\xbb\xbf" + data),
        Mutant("utf16", True, utf16),
        Mutant("bad-utf8", True, lambda: data[:mid] + b"\xff\xfe" + data[mid:]),
        Mutant("latin1", True, lambda: data[:mid] + b"caf\xe9" + data[mid:]),
        Mutant("nul", True, lambda: data[:mid] + b"\x00" + data[mid:]),
        Mutant("junk", True, lambda: junk),
        Mutant("cut-third", False, lambda: data[: len(data) // 3]),
        Mutant("cut-two-thirds", False, lambda: data[: 2 * len(data) // 3]),
        Mutant("crlf", False, lambda: data.replace(b"\n", b"\r\n")),
        Mutant("long-line", False, lambda: b"#" * 2_000_000 + b"\n" + data),
    ]
    if text_ok:
        mutants.append(Mutant("dup-key", True, lambda: _dup_key(data, fmt)))
        mutants.append(Mutant("deep-doc", True, lambda: b"[" * 100_000 + b"\n"))
    if fmt == "yaml":
        mutants.append(Mutant("alias-bomb", True, lambda: b"bomb: " + ALIAS_BOMB.encode() + b"\n"))
        mutants.append(Mutant("tab-indent", False, lambda: data.replace(b"\n  ", b"\n\t", 1)))
    if fmt == "json":
        mutants.append(Mutant("yaml-not-json", True, lambda: b"a: [1, 2\n"))
    return mutants


# ----- line mutants: CSV, topo -m, text tables -----
_CELLS = ("nan", "-1", "1e400", "", "abc", "inf", "99999999999999999999999", "0")


def line_mutants(name: str, data: bytes, budget: int, sep: str = ",") -> list[Mutant]:
    """``budget`` per-line mutants: a line dropped, doubled, cut, a cell replaced, one more cell."""
    lines = data.decode().splitlines(keepends=True)
    rng = rng_for(name + ":lines")
    head = list(range(min(len(lines), 4)))  # the header and first rows are the likeliest parsed
    rest = list(range(4, len(lines)))
    picks = head + rng.sample(rest, min(len(rest), 4))
    planned: list[tuple[str, bool, Callable[[], bytes]]] = []
    for i in picks:
        line = lines[i]
        cells = line.rstrip("\r\n").split(sep) if sep else line.split()

        def edit(i: int = i, new: str | None = None) -> bytes:
            copy = list(lines)
            if new is None:
                del copy[i]
            else:
                copy[i] = new
            return "".join(copy).encode()

        stripped = line.rstrip("\r\n")
        planned.append((f"line{i + 1}:drop", False, partial(edit, i)))
        planned.append((f"line{i + 1}:dup", False, partial(edit, i, line * 2)))
        planned.append((f"line{i + 1}:cut", False, partial(edit, i, line[: len(line) // 2] + "\n")))
        extra = stripped + (sep or " ") + "x\n"
        planned.append((f"line{i + 1}:extra-cell", False, partial(edit, i, extra)))
        for j in range(len(cells)):
            for cell in _CELLS:

                def swap(i: int = i, j: int = j, cell: str = cell) -> bytes:
                    row = lines[i].rstrip("\r\n").split(sep) if sep else lines[i].split()
                    row[j] = cell
                    return edit(i, (sep or "\t").join(row) + "\n")

                planned.append((f"line{i + 1}:cell{j}={cell or 'empty'}", False, swap))
    chosen = sorted(rng.sample(range(len(planned)), min(budget, len(planned))))
    return [Mutant(planned[k][0], planned[k][1], planned[k][2]) for k in chosen]
