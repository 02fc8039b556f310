"""Where the OpenB trace is found when no file is named: ``shared/data/openb`` beside the
repository. Read by ``gpuplane bench openb``, ``gpuplane demo`` and the sweep's ``openb`` base, so
all three look in the same places."""

from __future__ import annotations

from pathlib import Path

import gpuplane

DATA_SUBDIR = Path("shared/data/openb")


def default_data_dir() -> Path | None:
    """``shared/data/openb`` beside the repository: searched upward from the installed package,
    then as ``../shared`` from the current directory."""
    package = Path(gpuplane.__file__).resolve()
    candidates = [parent / DATA_SUBDIR for parent in package.parents]
    candidates.append(Path.cwd().parent / DATA_SUBDIR)
    return next((c for c in candidates if c.is_dir()), None)
