"""The base kinds ``gpuplane sweep`` knows: the key under ``base:`` -> its factory."""

from __future__ import annotations

from functools import partial

from gpuplane.scheduler.openb.data_dir import default_data_dir
from gpuplane.sweep.bases.autoscaling import autoscaling_base
from gpuplane.sweep.bases.fit import fit_base
from gpuplane.sweep.bases.openb import openb_base
from gpuplane.sweep.bases.scenario import scenario_base
from gpuplane.sweep.engine.base import BaseRegistry


def bases() -> BaseRegistry:
    return {
        "openb": partial(openb_base, default_data=default_data_dir()),
        "scenario": scenario_base,
        "fit": fit_base,
        "autoscaling": autoscaling_base,
    }
