"""A request's ``kv_transfer_params`` as vLLM's NixlConnector reads them (P/D disaggregation).

vLLM (``distributed/kv_transfer/kv_connector/v1/nixl_connector.py``, connector version 2):

- the router sends the prefill engine ``{"do_remote_decode": true, "do_remote_prefill": false,
  "remote_engine_id": null, "remote_block_ids": null, "remote_host": null, "remote_port": null}``
  with ``max_tokens: 1`` and ``stream: false``; when that request ends capped by length the
  engine keeps its KV blocks and answers ``kv_transfer_params = {"do_remote_prefill": true,
  "do_remote_decode": false, "remote_block_ids": [...], "remote_engine_id", "remote_request_id",
  "remote_host", "remote_port", "tp_size"}`` (any other ending, e.g. EOS on the first token,
  answers none and frees the blocks);
- the router sends the original request with those params to a decode engine, which reads the
  blocks it does not hold in its own prefix cache and computes only the last prompt token.
  Params with ``remote_block_ids`` but lacking one of the other four keys are logged ("Got
  invalid KVTransferParams") and the prompt is computed locally; no ``remote_block_ids`` means
  nothing to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuplane.live.openai.errors import ApiError
from gpuplane.live.openai.kv_transfer import REMOTE_KEYS


@dataclass(frozen=True, slots=True)
class RemotePrefill:
    """Where a decode request's prompt KV is held: the prefill engine and its blocks."""

    engine_id: str
    request_id: str
    block_ids: tuple[int, ...]
    host: str
    port: int
    tp_size: int = 1


@dataclass(frozen=True, slots=True)
class KvParams:
    """The request's P/D part: a prefill for a remote decode, a decode of a remote prefill
    (``remote`` None with ``invalid`` set: params to ignore, the prompt computed here)."""

    remote_decode: bool = False
    remote_prefill: bool = False
    remote: RemotePrefill | None = None
    invalid: str | None = None


NONE = KvParams()


def _block_ids(value: object) -> tuple[int, ...] | None:
    if not isinstance(value, list):
        return None
    if not all(type(b) is int and b >= 0 for b in value):
        return None
    return tuple(b for b in value if type(b) is int)


def read_kv_params(body: Mapping[str, object]) -> KvParams:
    """The body's ``kv_transfer_params`` (absent or null: no P/D)."""
    raw = body.get("kv_transfer_params")
    if raw is None:
        return NONE
    if not isinstance(raw, dict):
        raise ApiError(400, "kv_transfer_params must be an object", "kv_transfer_params")
    if raw.get("do_remote_decode"):
        return KvParams(remote_decode=True)
    if not raw.get("do_remote_prefill"):
        return NONE
    blocks = _block_ids(raw.get("remote_block_ids"))
    if not blocks:
        return KvParams(remote_prefill=True)  # nothing to read (vLLM: a prompt under a block)
    missing = [k for k in REMOTE_KEYS if raw.get(k) is None]
    engine, rid, host, port = (raw.get(k) for k in REMOTE_KEYS)
    tp = raw.get("tp_size", 1)
    if (
        missing
        or not isinstance(engine, str)
        or not isinstance(rid, str)
        or not isinstance(host, str)
        or type(port) is not int
        or type(tp) is not int
        or tp < 1
    ):
        why = f"missing {', '.join(missing)}" if missing else "a field of the wrong type"
        return KvParams(remote_prefill=True, invalid=f"invalid KVTransferParams ({why})")
    return KvParams(remote_prefill=True, remote=RemotePrefill(engine, rid, blocks, host, port, tp))
