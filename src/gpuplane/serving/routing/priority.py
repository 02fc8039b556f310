"""Order of same-time events in a serving run (the kernel's ``priority``: lower runs first).

Engine control first (an engine that became ready takes the requests of its instant), then
arrivals, KV transfers, engine steps, and metric scrapes last, so the requests of one instant
are all queued before an engine plans the step that starts then.
"""

from __future__ import annotations

from enum import IntEnum


class ServingPriority(IntEnum):
    CONTROL = 0  # an engine becomes ready
    ARRIVAL = 10  # a request (or a session's next turn) arrives
    TRANSFER = 20  # a prefill's KV cache reached its decode engine
    ENGINE = 30  # an engine's step (or run of steps) ends; engines plan at this priority
    SCRAPE = 90  # every engine's /metrics is recorded
