from __future__ import annotations

from gpuplane.api.strategies import MigStrategy
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.profiles import MigGpu
from gpuplane.slicing.mig.strategy import NodeGpu, PluginView, plugin_view

A100 = get_mig_gpu("A100-40GB")
H100 = get_mig_gpu("H100-80GB")


def layout(*items: tuple[str, int]) -> Layout:
    return Layout(tuple(sorted(Instance(start, name) for name, start in items)))


SEVEN = layout(*[("1g.5gb", s) for s in range(7)])
MIXED = layout(("3g.20gb", 4), ("2g.10gb", 2), ("1g.5gb", 0), ("1g.5gb+me", 1))


def node(*layouts: Layout | None, model: MigGpu = A100) -> list[NodeGpu]:
    return [NodeGpu(i, model, lay is not None, lay or Layout()) for i, lay in enumerate(layouts)]


def test_none_advertises_whole_gpus_even_with_mig() -> None:
    view = plugin_view(node(SEVEN, None), MigStrategy.NONE)
    assert view.resources() == {"nvidia.com/gpu": 2}
    assert view.error is None and view.labels == {}


def test_single_advertises_every_mig_device_as_gpu() -> None:
    view = plugin_view(node(SEVEN, SEVEN), MigStrategy.SINGLE)
    assert view.error is None
    assert view.resources() == {"nvidia.com/gpu": 14}
    labels = view.labels
    assert labels["nvidia.com/mig.strategy"] == "single"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"
    assert labels["nvidia.com/gpu.count"] == "14"
    assert labels["nvidia.com/gpu.replicas"] == "1"
    assert labels["nvidia.com/gpu.memory"] == str(round(4.75 * 1024))
    assert labels["nvidia.com/gpu.multiprocessors"] == "14"
    assert labels["nvidia.com/gpu.slices.gi"] == labels["nvidia.com/gpu.slices.ci"] == "1"
    assert labels["nvidia.com/gpu.engines.decoder"] == "0"
    assert "nvidia.com/gpu.engines.encoder" in view.unknown_labels


def test_single_product_uses_the_nvml_name_given() -> None:
    gpus = [NodeGpu(0, A100, True, SEVEN, product="A100-SXM4-40GB")]
    labels = plugin_view(gpus, MigStrategy.SINGLE).labels
    assert labels["nvidia.com/gpu.product"] == "A100-SXM4-40GB-MIG-1g.5gb"


def test_single_without_mig_enabled_gpus_is_like_none() -> None:
    view = plugin_view(node(None, None), MigStrategy.SINGLE)
    assert view.resources() == {"nvidia.com/gpu": 2}
    assert view.labels == {"nvidia.com/mig.strategy": "single"}


def _assert_invalid(view: PluginView) -> None:
    assert view.error and view.devices == ()
    assert view.labels["nvidia.com/gpu.product"].endswith("-MIG-INVALID")
    assert view.labels["nvidia.com/gpu.count"] == "0"
    assert view.labels["nvidia.com/gpu.memory"] == "0"
    assert view.labels["nvidia.com/mig.strategy"] == "single"


def test_single_invalid_configurations() -> None:
    _assert_invalid(plugin_view(node(SEVEN, MIXED), MigStrategy.SINGLE))  # two profiles
    _assert_invalid(plugin_view(node(SEVEN, None), MigStrategy.SINGLE))  # enabled + disabled
    _assert_invalid(plugin_view(node(SEVEN, Layout()), MigStrategy.SINGLE))  # enabled, empty


def test_mixed_resource_per_profile() -> None:
    view = plugin_view(node(MIXED, None, SEVEN), MigStrategy.MIXED)
    assert view.error is None
    assert view.resources() == {
        "nvidia.com/gpu": 1,
        "nvidia.com/mig-1g.5gb": 8,
        "nvidia.com/mig-1g.5gb.me": 1,
        "nvidia.com/mig-2g.10gb": 1,
        "nvidia.com/mig-3g.20gb": 1,
    }
    labels = view.labels
    assert labels["nvidia.com/mig.strategy"] == "mixed"
    assert labels["nvidia.com/mig-3g.20gb.product"] == "NVIDIA-A100-SXM4-40GB-MIG-3g.20gb"
    assert labels["nvidia.com/mig-3g.20gb.count"] == "1"
    assert labels["nvidia.com/mig-1g.5gb.me.engines.ofa"] == "1"
    assert labels["nvidia.com/mig-3g.20gb.slices.gi"] == "3"
    gpus = {d.gpu for d in view.devices if d.resource == "nvidia.com/gpu"}
    assert gpus == {1}


def test_mixed_with_an_empty_mig_gpu_stops_the_plugin() -> None:
    view = plugin_view(node(MIXED, Layout()), MigStrategy.MIXED)
    assert view.error and view.devices == ()
    assert "nvidia.com/mig-3g.20gb.count" in view.labels  # GFD still labels the rest


def test_unverified_models_leave_unknown_labels_out() -> None:
    b200 = get_mig_gpu("B200")
    lay = Layout((Instance(0, "7g.180gb"),))
    view = plugin_view([NodeGpu(0, b200, True, lay)], MigStrategy.MIXED)
    assert "nvidia.com/mig-7g.180gb.memory" in view.unknown_labels
    assert "nvidia.com/mig-7g.180gb.memory" not in view.labels
    assert view.labels["nvidia.com/mig-7g.180gb.engines.copy"] == "16"
