"""The engine's paged KV cache: a fixed pool of blocks, prefix caching and LRU reuse of free blocks.

What is modelled (vLLM V1 ``vllm/v1/core/block_pool.py`` and ``kv_cache_manager.py``):

- The pool has ``num_blocks`` blocks of ``block_size`` token slots. A request holds
  ``ceil(slots / block_size)`` blocks; new blocks come from the front of a free queue.
- With prefix caching, every *full* block that a request has computed is recorded under the hash
  of its content (chained through all earlier tokens). A new request first looks up the longest
  chain of cached full blocks matching its prompt (at most ``num_tokens - 1`` tokens, so at least
  one token is computed to produce logits) and shares them (reference counts).
- A freed block keeps its hash and goes to the *tail* of the free queue, the blocks of one
  request in reverse order, so the deepest blocks are evicted first. Taking a block from the
  front evicts whatever it cached (LRU). A cached block that a new request hits leaves the queue.
- ``usage`` is ``1 - free / total`` where free blocks include evictable cached blocks
  (``vllm:kv_cache_usage_perc``).

How it is represented, so that a request costs O(segments) rather than O(blocks): the content of
prompts is a tree of :class:`~gpuplane.serving.request.Segment`\\s. A block belongs to the
tree node (segment) that holds its last token; since blocks are cached only in order and freed
deepest first, the cached blocks of a node are always a prefix of its blocks, so a node keeps a
count (``cached``) and the free queue holds *runs* of blocks of one node instead of blocks.

Deviation: vLLM keeps duplicate cached copies of a block computed by two requests at once; here
only the first copy is a cache entry and the duplicate is freed as a plain block.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from gpuplane.serving.request import Segment

NodeKey = tuple[str, int]


class CacheNode:
    """One segment of prompt content, at one position of the content tree."""

    __slots__ = (
        "cached",
        "children",
        "end",
        "first_block",
        "holders",
        "key",
        "num_blocks",
        "parent",
        "runs",
    )

    def __init__(
        self, key: NodeKey, parent: CacheNode | None, start: int, end: int, block_size: int
    ) -> None:
        self.key = key
        self.parent = parent
        self.children: dict[NodeKey, CacheNode] = {}
        self.end = end
        self.first_block = start // block_size
        self.num_blocks = end // block_size - self.first_block
        self.cached = 0
        self.holders: dict[int, int] = {}  # blocks held (a prefix of the node) -> requests
        self.runs: list[FreeRun] = []

    def max_held(self) -> int:
        return max(self.holders) if self.holders else 0


class FreeRun:
    """Consecutive free blocks, evicted from ``hi - 1`` down: cached blocks of a node, or plain."""

    __slots__ = ("hi", "lo", "node")

    def __init__(self, node: CacheNode | None, lo: int, hi: int) -> None:
        self.node = node
        self.lo = lo
        self.hi = hi


@dataclass(slots=True)
class KVHolding:
    """The blocks one request holds: shared prefixes per path node, and its own blocks."""

    path: list[CacheNode]
    canon: list[int]  # per path node: leading blocks held as shared cache entries
    num_blocks: int = 0
    block_ids: list[int] | None = None  # the per-block reference cache keeps block ids here


@dataclass(frozen=True, slots=True)
class AdmissionPlan:
    """What admitting a waiting request would take (computed without changing anything)."""

    hit_blocks: int
    new_blocks: int
    evictable_hits: int  # hit blocks that are now free, so taking them uses free blocks too
    takes: tuple[tuple[CacheNode, int], ...]

    @property
    def blocks_needed(self) -> int:
        return self.new_blocks + self.evictable_hits


class KVCache:
    """Owner of one engine's KV blocks (mutable)."""

    def __init__(self, num_blocks: int, block_size: int, enable_caching: bool) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_caching = enable_caching
        self.num_free = num_blocks
        self.root = CacheNode(("", 0), None, 0, 0, block_size)
        self._queue: deque[FreeRun] = deque()
        if enable_caching:
            self._queue.append(FreeRun(None, 0, num_blocks))
        # Blocks taken from the front of the free queue but not yet removed from it: taking is
        # counted in ``num_free`` at once and applied to the queue before anything else looks
        # at it (consecutive takes from the front compose, so the result is the same).
        self._owed = 0

    def usage(self) -> float:
        return 1.0 - self.num_free / self.num_blocks

    # -- lookups (pure) ---------------------------------------------------------------------
    def match_blocks(self, content: Sequence[Segment], num_tokens: int) -> int:
        """Leading full blocks of ``content`` cached now, capped to leave one token to compute."""
        if not self.enable_caching:
            return 0
        if self._owed:
            self._settle()
        hit, node = 0, self.root
        for seg in content:
            child = node.children.get((seg.key, seg.num_tokens))
            if child is None:
                break
            if child.cached < child.num_blocks:
                hit += child.cached
                break
            hit += child.num_blocks
            node = child
        return min(hit, (num_tokens - 1) // self.block_size)

    def plan_admission(
        self,
        content: Sequence[Segment],
        num_tokens: int,
        num_new_tokens: int,
        hit_blocks: int | None = None,
    ) -> AdmissionPlan:
        """Blocks to admit a request that computes ``num_new_tokens`` after its cached prefix
        (``hit_blocks``: ``match_blocks(content, num_tokens)`` if the caller has it already)."""
        hit = self.match_blocks(content, num_tokens) if hit_blocks is None else hit_blocks
        total = -(-(hit * self.block_size + num_new_tokens) // self.block_size)
        if hit <= 0:
            return AdmissionPlan(hit, total - hit, 0, ())
        if self._owed:
            self._settle()
        takes: list[tuple[CacheNode, int]] = []
        evictable = 0
        left, node = hit, self.root
        for seg in content:
            if left <= 0:
                break
            node = node.children[(seg.key, seg.num_tokens)]
            take = min(left, node.num_blocks)
            if take > 0:
                takes.append((node, take))
                evictable += max(0, take - node.max_held())
            left -= take
        return AdmissionPlan(hit, total - hit, evictable, tuple(takes))

    # -- changes ----------------------------------------------------------------------------
    def admit(self, content: Sequence[Segment], plan: AdmissionPlan) -> KVHolding:
        """Take the plan's cached blocks and new blocks (the caller checked they fit)."""
        holding = KVHolding([], [], plan.hit_blocks + plan.new_blocks)
        if self.enable_caching:
            if self._owed:
                self._settle()
            taken = {id(node): take for node, take in plan.takes} if plan.takes else None
            node = self.root
            path, canon = holding.path, holding.canon
            for seg in content:
                key = (seg.key, seg.num_tokens)
                child = node.children.get(key)
                if child is None:
                    end = node.end + seg.num_tokens
                    child = CacheNode(key, node, node.end, end, self.block_size)
                    node.children[key] = child
                node = child
                take = taken.get(id(node), 0) if taken is not None else 0
                if take:
                    self._touch(node, take)
                holders = node.holders
                holders[take] = holders.get(take, 0) + 1
                path.append(node)
                canon.append(take)
        self.take_free(plan.new_blocks)
        return holding

    def grow(self, holding: KVHolding, num_new_blocks: int) -> bool:
        """Give a running request more blocks; False (nothing changed) if too few are free."""
        if num_new_blocks > self.num_free:
            return False
        self.take_free(num_new_blocks)
        holding.num_blocks += num_new_blocks
        return True

    def register(self, holding: KVHolding, computed_tokens: int) -> None:
        """Record the request's computed full blocks as cache entries where none exist yet.

        A request extends the cache only along its own chain of cache entries: once one of its
        blocks is a duplicate of an entry another request made first, its later blocks stay
        plain (vLLM would cache them too; see the module docstring).
        """
        if self._owed:
            self._settle()
        full = computed_tokens // self.block_size
        for i, node in enumerate(holding.path):
            if node.first_block >= full:
                break
            local = min(full - node.first_block, node.num_blocks)
            mine = holding.canon[i]
            if local > mine and mine == node.cached:
                _drop_holder(node, mine)
                node.holders[local] = node.holders.get(local, 0) + 1
                node.cached = local
                holding.canon[i] = mine = local
            if mine < node.num_blocks:
                break

    def release(self, holding: KVHolding) -> None:
        """Free every block of a finished or preempted request, deepest first."""
        nb = holding.num_blocks
        holding.num_blocks = 0
        if not self.enable_caching:
            self.num_free += nb
            return
        if self._owed:
            self._settle()
        path, canon = holding.path, holding.canon
        queue = self._queue
        covered = path[-1].first_block + path[-1].num_blocks if path else 0
        plain = nb - min(nb, covered)
        if plain > 0:  # _push_plain, inline here and below
            queue.append(FreeRun(None, 0, plain))
            self.num_free += plain
        for i in range(len(path) - 1, -1, -1):
            node, mine = path[i], canon[i]
            first = node.first_block
            in_node = min(nb, first + node.num_blocks) - first
            plain = (in_node if in_node > 0 else 0) - mine
            if plain > 0:
                queue.append(FreeRun(None, 0, plain))
                self.num_free += plain
            holders = node.holders
            before = max(holders) if holders else 0  # CacheNode.max_held
            count = holders[mine] - 1  # _drop_holder
            if count:
                holders[mine] = count
            else:
                del holders[mine]
            after = max(holders) if holders else 0
            if after < before:
                run = FreeRun(node, after, before)
                queue.append(run)
                node.runs.append(run)
                self.num_free += before - after
            if not (holders or node.cached or node.children):
                self._gc(node)
        holding.path, holding.canon = [], []

    def take_free(self, n: int) -> None:
        """Take ``n`` blocks from the front of the free queue, evicting what they cached."""
        self.num_free -= n
        if self.enable_caching:
            self._owed += n

    def _settle(self) -> None:
        """Apply the takes counted in ``_owed`` to the free queue (and the cache entries that
        the taken blocks held)."""
        n, self._owed = self._owed, 0
        queue = self._queue
        while n > 0:
            run = queue[0]
            lo, hi = run.lo, run.hi
            size = hi - lo
            if size <= 0:  # emptied when a request took its blocks back
                queue.popleft()
                self._detach(run)
                continue
            take = n if n < size else size
            run.hi = hi = hi - take
            n -= take
            node = run.node
            if node is not None and node.cached > hi:
                node.cached = hi
                runs = node.runs
                if len(runs) > 1:
                    for other in [r for r in runs if r is not run and r.lo >= hi]:
                        other.node = None  # orphaned above an evicted block: plain free now
                        runs.remove(other)
            if hi <= lo:
                queue.popleft()
                if node is not None:  # _detach
                    node.runs.remove(run)
                    run.node = None
                    self._gc(node)

    # -- internals --------------------------------------------------------------------------
    def _child(self, node: CacheNode, seg: Segment) -> CacheNode:
        key = (seg.key, seg.num_tokens)
        child = node.children.get(key)
        if child is None:
            child = CacheNode(key, node, node.end, node.end + seg.num_tokens, self.block_size)
            node.children[key] = child
        return child

    def _touch(self, node: CacheNode, upto: int) -> None:
        """A request takes the node's first ``upto`` cached blocks; free ones leave the queue."""
        held = node.max_held()
        if upto <= held:
            return
        for run in node.runs:
            if run.lo < upto:
                run.lo = min(upto, run.hi)
        self.num_free -= upto - held

    def _push_plain(self, count: int) -> None:
        if count > 0:
            self._queue.append(FreeRun(None, 0, count))
            self.num_free += count

    def _detach(self, run: FreeRun) -> None:
        node = run.node
        if node is not None:
            node.runs.remove(run)
            run.node = None
            self._gc(node)

    def _gc(self, node: CacheNode) -> None:
        """Forget nodes that hold nothing any more, walking up while parents become empty."""
        while node.parent is not None:
            if node.holders or node.cached or node.children:
                return
            if any(r.hi > r.lo for r in node.runs):
                return
            for run in node.runs:
                run.node = None
            node.runs.clear()
            parent = node.parent
            del parent.children[node.key]
            node.parent = None
            node = parent

    def check_invariants(self) -> None:
        """Free-queue sizes add up to ``num_free``; node runs cover exactly their free range."""
        if not self.enable_caching:
            assert 0 <= self.num_free <= self.num_blocks
            return
        self._settle()
        live = sum(max(0, r.hi - r.lo) for r in self._queue)
        assert live == self.num_free, (live, self.num_free)
        stack = [self.root]
        while stack:
            node = stack.pop()
            stack.extend(node.children.values())
            if node is self.root:
                continue
            held = node.max_held()
            assert held <= node.cached <= node.num_blocks, (node.key, held, node.cached)
            free = sum(max(0, r.hi - r.lo) for r in node.runs)
            assert free == node.cached - held, (node.key, free, node.cached, held)


def _drop_holder(node: CacheNode, held: int) -> None:
    count = node.holders[held] - 1
    if count:
        node.holders[held] = count
    else:
        del node.holders[held]
