from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from gpuplane.core.errors import InputError
from gpuplane.core.yamlio import field_path, validate_yaml


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[Item]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("items:\n  - x: 1\n  - x: foo\n", "f.yaml:3: items[1].x: Input should be a valid integer"),
        ("items:\n  - x: 1\n  - y: 2\n    x: 3\n", "f.yaml:3: items[1].y: unknown field"),
        ("items: [\n", "f.yaml:2: not valid YAML"),
        ("items:\n  - {}\n", "f.yaml:2: items[0].x: required field is missing"),
        ("", "f.yaml: the file is empty"),
        ("- 1\n- 2\n", "f.yaml:1: Input should be a valid dictionary"),
    ],
)
def test_located_errors(text: str, expected: str) -> None:
    with pytest.raises(InputError) as info:
        validate_yaml(Doc, text, "f.yaml")
    assert str(info.value).startswith(expected)


def test_valid_document() -> None:
    assert validate_yaml(Doc, "items: [{x: 1}, {x: 2}]\n", "f.yaml").items[1].x == 2


def test_field_path() -> None:
    assert (
        field_path(("workloads", 3, "spec", "containers", 0)) == "workloads[3].spec.containers[0]"
    )
