from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from gpuplane.core.errors import InputError
from gpuplane.core.yamlio import field_path, load_fast, parse_yaml, validate_yaml


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[Item]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "items:\n  - x: 1\n  - x: foo\n",
            "f.yaml:3: items[1].x: got 'foo'; expected a valid integer",
        ),
        (
            "items:\n  - x: 1\n  - y: 2\n    x: 3\n",
            "f.yaml:3: items[1].y: unknown key 'y' (not a field of Item); expected one of x",
        ),
        ("items: [\n", "f.yaml:2: YAML syntax error"),
        ("items:\n  - {}\n", "f.yaml:2: items[0].x: required key 'x' is missing"),
        ("", "f.yaml:1: the file is empty; expected a Doc document"),
        ("- 1\n- 2\n", "f.yaml:1: got [1, 2]; expected a mapping with keys items"),
        ("items: []\nitems: [{x: 1}]\n", "f.yaml:2: items: duplicate key 'items'"),
        ("items: &a [*a]\n", "f.yaml:1: items[0]: recursive alias"),
        ("items:\n  - &m {x: 1, self: *m}\n", "f.yaml:2: items[0].self: recursive alias"),
        ("items:\n  - x: \x07\n", "f.yaml:2: YAML error"),
    ],
)
def test_located_errors(text: str, expected: str) -> None:
    with pytest.raises(InputError) as info:
        validate_yaml(Doc, text, "f.yaml")
    assert str(info.value).startswith(expected)


def test_valid_document() -> None:
    assert validate_yaml(Doc, "items: [{x: 1}, {x: 2}]\n", "f.yaml").items[1].x == 2


def test_dates_stay_strings() -> None:
    class Named(BaseModel):
        name: str

    assert validate_yaml(Named, "name: 2024-05-01\n", "f.yaml").name == "2024-05-01"


def test_field_path() -> None:
    assert (
        field_path(("workloads", 3, "spec", "containers", 0)) == "workloads[3].spec.containers[0]"
    )


def test_shared_aliases_are_not_recursive() -> None:
    text = "base: &b {x: 1}\nitems: [*b, *b]\n"
    node, data = parse_yaml(text, "f.yaml")
    assert node is not None
    assert data["items"] == [{"x": 1}, {"x": 1}]


def test_recursive_alias_in_fast_loader_is_located() -> None:
    with pytest.raises(InputError, match=r"f.yaml:2: a.self: recursive alias"):
        load_fast("a: &m\n  self: *m\n", "f.yaml")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: " + "[" * 5000 + "]" * 5000, 1),  # past libyaml's own flow limit (1,000)
        ("a: 1\nb: " + "[" * 101 + "]" * 101, 2),  # just past gpuplane's bound
        ("a: " + "[" * 100_000, 1),  # never closed
        ("x:\n" + "".join("  " * i + "-\n" for i in range(150)), 102),  # block lists
    ],
)
def test_deep_nesting_is_refused_with_its_line(text: str, line: int) -> None:
    with pytest.raises(InputError) as info:
        parse_yaml(text, "deep.yaml")
    assert "nested more than 100 levels deep" in str(info.value)
    assert info.value.location.line == line


def test_nesting_at_the_bound_is_read() -> None:
    _, data = parse_yaml("a: " + "[" * 99 + "1" + "]" * 99, "ok.yaml")
    depth, value = 0, data["a"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert (depth, value) == (99, 1)


def test_alias_bomb_is_refused_before_it_is_expanded() -> None:
    rows = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    with pytest.raises(InputError, match="YAML aliases expand the document to 490,329,055 values"):
        validate_yaml(Doc, "\n".join(rows) + "\n", "bomb.yaml")


def test_shared_aliases_within_the_bound_are_read() -> None:
    doc = validate_yaml(Doc, "items: [&i {x: 1}, *i, *i]\n", "ok.yaml")
    assert [item.x for item in doc.items] == [1, 1, 1]
