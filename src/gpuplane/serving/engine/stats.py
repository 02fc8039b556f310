"""What an engine counts while it runs, in the units its metrics exporter needs.

vLLM counts prompt tokens when a request produces its first token (the full prompt length,
cached or not) and generation tokens as they are produced; SGLang counts both when the request
finishes. Latency histograms use the engine kind's own bucket edges. Inter-token latencies are
also kept exactly (value, weight) so a report can give exact percentiles.
"""

from __future__ import annotations

from array import array
from collections import deque
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from gpuplane.serving.engine.live import LiveRequest
from gpuplane.serving.metrics import families as fam
from gpuplane.serving.metrics.histogram import SMALL_BATCH, Histogram
from gpuplane.serving.request import FinishReason

# SGLang reports generation throughput over its decode log interval (40 decode steps).
SGLANG_DECODE_LOG_INTERVAL = 40


class ItlSamples:
    """Every inter-token latency as (value, weight) pairs, stored compactly: the values one by
    one, the weights as runs (a decode run gives many values the same weight)."""

    def __init__(self) -> None:
        self._values = array("d")
        self._run_weights = array("q")
        self._run_lengths = array("q")

    def add(self, value: float, weight: int = 1) -> None:
        self._values.append(value)
        weights = self._run_weights
        if weights and weights[-1] == weight:
            self._run_lengths[-1] += 1
        else:
            weights.append(weight)
            self._run_lengths.append(1)

    def add_many(self, values: npt.NDArray[np.float64], weight: int) -> None:
        if weight > 0 and len(values):
            self._values.frombytes(values.astype(np.float64).tobytes())
            self._add_run(weight, len(values))

    def add_list(self, values: list[float], weight: int) -> None:
        """``add_many`` for a short Python list (no array round trip)."""
        if weight > 0 and values:
            self._values.extend(values)
            self._add_run(weight, len(values))

    def _add_run(self, weight: int, length: int) -> None:
        weights = self._run_weights
        if weights and weights[-1] == weight:
            self._run_lengths[-1] += length
        else:
            weights.append(weight)
            self._run_lengths.append(length)

    def arrays(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        values = np.frombuffer(self._values, dtype=np.float64).copy()
        weights = np.repeat(
            np.frombuffer(self._run_weights, dtype=np.int64),
            np.frombuffer(self._run_lengths, dtype=np.int64),
        )
        return values, weights.astype(np.int64, copy=False)


class EngineStats:
    """Counters and histograms of one engine (mutable)."""

    def __init__(self, kind: str, max_model_len: int, keep_itl: bool = True) -> None:
        self.kind = kind
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.preemptions = 0
        self.success: dict[FinishReason, int] = {r: 0 for r in FinishReason}
        self.prefix_queries = 0
        self.prefix_hits = 0
        self.finished_prompt_tokens = 0
        self.finished_generation_tokens = 0
        self.cached_tokens = 0
        self.num_requests = 0
        self.num_aborted = 0
        self.last_hit_rate = 0.0
        self.last_retracted = 0
        self.decode_window: deque[tuple[int, int, float]] = deque()  # (steps, tokens, seconds)
        self.itl_samples = ItlSamples() if keep_itl else None
        tok: tuple[float, ...]
        lat: tuple[float, ...]
        if kind == "vllm":
            tok = fam.build_1_2_5_buckets(max_model_len)
            lat = fam.VLLM_REQUEST_LATENCY_BUCKETS
            self.ttft = Histogram(fam.VLLM_TTFT_BUCKETS)
            self.itl = Histogram(fam.VLLM_ITL_BUCKETS)
            self.e2e = Histogram(lat)
            self.queue = Histogram(lat)
        else:
            tok = (1.0,)
            lat = (1.0,)
            self.ttft = Histogram(fam.SGLANG_TTFT_BUCKETS)
            self.itl = Histogram(fam.SGLANG_ITL_BUCKETS)
            self.e2e = Histogram(fam.SGLANG_E2E_BUCKETS)
            self.queue = Histogram(fam.SGLANG_QUEUE_BUCKETS)
        self.tpot = Histogram(fam.VLLM_ITL_BUCKETS)
        self.inference = Histogram(lat)
        self.prefill = Histogram(lat)
        self.decode = Histogram(lat)
        self.prompt_len = Histogram(tok)
        self.generation_len = Histogram(tok)
        self.max_generation = Histogram(tok)
        self.max_tokens_param = Histogram(tok)
        self.params_n = Histogram(fam.VLLM_PARAMS_N_BUCKETS)
        self.iteration_tokens = Histogram(fam.VLLM_ITERATION_TOKENS_BUCKETS)
        self.prefill_computed = Histogram(tok)
        self.num_preemptions_hist = Histogram(fam.VLLM_NUM_PREEMPTIONS_BUCKETS)
        # Prompt tokens at the first token: found in the cache, loaded from another engine.
        self.prompt_cached_tokens = 0
        self.prompt_external_tokens = 0

    # -- per event ------------------------------------------------------------------------
    def first_token(self, r: LiveRequest, t: float) -> None:
        self.ttft.observe(t - r.arrival_s)
        self.prompt_tokens += r.prompt
        self.prompt_cached_tokens += max(r.cached_tokens, 0)
        self.prompt_external_tokens += r.external
        self.params_n.observe(1.0)

    def scheduled(self, r: LiveRequest, t: float) -> None:
        """SGLang observes queue time when a request first enters a forward batch."""
        if self.kind == "sglang":
            self.queue.observe(t - r.queued_s)

    def itl_one(self, value: float, weight: int = 1) -> None:
        self.itl.observe(value, weight)
        if self.itl_samples is not None:
            self.itl_samples.add(value, weight)

    def itl_many(self, values: npt.NDArray[np.float64], weight: int) -> None:
        self.itl.observe_many(values, weight)
        if self.itl_samples is not None:
            self.itl_samples.add_many(values, weight)

    def itl_decode(
        self, ends: list[float], num: int, prev_end_s: float, newcomers: list[LiveRequest]
    ) -> None:
        """Inter-token latencies of ``num`` requests decoding one token per step ending at
        ``ends``: the first gap from each one's previous token (``prev_end_s`` for those that
        decoded in the step before, their own time for ``newcomers``), then the step gaps."""
        first = ends[0]
        veterans = num - len(newcomers)
        hist, samples = self.itl, self.itl_samples
        if veterans:
            value = first - prev_end_s
            hist.observe(value, veterans)
            if samples is not None:
                samples.add(value, veterans)
        for r in newcomers:
            value = first - r.last_token_s
            hist.observe(value)
            if samples is not None:
                samples.add(value)
        if len(ends) > 1:
            self.itl_steps(ends, num)

    def itl_steps(self, ends: list[float], weight: int) -> None:
        """``itl_many(np.diff(ends), weight)``: the gaps between consecutive step ends."""
        if len(ends) - 1 > SMALL_BATCH:
            self.itl_many(np.diff(np.asarray(ends, dtype=np.float64)), weight)
            return
        gaps = [b - a for a, b in pairwise(ends)]
        self.itl.observe_list(gaps, weight)
        if self.itl_samples is not None:
            self.itl_samples.add_list(gaps, weight)

    def decode_steps(self, steps: int, tokens: int, seconds: float) -> None:
        """SGLang's generation-throughput gauge: tokens over the last 40 decode steps."""
        window = self.decode_window
        window.append((steps, tokens, seconds))
        total = sum(s for s, _, _ in window)
        while len(window) > 1 and total - window[0][0] >= SGLANG_DECODE_LOG_INTERVAL:
            total -= window.popleft()[0]

    def gen_throughput(self) -> float:
        seconds = sum(s for _, _, s in self.decode_window)
        return sum(t for _, t, _ in self.decode_window) / seconds if seconds > 0 else 0.0

    def finished(self, r: LiveRequest, t: float, reason: FinishReason) -> None:
        """A request ended. SGLang records aborted requests only in their own counter."""
        if reason is FinishReason.ABORT:
            self.num_aborted += 1
            if self.kind == "sglang":
                return
        self.success[reason] += 1
        self.e2e.observe(t - r.arrival_s)
        scheduled = r.first_scheduled_s if r.first_scheduled_s is not None else t
        if self.kind == "vllm":
            self.queue.observe(scheduled - r.queued_s)
        last = r.last_token_s if r.num_output else t
        first = r.first_token_s if r.first_token_s is not None else t
        self.prefill.observe(first - scheduled)
        self.decode.observe(last - first)
        self.inference.observe(last - scheduled)
        self.prompt_len.observe(float(r.prompt))
        self.generation_len.observe(float(r.num_output))
        self.max_generation.observe(float(r.num_output))
        if r.req.max_tokens is not None:
            self.max_tokens_param.observe(float(r.req.max_tokens))
        tpot = (last - first) / (r.num_output - 1) if r.num_output > 1 else 0.0
        self.tpot.observe(tpot)
        computed = r.prompt - max(r.cached_tokens, 0) - r.external
        self.prefill_computed.observe(float(max(computed, 0)))
        self.num_preemptions_hist.observe(float(r.num_preemptions))
        self.finished_prompt_tokens += r.prompt
        self.finished_generation_tokens += r.num_output
        self.cached_tokens += max(r.cached_tokens, 0)
        self.num_requests += 1
