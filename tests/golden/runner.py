"""Run one golden case through the real entry point and hash what it wrote."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.golden.cases import REPO, SHARED, Case

GOLDEN_FILE = Path(__file__).with_name("golden.json")
# Wall-clock figures some commands print next to their results; they are not behaviour.
WALL_CLOCK = re.compile(rb'"wall_s": [0-9.eE+-]+')
# Where the checkout and ../shared lie differs between machines (CI clones elsewhere): outputs
# that name an input file are compared with those prefixes replaced.
_PLACES = sorted(
    {
        (str(SHARED.resolve()).encode(), b"<shared>"),
        (str(SHARED).encode(), b"<shared>"),
        (str(REPO.resolve()).encode(), b"<repo>"),
        (str(REPO).encode(), b"<repo>"),
    },
    key=lambda pair: -len(pair[0]),
)


def _placeless(data: bytes) -> bytes:
    for place, name in _PLACES:
        data = data.replace(place, name)
    return data


# Full outputs of the last recording, kept out of git, so that a mismatch can be shown as a diff.
RECORDED_DIR = REPO / "out" / "golden-recorded"


def run_case(case: Case, keep_in: Path | None = None) -> dict[str, str]:
    """The SHA-256 of stdout and of every compared file; copies them under ``keep_in``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        argv = [a.replace("{out}", str(out)) for a in case.argv]
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONHASHSEED": "0"}
        proc = subprocess.run(
            [sys.executable, "-c", "from gpuplane.cli.main import main; main()", *argv],
            input=(case.stdin or "").encode(),
            capture_output=True,
            env=env,
            cwd=REPO,
            check=False,
        )
        stdout = WALL_CLOCK.sub(b'"wall_s": 0', proc.stdout)
        blobs: dict[str, bytes] = {"stdout": stdout, "exit": str(proc.returncode).encode()}
        if case.files:
            del blobs["stdout"]  # simulate prints a wall-clock duration; its files are the result
        for name in case.files:
            path = out / name
            blobs[name] = path.read_bytes() if path.exists() else b"<missing>"
        if keep_in is not None:
            target = keep_in / case.name
            target.mkdir(parents=True, exist_ok=True)
            for name, data in blobs.items():
                (target / name).write_bytes(data)
            (target / "stderr").write_bytes(proc.stderr)
        return {name: hashlib.sha256(_placeless(data)).hexdigest() for name, data in blobs.items()}
