"""Build the compiled modules of :mod:`gpuplane.core.native` with mypyc, or report on a build.

Run: ``python -m gpuplane.core.native_build build [--dest DIR] [--jobs N]`` (``make native``),
``python -m gpuplane.core.native_build status [--dest DIR]``. A build needs mypy (mypyc comes
with it), setuptools, a C compiler and the Python headers; it takes a minute or two.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import sysconfig
from pathlib import Path

from gpuplane.core.native import (
    MANIFEST,
    NATIVE_MODULES,
    NativeBuild,
    check_build,
    default_build_dir,
    package_dir,
    platform_tag,
    source_digest,
)


def module_source(module: str) -> Path:
    """``src/gpuplane/a/b.py`` for ``gpuplane.a.b``."""
    return package_dir().joinpath(*module.split(".")[1:]).with_suffix(".py")


def build(dest: Path, jobs: int = 2) -> NativeBuild:
    """Compile ``NATIVE_MODULES`` into ``dest`` and write its manifest (the digest of the
    sources as they were when the build started)."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    digest = source_digest()
    src = package_dir().parent
    repo = src.parent  # mypy reads the project's configuration from here
    work, lib = dest / "work", dest / "lib"
    (dest / MANIFEST).unlink(missing_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    cwd, cache = os.getcwd(), os.environ.get("MYPY_CACHE_DIR")
    os.environ["MYPY_CACHE_DIR"] = str(work / "mypy_cache")  # not the project's type-check cache
    os.chdir(repo)
    try:
        paths = [str(module_source(m).relative_to(repo)) for m in NATIVE_MODULES]
        extensions = mypycify(paths, opt_level="3", target_dir=str(work / "c"))
        dist = Distribution({"name": "gpuplane-native", "ext_modules": extensions})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib = str(lib)
        cmd.build_temp = str(work / "temp")
        cmd.parallel = jobs
        dist.run_command("build_ext")
    finally:
        os.chdir(cwd)
        if cache is None:
            os.environ.pop("MYPY_CACHE_DIR", None)
        else:
            os.environ["MYPY_CACHE_DIR"] = cache
    files = _built_files(lib)
    manifest = {"tag": platform_tag(), "digest": digest, "files": files}
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    found = check_build(dest, digest)
    if isinstance(found, str):
        raise RuntimeError(found)
    return found


def _built_files(lib: Path) -> dict[str, str]:
    """Module name -> extension file (relative to the build folder), mypyc's runtime included."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    files = {}
    for module in NATIVE_MODULES:
        file = lib.joinpath(*module.split(".")).with_name(module.rsplit(".", 1)[1] + suffix)
        files[module] = str(file.relative_to(lib.parent))
    for shared in lib.glob(f"*__mypyc{suffix}"):  # the modules' shared code (one per build)
        files[shared.name[: -len(suffix)]] = str(shared.relative_to(lib.parent))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("action", choices=("build", "status"))
    parser.add_argument("--dest", type=Path, default=None, help="build folder")
    parser.add_argument("--jobs", type=int, default=2, help="parallel C compilations")
    args = parser.parse_args(argv)
    dest: Path = args.dest or default_build_dir()
    if args.action == "status":
        found = check_build(dest)
        if isinstance(found, str):
            print(f"not usable: {found}")
            return 1
        print(f"usable: {dest} ({len(NATIVE_MODULES)} modules); set GPUPLANE_NATIVE=1 to use it")
        return 0
    found = check_build(dest)
    if isinstance(found, NativeBuild):
        print(f"up to date: {dest}")
        return 0
    build(dest, args.jobs)
    print(f"built: {dest} ({len(NATIVE_MODULES)} modules); set GPUPLANE_NATIVE=1 to use it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
