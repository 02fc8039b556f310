"""The API server's value checks, with its wording: the one place gpuplane validates names.

apimachinery ``pkg/util/validation/validation.go`` (``IsQualifiedName``, ``IsValidLabelValue``,
``IsDNS1123Label``, ``IsDNS1123Subdomain``, ``IsValidPortNum``, ``IsValidPortName``,
``IsCIdentifier``, ``IsValidPercent``) and ``pkg/util/validation/field/errors.go`` (how a
``field.Error`` renders: ``Invalid value: "x": <detail>``, ``Unsupported value``, ``Duplicate
value``, ``Forbidden``, ``Required value``), read through the code index at kubernetes v1.33.
Every function returns the problems as strings (empty when valid), like the Go functions, so a
caller can add the field path it knows; :func:`invalid` and friends build the rendered text.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_PERCENT_FMT = "[0-9]+%"

_QNAME = re.compile(f"^{_QNAME_FMT}$")
_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_DNS1123_LABEL = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_C_IDENTIFIER = re.compile(f"^{_C_IDENTIFIER_FMT}$")
_PERCENT = re.compile(f"^{_PERCENT_FMT}$")
_PORT_NAME_CHARS = re.compile("^[-a-z0-9]+$")
_PORT_NAME_LETTER = re.compile("[a-z]")

LABEL_VALUE_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
PORT_NAME_MAX_LENGTH = 15
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: message, examples and regex, joined as upstream joins them."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'"
)
PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"


def dns1123_label_errors(value: str) -> list[str]:
    out = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        out.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL.match(value):
        out.append(regex_error(DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return out


def dns1123_subdomain_errors(value: str) -> list[str]:
    out = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        out.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.match(value):
        out.append(regex_error(DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return out


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName``: ``[prefix/]name``; label keys, annotation keys, taint keys."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + regex_error(QUALIFIED_NAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    out: list[str] = []
    if len(parts) == 2:
        if not parts[0]:
            out.append("prefix part must be non-empty")
        else:
            out.extend("prefix part " + m for m in dns1123_subdomain_errors(parts[0]))
    name = parts[-1]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        out.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if name and not _QNAME.match(name):
        out.append(
            "name part "
            + regex_error(QUALIFIED_NAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        )
    return out


def label_value_errors(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters of the qualified-name alphabet."""
    out = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        out.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.match(value):
        out.append(regex_error(LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return out


def c_identifier_errors(value: str) -> list[str]:
    if _C_IDENTIFIER.match(value):
        return []
    return [regex_error(C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]


def port_num_errors(port: int) -> list[str]:
    """``IsValidPortNum``: containerPort, probe ports, service ports."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def port_name_errors(name: str) -> list[str]:
    """``IsValidPortName`` (an IANA_SVC_NAME): a named containerPort or probe port."""
    out = []
    if len(name) > PORT_NAME_MAX_LENGTH:
        out.append(max_len_error(PORT_NAME_MAX_LENGTH))
    if not _PORT_NAME_CHARS.match(name):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(name):
        out.append("must contain at least one letter (a-z)")
    if "--" in name:
        out.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def percent_errors(value: str) -> list[str]:
    """``IsValidPercent`` (an IntOrString given as text: ``maxUnavailable: 25%``)."""
    if _PERCENT.match(value):
        return []
    return [regex_error(PERCENT_MSG, _PERCENT_FMT, "1%", "93%")]


def render_value(value: object) -> str:
    """A value as ``field.Error`` prints it: strings quoted, numbers and booleans bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(str(value))


def invalid(value: object, detail: str) -> str:
    return f"Invalid value: {render_value(value)}: {detail}"


def not_supported(value: object, valid: Iterable[str]) -> str:
    options = ", ".join(json.dumps(v) for v in valid)
    return f"Unsupported value: {render_value(value)}: supported values: {options}"


def duplicate(value: object) -> str:
    return f"Duplicate value: {render_value(value)}"


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def required(detail: str = "") -> str:
    return f"Required value: {detail}" if detail else "Required value"


def unknown_field(path: str) -> str:
    """Strict decoding (``kubectl apply --validate=strict``): ``unknown field "spec.x"``."""
    return f'unknown field "{path}"'


def number_errors(
    value: float,
    *,
    positive: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
) -> list[str]:
    """gpuplane's own numbers: finite, positive where they must be, within a stated bound."""
    if math.isnan(value) or math.isinf(value):
        return ["must be a finite number"]
    out = []
    if positive and value <= 0:
        out.append("must be greater than 0")
    if minimum is not None and value < minimum:
        out.append(f"must be greater than or equal to {minimum:g}")
    if maximum is not None and value > maximum:
        out.append(f"must be less than or equal to {maximum:g}")
    return out
