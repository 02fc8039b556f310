"""``--scheduler-config FILE``: a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as
kube-scheduler's ``--config`` takes it; its ``profiles`` are checked against gpuplane's in-tree
registry (kube's plugins and gpuplane's own), with the field's line on error. Fields that do not
decide a placement (leaderElection, clientConnection, parallelism, ...) are listed in the notes;
``extenders`` are refused, since ``fit`` cannot call them, unless the caller only validates
(``allow_extenders``, for ``gpuplane deploy render``'s second scheduler): then they are checked
by :mod:`gpuplane.k8s.manifests.scheduler_extenders` and listed in the notes."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.core.validation import first_error
from gpuplane.core.yamlio import LineIndex, parse_yaml
from gpuplane.k8s.field_errors import relocate
from gpuplane.k8s.manifests.scheduler_extenders import check_extenders
from gpuplane.scheduler.framework.config import REGISTRY_CONTEXT, ProfileConfig, check_profiles
from gpuplane.scheduler.framework.registry import Registry

KIND = "KubeSchedulerConfiguration"
API_VERSION = "kubescheduler.config.k8s.io/v1"


def read_scheduler_config(
    path: Path, registry: Registry, *, allow_extenders: bool = False
) -> tuple[tuple[ProfileConfig, ...], tuple[str, ...]]:
    source = str(path)
    try:
        text = read_user_text(path)
    except FileNotFoundError:
        raise InputError(
            "file not found", expected=f"a {KIND} YAML file", location=Location(source)
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the file ({err})", location=Location(source)) from None
    node, data = parse_yaml(text, source)
    if node is None or not isinstance(data, dict):
        raise InputError("not a YAML mapping", expected=f"a {KIND}", location=Location(source, 1))
    index = LineIndex(node, source)
    if data.get("kind") != KIND or data.get("apiVersion") != API_VERSION:
        raise InputError(
            f"kind {data.get('kind')!r}, apiVersion {data.get('apiVersion')!r}",
            expected=f"kind: {KIND}, apiVersion: {API_VERSION}",
            location=Location(source, 1),
        )
    if data.get("extenders") and allow_extenders:
        check_extenders(data["extenders"], source, index)
    elif data.get("extenders"):
        raise InputError(
            "extenders cannot be called by fit",
            expected="no extenders",
            location=Location(source, index.line_of("extenders"), "extenders"),
        )
    raw = data.get("profiles") or [{}]
    if not isinstance(raw, list):
        raise InputError(
            "profiles is not a list",
            location=Location(source, index.line_of("profiles"), "profiles"),
        )
    profiles = []
    for i, item in enumerate(raw):
        try:
            profiles.append(
                ProfileConfig.model_validate(item, context={REGISTRY_CONTEXT: registry})
            )
        except ValidationError as err:
            raise relocate(
                first_error(ProfileConfig, err), source, index.line_of, f"profiles[{i}]"
            ) from None
    try:
        check_profiles(profiles, registry)
    except ValueError as err:
        raise InputError(
            str(err), location=Location(source, index.line_of("profiles"), "profiles")
        ) from None
    others = sorted(k for k in data if k not in ("kind", "apiVersion", "profiles"))
    notes = (f"{source}: not used by fit: {', '.join(others)}",) if others else ()
    return tuple(profiles), notes
