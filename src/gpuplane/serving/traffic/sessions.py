"""Multi-turn chat sessions whose prompts share prefixes, so prefix caching and routing matter.

A session is a user talking to the model: turn ``k``'s prompt is the system prompt, every earlier
user message and answer, and the new message, as an OpenAI-style chat client resends the whole
conversation. Prompts of one session therefore extend each other, and sessions that use the same
system prompt share it. Sessions are closed loop: turn ``k + 1`` is sent ``think_s`` after the
answer to turn ``k`` arrives (the driver releases it), and a session ends when its next prompt
would not fit ``max_prompt_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplane.core.errors import InputError
from gpuplane.serving.request import Request, RequestId, Segment
from gpuplane.serving.traffic.generators import LognormalLengths, poisson_arrivals


@dataclass(frozen=True, slots=True)
class Turn:
    user_tokens: int
    output_tokens: int
    think_s: float  # pause after the previous answer (0 for the first turn)


@dataclass(frozen=True)
class Session:
    session_id: str
    start_s: float
    system: Segment | None
    turns: tuple[Turn, ...]

    def request(self, k: int, arrival_s: float) -> Request:
        """Turn ``k`` as a request sent at ``arrival_s``."""
        sid = self.session_id
        segs: list[Segment] = [self.system] if self.system is not None else []
        for i in range(k):
            segs.append(Segment(f"{sid}/u{i}", self.turns[i].user_tokens))
            segs.append(Segment(f"{sid}/o{i}", self.turns[i].output_tokens))
        segs.append(Segment(f"{sid}/u{k}", self.turns[k].user_tokens))
        return Request(
            RequestId(f"{sid}/t{k}"),
            arrival_s,
            sum(s.num_tokens for s in segs),
            self.turns[k].output_tokens,
            tuple(segs),
            output_key=f"{sid}/o{k}",
            session_id=sid,
        )


# Chat-like turns: a user message of ~150 tokens, an answer of ~250 (medians).
CHAT_TURN_LENGTHS = LognormalLengths(150.0, 0.8, 250.0, 0.7)


@dataclass(frozen=True)
class SessionSpec:
    """How sessions start and what they contain."""

    rate_per_s: float  # new sessions per second (Poisson)
    duration_s: float
    mean_turns: float = 4.0  # geometric number of turns
    think_mean_s: float = 10.0  # exponential pause between an answer and the next message
    num_system_prompts: int = 4
    system_tokens: int = 1000
    user: LognormalLengths = CHAT_TURN_LENGTHS
    max_prompt_tokens: int = 8000

    def __post_init__(self) -> None:
        if self.rate_per_s <= 0 or self.duration_s <= 0 or self.mean_turns < 1:
            raise InputError(
                f"rate {self.rate_per_s}, duration {self.duration_s}, turns {self.mean_turns}",
                expected="positive rate and duration, mean_turns >= 1",
            )


def generate_sessions(spec: SessionSpec, rng: np.random.Generator) -> list[Session]:
    """Sessions starting over ``spec.duration_s``; each uses one of the shared system prompts."""
    starts = poisson_arrivals(spec.rate_per_s, rng, duration_s=spec.duration_s)
    out: list[Session] = []
    for i, start in enumerate(starts.tolist()):
        num_turns = int(rng.geometric(1.0 / spec.mean_turns))
        users, outputs = spec.user.sample(num_turns, rng)
        thinks = rng.exponential(spec.think_mean_s, size=num_turns)
        system = None
        if spec.num_system_prompts > 0 and spec.system_tokens > 0:
            which = int(rng.integers(0, spec.num_system_prompts))
            system = Segment(f"system-{which}", spec.system_tokens)
        turns: list[Turn] = []
        total = spec.system_tokens if system is not None else 0
        for k in range(num_turns):
            total += int(users[k])
            if total > spec.max_prompt_tokens:
                break
            turns.append(Turn(int(users[k]), int(outputs[k]), 0.0 if k == 0 else float(thinks[k])))
            total += int(outputs[k])
        if turns:
            out.append(Session(f"s{i}", float(start), system, tuple(turns)))
    return out
