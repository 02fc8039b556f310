"""Name rules of ``resource.k8s.io`` objects and the API server's wording of field errors.

The formats are apimachinery's (``util/validation``: RFC 1123 labels and subdomains, C
identifiers) as ``pkg/apis/resource/validation`` applies them: device, request and counter names
are DNS labels; class names, driver names and each ``/``-separated part of a pool name are DNS
subdomains; attribute and capacity names are qualified names (``<C identifier>`` or
``<driver-like domain>/<C identifier>``). Errors read like ``field.Error`` renders them:
``Invalid value: "Foo": a lowercase RFC 1123 label must ...``, ``Required value``,
``Too many: 33: must have at most 32 items``, ``Duplicate value: "gpu"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from gpuplane.api.validation import dns1123_label_errors, dns1123_subdomain_errors
from gpuplane.api.validation import render_value as render_value
from gpuplane.core.errors import InputError, Location
from gpuplane.slicing.dra import limits

_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used "
    "for validation is '[A-Za-z_][A-Za-z0-9_]*')"
)


def error(path: str, problem: str, expected: str | None = None) -> InputError:
    return InputError(problem, expected=expected, location=Location(field=path or None))


def invalid(path: str, value: object, detail: str) -> InputError:
    return error(path, f"Invalid value: {render_value(value)}: {detail}")


def required(path: str, detail: str = "") -> InputError:
    return error(path, f"Required value: {detail}" if detail else "Required value")


def too_many(path: str, actual: int, maximum: int) -> InputError:
    return error(path, f"Too many: {actual}: must have at most {maximum} items")


def too_long(path: str, maximum: int) -> InputError:
    return error(path, f"Too long: may not be more than {maximum} bytes")


def duplicate(path: str, value: object) -> InputError:
    return error(path, f"Duplicate value: {render_value(value)}")


def not_supported(path: str, value: object, valid: Iterable[str]) -> InputError:
    options = ", ".join(json.dumps(v) for v in valid)
    return error(path, f"Unsupported value: {render_value(value)}: supported values: {options}")


def forbidden(path: str, detail: str) -> InputError:
    return error(path, f"Forbidden: {detail}")


# apimachinery's checks, in the one vocabulary (``gpuplane.api.validation``).
label_errors = dns1123_label_errors
subdomain_errors = dns1123_subdomain_errors


def is_label(value: str) -> bool:
    return not label_errors(value)


def check_label(path: str, value: str) -> None:
    """Device, request, subrequest and counter names."""
    if not value:
        raise required(path)
    problems = label_errors(value)
    if problems:
        raise invalid(path, value, problems[0])


def check_subdomain(path: str, value: str) -> None:
    """Device class names (and object names of cluster-scoped kinds)."""
    if not value:
        raise required(path)
    problems = subdomain_errors(value)
    if problems:
        raise invalid(path, value, problems[0])


def check_driver_name(path: str, value: str) -> None:
    """ValidateCSIDriverName: required, at most 63 bytes, a lowercase DNS subdomain."""
    if not value:
        raise required(path)
    if len(value) > limits.DRIVER_NAME_MAX_LENGTH:
        raise too_long(path, limits.DRIVER_NAME_MAX_LENGTH)
    problems = subdomain_errors(value.lower())
    if problems:
        raise invalid(path, value, problems[0])


def check_pool_name(path: str, value: str) -> None:
    """One or more DNS subdomains separated by ``/``, at most 253 characters."""
    if not value:
        raise required(path)
    if len(value) > limits.POOL_NAME_MAX_LENGTH:
        raise too_long(path, limits.POOL_NAME_MAX_LENGTH)
    for part in value.split("/"):
        problems = subdomain_errors(part)
        if problems:
            raise invalid(path, part, problems[0])


def _check_c_identifier(path: str, value: str) -> None:
    if len(value) > limits.DEVICE_MAX_ID_LENGTH:
        raise too_long(path, limits.DEVICE_MAX_ID_LENGTH)
    if not _C_IDENTIFIER.match(value):
        raise invalid(path, value, C_IDENTIFIER_MSG)


def check_qualified_name(path: str, name: str) -> None:
    """An attribute or capacity name: ``id`` or ``domain/id``."""
    parts = name.split("/")
    if len(parts) > 2:
        raise invalid(path, name, "must not contain more than one slash")
    if len(parts) == 2:
        if not parts[0]:
            raise invalid(path, "", "the domain must not be empty")
        check_driver_name(path, parts[0])
        if not parts[1]:
            raise invalid(path, "", "the name must not be empty")
    _check_c_identifier(path, parts[-1])


def check_fully_qualified_name(path: str, name: str) -> None:
    """``matchAttribute``: a qualified name that must carry its domain."""
    check_qualified_name(path, name)
    if "/" not in name:
        raise invalid(
            path, name, "a fully qualified name must be a domain and a name separated by a slash"
        )


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """(domain, id) of an attribute name; a bare id belongs to the device's driver."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)
