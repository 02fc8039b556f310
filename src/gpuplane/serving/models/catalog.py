"""The packaged model catalog and ``--model NAME_OR_CONFIG`` resolution.

The catalog is a list of real Hugging Face ``config.json`` copies (``serving/data/models``) with the
names people use for them. A command's ``--model`` accepts a catalog name, an alias or a Hugging
Face id (``Qwen/Qwen2.5-72B-Instruct``), or a path to a ``config.json`` (or to a model directory
that contains one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import exists, is_dir, read_user_text
from gpuplane.core.yamlio import validate_yaml
from gpuplane.serving.models.config_fields import parse_json_object
from gpuplane.serving.models.hf_config import shape_from_config
from gpuplane.serving.models.shape import ModelShape

CONFIG_FILE = "config.json"
MAX_CONFIG_BYTES = 4 * 1024 * 1024


class _EntrySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    hf_id: str = Field(pattern=r"^[\w.\-]+/[\w.\-]+$", description="Hugging Face org/repo")
    aliases: list[str] = []
    published_params_b: float = Field(gt=0, description="size stated by the model card")
    vidur: str | None = None


class _CatalogSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    models: dict[str, _EntrySpec]


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    name: str
    hf_id: str
    aliases: tuple[str, ...]
    published_params_b: float
    vidur: str | None

    @property
    def file_name(self) -> str:
        return self.hf_id.replace("/", "--") + ".json"


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


class ModelCatalog:
    def __init__(self, entries: list[CatalogEntry]) -> None:
        self.entries = {e.name: e for e in entries}
        self._index: dict[str, str] = {}
        for entry in entries:
            for key in (entry.name, entry.hf_id, *entry.aliases):
                other = self._index.setdefault(_norm(key), entry.name)
                if other != entry.name:
                    raise ValueError(f"model name {key!r} is claimed by {other} and {entry.name}")

    def names(self) -> list[str]:
        return list(self.entries)

    def find(self, name: str) -> CatalogEntry | None:
        key = self._index.get(_norm(name))
        return self.entries[key] if key else None

    def by_vidur(self, vidur_name: str) -> CatalogEntry | None:
        return next((e for e in self.entries.values() if e.vidur == vidur_name), None)

    def shape(self, entry: CatalogEntry) -> ModelShape:
        return _catalog_shape(entry.name)


def _data_text(relative: str) -> str:
    return resources.files("gpuplane.serving").joinpath(f"data/{relative}").read_text("utf-8")


@lru_cache(maxsize=1)
def default_catalog() -> ModelCatalog:
    source = "gpuplane/serving/data/model_catalog.yaml"
    spec = validate_yaml(_CatalogSpec, _data_text("model_catalog.yaml"), source)
    return ModelCatalog(
        [
            CatalogEntry(name, e.hf_id, tuple(e.aliases), e.published_params_b, e.vidur)
            for name, e in spec.models.items()
        ]
    )


@lru_cache(maxsize=64)
def _catalog_shape(name: str) -> ModelShape:
    entry = default_catalog().entries[name]
    relative = f"models/{entry.file_name}"
    text = _data_text(relative)
    source = f"gpuplane/serving/data/{relative}"
    return shape_from_config(parse_json_object(text, source), name=name, source=source, text=text)


def load_config_file(path: Path, *, name: str | None = None) -> ModelShape:
    """The shape in a ``config.json`` file (or in ``<dir>/config.json``)."""
    if is_dir(path):
        path = path / CONFIG_FILE
    source = str(path)
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise InputError(
                "the file is larger than 4 MiB", expected="a config.json", location=Location(source)
            )
        text = read_user_text(path)
    except FileNotFoundError:
        raise InputError(
            "no such file", expected="a Hugging Face config.json", location=Location(source)
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(
            f"cannot read the file: {err}",
            expected="a UTF-8 config.json",
            location=Location(source),
        ) from None
    data = parse_json_object(text, source)
    label = name or (path.parent.name if path.name == CONFIG_FILE else path.stem)
    return shape_from_config(data, name=label, source=source, text=text)


def resolve_model(ref: str) -> ModelShape:
    """A catalog name / alias / Hugging Face id, or a path to a config.json (or its directory)."""
    catalog = default_catalog()
    entry = catalog.find(ref)
    if entry is not None:
        return catalog.shape(entry)
    path = Path(ref)
    if exists(path):
        return load_config_file(path)
    raise InputError(
        f"unknown model {ref!r} (not in the catalog and no such file)",
        expected=f"a catalog name ({', '.join(catalog.names())}), a Hugging Face id of one, "
        "or the path of a config.json",
    )
