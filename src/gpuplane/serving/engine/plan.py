"""What one engine step (or a run of identical decode steps) was planned to compute."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.serving.batch import BatchShape, PrefillChunk
from gpuplane.serving.engine.live import LiveRequest


@dataclass(slots=True)
class Plan:
    """One forward pass.

    ``items`` are requests handled one by one (prefill chunks; in an exact step every scheduled
    request); ``uniform`` means every member of the engine's decode set also decodes one token.
    """

    items: list[tuple[LiveRequest, int]] = field(default_factory=list)
    uniform: bool = False
    decode_batch: bool = False  # SGLang: a decode batch (not a prefill batch)
    num_decodes: int = 0
    decode_contexts: tuple[int, ...] = ()
    preempted: list[LiveRequest] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.items and not (self.uniform and self.num_decodes)

    @property
    def pure_decode(self) -> bool:
        return self.uniform and not self.items and not self.preempted

    def shape(self) -> BatchShape:
        """The batch as the step-time model sees it; a 1-token item past the prompt is a decode."""
        prefills: list[PrefillChunk] = []
        decodes = list(self.decode_contexts)
        for r, n in self.items:
            if n == 1 and r.num_output > 0 and r.num_computed == r.num_tokens - 1:
                decodes.append(r.num_computed)
            else:
                prefills.append(PrefillChunk(n, r.num_computed))
        return BatchShape(prefills=tuple(prefills), decode_contexts=tuple(decodes))

    @property
    def num_tokens(self) -> int:
        return sum(n for _, n in self.items) + (self.num_decodes if self.uniform else 0)


@dataclass(slots=True)
class InFlight:
    """Steps under way: one planned step, or a run of decode steps with known end times."""

    plan: Plan
    ends: list[float]
    start_s: float
    done: int = 0  # steps already committed (runs are committed lazily, step by step)
    allocated: int = 1  # steps whose KV blocks are taken (a step takes them when it starts)

    @property
    def end_s(self) -> float:
        return self.ends[-1]

    @property
    def next_end_s(self) -> float:
        return self.ends[self.done]
