"""A router's own approximate index of which prompt prefixes it sent to which engine.

llm-d's ``prefix-cache-scorer`` (the GIE approximate prefix plugin) hashes each prompt in blocks
(16 tokens by default, at most 256 blocks matched), remembers per server which block hashes it
routed there in an LRU of ``31250`` blocks (about a Llama-3-8B KV cache on an H100 with vLLM's
16-token blocks) and scores a server by how many leading blocks of the new prompt it holds. It
never sees the engines' evictions, hence "approximate".

Here the index keeps prompt *segments* (a system prompt, a conversation turn) instead of single
blocks, each entry worth the blocks it adds to the prompt; entries are inserted in prompt order,
so a prefix is evicted before what extends it, as with block hashes.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from gpuplane.serving.request import Request

DEFAULT_BLOCK_SIZE = 16
DEFAULT_MAX_PREFIX_BLOCKS = 256
DEFAULT_LRU_CAPACITY_PER_SERVER = 31250

ChainKey = int | str


@dataclass(frozen=True, slots=True)
class ChainEntry:
    key: ChainKey
    tokens_through: int  # prompt tokens up to the end of this segment
    blocks: int  # blocks this segment adds


class PrefixIndex:
    """Per-engine LRU of prompt-prefix entries (mutable; owned by the routing caller)."""

    def __init__(
        self,
        block_size: int = DEFAULT_BLOCK_SIZE,
        max_prefix_blocks: int = DEFAULT_MAX_PREFIX_BLOCKS,
        capacity_blocks: int = DEFAULT_LRU_CAPACITY_PER_SERVER,
    ) -> None:
        self.block_size = block_size
        self.max_prefix_blocks = max_prefix_blocks
        self.capacity_blocks = capacity_blocks
        self._lru: dict[str, OrderedDict[ChainKey, int]] = {}
        self._used: dict[str, int] = {}
        self._ids: dict[tuple[ChainKey, str, int], int] = {}

    def chain(self, req: Request) -> list[ChainEntry]:
        """The request's prompt as index entries, up to ``max_prefix_blocks`` blocks."""
        limit = self.max_prefix_blocks * self.block_size
        if not req.segments:
            tokens = min(req.prompt_tokens, limit)
            return [ChainEntry(f"u:{req.request_id}", tokens, tokens // self.block_size)]
        out: list[ChainEntry] = []
        parent: ChainKey = 0
        through = 0
        for seg in req.segments:
            ident = (parent, seg.key, seg.num_tokens)
            key = self._ids.setdefault(ident, len(self._ids) + 1)
            before = through
            through = min(through + seg.num_tokens, limit)
            out.append(
                ChainEntry(key, through, through // self.block_size - before // self.block_size)
            )
            parent = key
            if through >= limit:
                break
        return out

    def total_blocks(self, chain: list[ChainEntry]) -> int:
        return chain[-1].tokens_through // self.block_size if chain else 0

    def matched_blocks(self, engine_id: str, chain: list[ChainEntry]) -> int:
        lru = self._lru.get(engine_id)
        if not lru:
            return 0
        tokens = 0
        for entry in chain:
            if entry.key not in lru:
                break
            tokens = entry.tokens_through
        return tokens // self.block_size

    def record(self, engine_id: str, chain: list[ChainEntry]) -> None:
        """The request was sent to ``engine_id``: its prefix is (presumably) cached there now."""
        lru = self._lru.get(engine_id)
        if lru is None:
            lru = self._lru[engine_id] = OrderedDict()
        used = self._used.get(engine_id, 0)
        for entry in chain:
            if entry.key in lru:
                lru.move_to_end(entry.key)
            else:
                lru[entry.key] = entry.blocks
                used += entry.blocks
        while used > self.capacity_blocks and lru:
            _, blocks = lru.popitem(last=False)
            used -= blocks
        self._used[engine_id] = used

    def forget(self, engine_id: str) -> None:
        """The engine is gone (llm-d drops inactive pods from the index)."""
        self._lru.pop(engine_id, None)
        self._used.pop(engine_id, None)
