"""LLM model shapes: Hugging Face ``config.json`` parsing, parameter counts and the catalog.

A :class:`ModelShape` holds the numbers the engine model needs (layers, hidden size, query and KV
heads, head size, MLP width, vocabulary, dtype, MoE layout) and derives parameter count, weight
bytes and KV bytes per token from them. ``resolve_model`` turns what a user typed (a catalog name,
a Hugging Face id or a config.json path) into a shape.
"""

from gpuplane.serving.models.catalog import (
    CatalogEntry,
    ModelCatalog,
    default_catalog,
    load_config_file,
    resolve_model,
)
from gpuplane.serving.models.shape import MlpKind, ModelShape, MoeShape, NormKind, PositionKind

__all__ = [
    "CatalogEntry",
    "MlpKind",
    "ModelCatalog",
    "ModelShape",
    "MoeShape",
    "NormKind",
    "PositionKind",
    "default_catalog",
    "load_config_file",
    "resolve_model",
]
