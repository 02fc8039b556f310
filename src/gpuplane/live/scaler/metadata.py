"""A ScaledObject trigger's ``metadata`` (KEDA's ``scalerMetadata``) as the scaler's settings.

KEDA sends the trigger's whole metadata map on every call (its own ``scalerAddress`` and TLS
keys included); values are strings. A key ending in ``FromEnv`` arrives with the value KEDA
resolved from the target's environment and is read as the key without the suffix. Unknown keys
are refused (a typo such as ``itlp99`` would otherwise be silently ignored); every message
names the key and what was expected, and the gRPC service answers it as INVALID_ARGUMENT.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TypeVar
from urllib.parse import urlsplit

from gpuplane.autoscaler.keda.model import GO_FALSE, GO_TRUE
from gpuplane.autoscaler.slo.analytic import AnalyticCapacity
from gpuplane.autoscaler.slo.capacity import PoolRole, SloTargets
from gpuplane.autoscaler.slo.queries import SignalQueries, default_queries
from gpuplane.autoscaler.slo.settings import SloScalerSettings, settings_from_dict
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.replace("p90", "P90").replace("p99", "P99").title() for p in rest)


SIGNAL_KEYS = {f"{_camel(f.name)}Query": f.name for f in fields(SignalQueries)}
"""Metadata key -> signal query: ``arrivalRateQuery``, ``waitingQuery``, ``ttftP90Query``, ...
(``{q}`` in ``promptQuantileQuery`` is replaced by each quantile)."""
REPLICA_KEYS = {"readyReplicasQuery": "ready", "specReplicasQuery": "spec"}
QUERY_KEYS = {**SIGNAL_KEYS, **REPLICA_KEYS}

KEDA_KEYS = frozenset(
    {"scalerAddress", "enableTLS", "unsafeSsl", "caCert", "tlsClientCert", "tlsClientKey"}
)
CAPACITY_KEYS = {
    "prefillTokensPerSecond": "prefill_tokens_per_s",
    "decodeBaseStepSeconds": "decode_base_step_s",
    "decodeStepPerKvTokenSeconds": "decode_step_per_kv_token_s",
    "prefillOverheadSeconds": "prefill_overhead_s",
    "kvCapacityTokens": "kv_capacity_tokens",
    "itlTailFactor": "itl_tail_factor",
    "prefillSecondsPerTokenSquared": "prefill_s_per_token_squared",
    "decodeStepPerSeqSeconds": "decode_step_per_seq_s",
}
CAPACITY_INT_KEYS = {"maxNumSeqs": "max_num_seqs", "maxNumBatchedTokens": "max_num_batched_tokens"}
REQUIRED_CAPACITY = (
    "prefillTokensPerSecond",
    "decodeBaseStepSeconds",
    "decodeStepPerKvTokenSeconds",
)
OWN_KEYS = frozenset(
    {
        "prometheusAddress",
        "deployment",
        "coldStart",
        "minReplicas",
        "maxReplicas",
        "ttftP90",
        "itlP99",
        "role",
        "metricName",
        "podSelector",
        "prometheusTimeout",
        "prometheusRetries",
        "ignoreNullValues",
        "settings",
        *CAPACITY_KEYS,
        *CAPACITY_INT_KEYS,
        *QUERY_KEYS,
    }
)
DEFAULT_METRIC_NAME = "slo-replicas"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ReplicaQueries:
    """The Deployment's Ready and ``spec.replicas`` counts (kube-state-metrics by default): the
    twin knows its pods and does not run these."""

    ready: str
    spec: str


class MetadataError(ValueError):
    """The trigger's metadata cannot configure the scaler (the message says which key)."""


@dataclass(frozen=True, slots=True)
class ScalerConfig:
    """One ScaledObject's scaler, as its trigger metadata describes it."""

    namespace: str
    deployment: str
    prometheus_address: str
    capacity: AnalyticCapacity
    cold_start_s: float
    min_replicas: int
    max_replicas: int
    slo: SloTargets
    role: PoolRole
    metric_name: str
    queries: SignalQueries
    replica_queries: ReplicaQueries
    settings: SloScalerSettings
    timeout_s: float = 5.0
    retries: int = 2
    ignore_null_values: bool = True


