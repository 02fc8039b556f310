"""The base kinds ``gpuplane sweep`` knows: the key under ``base:`` -> its factory."""

from __future__ import annotations

from functools import partial

from gpuplane.cli.bench import default_data_dir
from gpuplane.cli.sweep_autoscaling import autoscaling_base
from gpuplane.cli.sweep_fit import fit_base
from gpuplane.cli.sweep_scenario import scenario_base
from gpuplane.twin.sweep.base import BaseRegistry
from gpuplane.twin.sweep.openb_base import openb_base


def bases() -> BaseRegistry:
    return {
        "openb": partial(openb_base, default_data=default_data_dir()),
        "scenario": scenario_base,
        "fit": fit_base,
        "autoscaling": autoscaling_base,
    }
