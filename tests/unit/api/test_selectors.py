"""Selector values and matching; the string form's parser is tested in tests/unit/operator."""

from __future__ import annotations

import pytest

from gpuplane.api.selectors import LabelSelector, Requirement, from_match_fields


@pytest.mark.parametrize(
    ("req", "labels", "match"),
    [
        (Requirement("app", "=", ("web",)), {"app": "web"}, True),
        (Requirement("app", "=", ("web",)), {}, False),
        (Requirement("app", "!=", ("web",)), {}, True),  # != matches a missing key
        (Requirement("app", "notin", ("a", "b")), {"app": "c"}, True),
        (Requirement("app", "in", ("a", "b")), {"app": "c"}, False),
        (Requirement("gen", "gt", ("3",)), {"gen": "4"}, True),
        (Requirement("gen", "lt", ("3",)), {"gen": "x"}, False),  # not an integer: no match
        (Requirement("x", "!exists"), {"x": ""}, False),
    ],
)
def test_requirements(req: Requirement, labels: dict[str, str], match: bool) -> None:
    assert req.matches(labels) is match


def test_the_empty_selector_matches_everything() -> None:
    assert LabelSelector("").is_empty and LabelSelector("").matches({"a": "b"})


def test_match_labels_and_expressions_are_anded() -> None:
    sel = from_match_fields(
        {"app": "web"},
        [("tier", "In", ["a", "b"]), ("env", "NotIn", ["prod"]), ("gpu", "Exists", None)],
    )
    assert sel.matches({"app": "web", "tier": "a", "gpu": ""})
    assert not sel.matches({"app": "web", "tier": "a", "env": "prod", "gpu": ""})
    assert not sel.matches({"app": "api", "tier": "a", "gpu": ""})
    assert from_match_fields(None, [("legacy", "DoesNotExist", None)]).matches({})
    assert from_match_fields(None, None).is_empty
