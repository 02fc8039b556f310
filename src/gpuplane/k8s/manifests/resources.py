"""Resource names and container resource requirements, as the API server validates and defaults
them, turned into the twin's canonical integers.

Checked against kubernetes/kubernetes (read through the code index):

- ``pkg/apis/core/v1/validation/validation.go`` ``ValidateResourceRequirements``,
  ``ValidateResourceQuantityValue``, ``validateContainerResourceName``,
  ``validateResourceQuantityHugePageValue``; messages kept word for word.
- ``pkg/apis/core/v1/helper/helpers.go`` (``IsExtendedResourceName``, ``IsNativeResource``,
  ``IsOvercommitAllowed``) and ``pkg/apis/core/helper/helpers.go``
  (``standardContainerResources``: cpu, memory, ephemeral-storage, plus ``hugepages-*``).
- ``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Pod``: a limit without a request sets the request.

Canonical integers (``gpuplane.twin.scenario.spec``): cpu in millicores (``MilliValue``,
rounded up), every other resource as ``Value`` (rounded up): bytes for memory,
ephemeral-storage and hugepages, a count for extended resources such as ``nvidia.com/gpu``
(which must be whole).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuplane.api.quantity import EXPECTED, Quantity, parse_quantity
from gpuplane.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, NVIDIA_GPU, PODS
from gpuplane.api.validation import qualified_name_errors
from gpuplane.core.errors import InputError
from gpuplane.k8s.field_errors import fail
from gpuplane.k8s.manifests.quantity import parse_manifest_quantity

HUGEPAGES_PREFIX = "hugepages-"
_STANDARD_CONTAINER = frozenset({CPU, MEMORY, EPHEMERAL_STORAGE})
# pkg/apis/core/helper: integerResources (quota object counts) are whole like extended resources.
_INTEGER_RESOURCES = frozenset(
    {
        PODS,
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
NOT_INTEGER = "must be an integer"
NEGATIVE = "must be greater than or equal to 0"


def is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_native(name: str) -> bool:
    """Unprefixed names and ``*kubernetes.io/`` names belong to Kubernetes itself."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """A device-plugin style resource such as ``nvidia.com/gpu``."""
    if is_native(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended(name)


def overcommit_allowed(name: str) -> bool:
    """Requests may be below limits only for native, non-hugepage resources."""
    return is_native(name) and not is_hugepages(name)


def container_resource_name_error(name: str) -> str | None:
    errors = qualified_name_errors(name)
    if errors:
        return f"{name!r} is not a valid resource name: {errors[0]}"
    if "/" not in name:
        if name not in _STANDARD_CONTAINER and not is_hugepages(name):
            return f"{name!r}: must be a standard resource for containers"
    elif not is_native(name) and not is_extended(name):
        return f"{name!r}: doesn't follow extended resource name standard"
    return None


def canonical_amount(name: str, quantity: Quantity) -> int:
    """The twin's integer for ``quantity`` of resource ``name`` (see the module docstring)."""
    return quantity.milli_value() if name == CPU else quantity.value()


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """A container's resources after API-server defaulting, in canonical integers."""

    requests: dict[str, int]
    limits: dict[str, int]


def _parse_list(raw: Mapping[str, object] | None, path: str) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, value in (raw or {}).items():
        field = f"{path}.{name}"
        try:
            out[name] = parse_manifest_quantity(value)
        except InputError as err:
            raise fail(err.problem, field, err.expected) from None
    return out


def _check_value(name: str, quantity: Quantity, field: str) -> None:
    """``ValidateResourceQuantityValue`` and the hugepage multiple rule, for one entry."""
    if quantity.sign() < 0:
        raise fail(f"{quantity.text!r}: {NEGATIVE}", field)
    try:
        quantity.milli_value()
    except ValueError:
        raise fail(f"{quantity.text!r} is too large", field, EXPECTED) from None
    if is_integer_resource(name) and quantity.milli_value() % 1000 != 0:
        raise fail(
            f"{quantity.text!r}: {NOT_INTEGER}", field, f"a whole number of {name}, such as 1"
        )
    if is_hugepages(name):
        try:
            page = parse_quantity(name.removeprefix(HUGEPAGES_PREFIX))
        except InputError:
            raise fail(f"{name!r} is not a valid hugepage resource name", field) from None
        page_ok = page.sign() > 0 and page.milli_value() % 1000 == 0
        if not page_ok or quantity.value() % page.value() != 0:
            raise fail(f"{quantity.text} is not positive integer multiple of {name}", field)
    try:
        canonical_amount(name, quantity)
    except ValueError:
        raise fail(f"{quantity.text!r} is too large", field, EXPECTED) from None


def parse_resource_list(raw: Mapping[str, object] | None, path: str) -> dict[str, int]:
    """A ResourceList (overhead, PodGroup minResources) -> canonical integers."""
    out: dict[str, int] = {}
    for name, quantity in _parse_list(raw, path).items():
        field = f"{path}.{name}"
        errors = qualified_name_errors(name)
        if errors:
            raise fail(f"{name!r} is not a valid resource name: {errors[0]}", field)
        _check_value(name, quantity, field)
        out[name] = canonical_amount(name, quantity)
    return out


def _check_names_and_values(quantities: dict[str, Quantity], path: str) -> None:
    for name, quantity in quantities.items():
        field = f"{path}.{name}"
        problem = container_resource_name_error(name)
        if problem is not None:
            raise fail(
                problem,
                field,
                "cpu, memory, ephemeral-storage, hugepages-<size> or "
                f"a domain-prefixed extended resource such as {NVIDIA_GPU}",
            )
        _check_value(name, quantity, field)


def container_resources(
    requests_raw: Mapping[str, object] | None, limits_raw: Mapping[str, object] | None, path: str
) -> ContainerResources:
    """Validate one container's ``resources`` like the API server, then default and convert.

    ``path`` is the field path of the ``resources`` mapping, used to locate mistakes.
    """
    limits = _parse_list(limits_raw, f"{path}.limits")
    requests = _parse_list(requests_raw, f"{path}.requests")
    _check_names_and_values(limits, f"{path}.limits")
    _check_names_and_values(requests, f"{path}.requests")
    for name, request in requests.items():
        field = f"{path}.requests.{name}"
        limit = limits.get(name)
        if limit is not None:
            if request.cmp(limit) != 0 and not overcommit_allowed(name):
                raise fail(f"{request.text}: must be equal to {name} limit of {limit.text}", field)
            if request.cmp(limit) > 0:
                raise fail(
                    f"{request.text}: must be less than or equal to {name} limit of {limit.text}",
                    field,
                )
        elif not overcommit_allowed(name):
            raise fail(
                f"{name}: Limit must be set for non overcommitable resources",
                f"{path}.limits" if limits_raw is not None else path,
                f"limits: {{{name}: ...}} (a limit alone also sets the request)",
            )
    names = set(requests) | set(limits)
    if any(is_hugepages(n) for n in names) and not names & {CPU, MEMORY}:
        raise fail("HugePages require cpu or memory", path)
    # SetDefaults_Pod: every limit without a request becomes the request.
    merged = {**limits, **requests}
    return ContainerResources(
        requests={n: canonical_amount(n, q) for n, q in merged.items()},
        limits={n: canonical_amount(n, q) for n, q in limits.items()},
    )
