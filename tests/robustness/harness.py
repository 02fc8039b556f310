"""Run one mutated case in-process under a hard time limit and judge the answer.

The answer is judged as a user would: exit 0 (the input was valid after all: allowed only for a
mutant a reader may accept), or exit 2 with one message naming the file (or flag, or
``<stdin>``) and a line or field; never a traceback, an exception type name, another exit code
or a hang.
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType

from gpuplane.cli.main import run

# Past this the case is a hang: the slowest valid input here runs in well under a second of CPU.
HARD_LIMIT_S = 60.0

_LEAKED = re.compile(
    r"Traceback|\b(KeyError|TypeError|ValueError|AttributeError|IndexError|RecursionError|"
    r"UnicodeDecodeError|UnicodeEncodeError|OverflowError|ZeroDivisionError|AssertionError|"
    r"NameError|StopIteration|OSError|FileNotFoundError|IsADirectoryError|MemoryError|"
    r"decimal\.|InvalidOperation)\b"
)
# A field path: ``spec.replicas``, ``pools[0].kubelet``, ``node_pools[0]``.
_FIELD = re.compile(r"[A-Za-z_][\w-]*(?:\.[\w./-]+|\[\d+\])")


_UP = re.compile(r"/[^/\s]+/\.\./")


class Hang(Exception):
    """Raised by the alarm: the command ran past HARD_LIMIT_S."""


@dataclass(frozen=True, slots=True)
class Answer:
    code: int | None
    out: str
    err: str
    seconds: float
    crash: str | None = None  # the exception that escaped run(), if any


@contextlib.contextmanager
def _alarm(limit_s: float) -> Iterator[None]:
    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no answer within {limit_s:.0f} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def answer(argv: list[str], stdin: bytes | None = None, limit_s: float = HARD_LIMIT_S) -> Answer:
    """Run ``gpuplane ARGV`` in this process with ``stdin`` as its standard input's bytes."""
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    crash = None
    code: int | None = None
    start = time.perf_counter()
    try:
        with _alarm(limit_s), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(argv)
    except Hang as exc:
        crash = f"hang: {exc}"
    except BaseException as exc:  # the point: anything that escapes is a finding
        crash = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        sys.stdin = saved_stdin
    return Answer(code, out.getvalue(), err.getvalue(), time.perf_counter() - start, crash)


def located(err: str, source: str, folder: str | None = None) -> bool:
    """Does the message name ``source`` and, after it, a line (``source:12``) or a field?

    With ``folder``, a line in any file under it counts too: a mutant may break a check that
    spans files (a Deployment the scenario's service names), reported where the check sits.
    """
    if source.startswith("--"):
        return source in err
    err = _UP.sub("/", err)
    if folder is not None and re.search(re.escape(folder) + r"/[^\s:]+:\d+", err):
        return True
    at = err.find(source)
    if at < 0:
        return False
    rest = err[at + len(source) :]
    # ``source:12``, ``source: spec.replicas: ...`` or ``source: min_replicas: ...``
    return bool(re.match(r":\d+|: [\w.\[\]/-]+: ", rest)) or bool(_FIELD.search(rest))


def problems(
    ans: Answer,
    *,
    source: str,
    must_fail: bool,
    extra_codes: frozenset[int] = frozenset(),
    folder: str | None = None,
) -> list[str]:
    """What is wrong with the answer; empty when it is one a user can act on."""
    if ans.crash is not None:
        return [ans.crash]
    found = []
    text = ans.out + ans.err
    leaked = _LEAKED.search(ans.err)
    if leaked:
        found.append(f"leaks {leaked.group(0)!r}: {ans.err.strip()[:300]}")
    if ans.code == 0 and must_fail:
        found.append("accepted: exit 0 for an input that must be refused")
    elif ans.code == 2 and not located(ans.err.replace("\n", ""), source, folder):
        found.append(f"unlocated (want {source} and a line or field): {ans.err.strip()[:300]}")
    elif ans.code not in (0, 2, *extra_codes):
        found.append(f"exit code {ans.code}: {text.strip()[-300:]}")
    return found
