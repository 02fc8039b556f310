"""Suite-wide settings: the suite passes however it is started (a terminal or none, in the
foreground or as a background job, stdin closed, any working directory, CI's variables).

The CLI's rich tables size themselves to the terminal: pytest-xdist workers have none (80
columns), so tests that read table cells would depend on how they were run. One fixed width
makes them independent of it. rich also takes ``FORCE_COLOR``, ``TTY_COMPATIBLE`` and
``TTY_INTERACTIVE`` (which CI runners often set for coloured logs) as "stdout/stderr is a
terminal", which would turn on progress bars and colour codes where the tests capture the
output; they are dropped here, before any console is made. The subprocesses the tests start
inherit this environment.
"""

from __future__ import annotations

import os

from hypothesis import settings

os.environ["COLUMNS"] = "200"
for _name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
    os.environ.pop(_name, None)

# The suite is deterministic: hypothesis draws the same examples on every run (derandomize), so
# a failure in CI reproduces here. HYPOTHESIS_PROFILE=explore draws new examples each run.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
