"""Optional compiled copies of the serving twin's hottest modules (mypyc), and their loader.

The serving twin spends its time in a few dozen small Python functions per request (planning a
step, committing it, routing); no single one dominates, so the interpreter's per-call and
per-attribute cost is what a long run pays. mypyc (part of mypy, which the project already uses
for its strict type checks) compiles such type-annotated modules to C extensions with the same
semantics, ints, floats and evaluation order, so a run gives the same bytes (a test compares).

The plain Python modules stay the reference and the default. The compiled ones are used only
when the environment variable ``GPUPLANE_NATIVE`` is set (``1``: the default build folder,
otherwise the folder it names) and the build there is fresh: built by this Python from the
sources as they are now. A build records a digest of every ``.py`` file of the package (a
compiled module may have inlined a constant of another one), so any edit makes it stale; a
stale or missing build is reported on stderr and the plain modules run.

Build: ``python -m gpuplane.core.native_build build`` (``make native``); it needs a C compiler and
the Python headers. ``python -m gpuplane.core.native_build status`` says whether a build is usable.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ENV = "GPUPLANE_NATIVE"
MANIFEST = "manifest.json"

# The serving twin's hot path: the event loop, the engine (plan, commit, KV cache, decode group,
# counters), the step-time fast path and the router's request path. Modules compiled together
# call each other directly; everything else they use stays interpreted.
NATIVE_MODULES: tuple[str, ...] = (
    "gpuplane.core.kernel",
    "gpuplane.serving.metrics.histogram",
    "gpuplane.serving.steptime.fast",
    "gpuplane.serving.engine.live",
    "gpuplane.serving.engine.plan",
    "gpuplane.serving.engine.decode_set",
    "gpuplane.serving.engine.kv_cache",
    "gpuplane.serving.engine.stats",
    "gpuplane.serving.engine.vllm_scheduler",
    "gpuplane.serving.engine.completion",
    "gpuplane.serving.engine.engine",
    "gpuplane.serving.routing.engine_slot",
    "gpuplane.serving.routing.scorers",
    "gpuplane.serving.routing.request_path",
    "gpuplane.serving.routing.simulation",
)


def package_dir() -> Path:
    """The ``gpuplane`` package's folder (its sources)."""
    return Path(__file__).resolve().parents[1]


def platform_tag() -> str:
    """What a build is only good for: this interpreter's extension-module suffix."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return suffix.strip(".").rsplit(".", 1)[0] or "default"


def default_build_dir() -> Path:
    """``build/native/<tag>`` beside ``src`` (the repository's ignored build folder)."""
    return package_dir().parents[1] / "build" / "native" / platform_tag()


def source_digest(root: Path | None = None) -> str:
    """SHA-256 over every ``.py`` file of the package (relative path and bytes, sorted)."""
    root = package_dir() if root is None else root
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class NativeBuild:
    """A usable build: the extension file of each compiled module (and of mypyc's runtime)."""

    folder: Path
    files: dict[str, Path]


def check_build(folder: Path, digest: str | None = None) -> NativeBuild | str:
    """The build in ``folder`` if it is complete and made from the current sources, else why not."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return f"no build in {folder} (run: python -m gpuplane.core.native_build build)"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        tag, built_digest = str(data["tag"]), str(data["digest"])
        files = {str(k): folder / str(v) for k, v in dict(data["files"]).items()}
    except (ValueError, KeyError, TypeError) as exc:
        return f"{manifest}: unreadable manifest ({exc})"
    if tag != platform_tag():
        return f"{folder} was built for {tag}, this interpreter is {platform_tag()}"
    if built_digest != (source_digest() if digest is None else digest):
        return f"{folder} is stale: the sources changed since it was built (rebuild it)"
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        return f"{folder} is incomplete: {', '.join(missing)} missing"
    if set(NATIVE_MODULES) - set(files):
        return f"{folder} lacks modules: {', '.join(sorted(set(NATIVE_MODULES) - set(files)))}"
    return NativeBuild(folder, files)


class _NativeFinder(importlib.abc.MetaPathFinder):
    """Serves the built modules' extension files ahead of the plain sources."""

    def __init__(self, build: NativeBuild) -> None:
        self.build = build

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.build.files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def active() -> NativeBuild | None:
    """The build in use in this process (None: the plain modules)."""
    for finder in sys.meta_path:
        if isinstance(finder, _NativeFinder):
            return finder.build
    return None


def enable(folder: Path) -> str | None:
    """Use the build in ``folder`` for every compiled module not imported yet; None when it is
    in use, else why not (nothing changed then)."""
    if active() is not None:
        return None
    found = check_build(folder)
    if isinstance(found, str):
        return found
    loaded = sorted(m for m in NATIVE_MODULES if m in sys.modules)
    if loaded:
        return f"already imported as plain Python: {', '.join(loaded)}"
    sys.meta_path.insert(0, _NativeFinder(found))
    return None


def enable_from_env() -> None:
    """``enable`` as ``GPUPLANE_NATIVE`` asks (unset, empty or ``0``: plain modules)."""
    value = os.environ.get(ENV, "")
    if value in ("", "0"):
        return
    folder = default_build_dir() if value == "1" else Path(value)
    why = enable(folder)
    if why is not None:
        print(f"gpuplane: {ENV} is set, compiled modules not used: {why}", file=sys.stderr)


def describe() -> str:
    """One line for a benchmark's header: which modules this process runs."""
    build = active()
    if build is None:
        return "plain Python (the reference)"
    compiled = sum(1 for m in NATIVE_MODULES if m in sys.modules and _is_native(m))
    return f"compiled with mypyc ({compiled}/{len(NATIVE_MODULES)} modules from {build.folder})"


def _is_native(module: str) -> bool:
    origin = getattr(sys.modules[module], "__file__", "") or ""
    return not origin.endswith(".py")
