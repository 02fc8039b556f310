"""Running requests in the decode phase, advanced together without touching each one.

In a decode step every decoding request computes one token (the one it sampled last) and samples
the next, so between batch changes all of them move in lock step. The set keeps a step counter
``g`` and, per request, the counter value at which its state was last written down; a request's
output count, context length and block count follow from ``g`` when someone asks
(:meth:`materialize`). Aggregates are kept up to date instead of recomputed:

- the sum of context lengths (the decode attention cost),
- how many requests cross a block boundary at each step (``residue``: a request needs a new KV
  block when its context is a multiple of the block size),
- a heap of the steps at which requests reach their output length,
- SGLang's reservation ``sum(min(max_new - output, clip))`` for the admission check.

``newcomers`` are requests that joined since the last decode step and so have their own last
token time (after a prefill-only step, for instance); the rest all produced their last token at
``g_end_s``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from gpuplane.serving.engine.live import LiveRequest
from gpuplane.serving.engine.stats import EngineStats


class DecodeSet:
    def __init__(self, block_size: int, clip: int, track_reservation: bool = True) -> None:
        self.block_size = block_size
        self.clip = clip
        self.track_reservation = track_reservation  # only SGLang's admission asks for it
        self.g = 0
        self.g_end_s = 0.0
        # request -> its entry number in the heaps (read it, do not change it, from outside)
        self.members: dict[LiveRequest, int] = {}
        self.sum_offsets = 0
        self.residue = [0] * block_size
        self._finish: list[tuple[int, int, LiveRequest]] = []
        self._seq = 0
        self.newcomers: list[LiveRequest] = []
        # SGLang reservation: a_r = max_new - out_base + g_join, remaining = a_r - g.
        self._clipped: list[tuple[int, int, LiveRequest]] = []
        self._clip_live: dict[LiveRequest, int] = {}
        self._linear: dict[LiveRequest, int] = {}
        self._sum_linear = 0

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, r: object) -> bool:
        return r in self.members

    def __iter__(self) -> Iterator[LiveRequest]:
        return iter(self.members)

    # -- membership ---------------------------------------------------------------------------
    def add(self, r: LiveRequest) -> None:
        """``r`` has just sampled a token and computed everything before it."""
        g = self.g
        r.g_join = g
        r.out_base = r.num_output
        r.offset = r.num_computed - g
        self._seq += 1
        self.members[r] = self._seq
        self.sum_offsets += r.offset
        self.residue[(-r.offset) % self.block_size] += 1
        heapq.heappush(self._finish, (g + r.target - r.num_output, self._seq, r))
        self.newcomers.append(r)
        if not self.track_reservation:
            return
        a = r.max_new - r.num_output + g
        if a - g >= self.clip:
            heapq.heappush(self._clipped, (a, self._seq, r))
            self._clip_live[r] = self._seq
        else:
            self._linear[r] = a
            self._sum_linear += a

    def remove(self, r: LiveRequest) -> None:
        """Take ``r`` out (finished, preempted or retracted); its state is written down first."""
        self.materialize(r)
        del self.members[r]
        self.sum_offsets -= r.offset
        self.residue[(-r.offset) % self.block_size] -= 1
        if r in self.newcomers:
            self.newcomers.remove(r)
        if r in self._linear:
            self._sum_linear -= self._linear.pop(r)
        elif self.track_reservation:
            del self._clip_live[r]

    def drain(self) -> list[LiveRequest]:
        """Every member, written down and removed (for an exact, request-by-request step)."""
        out = list(self.members)
        for r in out:
            self.remove(r)
        return out

    def materialize(self, r: LiveRequest) -> None:
        """Write ``r``'s output count, context and block count for the current step counter."""
        k = self.g - r.g_join
        if k:
            r.num_output = r.out_base + k
            r.last_token_s = self.g_end_s
            r.g_join = self.g
            r.out_base = r.num_output
        r.num_computed = r.offset + self.g
        if r.kv is not None:
            r.kv.num_blocks = -(-r.num_computed // self.block_size)

    # -- aggregates ---------------------------------------------------------------------------
    def sum_context(self) -> int:
        return self.sum_offsets + len(self.members) * self.g

    def contexts(self) -> list[int]:
        g = self.g
        return [r.offset + g for r in self.members]

    def blocks_for_steps(self, num_steps: int, start: int = 0) -> int:
        """New blocks needed by ``num_steps`` decode steps, from ``start`` steps ahead."""
        bs = self.block_size
        if num_steps == 1:
            return self.residue[(self.g + start) % bs]
        if num_steps <= 0:
            return 0
        full, part = divmod(num_steps, bs)
        lo = (self.g + start) % bs
        hi = lo + part
        res = self.residue
        extra = sum(res[lo:hi]) if hi <= bs else sum(res[lo:]) + sum(res[: hi - bs])
        return full * len(self.members) + extra

    def max_steps_with(self, free_blocks: int, limit: int, start: int = 0) -> int:
        """Most decode steps (up to ``limit``, from ``start`` ahead) whose blocks fit."""
        if limit <= 0:
            return 0
        n = len(self.members)
        bs, g = self.block_size, self.g + start
        if n == 0:
            return limit
        cycles = free_blocks // n
        if cycles * bs >= limit:
            return limit
        steps, left = cycles * bs, free_blocks - cycles * n
        for j in range(bs):
            need = self.residue[(g + j) % bs]
            if need > left or steps >= limit:
                break
            left -= need
            steps += 1
        return steps

    def _live(self, entry: tuple[int, int, LiveRequest]) -> bool:
        return self.members.get(entry[2]) == entry[1]

    def steps_to_next_finish(self) -> int | None:
        heap = self._finish
        while heap and not self._live(heap[0]):
            heapq.heappop(heap)
        return heap[0][0] - self.g if heap else None

    def reservation(self) -> int:
        """SGLang: sum over members of ``min(max_new_tokens - output, clip)``."""
        assert self.track_reservation
        g, heap, live = self.g, self._clipped, self._clip_live
        while heap and (live.get(heap[0][2]) != heap[0][1] or heap[0][0] - g < self.clip):
            a, seq, r = heapq.heappop(heap)
            if self._clip_live.get(r) == seq:
                del self._clip_live[r]
                self._linear[r] = a
                self._sum_linear += a
        return self.clip * len(self._clip_live) + self._sum_linear - g * len(self._linear)

    # -- time passes --------------------------------------------------------------------------
    def advance(self, ends: list[float], stats: EngineStats, record: bool) -> list[LiveRequest]:
        """Every member decoded once per step ending at ``ends``; returns those that finished."""
        members = self.members
        m, n = len(ends), len(members)
        self.g += m
        newcomers = self.newcomers
        if n:
            stats.itl_decode(ends, n, self.g_end_s, newcomers)
            stats.generation_tokens += n * m
            if record:
                for r in members:
                    assert r.token_times is not None
                    r.token_times.extend(ends)
        if newcomers:
            newcomers.clear()
        self.g_end_s = ends[-1]
        done: list[LiveRequest] = []
        heap, g = self._finish, self.g
        while heap:
            step, seq, r = heap[0]
            live = members.get(r) == seq
            if live and step > g:
                break
            heapq.heappop(heap)
            if live:
                done.append(r)
        return done
