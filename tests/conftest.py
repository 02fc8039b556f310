"""Suite-wide settings.

The CLI's rich tables size themselves to the terminal: pytest-xdist workers have none (80
columns), so tests that read table cells would depend on how they were run. One fixed width
makes them independent of it.
"""

from __future__ import annotations

import os

os.environ["COLUMNS"] = "200"
