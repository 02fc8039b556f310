"""The compiled modules (``GPUPLANE_NATIVE``, ``core.native``) give the plain modules' results.

Builds ``build/native/<tag>`` with mypyc when it is missing or stale (a minute or two), then runs
the same serving runs (``native_runs``) in two interpreters, plain and compiled, and compares
the digests of everything they produced.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from gpuplane.core.native import ENV, NATIVE_MODULES, check_build, default_build_dir

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def _toolchain_missing() -> str | None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc}) on PATH"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "the Python headers (Python.h) are not installed"
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc (it comes with mypy) is not installed"
    return None


def _digests(native: Path | None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "src")])
    if native is not None:
        env[ENV] = str(native)
    proc = subprocess.run(
        [sys.executable, "-m", "tests.integration.native_runs"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == "", proc.stderr[-3000:]  # a refused build would be reported there
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_compiled_modules_give_byte_identical_serving_results() -> None:
    missing = _toolchain_missing()
    if missing is not None:
        pytest.skip(f"cannot build the compiled modules: {missing}")
    dest = default_build_dir()
    if isinstance(check_build(dest), str):
        cmd = [sys.executable, "-m", "gpuplane.core.native_build", "build", "--dest", str(dest)]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    plain, compiled = _digests(None), _digests(dest)
    assert plain["modules"].startswith("plain Python")
    n = len(NATIVE_MODULES)
    assert compiled["modules"].startswith(f"compiled with mypyc ({n}/{n} modules")
    assert compiled["digests"] == plain["digests"]
    assert len(plain["digests"]) == 5
