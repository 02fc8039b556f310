"""Labels and label selectors as manifests write them: the meta/v1 shapes and their validation
messages as Kubernetes gives them. Matching is the selector value's (``gpuplane.api.selectors``).

Checked against kubernetes/apimachinery (read through the code index): ``pkg/util/validation``
(``IsQualifiedName``, ``IsValidLabelValue``) and ``pkg/apis/meta/v1/validation``
(``ValidateLabelSelector``, ``ValidateLabels``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from gpuplane.api import selectors as api_selectors
from gpuplane.api.validation import label_value_errors, qualified_name_errors
from gpuplane.k8s.field_errors import fail

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class LabelSelectorRequirement(BaseModel):
    """meta/v1 LabelSelectorRequirement."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key: StrictStr
    operator: StrictStr
    values: list[StrictStr] | None = None


class LabelSelector(BaseModel):
    """meta/v1 LabelSelector."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    match_labels: dict[str, StrictStr] | None = Field(default=None, alias="matchLabels")
    match_expressions: list[LabelSelectorRequirement] | None = Field(
        default=None, alias="matchExpressions"
    )

    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def to_selector(self) -> api_selectors.LabelSelector:
        """The selector these fields describe (its matching is ``gpuplane.api.selectors``')."""
        exprs = [(r.key, r.operator, r.values) for r in self.match_expressions or ()]
        return api_selectors.from_match_fields(self.match_labels, exprs)


def label_value_error(value: str) -> str | None:
    """``IsValidLabelValue``'s first problem (``gpuplane.api.validation``)."""
    errors = label_value_errors(value)
    return errors[0] if errors else None


def check_labels(labels: Mapping[str, str], path: str) -> None:
    """``ValidateLabels``: qualified-name keys and label values."""
    for key, value in labels.items():
        errors = qualified_name_errors(key)
        if errors:
            raise fail(f"label key {key!r}: {errors[0]}", f"{path}.{key}")
        problem = label_value_error(value)
        if problem is not None:
            raise fail(f"label value {value!r}: {problem}", f"{path}.{key}")


def check_annotations(annotations: Mapping[str, Any], path: str) -> None:
    """``ValidateAnnotations``: keys are qualified names (compared in lower case)."""
    for key in annotations:
        errors = qualified_name_errors(key.lower())
        if errors:
            raise fail(f"annotation key {key!r}: {errors[0]}", f"{path}.{key}")


def check_selector(selector: LabelSelector, path: str) -> None:
    """``ValidateLabelSelector``: operators, values present or absent as the operator needs."""
    check_labels(selector.match_labels or {}, f"{path}.matchLabels")
    for i, req in enumerate(selector.match_expressions or ()):
        where = f"{path}.matchExpressions[{i}]"
        errors = qualified_name_errors(req.key)
        if errors:
            raise fail(f"key {req.key!r}: {errors[0]}", f"{where}.key")
        if req.operator not in _OPERATORS:
            raise fail(
                f"Unsupported value: {req.operator!r}: not a valid selector operator",
                f"{where}.operator",
                ", ".join(_OPERATORS),
            )
        if req.operator in ("In", "NotIn") and not req.values:
            raise fail("must be specified when `operator` is 'In' or 'NotIn'", f"{where}.values")
        if req.operator in ("Exists", "DoesNotExist") and req.values:
            raise fail(
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                f"{where}.values",
            )
