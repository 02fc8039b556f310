"""Suite-wide settings.

The CLI's rich tables size themselves to the terminal: pytest-xdist workers have none (80
columns), so tests that read table cells would depend on how they were run. One fixed width
makes them independent of it.
"""

from __future__ import annotations

import os

os.environ["COLUMNS"] = "200"

from hypothesis import settings

# The suite is deterministic: hypothesis draws the same examples on every run (derandomize), so
# a failure in CI reproduces here. HYPOTHESIS_PROFILE=explore draws new examples each run.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
