"""``--kv-transfer-config``: the JSON object vLLM's ``KVTransferConfig`` reads, for P/D.

Followed: vLLM's ``vllm/config/kv_transfer.py`` (``kv_role`` one of ``kv_producer``,
``kv_consumer``, ``kv_both``, required once ``kv_connector`` is set; ``engine_id`` a fresh UUID
when not given; ``kv_load_failure_policy`` ``recompute`` or ``fail``, default ``fail``). The
emulator speaks only ``NixlConnector``'s protocol (``kv_transfer_params`` with
``do_remote_decode`` / ``do_remote_prefill``); the other connectors (LMCache, P2pNccl,
Mooncake, ...) have their own and are refused with the list of what is emulated. Fields vLLM
has and the emulator does not use (``kv_buffer_device``, ``kv_buffer_size``, ``kv_rank``,
``kv_ip``, ``kv_port``, ``kv_connector_extra_config``, ...) are accepted and ignored; an
unknown field is an error, as pydantic makes it in vLLM.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Literal

from gpuplane.core.errors import InputError, Location

KvRole = Literal["kv_producer", "kv_consumer", "kv_both"]
FailurePolicy = Literal["recompute", "fail"]
KV_ROLES: tuple[KvRole, ...] = ("kv_producer", "kv_consumer", "kv_both")
POLICIES: tuple[FailurePolicy, ...] = ("recompute", "fail")
EMULATED_CONNECTORS = ("NixlConnector",)
# KVTransferConfig's other fields: accepted, not used by the emulator.
IGNORED_FIELDS = frozenset(
    {
        "kv_buffer_device",
        "kv_buffer_size",
        "kv_rank",
        "kv_parallel_size",
        "kv_ip",
        "kv_port",
        "kv_connector_extra_config",
        "kv_connector_module_path",
        "enable_permute_local_kv",
    }
)
FIELDS = frozenset({"kv_connector", "kv_role", "engine_id", "kv_load_failure_policy"})
FLAG = "--kv-transfer-config"


@dataclass(frozen=True, slots=True)
class KvTransferConfig:
    kv_connector: str
    kv_role: KvRole
    engine_id: str
    kv_load_failure_policy: FailurePolicy = "fail"


def _error(problem: str, field: str | None, expected: str) -> InputError:
    return InputError(problem, expected=expected, location=Location(source=FLAG, field=field))


def _text(raw: dict[str, object], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise _error(f"{key} is {value!r}", key, "a string")
    return value


def parse_kv_transfer_config(text: str, *, new_id: str | None = None) -> KvTransferConfig:
    """The flag's JSON; ``new_id`` is the engine id when the JSON has none (a UUID4 if None)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _error(
            f"not JSON: {exc}",
            None,
            'a JSON object such as {"kv_connector": "NixlConnector", "kv_role": "kv_both"}',
        ) from None
    if not isinstance(raw, dict):
        raise _error(f"{raw!r} is not an object", None, "a JSON object")
    unknown = sorted(set(raw) - FIELDS - IGNORED_FIELDS)
    if unknown:
        raise _error(
            f"unknown field {unknown[0]!r}", unknown[0], "fields of vLLM's KVTransferConfig"
        )
    connector = _text(raw, "kv_connector")
    if connector is None:
        raise _error("kv_connector is missing", "kv_connector", "NixlConnector")
    if connector not in EMULATED_CONNECTORS:
        raise _error(
            f"kv_connector {connector!r} is not emulated",
            "kv_connector",
            " or ".join(EMULATED_CONNECTORS),
        )
    role = _text(raw, "kv_role")
    if role is None:
        # vLLM: "Please specify kv_role when kv_connector is set, supported roles are ..."
        raise _error("kv_role must be given when kv_connector is set", "kv_role", str(KV_ROLES))
    if role not in KV_ROLES:
        raise _error(f"unsupported kv_role {role!r}", "kv_role", " or ".join(KV_ROLES))
    policy = _text(raw, "kv_load_failure_policy") or "fail"
    if policy not in POLICIES:
        raise _error(
            f"kv_load_failure_policy {policy!r}", "kv_load_failure_policy", " or ".join(POLICIES)
        )
    engine_id = _text(raw, "engine_id") or new_id or str(uuid.uuid4())
    return KvTransferConfig(connector, role, engine_id, policy)