def _normalise(meta: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in meta.items():
        name = key.removesuffix("FromEnv") if key.endswith("FromEnv") else key
        if name in KEDA_KEYS:
            continue
        if name not in OWN_KEYS:
            raise MetadataError(
                f"unknown scalerMetadata key {key!r}; known keys: {', '.join(sorted(OWN_KEYS))}"
            )
        out[name] = value
    return out


def _read(meta: Mapping[str, str], key: str, parse: Callable[[str], T], what: str) -> T:
    raw = meta[key].strip()
    try:
        return parse(raw)
    except (ValueError, InputError):
        raise MetadataError(f"scalerMetadata {key}={meta[key]!r}: expected {what}") from None


def _number(meta: Mapping[str, str], key: str, *, positive: bool = True) -> float:
    value = _read(meta, key, float, "a number")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        sign = "> 0" if positive else ">= 0"
        raise MetadataError(f"scalerMetadata {key}={meta[key]!r}: expected a finite number {sign}")
    return value


def _count(meta: Mapping[str, str], key: str, default: int, least: int) -> int:
    if key not in meta:
        return default
    value = _read(meta, key, int, "a whole number")
    if value < least:
        raise MetadataError(f"scalerMetadata {key}={meta[key]!r}: expected a number >= {least}")
    return value


def _duration(meta: Mapping[str, str], key: str, default: float | None) -> float:
    if key not in meta:
        if default is None:
            raise MetadataError(f"scalerMetadata needs {key} (a duration such as '90s')")
        return default
    value = _read(meta, key, parse_duration_s, "a duration such as '90s', '500ms' or '2m'")
    if not math.isfinite(value) or value < 0:
        raise MetadataError(f"scalerMetadata {key}={meta[key]!r}: expected a duration >= 0")
    return value


def _positive_duration(meta: Mapping[str, str], key: str, default: float) -> float:
    value = _duration(meta, key, default)
    if value <= 0:
        raise MetadataError(f"scalerMetadata {key}={meta[key]!r}: expected a duration > 0")
    return value


def _bool(meta: Mapping[str, str], key: str, default: bool) -> bool:
    raw = meta.get(key, "")
    if raw == "":
        return default
    if raw in GO_TRUE or raw in GO_FALSE:
        return raw in GO_TRUE
    raise MetadataError(f"scalerMetadata {key}={raw!r}: expected 'true' or 'false'")


def _capacity(meta: Mapping[str, str]) -> AnalyticCapacity:
    missing = [k for k in REQUIRED_CAPACITY if k not in meta]
    if missing:
        raise MetadataError(
            f"scalerMetadata needs the capacity figures {', '.join(missing)} "
            "(per replica; docs/live.md says how to read them off the twin)"
        )

    def num(key: str, default: float) -> float:
        return _number(meta, key, positive=False) if key in meta else default

    kv = _number(meta, "kvCapacityTokens") if "kvCapacityTokens" in meta else None
    budget = _count(meta, "maxNumBatchedTokens", 0, 1) or None
    try:
        return AnalyticCapacity(
            prefill_tokens_per_s=_number(meta, "prefillTokensPerSecond"),
            decode_base_step_s=_number(meta, "decodeBaseStepSeconds"),
            decode_step_per_kv_token_s=num("decodeStepPerKvTokenSeconds", 0.0),
            prefill_overhead_s=num("prefillOverheadSeconds", 0.0),
            max_num_seqs=_count(meta, "maxNumSeqs", 256, 1),
            kv_capacity_tokens=kv,
            itl_tail_factor=num("itlTailFactor", 1.0),
            max_num_batched_tokens=budget,
            prefill_s_per_token_squared=num("prefillSecondsPerTokenSquared", 0.0),
            decode_step_per_seq_s=num("decodeStepPerSeqSeconds", 0.0),
        )
    except ValueError as err:
        raise MetadataError(f"scalerMetadata capacity figures: {err}") from None


def _prometheus(meta: Mapping[str, str]) -> str:
    raw = meta.get("prometheusAddress", "").strip()
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise MetadataError(
            f"scalerMetadata prometheusAddress={raw!r}: expected an http(s) URL such as "
            "'http://prometheus.monitoring:9090'"
        )
    return raw.rstrip("/")


def _deployment(meta: Mapping[str, str], namespace: str) -> tuple[str, str]:
    raw = meta.get("deployment", "").strip()
    ns, sep, name = raw.rpartition("/")
    if not name or (sep and not ns):
        raise MetadataError(
            f"scalerMetadata deployment={raw!r}: expected the scale target's name, or "
            "namespace/name"
        )
    return (ns or namespace), name


def _settings(meta: Mapping[str, str]) -> SloScalerSettings:
    raw = meta.get("settings", "").strip()
    if not raw:
        return SloScalerSettings()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise MetadataError(f"scalerMetadata settings: not a JSON object ({err})") from None
    try:
        return settings_from_dict(data, "scalerMetadata settings")
    except InputError as err:
        raise MetadataError(err.render()) from None


def _role(meta: Mapping[str, str]) -> PoolRole:
    raw = meta.get("role", "unified")
    try:
        return PoolRole(raw)
    except ValueError:
        valid = ", ".join(r.value for r in PoolRole)
        raise MetadataError(f"scalerMetadata role={raw!r}: expected one of {valid}") from None


def _queries(
    meta: Mapping[str, str], selector: str, ns: str, name: str
) -> tuple[SignalQueries, ReplicaQueries]:
    """The default queries (``autoscaler.slo.queries``: completions as the arrival rate unless
    ``arrivalRateQuery`` names a router's counter) with the metadata's ``<field>Query``
    overrides."""
    given = {k: meta[k].strip() for k in QUERY_KEYS if meta.get(k, "").strip()}
    kube = f'{{namespace="{ns}",deployment="{name}"}}'
    signals = replace(
        default_queries(selector),
        **{SIGNAL_KEYS[k]: v for k, v in given.items() if k in SIGNAL_KEYS},
    )
    replicas = ReplicaQueries(
        given.get("readyReplicasQuery", f"kube_deployment_status_replicas_ready{kube}"),
        given.get("specReplicasQuery", f"kube_deployment_spec_replicas{kube}"),
    )
    return signals, replicas


def parse_metadata(meta: Mapping[str, str], namespace: str) -> ScalerConfig:
    """Validate a trigger's metadata for the ScaledObject in ``namespace``."""
    own = _normalise(meta)
    ns, name = _deployment(own, namespace)
    settings = _settings(own)
    lo = _count(own, "minReplicas", 1, 0)
    hi = _count(own, "maxReplicas", 0, 1) if "maxReplicas" in own else None
    if hi is None:
        raise MetadataError("scalerMetadata needs maxReplicas (the ScaledObject's maxReplicaCount)")
    if lo > hi:
        raise MetadataError(f"scalerMetadata minReplicas {lo} is above maxReplicas {hi}")
    selector = own.get("podSelector", f'namespace="{ns}"')
    queries, replica_queries = _queries(own, selector, ns, name)
    return ScalerConfig(
        namespace=ns,
        deployment=name,
        prometheus_address=_prometheus(own),
        capacity=_capacity(own),
        cold_start_s=_duration(own, "coldStart", None),
        min_replicas=lo,
        max_replicas=hi,
        slo=SloTargets(
            _positive_duration(own, "ttftP90", settings.ttft_p90_s),
            _positive_duration(own, "itlP99", settings.itl_p99_s),
        ),
        role=_role(own),
        metric_name=own.get("metricName", DEFAULT_METRIC_NAME) or DEFAULT_METRIC_NAME,
        queries=queries,
        replica_queries=replica_queries,
        settings=settings,
        timeout_s=_positive_duration(own, "prometheusTimeout", 5.0),
        retries=_count(own, "prometheusRetries", 2, 0),
        ignore_null_values=_bool(own, "ignoreNullValues", True),
    )
