"""Suite-wide settings: the suite passes however it is started (a terminal or none, in the
foreground or as a background job, stdin closed, any working directory, CI's variables).

The CLI's rich tables size themselves to the terminal: pytest-xdist workers have none (80
columns), so tests that read table cells would depend on how they were run. One fixed width
makes them independent of it. rich also takes ``FORCE_COLOR``, ``TTY_COMPATIBLE`` and
``TTY_INTERACTIVE`` (which CI runners often set for coloured logs) as "stdout/stderr is a
terminal", which would turn on progress bars and colour codes where the tests capture the
output; they are dropped here, before any console is made. The subprocesses the tests start
inherit this environment. hypothesis keeps its files (example database, caches) under
``.hypothesis`` of the working directory it was started in; they go to the repository's
(git-ignored) one wherever the suite is started from, so a run from elsewhere neither litters
that directory nor fails where it cannot be written (``-W error`` turns hypothesis's warning
about an unusable directory into an error).
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

os.environ["COLUMNS"] = "200"
for _name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
    os.environ.pop(_name, None)
set_hypothesis_home_dir(Path(__file__).resolve().parents[1] / ".hypothesis")

# The suite is deterministic: hypothesis draws the same examples on every run (derandomize), so
# a failure in CI reproduces here. HYPOTHESIS_PROFILE=explore draws new examples each run.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
