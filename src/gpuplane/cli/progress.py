"""Progress on a terminal, and Ctrl-C that keeps what was done.

- Progress bars go to stderr, and only when stderr is a terminal: piped or captured runs (CI,
  tests, ``2> log``) stay quiet. Bars never touch stdout or the files a run writes, and never
  change what is computed.
- ``Interruptible``: while a long job runs, the first Ctrl-C (SIGINT) asks it to stop at its
  next step boundary and write what it has, flagged as partial; a second Ctrl-C aborts at once
  (KeyboardInterrupt). The CLI then exits with 130, the shell's code for a SIGINT death
  (128 + 2). It does what Python itself does at start-up: a SIGINT that arrives ignored
  (``cmd &`` in a script, ``trap '' INT``, many CI runners and schedulers) stays ignored, and
  on leaving, the handler found on entry is put back, whatever it was.
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


def takes_over(handler: Any) -> bool:
    """Whether ``Interruptible`` may replace ``handler``, the SIGINT handler it finds.

    Python installs its own handler (``default_int_handler``) at start-up only when SIGINT is
    not ignored, so that a job started to ignore Ctrl-C (a background job of a script, which
    POSIX starts with SIGINT ignored, or ``trap '' INT``) keeps ignoring it; we do the same.
    ``None`` is a handler set outside Python (by C code embedding it): ``signal.signal`` could
    not put it back, so it is left alone too.
    """
    return handler is not signal.SIG_IGN and handler is not None


class Interruptible:
    """A context in which the first SIGINT sets ``requested`` instead of raising.

    Where SIGINT is ignored on entry (see ``takes_over``) nothing is installed and the job runs
    to its end; otherwise the handler found on entry is restored on exit, whichever it was.
    """

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
        if threading.current_thread() is not threading.main_thread():
            return self
        previous = signal.getsignal(signal.SIGINT)
        if takes_over(previous):
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
