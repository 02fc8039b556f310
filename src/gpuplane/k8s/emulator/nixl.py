"""NixlConnector, emulated: a prefill engine keeps a finished prompt's KV blocks for a remote
decode, a decode engine reads them and then computes only the last prompt token.

Real vLLM: the decode engine's worker handshakes with the prefill engine over a ZMQ side channel
(``VLLM_NIXL_SIDE_CHANNEL_HOST``/``_PORT``, default port 5600) and READs the blocks with NIXL
(RDMA over UCX), then notifies the prefill engine, which frees them; blocks nobody reads are
freed after ``VLLM_NIXL_ABORT_REQUEST_TIMEOUT`` (480 s) and counted in
``vllm:nixl_num_kv_expired_reqs``. A read that fails marks the blocks invalid and the
scheduler applies ``kv_load_failure_policy``: ``fail`` (the default) ends the request with an
error (the OpenAI server answers 500 "Internal server error"), ``recompute`` computes the
prompt locally.

Here the side channel is the emulator's own HTTP port (``remote_host``/``remote_port`` are the
address the router reached the prefill engine on) and the READ plus its notification are one
``POST /gpuplane/nixl/read``: the prefill engine answers with the held token count and frees
the hold, or 404 when it holds no such request (unknown, already read, or expired). The bytes
then take the time the twin's P/D model gives (``serving.steptime.kv_transfer``: K and V of
every layer over the link, each prefill TP rank sending its share in parallel) on the decode
engine's clock before the request enters its scheduler with the transferred tokens as
external KV (``Engine.add_request(..., external_kv_tokens)``, the call the twin makes).

Not modelled: the held blocks do not count against the prefill engine's KV pool (the twin's
engine frees a finished request's blocks; with prefix caching they stay cached), and the
decode engine does not allocate its blocks before the read (vLLM does, and a request waiting
for them is in ``num_requests_waiting``).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from gpuplane.k8s.emulator.clock import ScaledClock
from gpuplane.k8s.emulator.kv_config import KvTransferConfig
from gpuplane.k8s.emulator.kv_params import KvParams, RemotePrefill
from gpuplane.k8s.emulator.nixl_metrics import NixlMetrics
from gpuplane.k8s.openai.errors import ApiError
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.models.shape import ModelShape
from gpuplane.serving.request import Request
from gpuplane.serving.steptime.kv_transfer import KvLink, kv_transfer_s

READ_PATH = "/gpuplane/nixl/read"
HOLD_TIMEOUT_ENV = "VLLM_NIXL_ABORT_REQUEST_TIMEOUT"
DEFAULT_HOLD_S = 480.0
READ_TIMEOUT_S = 10.0
log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Held:
    block_ids: tuple[int, ...]
    num_tokens: int
    expires_s: float


class KvHolds:
    """Prefill side (mutable): the blocks kept for remote decodes, by request id. At most the
    engine's pool is held: a hold that would exceed it ends the oldest ones first (counted as
    expired), which bounds the emulator's memory whatever its clients do."""

    def __init__(self, num_blocks: int, timeout_s: float) -> None:
        self.num_blocks = max(num_blocks, 1)
        self.timeout_s = timeout_s
        self.held: dict[str, _Held] = {}  # in the order the holds began
        self.num_held_blocks = 0
        self.num_evicted = 0  # holds ended early for room (not yet reported)
        self._next = 0

    def hold(self, request_id: str, num_tokens: int, block_size: int, now_s: float) -> list[int]:
        """Keep ``num_tokens`` tokens' blocks; their ids (taken round the engine's pool)."""
        count = min(math.ceil(num_tokens / block_size), self.num_blocks)
        while self.held and self.num_held_blocks + count > self.num_blocks:
            oldest = next(iter(self.held))
            self._drop(oldest)
            self.num_evicted += 1
        ids = [(self._next + i) % self.num_blocks for i in range(count)]
        self._next = (self._next + count) % self.num_blocks
        self.held[request_id] = _Held(tuple(ids), num_tokens, now_s + self.timeout_s)
        self.num_held_blocks += count
        return ids

    def _drop(self, request_id: str) -> None:
        self.num_held_blocks -= len(self.held.pop(request_id).block_ids)

    def take(self, request_id: str, block_ids: tuple[int, ...], now_s: float) -> int | None:
        """A read of the held blocks: their token count (the hold ends), or None."""
        self.expire(now_s)
        held = self.held.get(request_id)
        if held is None or held.block_ids != block_ids:
            return None
        self._drop(request_id)
        return held.num_tokens

    def expire(self, now_s: float) -> int:
        """Free the holds past their deadline; how many."""
        gone = [rid for rid, h in self.held.items() if h.expires_s < now_s]
        for rid in gone:
            self._drop(rid)
        evicted, self.num_evicted = self.num_evicted, 0
        return len(gone) + evicted


@dataclass(frozen=True, slots=True)
class Pull:
    """What the decode engine got: the prompt tokens to load as external KV, and why."""

    external_tokens: int
    outcome: str
    transfer_s: float = 0.0


