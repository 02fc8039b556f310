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

Held blocks count against the prefill engine's KV pool (vLLM's ``request_finished`` at commit
002a105 of ``nixl_connector.py``: a ``do_remote_decode`` request that ends capped by length
delays freeing *all* its blocks; any other ending frees them at once): the engine keeps the
request's blocks taken (``Engine.hold_on_finish`` / ``Engine.held``), so they lower its free
blocks and show in ``vllm:kv_cache_usage_perc``, and a request that needs them waits, until
the decode engine's read frees them or the deadline does (a timer, as vLLM's workers check it
every step; ``vllm:nixl_num_kv_expired_reqs``). With prefix caching the blocks stay cached
after that, as any freed block does.

Decode side, ``vllm:num_requests_kv_fetch_by_stage{stage}`` (emitted for ``kv_consumer`` and
``kv_both``): ``in_progress`` while the read and the transfer run, ``completed_waiting`` from
the end of the transfer until the engine first schedules the request. ``waiting_to_start``
stays 0: the emulator starts the read when the request arrives, where vLLM starts it after
its scheduler has allocated the request's blocks (the decode engine does not allocate them
before the read here, and such a request is not in ``num_requests_waiting``).
A read that fails under ``kv_load_failure_policy=fail`` ends the request as vLLM's
FINISHED_ERROR: counted in ``vllm:request_success{finished_reason="error"}`` (and the
request histograms), answered 500 with vLLM's error body.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from gpuplane.live.emulator.clock import ScaledClock
from gpuplane.live.emulator.kv_config import KvTransferConfig
from gpuplane.live.emulator.kv_params import KvParams, RemotePrefill
from gpuplane.live.emulator.nixl_metrics import NixlMetrics
from gpuplane.live.openai.errors import ApiError
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.live import LiveRequest, RequestRecord
from gpuplane.serving.models.shape import ModelShape
from gpuplane.serving.request import Request, RequestState
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
    """Prefill side (mutable): the holds announced to decode engines, by ``remote_request_id``
    (the engine's request id): the block ids named, the prompt tokens and the deadline. The
    blocks themselves are the engine's (``Engine.held``): they stay taken from its KV pool
    until a read or the deadline frees them (``take`` / ``expire`` say which to free)."""

    def __init__(self, num_blocks: int, timeout_s: float) -> None:
        self.num_blocks = max(num_blocks, 1)
        self.timeout_s = timeout_s
        self.held: dict[str, _Held] = {}
        self._next = 0

    def hold(self, request_id: str, num_tokens: int, count: int, now_s: float) -> list[int]:
        """Announce ``count`` held blocks; their ids (synthetic: taken round the pool)."""
        count = min(count, self.num_blocks)
        ids = [(self._next + i) % self.num_blocks for i in range(count)]
        self._next = (self._next + count) % self.num_blocks
        self.held[request_id] = _Held(tuple(ids), num_tokens, now_s + self.timeout_s)
        return ids

    def take(self, request_id: str, block_ids: tuple[int, ...]) -> _Held | None:
        """A read of the held blocks: the hold (it ends), or None when none matches."""
        held = self.held.get(request_id)
        if held is None or held.block_ids != block_ids:
            return None
        del self.held[request_id]
        return held

    def expire(self, now_s: float) -> list[str]:
        """The requests whose hold's deadline has come (their holds end)."""
        gone = [rid for rid, h in self.held.items() if h.expires_s <= now_s]
        for rid in gone:
            del self.held[rid]
        return gone

    def next_deadline_s(self) -> float:
        return min((h.expires_s for h in self.held.values()), default=math.inf)


