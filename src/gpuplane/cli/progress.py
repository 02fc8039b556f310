"""Progress on a terminal, and Ctrl-C that keeps what was done.

- Progress bars go to stderr, and only when stderr is a terminal: piped or captured runs (CI,
  tests, ``2> log``) stay quiet. Bars never touch stdout or the files a run writes, and never
  change what is computed.
- ``Interruptible``: while a long job runs, the first Ctrl-C (SIGINT) asks it to stop at its
  next step boundary and write what it has, flagged as partial; a second Ctrl-C aborts at once
  (KeyboardInterrupt). The CLI then exits with 130, the shell's code for a SIGINT death
  (128 + 2).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from gpuplane.cli.console import err

INTERRUPTED_EXIT = 130


def progress_bar(*extra: Any) -> Progress:
    """A transient bar with the done share and the ETA, shown only on a terminal stderr."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        *extra,
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )


class Interruptible:
    """A context in which the first SIGINT sets ``requested`` instead of raising."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __call__(self) -> bool:
        return self.requested

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        err.print(
            f"interrupt: stopping {self.what} at its next step and writing what was done "
            "(Ctrl-C again to abort at once)",
            markup=False,
        )

    def __enter__(self) -> Interruptible:
        # Signal handlers can only be set from the main thread (tests may run us elsewhere).
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
