from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.slicing.mig.catalog import default_mig_catalog, get_mig_gpu
from gpuplane.slicing.mig.parted_check import check_parted_config, first_problem, gi_counts
from gpuplane.slicing.mig.parted_config import (
    PartedConfig,
    PartedEntry,
    dump_parted_config,
    entry_for_gpu,
    read_parted_config,
)
from gpuplane.slicing.mig.parted_defaults import balanced_counts, default_configs

H100 = get_mig_gpu("H100-80GB")
A100 = get_mig_gpu("A100-40GB")

CUSTOM = """\
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false

  custom:
    - device-filter: ["0x233010DE", "0x233110DE"]
      devices: [0, 1]
      mig-enabled: true
      mig-devices:
        "3g.40gb": 1
        "2g.20gb": 1
        "1g.10gb": 2
    - device-filter: "0x20B010DE"
      devices: [2]
      mig-enabled: true
      mig-devices:
        "1c.3g.20gb": 4
    - devices: [3]
      mig-enabled: true
      mig-devices: {}
"""


@pytest.mark.parametrize("name", [g.name for g in default_mig_catalog().gpus.values()])
def test_defaults_round_trip_and_check_clean(name: str) -> None:
    gpu = get_mig_gpu(name)
    config = default_configs(gpu)
    text = dump_parted_config(config)
    again = read_parted_config(text, "defaults.yaml")
    assert again == config
    assert dump_parted_config(again) == text
    checks = check_parted_config(again, gpu)
    assert first_problem(again, checks) is None
    full = {c.config: c.layout for c in checks}
    # every balanced layout fills 7 compute and 8 memory slices
    balanced = full["all-balanced"]
    assert balanced is not None
    used = [gpu.profile(i.profile) for i in balanced.instances]
    assert sum(p.compute_slices for p in used) == 7 and sum(p.memory_slices for p in used) == 8


def test_default_names_for_h100() -> None:
    config = default_configs(H100)
    assert config.names() == [
        "all-disabled",
        "all-enabled",
        "all-1g.10gb",
        "all-1g.10gb.me",
        "all-1g.20gb",
        "all-2g.20gb",
        "all-3g.40gb",
        "all-4g.40gb",
        "all-7g.80gb",
        "all-balanced",
    ]
    assert dict(config.get("all-1g.10gb")[0].mig_devices) == {"1g.10gb": 7}
    assert balanced_counts(A100) == {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
    with pytest.raises(InputError, match="all-balanced"):
        config.get("all-3g.20gb")


def test_custom_file_round_trips() -> None:
    config = read_parted_config(CUSTOM, "custom.yaml")
    assert config.names() == ["all-disabled", "custom"]
    first = config.get("custom")[0]
    assert first.devices == (0, 1) and first.filter_device_ids() == (0x2330, 0x2331)
    assert first.counts() == {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
    assert config.get("custom")[1].device_filter == "0x20B010DE"
    assert not config.get("all-disabled")[0].has_mig_devices
    assert read_parted_config(dump_parted_config(config), "again.yaml") == config


def test_check_with_a_model_skips_entries_filtered_for_others() -> None:
    config = read_parted_config(CUSTOM, "custom.yaml")
    checks = check_parted_config(config, H100)
    by = {(c.config, c.entry): c for c in checks}
    assert by[("custom", 0)].ok and by[("custom", 0)].layout is not None
    assert by[("custom", 0)].layout.describe() == "1g.10gb@0 + 1g.10gb@1 + 2g.20gb@2 + 3g.40gb@4"
    assert by[("custom", 1)].model is None and "skips" in by[("custom", 1)].notes[0]
    assert by[("custom", 2)].ok and by[("custom", 2)].layout is not None
    assert by[("custom", 2)].layout.is_empty


def test_check_without_a_model_uses_the_filters() -> None:
    checks = check_parted_config(read_parted_config(CUSTOM, "custom.yaml"))
    by = {(c.config, c.entry): c for c in checks}
    assert by[("custom", 0)].model == "H100-80GB"
    a100 = by[("custom", 1)]
    assert a100.model == "A100-40GB" and dict(a100.gi_counts) == {"3g.20gb": 2}


def test_compute_instances_pack_into_gpu_instances() -> None:
    def entry(devices: dict[str, int]) -> PartedEntry:
        return PartedEntry("all", True, tuple(devices.items()))

    assert gi_counts(A100, entry({"1c.3g.20gb": 3}))[0] == {"3g.20gb": 1}
    assert gi_counts(A100, entry({"1c.3g.20gb": 4}))[0] == {"3g.20gb": 2}
    assert gi_counts(A100, entry({"2c.3g.20gb": 1, "1c.3g.20gb": 1}))[0] == {"3g.20gb": 1}
    assert gi_counts(A100, entry({"3g.20gb": 1, "1c.3g.20gb": 1}))[0] == {"3g.20gb": 2}
    assert "cannot sit" in gi_counts(A100, entry({"4c.3g.20gb": 1}))[1][0]


@pytest.mark.parametrize(
    ("devices", "problem"),
    [
        ('"3g.20gb": 1', "does not exist on H100-80GB"),
        ('"3g.40gb": 2\n        "1g.10gb": 1', "do not fit on one H100-80GB"),
        ('"1g.10gb+me": 2', "do not fit"),
    ],
)
def test_hardware_problems_are_located(devices: str, problem: str) -> None:
    text = (
        f"version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: true\n"
        f"      mig-devices:\n        {devices}\n"
    )
    config = read_parted_config(text, "hw.yaml")
    error = first_problem(config, check_parted_config(config, H100))
    assert error is not None and problem in error.problem
    assert error.location.render() == "hw.yaml:6: mig-configs.x[0].mig-devices"


def test_filterless_entry_valid_on_no_model() -> None:
    text = (
        "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: true\n"
        '      mig-devices: {"3g.40gb": 2, "1g.10gb": 1}\n'
    )
    config = read_parted_config(text, "x.yaml")
    checks = check_parted_config(config)
    assert not checks[0].ok and "A100-80GB, H100-80GB" in checks[0].problems[0]


ENTRY = (
    "version: v1\nmig-configs:\n  c:\n    - devices: all\n      mig-enabled: true\n"
    "      mig-devices: {}\n"
)


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("", 1, None, "empty"),
        ("mig-configs: {}\n", 1, None, "version"),
        ("version: v2\nmig-configs: {}\n", 1, "version", "unknown version"),
        ("version: v1\nextra: 1\n", 2, "extra", "unknown key"),
        ("version: v1\nmig-configs: {}\n", 2, "mig-configs", "no configs"),
        ("version: v1\nmig-configs:\n  c: []\n", 3, "mig-configs.c", "no entries"),
        (ENTRY.replace("devices: all", "devices: some"), 4, "mig-configs.c[0].devices", "all"),
        (
            ENTRY.replace("devices: all", "devices: [0, -1]"),
            4,
            "mig-configs.c[0].devices",
            "negative",
        ),
        (
            ENTRY.replace("mig-enabled: true", "mig-enabled: 1"),
            5,
            "mig-configs.c[0].mig-enabled",
            "true or false",
        ),
        (
            ENTRY.replace("mig-enabled: true", "mig-enable: true"),
            5,
            "mig-configs.c[0].mig-enable",
            "unknown key",
        ),
        (ENTRY.replace("      mig-devices: {}\n", ""), 4, "mig-configs.c[0]", "missing"),
        (
            ENTRY.replace("true", "false").replace("{}", '{"1g.10gb": 1}'),
            6,
            "mig-configs.c[0].mig-devices",
            "mig-enabled is false",
        ),
        (
            ENTRY.replace("{}", '{"1g10gb": 1}'),
            6,
            "mig-configs.c[0].mig-devices.1g10gb",
            "malformed",
        ),
        (
            ENTRY.replace("{}", '{"1g.10gb": -1}'),
            6,
            "mig-configs.c[0].mig-devices.1g.10gb",
            "count",
        ),
        (
            ENTRY.replace("    - devices", '    - device-filter: "0x2330"\n      devices'),
            4,
            "mig-configs.c[0].device-filter",
            "malformed",
        ),
        (ENTRY + "  c:\n    - devices: all\n      mig-enabled: false\n", 7, "c", "duplicate"),
        ("version: v1\nmig-configs: [\n", None, None, "YAML"),
    ],
)
def test_format_errors_are_located(
    text: str, line: int | None, field: str | None, words: str
) -> None:
    with pytest.raises(InputError) as err:
        read_parted_config(text, "cfg.yaml")
    loc = err.value.location
    assert loc.source == "cfg.yaml"
    if line is not None:
        assert loc.line == line
    if field is not None:
        assert loc.field is not None and loc.field.endswith(field)
    assert words.lower() in str(err.value).lower()


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_fuzzed_text_is_read_or_rejected_cleanly(text: str) -> None:
    try:
        config = read_parted_config(text, "fuzz.yaml")
    except InputError:
        return
    assert read_parted_config(dump_parted_config(config), "again") == config


