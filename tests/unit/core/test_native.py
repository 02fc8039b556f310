"""The compiled-module loader: a build is used only when complete, for this interpreter and
made from the current sources; otherwise the plain modules run and the reason is given."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpuplane.core import native
from gpuplane.core.native import (
    MANIFEST,
    NATIVE_MODULES,
    NativeBuild,
    check_build,
    platform_tag,
    source_digest,
)


def _fake_build(folder: Path, *, digest: str = "d", tag: str | None = None) -> Path:
    files = {m: f"lib/{m.replace('.', '/')}.so" for m in NATIVE_MODULES}
    for rel in files.values():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(b"")
    manifest = {"tag": tag or platform_tag(), "digest": digest, "files": files}
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_a_complete_build_of_the_current_sources_is_usable(tmp_path: Path) -> None:
    found = check_build(_fake_build(tmp_path), digest="d")
    assert isinstance(found, NativeBuild)
    assert set(found.files) == set(NATIVE_MODULES)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("none", "no build in"),
        ("garbled", "unreadable manifest"),
        ("tag", "was built for cpython-2"),
        ("digest", "is stale"),
        ("file", "is incomplete"),
        ("module", "lacks modules: gpuplane.core.kernel"),
    ],
)
def test_an_unusable_build_says_why(tmp_path: Path, change: str, why: str) -> None:
    _fake_build(tmp_path, tag="cpython-2" if change == "tag" else None)
    manifest = tmp_path / MANIFEST
    data = json.loads(manifest.read_text(encoding="utf-8"))
    if change == "none":
        manifest.unlink()
    elif change == "garbled":
        manifest.write_text("{", encoding="utf-8")
    elif change == "file":
        (tmp_path / data["files"][NATIVE_MODULES[-1]]).unlink()
    elif change == "module":
        del data["files"]["gpuplane.core.kernel"]
        manifest.write_text(json.dumps(data), encoding="utf-8")
    found = check_build(tmp_path, digest="other" if change == "digest" else "d")
    assert isinstance(found, str)
    assert why in found


def test_the_digest_covers_every_source_file(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n", encoding="utf-8")
    before = source_digest(tmp_path)
    (tmp_path / "sub" / "b.py").write_text("y = 3\n", encoding="utf-8")
    assert source_digest(tmp_path) != before
    assert source_digest(tmp_path) == source_digest(tmp_path)


@pytest.fixture
def plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as without GPUPLANE_NATIVE (the tests may run with the compiled modules)."""
    kept = [f for f in sys.meta_path if not isinstance(f, native._NativeFinder)]
    monkeypatch.setattr(sys, "meta_path", kept)


@pytest.mark.usefixtures("plain")
def test_a_stale_build_is_not_enabled(tmp_path: Path) -> None:
    finders = list(sys.meta_path)
    why = native.enable(_fake_build(tmp_path, digest="not the sources"))
    assert why is not None and "is stale" in why
    assert sys.meta_path == finders
    assert native.active() is None
    assert native.describe() == "plain Python (the reference)"


@pytest.mark.usefixtures("plain")
def test_the_environment_variable_reports_a_refused_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    finders = list(sys.meta_path)
    monkeypatch.setenv(native.ENV, "0")
    native.enable_from_env()
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(native.ENV, str(tmp_path))
    native.enable_from_env()
    assert "compiled modules not used: no build in" in capsys.readouterr().err
    assert sys.meta_path == finders


def test_the_finder_serves_only_the_built_modules(tmp_path: Path) -> None:
    found = check_build(_fake_build(tmp_path), digest="d")
    assert isinstance(found, NativeBuild)
    finder = native._NativeFinder(found)
    spec = finder.find_spec("gpuplane.serving.engine.engine", None)
    assert spec is not None and spec.origin == str(found.files["gpuplane.serving.engine.engine"])
    assert finder.find_spec("gpuplane.serving.engine.settings", None) is None


def test_the_platform_tag_names_this_interpreter() -> None:
    tag = platform_tag()
    assert tag and "." not in tag and sys.implementation.name in tag
