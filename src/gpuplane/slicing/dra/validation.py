"""Object validation as the API server does it (``pkg/apis/resource/validation``), for the
objects gpuplane reads or builds: the first problem raises an InputError whose field path is
relative to the object (``spec.devices.requests[0].exactly.count``) and whose text reads like the
API server's (``Invalid value: 0: must be greater than zero``). Callers that know the file add
file and line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra import names as n
from gpuplane.slicing.dra.cel.parser import parse_cel
from gpuplane.slicing.dra.claims import (
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)
from gpuplane.slicing.dra.devices import DeviceToleration

T = TypeVar("T")
TAINT_EFFECTS = (limits.TAINT_NONE, limits.TAINT_NO_SCHEDULE, limits.TAINT_NO_EXECUTE)
REQUEST_REF_MSG = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)


def each(items: Sequence[T], maximum: int, path: str, check: Callable[[T, str], None]) -> None:
    """validateSlice: the size limit first, then every item at ``path[i]``."""
    if maximum >= 0 and len(items) > maximum:
        raise n.too_many(path, len(items), maximum)
    for i, item in enumerate(items):
        check(item, f"{path}[{i}]")


def unique(names: Sequence[str], path: str, key: str = "name") -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise n.duplicate(f"{path}[{i}].{key}" if key else f"{path}[{i}]", name)
        seen.add(name)


def check_selector(expression: str, path: str) -> None:
    if len(expression) > limits.CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        raise n.too_long(path, limits.CEL_SELECTOR_EXPRESSION_MAX_LENGTH)
    if not expression:
        raise n.required(path)
    try:
        parse_cel(expression)
    except InputError as err:
        raise n.error(
            path, f"Invalid value: {n.render_value(expression)}: {err.problem}", err.expected
        ) from None


def check_toleration(tol: DeviceToleration, path: str) -> None:
    if tol.operator not in ("Exists", "Equal"):
        raise n.not_supported(f"{path}.operator", tol.operator, ("Equal", "Exists"))
    if tol.operator == "Exists" and tol.value:
        raise n.invalid(
            f"{path}.value", tol.value, "value must be empty when `operator` is 'Exists'"
        )
    if tol.operator == "Equal" and not tol.key:
        raise n.invalid(
            f"{path}.operator",
            tol.operator,
            "operator must be Exists when `key` is empty, which means "
            '"match all values and all keys"',
        )
    if tol.effect and tol.effect not in TAINT_EFFECTS:
        raise n.not_supported(f"{path}.effect", tol.effect, TAINT_EFFECTS)


def _check_mode(mode: str, count: int, path: str) -> None:
    if mode == limits.ALL:
        if count != 0:
            raise n.invalid(
                f"{path}.count",
                count,
                f"must not be specified when allocationMode is '{limits.ALL}'",
            )
    elif mode == limits.EXACT_COUNT:
        if count <= 0:
            raise n.invalid(f"{path}.count", count, "must be greater than zero")
    else:
        raise n.not_supported(f"{path}.allocationMode", mode, (limits.ALL, limits.EXACT_COUNT))


def _check_exact(req: ExactDeviceRequest | DeviceSubRequest, path: str) -> None:
    n.check_subdomain(f"{path}.deviceClassName", req.device_class_name)
    each(
        req.selectors,
        limits.DEVICE_SELECTORS_MAX_SIZE,
        f"{path}.selectors",
        lambda e, p: check_selector(e, f"{p}.cel.expression"),
    )
    _check_mode(req.allocation_mode, req.count, path)
    each(
        req.tolerations,
        limits.DEVICE_TOLERATIONS_MAX_LENGTH,
        f"{path}.tolerations",
        check_toleration,
    )


def _check_request(req: DeviceRequest, path: str) -> None:
    n.check_label(f"{path}.name", req.name)
    if req.exactly is None and not req.first_available:
        raise n.required(path, "exactly one of `exactly` or `firstAvailable` is required")
    if req.exactly is not None and req.first_available:
        raise n.error(
            path,
            "Invalid value: null: exactly one of `exactly` or `firstAvailable` "
            "is required, but multiple fields are set",
        )
    if req.exactly is not None:
        _check_exact(req.exactly, f"{path}.exactly")
        return
    subs = f"{path}.firstAvailable"
    each(
        req.first_available,
        limits.FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
        subs,
        _check_subrequest,
    )
    unique([s.name for s in req.first_available], subs)


def _check_subrequest(sub: DeviceSubRequest, path: str) -> None:
    n.check_label(f"{path}.name", sub.name)
    _check_exact(sub, path)


def _request_refs(claim: DeviceClaim) -> set[str]:
    refs: set[str] = set()
    for req in claim.requests:
        refs.add(req.name)
        refs.update(f"{req.name}/{s.name}" for s in req.first_available)
    return refs


def _check_refs(names: Sequence[str], refs: set[str], path: str) -> None:
    def check(name: str, p: str) -> None:
        if name.count("/") > 1 or name not in refs:
            raise n.invalid(p, name, REQUEST_REF_MSG)

    each(names, limits.DEVICE_REQUESTS_MAX_SIZE, path, check)
    unique(names, path, key="")


def validate_claim_spec(spec: ResourceClaimSpec, path: str = "spec") -> None:
    devices = spec.devices
    base = f"{path}.devices"
    each(devices.requests, limits.DEVICE_REQUESTS_MAX_SIZE, f"{base}.requests", _check_request)
    unique([r.name for r in devices.requests], f"{base}.requests")
    refs = _request_refs(devices)
    for i, constraint in enumerate(devices.constraints):
        p = f"{base}.constraints[{i}]"
        if i >= limits.DEVICE_CONSTRAINTS_MAX_SIZE:
            raise n.too_many(
                f"{base}.constraints", len(devices.constraints), limits.DEVICE_CONSTRAINTS_MAX_SIZE
            )
        _check_refs(constraint.requests, refs, f"{p}.requests")
        if constraint.match_attribute is None:
            raise n.required(f"{p}.matchAttribute")
        n.check_fully_qualified_name(f"{p}.matchAttribute", constraint.match_attribute)
    for i, config in enumerate(devices.config):
        p = f"{base}.config[{i}]"
        if i >= limits.DEVICE_CONFIG_MAX_SIZE:
            raise n.too_many(f"{base}.config", len(devices.config), limits.DEVICE_CONFIG_MAX_SIZE)
        _check_refs(config.requests, refs, f"{p}.requests")
        if config.opaque is None:
            raise n.required(f"{p}.opaque")
        n.check_driver_name(f"{p}.opaque.driver", config.opaque.driver)


def validate_claim(claim: ResourceClaim) -> None:
    n.check_subdomain("metadata.name", claim.name)
    validate_claim_spec(claim.spec)
    status = claim.status
    if len(status.reserved_for) > limits.RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE:
        raise n.too_many(
            "status.reservedFor",
            len(status.reserved_for),
            limits.RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
        )
    if status.reserved_for and status.allocation is None:
        raise n.forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
    if status.allocation is not None:
        results = status.allocation.devices.results
        path = "status.allocation.devices.results"
        refs = _request_refs(claim.spec.devices)
        each(
            results,
            limits.ALLOCATION_RESULTS_MAX_SIZE,
            path,
            lambda r, p: _check_result_ref(r.request, refs, f"{p}.request"),
        )


def _check_result_ref(name: str, refs: set[str], path: str) -> None:
    if name not in refs:
        raise n.invalid(path, name, REQUEST_REF_MSG)


def validate_template(template: ResourceClaimTemplate) -> None:
    n.check_subdomain("metadata.name", template.name)
    validate_claim_spec(template.spec, "spec.spec")


def validate_device_class(device_class: DeviceClass) -> None:
    n.check_subdomain("metadata.name", device_class.name)
    each(
        device_class.spec.selectors,
        limits.DEVICE_SELECTORS_MAX_SIZE,
        "spec.selectors",
        lambda e, p: check_selector(e, f"{p}.cel.expression"),
    )
    each(
        device_class.spec.config,
        limits.DEVICE_CONFIG_MAX_SIZE,
        "spec.config",
        lambda c, p: n.check_driver_name(f"{p}.opaque.driver", c.driver),
    )