_names = st.sampled_from(["1g.10gb", "1g.10gb+me", "2g.20gb", "3g.40gb", "1c.3g.40gb", "7g.80gb"])
_entries = st.builds(
    lambda devices, enabled, mig, filt: PartedEntry(
        devices, enabled, tuple(mig.items()) if enabled else (), filt, enabled
    ),
    st.one_of(st.just("all"), st.lists(st.integers(0, 15), max_size=4).map(tuple)),
    st.booleans(),
    st.dictionaries(_names, st.integers(0, 7), max_size=3),
    st.one_of(st.none(), st.just("0x233010DE"), st.just(("0x233010DE", "0x20B010DE"))),
)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9.-]{0,12}", fullmatch=True),
        st.lists(_entries, min_size=1, max_size=3),
        min_size=1,
        max_size=3,
    )
)
def test_generated_configs_round_trip(configs: dict[str, list[PartedEntry]]) -> None:
    config = PartedConfig(tuple((k, tuple(v)) for k, v in configs.items()))
    assert read_parted_config(dump_parted_config(config), "gen.yaml") == config


def test_last_matching_entry_wins_per_gpu() -> None:
    entries = read_parted_config(CUSTOM, "custom.yaml").get("custom")
    assert entry_for_gpu(entries, 0, 0x2330) is entries[0]
    assert entry_for_gpu(entries, 0, 0x20B0) is None  # filter names H100 only
    assert entry_for_gpu(entries, 2, 0x20B0) is entries[1]
    assert entry_for_gpu(entries, 3, 0x2330) is entries[2]
    later = (*entries, PartedEntry("all", False, (), None, False))
    assert entry_for_gpu(later, 0, 0x2330) is later[-1]


def test_config_names_yaml_would_retype_are_quoted() -> None:
    entry = PartedEntry("all", False, (), None, False)
    config = PartedConfig(tuple((name, (entry,)) for name in ("on", "true", "1", "null", "a")))
    text = dump_parted_config(config)
    assert '"on":' in text and "  a:" in text
    assert read_parted_config(text, "gen.yaml") == config