class NixlConnector:
    """Both sides of the connector for one emulated engine (mutable: holds, HTTP session)."""

    def __init__(
        self,
        config: KvTransferConfig,
        engine: Engine,
        shape: ModelShape,
        tp: int,
        link: Callable[[int], KvLink],
        clock: ScaledClock,
        metrics: NixlMetrics,
        hold_timeout_s: float = DEFAULT_HOLD_S,
    ) -> None:
        self.config = config
        self.engine = engine
        self.shape = shape
        self.tp = tp
        self.link = link
        self.clock = clock
        self.metrics = metrics
        self.holds = KvHolds(engine.config.num_gpu_blocks, hold_timeout_s)
        self.session: aiohttp.ClientSession | None = None

    # -- prefill side -------------------------------------------------------------------------
    def expire(self) -> None:
        n = self.holds.expire(self.clock.now_s())
        if n:
            self.metrics.expired.inc(n)

    def finished_prefill(
        self, request_id: str, prompt_tokens: int, length_capped: bool, sockname: tuple[str, int]
    ) -> dict[str, object] | None:
        """The params a prefill answers with (vLLM: only when capped by length; else None)."""
        self.expire()
        if not length_capped:
            return None
        now = self.clock.now_s()
        ids = self.holds.hold(request_id, prompt_tokens, self.engine.block_size, now)
        host, port = sockname
        return {
            "do_remote_prefill": True,
            "do_remote_decode": False,
            "remote_block_ids": ids,
            "remote_engine_id": self.config.engine_id,
            "remote_request_id": request_id,
            "remote_host": host,
            "remote_port": port,
            "tp_size": self.tp,
        }

    def read(self, body: object) -> tuple[int, dict[str, object]]:
        """A decode engine's READ of held blocks (status, JSON answer)."""
        self.expire()
        if not isinstance(body, dict):
            return 400, {"error": "the body must be a JSON object"}
        engine_id, rid, ids = body.get("engine_id"), body.get("request_id"), body.get("block_ids")
        if not isinstance(rid, str) or not isinstance(ids, list):
            return 400, {"error": "request_id (string) and block_ids (list) are required"}
        if engine_id != self.config.engine_id:
            return 404, {"error": f"unknown engine {engine_id!r}"}
        blocks = tuple(b for b in ids if type(b) is int)
        tokens = self.holds.take(rid, blocks, self.clock.now_s())
        if tokens is None:
            return 404, {"error": f"no blocks held for request {rid!r} (unknown or expired)"}
        return 200, {"num_tokens": tokens, "num_blocks": len(blocks)}

    # -- decode side --------------------------------------------------------------------------
    async def _read_remote(self, remote: RemotePrefill) -> str | None:
        """READ the blocks from the prefill engine; None when it worked, else why not."""
        assert self.session is not None
        url = f"http://{remote.host}:{remote.port}{READ_PATH}"
        body = {
            "engine_id": remote.engine_id,
            "request_id": remote.request_id,
            "block_ids": list(remote.block_ids),
        }
        timeout = aiohttp.ClientTimeout(total=READ_TIMEOUT_S)
        try:
            async with self.session.post(url, json=body, timeout=timeout) as resp:
                if resp.status == 200:
                    return None
                return f"{url} answered {resp.status}: {await resp.text()}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            return f"{url} failed: {exc}"

    def _failed(self, why: str) -> Pull:
        self.metrics.failed_transfers.inc()
        if self.config.kv_load_failure_policy == "recompute":
            log.warning("KV load failed, recomputing the prompt: %s", why)
            self.metrics.pulls["recomputed"].inc()
            return Pull(0, "recomputed")
        log.error("KV load failed (kv_load_failure_policy=fail): %s", why)
        self.metrics.pulls["failed"].inc()
        raise ApiError(500, "Internal server error")

    def _observe(self, blocks: int, transfer_s: float, post_s: float) -> None:
        """One observation per receiving TP rank, as each vLLM worker reports its own reads."""
        per_rank_bytes = blocks * self.engine.block_size * self.shape.kv_bytes_per_token(self.tp)
        descriptors = blocks * 2 * self.shape.num_layers  # K and V regions of each layer
        m = self.metrics
        for _ in range(self.tp):
            m.xfer_time.observe(transfer_s)
            m.post_time.observe(post_s)
            m.bytes.observe(per_rank_bytes)
            m.descriptors.observe(descriptors)

    async def pull(self, params: KvParams, req: Request) -> Pull:
        """Read a decode request's prompt KV from its prefill engine (raises the 500 of
        ``kv_load_failure_policy=fail`` when the read fails)."""
        if params.invalid is not None:
            log.warning("Got %s; the request will not use KV transfer", params.invalid)
            self.metrics.pulls["invalid_params"].inc()
            return Pull(0, "invalid_params")
        remote = params.remote
        if remote is None:
            self.metrics.pulls["nothing_to_read"].inc()
            return Pull(0, "nothing_to_read")
        cached = self.engine.cached_prefix_tokens(req.content(), req.prompt_tokens)
        blocks = max(len(remote.block_ids) - cached // self.engine.block_size, 0)
        why = await self._read_remote(remote)  # also the notification that frees the hold
        if why is not None:
            return self._failed(why)
        if blocks == 0:
            self.metrics.pulls["local_cache_hit"].inc()
            return Pull(0, "local_cache_hit")
        link = self.link(remote.tp_size)
        seconds = kv_transfer_s(blocks * self.engine.block_size, self.shape, link)
        await asyncio.sleep(seconds / self.clock.scale)
        self._observe(blocks, seconds, link.latency_s)
        self.metrics.pulls["transferred"].inc()
        return Pull(req.prompt_tokens, "transferred", seconds)
