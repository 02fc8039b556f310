"""A per-block KV cache written the straightforward way, to check :class:`KVCache` against.

Every block is an object with a reference count and, once full and computed, the hash of its
content chained through all earlier tokens (vLLM V1 ``block_pool.py``: a dict from block hash to
block, and a doubly linked free queue whose front is evicted first). It is slow (O(blocks) per
request) and exists for tests and the reference engine; it follows the same documented rules as
:mod:`gpuplane.serving.engine.kv_cache` (one cache entry per content; a request extends the cache
only along its own chain of entries).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from gpuplane.serving.engine.kv_cache import AdmissionPlan, KVHolding
from gpuplane.serving.request import Segment

BlockHash = tuple[tuple[tuple[str, int], ...], int]


@dataclass(slots=True)
class _Block:
    block_id: int
    ref: int = 0
    block_hash: BlockHash | None = None


class ReferenceKVCache:
    """Same interface as :class:`~gpuplane.serving.engine.kv_cache.KVCache`, block by block."""

    def __init__(self, num_blocks: int, block_size: int, enable_caching: bool) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_caching = enable_caching
        self._blocks = [_Block(i) for i in range(num_blocks)]
        self._free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))
        self._cached: dict[BlockHash, int] = {}
        self._hashes: dict[int, list[BlockHash]] = {}  # holding id -> its block hashes

    @property
    def num_free(self) -> int:
        return len(self._free)

    def usage(self) -> float:
        return 1.0 - self.num_free / self.num_blocks

    def block_hashes(self, content: Sequence[Segment], num_blocks: int) -> list[BlockHash]:
        """The hash of each full block: the content up to the segment holding its last token."""
        ends = list(accumulate(s.num_tokens for s in content))
        keys = [(s.key, s.num_tokens) for s in content]
        out: list[BlockHash] = []
        for b in range(num_blocks):
            last = (b + 1) * self.block_size - 1
            i = bisect_right(ends, last)
            if i >= len(content):
                break
            out.append((tuple(keys[: i + 1]), b))
        return out

    def match_blocks(self, content: Sequence[Segment], num_tokens: int) -> int:
        if not self.enable_caching:
            return 0
        limit = (num_tokens - 1) // self.block_size
        hit = 0
        for h in self.block_hashes(content, limit):
            if h not in self._cached:
                break
            hit += 1
        return hit

    def plan_admission(
        self,
        content: Sequence[Segment],
        num_tokens: int,
        num_new_tokens: int,
        hit_blocks: int | None = None,
    ) -> AdmissionPlan:
        hit = self.match_blocks(content, num_tokens) if hit_blocks is None else hit_blocks
        hashes = self.block_hashes(content, hit)
        evictable = sum(1 for h in hashes if self._blocks[self._cached[h]].ref == 0)
        total = -(-(hit * self.block_size + num_new_tokens) // self.block_size)
        return AdmissionPlan(hit, total - hit, evictable, ())

    def admit(self, content: Sequence[Segment], plan: AdmissionPlan) -> KVHolding:
        ids: list[int] = []
        for h in self.block_hashes(content, plan.hit_blocks):
            block = self._blocks[self._cached[h]]
            if block.ref == 0:
                del self._free[block.block_id]
            block.ref += 1
            ids.append(block.block_id)
        holding = KVHolding([], [], len(ids), ids)
        self._take(holding, plan.new_blocks)
        if self.enable_caching:
            total_blocks = sum(s.num_tokens for s in content) // self.block_size
            self._hashes[id(holding)] = self.block_hashes(content, total_blocks)
        return holding

    def grow(self, holding: KVHolding, num_new_blocks: int) -> bool:
        if num_new_blocks > self.num_free:
            return False
        self._take(holding, num_new_blocks)
        return True

    def take_free(self, n: int) -> None:
        raise NotImplementedError("the reference cache allocates per request (use grow)")

    def register(self, holding: KVHolding, computed_tokens: int) -> None:
        if not self.enable_caching:
            return
        ids = holding.block_ids or []
        hashes = self._hashes[id(holding)]
        full = min(computed_tokens // self.block_size, len(hashes), len(ids))
        for b in range(full):
            block = self._blocks[ids[b]]
            h = hashes[b]
            if self._cached.get(h) == block.block_id:
                continue  # already this request's entry (or a shared hit)
            if h in self._cached or block.block_hash is not None:
                return  # a duplicate breaks the request's chain of entries
            block.block_hash = h
            self._cached[h] = block.block_id

    def release(self, holding: KVHolding) -> None:
        for block_id in reversed(holding.block_ids or []):
            block = self._blocks[block_id]
            block.ref -= 1
            if block.ref == 0:
                self._free[block_id] = None
        holding.block_ids = []
        holding.num_blocks = 0
        self._hashes.pop(id(holding), None)

    def _take(self, holding: KVHolding, n: int) -> None:
        assert holding.block_ids is not None
        for _ in range(n):
            block_id, _ = self._free.popitem(last=False)
            block = self._blocks[block_id]
            if block.block_hash is not None:
                del self._cached[block.block_hash]
                block.block_hash = None
            block.ref = 1
            holding.block_ids.append(block_id)
        holding.num_blocks += n

    def check_invariants(self) -> None:
        for block in self._blocks:
            assert block.ref >= 0
            assert (block.ref == 0) == (block.block_id in self._free), block
        for h, block_id in self._cached.items():
            assert self._blocks[block_id].block_hash == h