class KvLoadFailed(ApiError):
    """A KV read failed under ``kv_load_failure_policy=fail``: vLLM ends the request with
    FINISHED_ERROR (``finished_reason="error"``) and the server answers 500."""


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
        release: Callable[[str], int],
        hold_timeout_s: float = DEFAULT_HOLD_S,
    ) -> None:
        self.config = config
        self.engine = engine
        self.shape = shape
        self.tp = tp
        self.link = link
        self.clock = clock
        self.metrics = metrics
        self.release = release  # frees a request's held blocks in the engine (EngineRuntime)
        self.holds = KvHolds(engine.config.num_gpu_blocks, hold_timeout_s)
        self.session: aiohttp.ClientSession | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._fetch = dict.fromkeys(("waiting_to_start", "in_progress"), 0)
        self._landed: list[LiveRequest] = []  # read, not yet scheduled (completed_waiting)

    # -- prefill side -------------------------------------------------------------------------
    def hold_on_finish(self, request_id: str) -> None:
        """A prefill for a remote decode (``do_remote_decode``): keep its blocks if it ends
        capped by length (vLLM's ``request_finished``; ``Engine.hold_on_finish``)."""
        self.engine.hold_on_finish.add(request_id)

    def finished(self, rec: RequestRecord) -> None:
        """A request ended (``EngineRuntime``'s hook): announce the hold of blocks it left."""
        holding = self.engine.held.get(rec.request_id)
        if holding is not None:
            now = self.clock.now_s()
            self.holds.hold(rec.request_id, rec.prompt_tokens, holding.num_blocks, now)
            self._arm()

    def expire(self) -> None:
        """Free the holds past ``VLLM_NIXL_ABORT_REQUEST_TIMEOUT`` (counted as expired)."""
        gone = self.holds.expire(self.clock.now_s())
        for rid in gone:
            self.release(rid)
        if gone:
            self.metrics.expired.inc(len(gone))
        self._arm()

    def _arm(self) -> None:
        """Wake at the next deadline (vLLM's workers check them at every step), so that an
        unread hold gives its blocks back even when nothing else happens."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        t = self.holds.next_deadline_s()
        if math.isfinite(t):
            with contextlib.suppress(RuntimeError):  # no loop: the next call expires it
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(self.clock.wall_delay_s(t) + 1e-3, self.expire)

    def finished_prefill(
        self, request_id: str, length_capped: bool, sockname: tuple[str, int]
    ) -> dict[str, object] | None:
        """The params a prefill answers with (vLLM: only when capped by length; else None;
        capped without a block held, the params name none)."""
        self.expire()
        if not length_capped:
            return None
        held = self.holds.held.get(request_id)
        host, port = sockname
        return {
            "do_remote_prefill": True,
            "do_remote_decode": False,
            "remote_block_ids": list(held.block_ids) if held is not None else [],
            "remote_engine_id": self.config.engine_id,
            "remote_request_id": request_id,
            "remote_host": host,
            "remote_port": port,
            "tp_size": self.tp,
        }

    def read(self, body: object) -> tuple[int, dict[str, object]]:
        """A decode engine's READ of held blocks and its notification (status, JSON answer):
        the hold ends and the engine frees the blocks."""
        self.expire()
        if not isinstance(body, dict):
            return 400, {"error": "the body must be a JSON object"}
        engine_id, rid, ids = body.get("engine_id"), body.get("request_id"), body.get("block_ids")
        if not isinstance(rid, str) or not isinstance(ids, list):
            return 400, {"error": "request_id (string) and block_ids (list) are required"}
        if engine_id != self.config.engine_id:
            return 404, {"error": f"unknown engine {engine_id!r}"}
        blocks = tuple(b for b in ids if type(b) is int)
        held = self.holds.take(rid, blocks)
        if held is None:
            return 404, {"error": f"no blocks held for request {rid!r} (unknown or expired)"}
        self.release(rid)
        self._arm()
        return 200, {"num_tokens": held.num_tokens, "num_blocks": len(blocks)}

    # -- fetch stages (decode side) -------------------------------------------------------------
    def fetch_stages(self) -> dict[str, int]:
        """``vllm:num_requests_kv_fetch_by_stage``: requests whose KV is to be read
        (``waiting_to_start``), being read (``in_progress``), or read and not yet scheduled
        (``completed_waiting``)."""
        self._landed = [
            r
            for r in self._landed
            if r.first_scheduled_s is None and r.state is RequestState.WAITING
        ]
        return {**self._fetch, "completed_waiting": len(self._landed)}

    def landed(self, live: LiveRequest) -> None:
        """A request whose KV was read entered the scheduler."""
        self._landed.append(live)

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
        raise KvLoadFailed(500, "Internal server error")

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
        fetch = self._fetch
        fetch["in_progress"] += 1
        try:
            why = await self._read_remote(remote)  # also the notification that frees the hold
            if why is not None:
                return self._failed(why)
            if blocks == 0:
                self.metrics.pulls["local_cache_hit"].inc()
                return Pull(0, "local_cache_hit")
            link = self.link(remote.tp_size)
            seconds = kv_transfer_s(blocks * self.engine.block_size, self.shape, link)
            await asyncio.sleep(seconds / self.clock.scale)
        finally:
            fetch["in_progress"] -= 1
        self._observe(blocks, seconds, link.latency_s)
        self.metrics.pulls["transferred"].inc()
        return Pull(req.prompt_tokens, "transferred", seconds)
