"""Erlang C: the chance an arrival waits in an M/M/c queue (shared by the percentile and the
per-request forms of the capacity model)."""

from __future__ import annotations


def erlang_c(servers: int, offered: float) -> float:
    """Probability that an arrival waits in an M/M/c queue (``offered = λ·S`` in servers).

    Erlang B by its stable recurrence, then C from B; 1 when the queue is unstable.
    """
    if offered <= 0:
        return 0.0
    if offered >= servers:
        return 1.0
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return servers * b / (servers - offered * (1.0 - b))
