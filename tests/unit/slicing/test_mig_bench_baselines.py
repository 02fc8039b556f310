"""The MIG planner benchmark's pieces: replica sizing, demand, and the two baselines."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import mig_planner as bench
from gpuplane.serving.models import default_catalog
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.layout import layout_violations
from gpuplane.slicing.mig.parted_defaults import balanced_counts
from gpuplane.slicing.mig.plan_types import GpuState, MigPlanSettings, make_snapshot
from gpuplane.slicing.mig.planner import decide
from gpuplane.slicing.mig.profiles import MigGpu

H100 = get_mig_gpu("H100-80GB")
H200 = get_mig_gpu("H200-141GB")


def test_replica_profiles_follow_from_model_sizes() -> None:
    sizes = {
        m.name: (bench.profile_for(H100, m).name, bench.profile_for(H200, m).name)
        for m in bench.MODELS
    }
    assert sizes == {
        "BAAI/bge-large-en-v1.5": ("1g.10gb", "1g.18gb"),
        "microsoft/phi-2": ("1g.10gb", "1g.18gb"),
        "meta-llama/Llama-3.1-8B-Instruct": ("1g.20gb", "1g.35gb"),
        "Qwen/Qwen2.5-7B-Instruct": ("2g.20gb", "2g.35gb"),
        "meta-llama/Llama-3.1-8B-Instruct 32k": ("3g.40gb", "2g.35gb"),
        "Qwen/Qwen2.5-14B-Instruct": ("3g.40gb", "3g.71gb"),
    }


@pytest.mark.parametrize(
    "name",
    [
        "BAAI/bge-large-en-v1.5",
        "microsoft/phi-2",
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
    ],
)
def test_model_facts_agree_with_the_packaged_configs(name: str) -> None:
    """Parameters and KV bytes per token as the real config.json files give them."""
    model = next(m for m in bench.MODELS if m.name == name)
    catalog = default_catalog()
    entry = catalog.find(name)
    assert entry is not None
    shape = catalog.shape(entry)
    assert model.params_b * 1e9 == pytest.approx(shape.num_params, rel=0.01)
    expected_kv = shape.kv_bytes_per_token() if shape.has_kv_cache else 0
    assert model.kv_bytes_per_token == expected_kv


def test_every_replica_fits_its_instance_and_the_next_smaller_is_too_small() -> None:
    for gpu in (H100, H200):
        for m in bench.MODELS:
            p = bench.profile_for(gpu, m)
            assert bench.usable_gib(gpu, p) * bench.VLLM_GPU_MEMORY_UTILIZATION >= m.need_gib
            assert p.compute_slices >= m.compute_slices
            smaller = [
                q
                for q in gpu.profiles
                if not q.media_extensions
                and (q.memory_slices, q.compute_slices) < (p.memory_slices, p.compute_slices)
                and q.compute_slices >= m.compute_slices
            ]
            for q in smaller:
                assert bench.usable_gib(gpu, q) * bench.VLLM_GPU_MEMORY_UTILIZATION < m.need_gib


def _slice_bound(gpu: MigGpu, demand: dict[str, int]) -> float:
    compute = sum(gpu.profile(n).compute_slices * k for n, k in demand.items()) / 7
    memory = sum(gpu.profile(n).memory_slices * k for n, k in demand.items()) / 8
    return max(compute, memory)


@pytest.mark.parametrize("gpu", [H100, H200], ids=lambda g: g.name)
def test_demand_is_seeded_and_fills_the_load_exactly(gpu: MigGpu) -> None:
    demand = bench.draw_demand(gpu, 64, 0.75, seed=3)
    assert demand == bench.draw_demand(gpu, 64, 0.75, seed=3)
    assert demand != bench.draw_demand(gpu, 64, 0.75, seed=4)
    assert _slice_bound(gpu, demand) >= 0.75 * 64
    # Drawing stops at the first replica that crosses the line, so the total overshoots it by
    # less than one replica's worth (the bound is subadditive).
    largest = max(_slice_bound(gpu, {n: 1}) for n in demand)
    assert _slice_bound(gpu, demand) < 0.75 * 64 + largest


def _balanced_fits(gpu: MigGpu, demand: dict[str, int], num_gpus: int) -> bool:
    """Largest replica first into the smallest free balanced instance that hosts it; exact here
    because the balanced profiles form a chain (each hosts everything the smaller one does)."""
    free = Counter({n: k * num_gpus for n, k in balanced_counts(gpu).items()})
    order = sorted(free, key=lambda n: gpu.profile(n).memory_slices)
    for name in sorted(demand, key=lambda n: bench._size(gpu.profile(n)), reverse=True):
        for _ in range(demand[name]):
            slot = next(
                (s for s in order if free[s] and bench.hosts(gpu.profile(s), gpu.profile(name))),
                None,
            )
            if slot is None:
                return False
            free[slot] -= 1
    return True


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["H100-80GB", "H200-141GB"]),
    st.lists(st.integers(0, 12), min_size=4, max_size=4),
)
def test_all_balanced_count_is_the_smallest_fleet_that_fits(model: str, counts: list[int]) -> None:
    gpu = get_mig_gpu(model)
    names = [bench.profile_for(gpu, m).name for m in bench.MODELS][::1]
    names = sorted(set(names), key=names.index)[:4]
    demand = {n: k for n, k in zip(names, counts, strict=False) if k}
    need = bench.all_balanced_gpus(gpu, demand)
    assert need is not None
    assert _balanced_fits(gpu, demand, need)
    assert need == 0 or not _balanced_fits(gpu, demand, need - 1)


def test_all_balanced_cannot_host_a_4g_replica() -> None:
    assert bench.all_balanced_gpus(H100, {"4g.40gb": 1, "1g.10gb": 3}) is None
    assert bench.all_balanced_gpus(H100, {}) == 0
    # 1g.20gb replicas need the 2g or 3g instance: two per balanced GPU.
    assert bench.all_balanced_gpus(H100, {"1g.20gb": 5}) == 3


@pytest.mark.parametrize("gpu", [H100, H200], ids=lambda g: g.name)
def test_greedy_builds_valid_layouts_and_never_beats_the_planner(gpu: MigGpu) -> None:
    demand = bench.draw_demand(gpu, 8, 0.75, seed=11)
    gpus = bench.greedy_ffd(gpu, demand)
    for instances in gpus:
        assert layout_violations(gpu, instances) == []
    placed = Counter(i.profile for instances in gpus for i in instances)
    assert dict(placed) == demand
    plan = decide(make_snapshot([GpuState(i, gpu) for i in range(8)], demand))
    assert plan.optimal and not any(plan.unplaced.values())
    assert plan.gpus_used <= len(gpus)
    assert plan.gpus_used >= math.ceil(_slice_bound(gpu, demand) - 1e-9)


def test_greedy_first_fit_reuses_earlier_gpus() -> None:
    # Two 3g.40gb fill a GPU's memory; the 1g.10gb then opens a second GPU, the next 3g
    # goes there too (first fit), not to a third one.
    gpus = bench.greedy_ffd(H100, {"3g.40gb": 3, "1g.10gb": 2})
    assert [sorted(i.profile for i in g) for g in gpus] == [
        ["3g.40gb", "3g.40gb"],
        ["1g.10gb", "1g.10gb", "3g.40gb"],
    ]


def test_busy_fleet_and_static_pending() -> None:
    fleet = bench.busy_fleet(H100, 8, 0.5, seed=2)
    assert len(fleet) == 8 and all(len(g.layout) == 4 for g in fleet)
    assert sum(len(g.in_use) for g in fleet) > 0
    # A wave larger than every free balanced instance leaves replicas pending.
    free = sum(len(g.layout) - len(g.in_use) for g in fleet)
    assert bench.static_pending(H100, fleet, {"1g.10gb": free + 3}) == 3
    plan = decide(make_snapshot(fleet, {"1g.10gb": 2}), MigPlanSettings())
    assert plan.evicted == 0


def test_bench_parts_print_their_tables(capsys: pytest.CaptureFixture[str]) -> None:
    bench.part_fresh((8,), 1, 0.75, per_seed=True)
    bench.part_busy((8,), 1, 0.5, 0.35)
    out = capsys.readouterr().out
    assert "seed 0:" in out
    rows = [
        line.split()
        for line in out.splitlines()
        if line.split()[:1] in (["H100-80GB"], ["H200-141GB"])
    ]
    assert len(rows) == 4  # one row per model in each part
    assert all(row[7] == "1/1" for row in rows[:2])  # part 1: the plan was proven optimal
