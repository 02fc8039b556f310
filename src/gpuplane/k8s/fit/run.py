"""One ``fit`` question answered: the workload's pods through the scheduler's decision and the
kubelet's admission on a cluster. Shared by ``gpuplane fit`` and the sweep's ``fit`` base, so a
sweep point gives the answer the command gives."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from gpuplane.core.errors import InputError
from gpuplane.fit.answer import answer_fit
from gpuplane.fit.expand import expand
from gpuplane.fit.model import FitCluster
from gpuplane.fit.result import FitAnswer
from gpuplane.fit.workload import FitSettings, FitWorkload
from gpuplane.k8s.fit.workload import Workload
from gpuplane.k8s.manifests.scheduler_config import read_scheduler_config
from gpuplane.scheduler.framework.config import ProfileConfig, gpuplane_profile
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.plugins.registry import in_tree_registry


class Profile(StrEnum):
    DEFAULT = "default"
    GPUPLANE = "gpuplane"


@dataclass(frozen=True, slots=True)
class Profiles:
    """The scheduling profiles a question is answered with, and what the answer calls them."""

    configs: tuple[ProfileConfig, ...]
    notes: tuple[str, ...]
    name: str


def profiles_for(config: Path | None, profile: Profile) -> Profiles:
    """A KubeSchedulerConfiguration's profiles, else kube's default profile or gpuplane's."""
    registry = in_tree_registry()
    if config is not None:
        configs, notes = read_scheduler_config(config, registry)
        return Profiles(configs, notes, f"{config}")
    if profile is Profile.GPUPLANE:
        return Profiles((gpuplane_profile("default-scheduler", registry=registry),), (), "gpuplane")
    return Profiles((ProfileConfig(),), (), "default (kube-scheduler's)")


@dataclass(frozen=True, slots=True)
class FitRun:
    answer: FitAnswer
    scheduler: Scheduler
    workload: FitWorkload


def run_fit(
    cluster: FitCluster, read: Workload, profiles: Profiles, settings: FitSettings
) -> FitRun:
    """The answer for ``read`` on ``cluster``, with the workload's and the config's notes."""
    scheduler = Scheduler(profiles.configs, registry=in_tree_registry())
    fw = expand([d.parsed for d in read.documents], cluster, read.templates)
    unknown = sorted({p.info.scheduler_name for p in fw.pods} - set(scheduler.frameworks))
    if unknown:
        raise InputError(
            f"pods ask for scheduler {unknown[0]!r}, which no profile has",
            expected=f"a schedulerName among {', '.join(sorted(scheduler.frameworks))}",
        )
    answer = answer_fit(scheduler, cluster, fw, settings, profile=profiles.name)
    return FitRun(answer.with_notes((*read.notes, *profiles.notes)), scheduler, fw)
