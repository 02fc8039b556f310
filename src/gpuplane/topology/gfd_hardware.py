"""A node's hardware inferred from the labels GPU Feature Discovery put on it.

GFD (NVIDIA/k8s-device-plugin ``internal/lm``, see ``gpuplane.topology.gfd``) labels a node with
the product name of its GPUs (``nvidia.com/gpu.product``, sanitised: spaces become ``-``), their
number (``nvidia.com/gpu.count``) and memory in MiB (``nvidia.com/gpu.memory``). Under a sharing
configuration with ``renameByDefault`` the product gains ``-SHARED``; under the MIG ``single``
strategy it gains ``-MIG-<profile>``. Neither names the machine: an 8-GPU H100 SXM node is a
DGX/HGX H100 (NVSwitch), but the labels cannot say how its PCIe tree or NUMA nodes look.

So the inference is explicit about what it knows: the GPU model comes from the catalog, and a
bundled preset is used when one has that model and that GPU count (an 8 x H100-SXM node ->
``dgx-h100``; a capture of a real machine before an illustrative layout), else a preset of the
same family, form factor and count with the GPUs swapped (8 x A100-SXM4-40GB -> ``dgx-a100``).
It is a *guess* (``exact`` False) and says so; a hardware file matched to the node pool by label
selector replaces it. Without such a preset the node has no hardware model: the answer then
works at the level of counts and says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from gpuplane.topology.build import build_topology
from gpuplane.topology.catalog import GpuModel, default_catalog
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_preset, preset_names, preset_spec

PRODUCT_LABEL = "nvidia.com/gpu.product"
COUNT_LABEL = "nvidia.com/gpu.count"
MEMORY_LABEL = "nvidia.com/gpu.memory"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
SHARED_SUFFIX = "-SHARED"
MIG_INFIX = "-MIG-"


@dataclass(frozen=True, slots=True)
class InferredHardware:
    """What a node's labels say about its hardware, and how sure that is."""

    topology: NodeTopology | None
    source: str  # how it was found, in words
    exact: bool = False  # True only for a user's file; labels never prove a layout
    model: GpuModel | None = None
    gpu_count: int = 0
    clique: str | None = None  # nvidia.com/gpu.clique: the NVLink domain (multi-node NVLink)


def base_product(product: str) -> str:
    """The product name without GFD's sharing and MIG-single suffixes."""
    name = product.removesuffix(SHARED_SUFFIX)
    head, infix, _ = name.partition(MIG_INFIX)
    return head if infix else name


@cache
def _presets_by_shape() -> dict[tuple[str, int], tuple[str, ...]]:
    """(GPU model, count) -> presets of that shape, captures of real machines first (a preset
    whose ``machine`` is unknown and whose file calls it illustrative comes last)."""
    shapes: dict[tuple[str, int], list[tuple[bool, str]]] = {}
    for name in preset_names():
        topo = load_preset(name)
        models = {g.model for g in topo.gpus}
        if len(models) == 1:
            illustrative = topo.machine is None and "illustrative" in topo.description.lower()
            key = (str(next(iter(models))), len(topo.gpus))
            shapes.setdefault(key, []).append((illustrative, name))
    return {k: tuple(n for _, n in sorted(v)) for k, v in shapes.items()}


def _sibling(model: GpuModel, count: int) -> tuple[str, NodeTopology] | None:
    """A preset of the same family, form factor and GPU count whose GPUs are swapped for
    ``model`` (a DGX A100 40GB is a DGX A100 with other memory)."""
    catalog = default_catalog()
    for (other, n), names in _presets_by_shape().items():
        known = catalog.find(other)
        if n != count or known is None or known.name == model.name:
            continue
        if (known.family, known.form_factor) != (model.family, model.form_factor):
            continue
        spec = preset_spec(names[0])
        gpus = [g.model_copy(update={"model": None}) for g in spec.gpus]
        swapped = spec.model_copy(update={"gpu_model": str(model.name), "gpus": gpus})
        return names[0], build_topology(swapped, source=f"{names[0]} with {model.name} GPUs")
    return None


def _count(labels: Mapping[str, str]) -> int | None:
    text = labels.get(COUNT_LABEL, "")
    return int(text) if text.isdigit() else None


def hardware_from_labels(labels: Mapping[str, str]) -> InferredHardware:
    """The node's hardware as GFD's labels let gpuplane infer it (see the module docstring)."""
    clique = labels.get(CLIQUE_LABEL)
    product = labels.get(PRODUCT_LABEL)
    if product is None:
        return InferredHardware(None, f"no {PRODUCT_LABEL} label (no GPU Feature Discovery)")
    model = default_catalog().find(base_product(product))
    count = _count(labels)
    if model is None:
        return InferredHardware(
            None, f"GPU product {product!r} is not in gpuplane's catalog", clique=clique
        )
    if count is None:
        return InferredHardware(None, f"no numeric {COUNT_LABEL} label", model=model, clique=clique)
    presets = _presets_by_shape().get((str(model.name), count), ())
    if presets:
        source = f"preset {presets[0]} guessed from GFD labels ({count} x {product})"
        return InferredHardware(load_preset(presets[0]), source, False, model, count, clique)
    sibling = _sibling(model, count)
    if sibling is not None:
        source = (
            f"preset {sibling[0]} with {model.name} GPUs, guessed from GFD labels "
            f"({count} x {product})"
        )
        return InferredHardware(sibling[1], source, False, model, count, clique)
    return InferredHardware(
        None,
        f"{count} x {model.name}: no bundled preset has that shape; give the pool a hardware file",
        model=model,
        gpu_count=count,
        clique=clique,
    )
