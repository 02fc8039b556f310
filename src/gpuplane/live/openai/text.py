"""Prompt text as tokens without a tokenizer, and synthetic output words from a seed.

The estimate: one token per 4 characters of the prompt, rounded up (OpenAI's rule of thumb for
English with a BPE tokenizer; real counts vary by model and language). Token ``i`` is the text's
characters ``4i .. 4i+3``, so two prompts that start with the same text start with the same
tokens, which is what prefix caching keys on. No tokenizer library is installed with gpuplane
(``transformers``/``tokenizers`` would be a heavy dependency for an emulator).

Content segments: the prompt is cut into blocks of ``block_size`` tokens (vLLM's 16-token KV
blocks), each keyed by a hash of everything up to its end (vLLM's block hash chains the parent
hash the same way), so equal keys mean equal prefixes. The engine's prefix cache and the
router's prefix index both work on these segments.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from gpuplane.serving.request import Segment

CHARS_PER_TOKEN = 4
SEGMENT_TOKENS = 16

# Synthetic output: words of this list, one per token, each with its leading space.
_WORDS = (
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "on",
    "be", "by", "this", "are", "or", "from", "at", "which", "an", "but", "not", "have", "one",
    "model", "token", "cache", "batch", "engine", "request", "prefill", "decode", "GPU",
    "memory", "kernel", "latency", "queue", "step", "block", "prefix", "router", "cluster",
)  # fmt: skip


def count_tokens(text: str) -> int:
    """The prompt's token count by the 4-characters estimate (at least one)."""
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


def text_tokens(text: str) -> list[str]:
    """The prompt's tokens by the estimate: 4-character pieces."""
    n = CHARS_PER_TOKEN
    return [text[i : i + n] for i in range(0, len(text), n)] or [""]


def segments_of(tokens: Sequence[str], block_size: int = SEGMENT_TOKENS) -> tuple[Segment, ...]:
    """The prompt (as tokens) in content segments of ``block_size`` tokens (the last may be
    shorter), each keyed by a hash chained over every block before it."""
    out: list[Segment] = []
    digest = hashlib.blake2b(digest_size=12)
    for start in range(0, len(tokens), block_size):
        block = tokens[start : start + block_size]
        digest.update("\x01".join(block).encode("utf-8", "surrogatepass") + b"\x00")
        out.append(Segment(digest.copy().hexdigest(), len(block)))
    return tuple(out)


class OutputWords:
    """The synthetic tokens of one answer: deterministic from the seed and the prompt."""

    def __init__(self, seed: int, prompt: str) -> None:
        self._rng = random.Random(f"{seed}\x00{prompt}")

    def natural_length(self, mean_tokens: int) -> int:
        """How long the answer is before its (synthetic) EOS: uniform on 1 .. 2 x mean - 1."""
        return self._rng.randint(1, max(1, 2 * mean_tokens - 1))

    def next_words(self, n: int) -> str:
        """The next ``n`` tokens as text."""
        choice = self._rng.choice
        return "".join(" " + choice(_WORDS) for _ in range(n))
