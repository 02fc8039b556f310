"""Read ``resource.k8s.io/v1`` manifests (ResourceSlice, DeviceClass, ResourceClaim,
ResourceClaimTemplate) and a pod's ``spec.resourceClaims`` into ``gpuplane.slicing.dra`` values.

Field names and types follow kubernetes ``staging/src/k8s.io/api/resource/v1/types.go``; the
API server's defaulting is applied (``allocationMode`` ExactCount and ``count`` 1 when unset or
0, ``namespace`` default) and then its validation (``slicing.dra.validation``), so a manifest the
API server would refuse is refused here, at ``file:line: field.path``. Like ``kubectl apply``
with strict field validation, an unknown field is an error; fields of the real API gpuplane does
not model (consumable capacity, binding conditions, ``distinctAttribute``, ``derivedAttributes``)
are errors that say so rather than being dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from gpuplane.core.errors import InputError
from gpuplane.k8s.field_errors import fail, join_path, relocate
from gpuplane.k8s.yaml_documents import read_documents
from gpuplane.slicing.dra import claims as c
from gpuplane.slicing.dra import devices as d
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra import node_selector as ns
from gpuplane.slicing.dra.allocation import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    OpaqueDeviceConfiguration,
)
from gpuplane.slicing.dra.cel.semver import parse_version
from gpuplane.slicing.dra.names import check_label
from gpuplane.slicing.dra.pod_claims import PodClaims, PodResourceClaim
from gpuplane.slicing.dra.quantity import DeviceQuantity, parse_quantity
from gpuplane.slicing.dra.slice_validation import validate_slice
from gpuplane.slicing.dra.validation import (
    validate_claim,
    validate_device_class,
    validate_template,
)

T = TypeVar("T")
KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
# Real API fields gpuplane does not model: refused with a clear message, never dropped.
_NOT_MODELLED = frozenset(
    [
        "allowMultipleAllocations",
        "bindsToNode",
        "bindingConditions",
        "bindingFailureConditions",
        "requestPolicy",
        "capacity",
        "distinctAttribute",
        "derivedAttributes",
        "nodeAllocatableResources",
    ]
)
# The keys each kind of mapping may have (the API types' JSON names).
_SHAPES = {
    "top": "apiVersion kind metadata spec status",
    "metadata": "name generateName namespace uid labels annotations ownerReferences "
    "deletionTimestamp finalizers resourceVersion creationTimestamp generation",
    "owner": "apiVersion kind name uid controller blockOwnerDeletion",
    "selector": "nodeSelectorTerms",
    "term": "matchExpressions matchFields",
    "requirement": "key operator values",
    "slice": "driver pool nodeName nodeSelector allNodes perDeviceNodeSelection devices "
    "sharedCounters",
    "pool": "name generation resourceSliceCount",
    "device": "name attributes capacity consumesCounters nodeName nodeSelector allNodes taints",
    "attribute": "string int bool version",
    "value": "value",
    "consumption": "counterSet counters",
    "counterSet": "name counters",
    "taint": "key value effect timeAdded",
    "class": "selectors config extendedResourceName",
    "selectorItem": "cel",
    "cel": "expression",
    "classConfig": "opaque",
    "opaque": "driver parameters",
    "claim": "devices",
    "devices": "requests constraints config",
    "request": "name exactly firstAvailable",
    "exactly": "deviceClassName selectors allocationMode count adminAccess tolerations",
    "subrequest": "name deviceClassName selectors allocationMode count tolerations",
    "toleration": "key operator value effect",
    "constraint": "requests matchAttribute",
    "claimConfig": "requests opaque",
    "status": "allocation reservedFor devices",
    "allocation": "devices nodeSelector allocationTimestamp",
    "allocationDevices": "results config",
    "result": "request driver pool device adminAccess tolerations",
    "consumer": "apiGroup resource name uid",
    "template": "metadata spec",
    "podClaim": "name resourceClaimName resourceClaimTemplateName",
    "podClaimStatus": "name resourceClaimName",
}


@dataclass(frozen=True, slots=True)
class DraObjects:
    slices: tuple[d.ResourceSlice, ...] = ()
    classes: tuple[c.DeviceClass, ...] = ()
    claims: tuple[c.ResourceClaim, ...] = ()
    templates: tuple[c.ResourceClaimTemplate, ...] = ()


class _Obj:
    """A mapping at ``path`` whose keys must be among ``allowed``."""

    def __init__(self, data: object, path: str, shape: str) -> None:
        allowed = _SHAPES[shape].split()
        if not isinstance(data, dict):
            raise fail(f"got {data!r}", path, expected="a mapping")
        for key in data:
            if str(key) in _NOT_MODELLED and str(key) not in allowed:
                raise fail(f'field "{key}" is not modelled by gpuplane', join_path(path, key))
            if key not in allowed:
                raise fail(
                    f'unknown field "{key}"',
                    join_path(path, str(key)),
                    expected=f"one of {', '.join(allowed)}",
                )
        self.data: dict[str, Any] = data
        self.path = path

    def at(self, key: str) -> str:
        return join_path(self.path, key)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def text(self, key: str, default: str = "") -> str:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise fail(f"got {value!r}", self.at(key), expected="a string")
        return value

    def integer(self, key: str, default: int = 0) -> int:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"got {value!r}", self.at(key), expected="an integer")
        return value

    def flag(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, bool):
            raise fail(f"got {value!r}", self.at(key), expected="true or false")
        return value

    def obj(self, key: str, shape: str) -> _Obj:
        """The mapping at ``key`` (an empty one when absent)."""
        return _Obj(self.data.get(key) or {}, self.at(key), shape)

    def items(self, key: str) -> Iterator[tuple[object, str]]:
        value = self.data.get(key)
        if value is None:
            return
        if not isinstance(value, list):
            raise fail(f"got {value!r}", self.at(key), expected="a list")
        for i, item in enumerate(value):
            yield item, f"{self.at(key)}[{i}]"

    def entries(self, key: str) -> Iterator[tuple[str, object, str]]:
        value = self.data.get(key)
        if value is None:
            return
        if not isinstance(value, dict):
            raise fail(f"got {value!r}", self.at(key), expected="a mapping")
        for name, item in value.items():
            yield str(name), item, join_path(self.at(key), str(name))

    def strings(self, key: str) -> tuple[str, ...]:
        out = []
        for item, path in self.items(key):
            if not isinstance(item, str):
                raise fail(f"got {item!r}", path, expected="a string")
            out.append(item)
        return tuple(out)


def _list(obj: _Obj, key: str, read: Callable[[object, str], T]) -> tuple[T, ...]:
    return tuple(read(item, path) for item, path in obj.items(key))


def _quantity(value: object, path: str) -> DeviceQuantity:
    text = str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
    if not isinstance(text, str):
        raise fail(f"got {value!r}", path, expected="a quantity such as 40Gi")
    try:
        return parse_quantity(text.strip())
    except InputError as err:
        raise fail(err.problem, path, err.expected) from None


def _values(obj: _Obj, key: str) -> dict[str, DeviceQuantity]:
    """``capacity`` / ``counters``: name -> {value: quantity}."""
    out = {}
    for name, item, path in obj.entries(key):
        out[name] = _quantity(_Obj(item, path, "value").data.get("value"), f"{path}.value")
    return out


def _metadata(doc: _Obj, namespaced: bool) -> tuple[str, str, _Obj]:
    meta = doc.obj("metadata", "metadata")
    return meta.text("name"), meta.text("namespace", "default") if namespaced else "", meta


def _requirement(data: object, path: str) -> ns.NodeSelectorRequirement:
    obj = _Obj(data, path, "requirement")
    op = obj.text("operator")
    if op not in ns.OPERATORS:
        raise fail(f"Unsupported value: {op!r}", obj.at("operator"), ", ".join(ns.OPERATORS))
    return ns.NodeSelectorRequirement(obj.text("key"), op, obj.strings("values"))


def _term(data: object, path: str) -> ns.NodeSelectorTerm:
    obj = _Obj(data, path, "term")
    return ns.NodeSelectorTerm(
        _list(obj, "matchExpressions", _requirement), _list(obj, "matchFields", _requirement)
    )


def _node_selector(obj: _Obj, key: str) -> ns.NodeSelector | None:
    if not obj.has(key):
        return None
    return ns.NodeSelector(_list(obj.obj(key, "selector"), "nodeSelectorTerms", _term))


# ----- ResourceSlice -----
def _attribute(data: object, path: str) -> d.AttributeValue:
    obj = _Obj(data, path, "attribute")
    present = [k for k in _SHAPES["attribute"].split() if obj.has(k)]
    if len(present) != 1:
        raise fail("exactly one value must be specified", path, "one of string, int, bool, version")
    kind = present[0]
    if kind == "int":
        return obj.integer("int")
    if kind == "bool":
        return bool(obj.flag("bool"))
    if kind == "string":
        return obj.text("string")
    try:
        return parse_version(obj.text("version"))
    except InputError:
        raise fail(
            f"Invalid value: {obj.text('version')!r}: must be a string compatible with "
            "semver.org spec 2.0.0",
            obj.at("version"),
        ) from None


def _consumption(data: object, path: str) -> d.DeviceCounterConsumption:
    obj = _Obj(data, path, "consumption")
    return d.DeviceCounterConsumption(obj.text("counterSet"), _values(obj, "counters"))


def _counter_set(data: object, path: str) -> d.CounterSet:
    obj = _Obj(data, path, "counterSet")
    return d.CounterSet(obj.text("name"), _values(obj, "counters"))


def _taint(data: object, path: str) -> d.DeviceTaint:
    obj = _Obj(data, path, "taint")
    return d.DeviceTaint(obj.text("key"), obj.text("value"), obj.text("effect"))


def _device(data: object, path: str) -> d.Device:
    obj = _Obj(data, path, "device")
    return d.Device(
        name=obj.text("name"),
        attributes={n: _attribute(v, p) for n, v, p in obj.entries("attributes")},
        capacity=_values(obj, "capacity"),
        consumes_counters=_list(obj, "consumesCounters", _consumption),
        node_name=obj.text("nodeName") if obj.has("nodeName") else None,
        node_selector=_node_selector(obj, "nodeSelector"),
        all_nodes=obj.flag("allNodes"),
        taints=_list(obj, "taints", _taint),
    )


def _resource_slice(doc: _Obj) -> d.ResourceSlice:
    name, _, _ = _metadata(doc, namespaced=False)
    spec = doc.obj("spec", "slice")
    pool = spec.obj("pool", "pool")
    return d.ResourceSlice(
        name,
        d.ResourceSliceSpec(
            driver=spec.text("driver"),
            pool=d.ResourcePool(
                pool.text("name"), pool.integer("generation"), pool.integer("resourceSliceCount")
            ),
            node_name=spec.text("nodeName") or None,
            node_selector=_node_selector(spec, "nodeSelector"),
            all_nodes=bool(spec.flag("allNodes")),
            per_device_node_selection=bool(spec.flag("perDeviceNodeSelection")),
            devices=_list(spec, "devices", _device),
            shared_counters=_list(spec, "sharedCounters", _counter_set),
        ),
    )


# ----- DeviceClass -----
def _selector(data: object, path: str) -> str:
    obj = _Obj(data, path, "selectorItem")
    if not obj.has("cel"):
        raise fail("Required value", f"{path}.cel")
    return obj.obj("cel", "cel").text("expression")


def _opaque(obj: _Obj) -> OpaqueDeviceConfiguration | None:
    if not obj.has("opaque"):
        return None
    opaque = obj.obj("opaque", "opaque")
    params = opaque.data.get("parameters") or {}
    if not isinstance(params, dict):
        raise fail(f"got {params!r}", opaque.at("parameters"), expected="an object")
    return OpaqueDeviceConfiguration(opaque.text("driver"), params)


def _class_config(data: object, path: str) -> OpaqueDeviceConfiguration:
    opaque = _opaque(_Obj(data, path, "classConfig"))
    if opaque is None:
        raise fail("Required value", f"{path}.opaque")
    return opaque


def _device_class(doc: _Obj) -> c.DeviceClass:
    name, _, _ = _metadata(doc, namespaced=False)
    spec = doc.obj("spec", "class")
    return c.DeviceClass(
        name,
        c.DeviceClassSpec(
            selectors=_list(spec, "selectors", _selector),
            config=_list(spec, "config", _class_config),
            extended_resource_name=spec.text("extendedResourceName") or None,
        ),
    )


# ----- ResourceClaim and ResourceClaimTemplate -----
def _toleration(data: object, path: str) -> d.DeviceToleration:
    obj = _Obj(data, path, "toleration")
    return d.DeviceToleration(
        obj.text("key"), obj.text("operator", "Equal"), obj.text("value"), obj.text("effect")
    )


def _mode_count(obj: _Obj) -> tuple[str, int]:
    """SetDefaults_ExactDeviceRequest: ExactCount, and count 1 when unset or 0."""
    mode = obj.text("allocationMode") or limits.EXACT_COUNT
    count = obj.integer("count")
    return mode, 1 if mode == limits.EXACT_COUNT and count == 0 else count


def _subrequest(data: object, path: str) -> c.DeviceSubRequest:
    obj = _Obj(data, path, "subrequest")
    mode, count = _mode_count(obj)
    selectors = _list(obj, "selectors", _selector)
    tolerations = _list(obj, "tolerations", _toleration)
    return c.DeviceSubRequest(
        obj.text("name"), obj.text("deviceClassName"), selectors, mode, count, tolerations
    )


def _request(data: object, path: str) -> c.DeviceRequest:
    obj = _Obj(data, path, "request")
    exactly = None
    if obj.has("exactly"):
        exact = obj.obj("exactly", "exactly")
        mode, count = _mode_count(exact)
        exactly = c.ExactDeviceRequest(
            exact.text("deviceClassName"),
            _list(exact, "selectors", _selector),
            mode,
            count,
            exact.flag("adminAccess"),
            _list(exact, "tolerations", _toleration),
        )
    return c.DeviceRequest(obj.text("name"), exactly, _list(obj, "firstAvailable", _subrequest))


def _constraint(data: object, path: str) -> c.DeviceConstraint:
    obj = _Obj(data, path, "constraint")
    return c.DeviceConstraint(obj.strings("requests"), obj.text("matchAttribute") or None)


def _claim_config(data: object, path: str) -> c.DeviceClaimConfiguration:
    obj = _Obj(data, path, "claimConfig")
    return c.DeviceClaimConfiguration(obj.strings("requests"), _opaque(obj))


def _claim_spec(spec: _Obj) -> c.ResourceClaimSpec:
    devices = spec.obj("devices", "devices")
    return c.ResourceClaimSpec(
        c.DeviceClaim(
            _list(devices, "requests", _request),
            _list(devices, "constraints", _constraint),
            _list(devices, "config", _claim_config),
        )
    )


def _result(data: object, path: str) -> DeviceRequestAllocationResult:
    obj = _Obj(data, path, "result")
    return DeviceRequestAllocationResult(
        obj.text("request"),
        obj.text("driver"),
        obj.text("pool"),
        obj.text("device"),
        obj.flag("adminAccess"),
        _list(obj, "tolerations", _toleration),
    )


def _consumer(data: object, path: str) -> c.ResourceClaimConsumerReference:
    obj = _Obj(data, path, "consumer")
    resource = obj.text("resource", "pods")
    return c.ResourceClaimConsumerReference(
        obj.text("name"), obj.text("uid"), resource, obj.text("apiGroup")
    )


def _status(status: _Obj) -> c.ResourceClaimStatus:
    allocation = None
    if status.has("allocation"):
        alloc = status.obj("allocation", "allocation")
        results = _list(alloc.obj("devices", "allocationDevices"), "results", _result)
        selector = _node_selector(alloc, "nodeSelector")
        allocation = AllocationResult(DeviceAllocationResult(results), selector)
    return c.ResourceClaimStatus(allocation, _list(status, "reservedFor", _consumer))


def _owner_pod(meta: _Obj) -> str | None:
    for item, path in meta.items("ownerReferences"):
        ref = _Obj(item, path, "owner")
        if ref.text("kind") == "Pod" and ref.flag("controller"):
            return ref.text("uid")
    return None


def _resource_claim(doc: _Obj) -> c.ResourceClaim:
    name, namespace, meta = _metadata(doc, namespaced=True)
    return c.ResourceClaim(
        name,
        namespace,
        meta.text("uid"),
        _claim_spec(doc.obj("spec", "claim")),
        _status(doc.obj("status", "status")),
        owner_pod_uid=_owner_pod(meta),
        deleting=meta.has("deletionTimestamp"),
    )


def _template(doc: _Obj) -> c.ResourceClaimTemplate:
    name, namespace, _ = _metadata(doc, namespaced=True)
    spec = _claim_spec(doc.obj("spec", "template").obj("spec", "claim"))
    return c.ResourceClaimTemplate(name, namespace, spec)


_READERS: dict[str, Callable[[_Obj], object]] = {
    "ResourceSlice": _resource_slice,
    "DeviceClass": _device_class,
    "ResourceClaim": _resource_claim,
    "ResourceClaimTemplate": _template,
}


def _validate(value: object) -> None:
    if isinstance(value, d.ResourceSlice):
        validate_slice(value)
    elif isinstance(value, c.DeviceClass):
        validate_device_class(value)
    elif isinstance(value, c.ResourceClaim):
        validate_claim(value)
    elif isinstance(value, c.ResourceClaimTemplate):
        validate_template(value)


def parse_dra_object(doc: object) -> object:
    """One manifest as a dra value, validated; InputError with a field path, no file."""
    top = _Obj(doc, "", "top")
    kind = top.text("kind")
    if kind not in _READERS:
        raise fail(f"unsupported kind {kind!r}", "kind", expected=f"one of {', '.join(KINDS)}")
    if top.text("apiVersion") != limits.API_VERSION:
        raise fail(f"apiVersion {top.text('apiVersion')!r}", "apiVersion", limits.API_VERSION)
    value = _READERS[kind](top)
    _validate(value)
    return value


_RESOURCES = {
    d.ResourceSlice: "resourceslices",
    c.DeviceClass: "deviceclasses",
    c.ResourceClaim: "resourceclaims",
    c.ResourceClaimTemplate: "resourceclaimtemplates",
}


def object_key(value: object, seen: dict[tuple[str, str, str], int], line: int) -> None:
    """Record ``value`` under (resource, namespace, name); a second object of the same key is
    what the API server answers with AlreadyExists (the first would silently win here)."""
    resource = _RESOURCES[type(value)]
    namespace = str(getattr(value, "namespace", ""))
    key = (resource, namespace, str(getattr(value, "name", "")))
    if key in seen:
        where = f" in namespace {namespace!r}" if namespace else ""
        raise fail(
            f'{resource}.{limits.API_GROUP} "{key[2]}" already exists{where} (defined at line '
            f"{seen[key]})",
            "metadata.name",
            "each object once",
        )
    seen[key] = line


def load_dra_manifests(text: str, source: str) -> DraObjects:
    """Every document of a multi-document YAML file; errors at ``file:line: field``."""
    found: list[object] = []
    seen: dict[tuple[str, str, str], int] = {}
    for doc in read_documents(text, source):
        try:
            value = parse_dra_object(doc.data)
            object_key(value, seen, doc.line_of("") or 1)
        except InputError as err:
            raise relocate(err, source, doc.line_of) from None
        found.append(value)
    return DraObjects(
        slices=tuple(v for v in found if isinstance(v, d.ResourceSlice)),
        classes=tuple(v for v in found if isinstance(v, c.DeviceClass)),
        claims=tuple(v for v in found if isinstance(v, c.ResourceClaim)),
        templates=tuple(v for v in found if isinstance(v, c.ResourceClaimTemplate)),
    )


def _pod_claim(data: object, path: str) -> PodResourceClaim:
    obj = _Obj(data, path, "podClaim")
    try:
        check_label("name", obj.text("name"))
    except InputError as err:
        raise fail(err.problem, f"{path}.name") from None
    sources = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if obj.has(k)]
    if not sources:
        raise fail("must specify one of: `resourceClaimName`, `resourceClaimTemplateName`", path)
    if len(sources) > 1:
        raise fail(
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            path,
        )
    return PodResourceClaim(
        obj.text("name"),
        obj.text("resourceClaimName") or None,
        obj.text("resourceClaimTemplateName") or None,
    )


def pod_claims(
    spec: Mapping[str, object], status: Mapping[str, object] | None = None, path: str = "spec"
) -> PodClaims:
    """A pod's ``spec.resourceClaims`` and ``status.resourceClaimStatuses`` (the pod validation:
    DNS-label names, unique, exactly one source)."""
    listed = _items(spec.get("resourceClaims"), f"{path}.resourceClaims")
    entries = tuple(_pod_claim(item, p) for item, p in listed)
    names = [e.name for e in entries]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise fail(f'Duplicate value: "{name}"', f"{path}.resourceClaims[{i}].name")
    statuses: dict[str, str | None] = {}
    listed = _items((status or {}).get("resourceClaimStatuses"), "status.resourceClaimStatuses")
    for item, p in listed:
        obj = _Obj(item, p, "podClaimStatus")
        statuses[obj.text("name")] = obj.text("resourceClaimName") or None
    return PodClaims(entries, statuses)


def _items(value: object, path: str) -> list[tuple[object, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(f"got {value!r}", path, expected="a list")
    return [(item, f"{path}[{i}]") for i, item in enumerate(value)]


__all__ = ["KINDS", "DraObjects", "load_dra_manifests", "parse_dra_object", "pod_claims"]
