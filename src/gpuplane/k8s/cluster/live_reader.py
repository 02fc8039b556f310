"""Read every catalogue resource from a live API server through an ``ApiLister``.

Read-only: only discovery and list requests. A group the server does not serve (a CRD that is
not installed, an older server without ``resource.k8s.io/v1``) is skipped with a note; a 403 is
an error naming the verb and resource, because a snapshot silently missing its pods would give
wrong answers later.
"""

from __future__ import annotations

from gpuplane.core.errors import GpuplaneError
from gpuplane.k8s.cluster.api_lister import ApiLister, ListForbidden, ListNotFound, RawObject
from gpuplane.k8s.cluster.catalogue import READ_RESOURCES, SNAPSHOT_KEYS, ListedResource
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot, Skipped

PAGE_SIZE = 500  # kubectl's own --chunk-size default


class ForbiddenError(GpuplaneError):
    """The credentials may not list a resource the snapshot needs."""


def served_version(
    lister: ApiLister, res: ListedResource, cache: dict[str, tuple[str, ...] | None]
) -> str | Skipped:
    """The version to read ``res`` at, or why it is skipped. The core group is always served."""
    if not res.group:
        return res.versions[0]
    if res.group not in cache:
        try:
            cache[res.group] = lister.group_versions(res.group)
        except ListForbidden as exc:
            raise ForbiddenError(
                f"forbidden to read the discovery document of API group {res.group} "
                f"(GET /apis/{res.group}); every authenticated user may read it through the "
                "default system:discovery ClusterRole, which this cluster seems to lack"
            ) from exc
    served = cache[res.group]
    if served is None:
        what = "CRD not installed" if res.optional else "API group not served"
        return Skipped(res.key, f"{what}: the server has no API group {res.group}")
    for version in res.versions:
        if version in served:
            return version
    wanted = ", ".join(res.api_version(v) for v in res.versions)
    have = ", ".join(served) or "none"
    return Skipped(res.key, f"the server serves {res.group} {have}, not {wanted}")


def list_all(lister: ApiLister, res: ListedResource, version: str) -> tuple[RawObject, ...]:
    try:
        return tuple(lister.list(res.path(version), limit=PAGE_SIZE))
    except ListForbidden as exc:
        detail = f": {exc.detail}" if exc.detail else ""
        raise ForbiddenError(
            f"forbidden to list {res.plural} ({res.api_version(version)}, all namespaces){detail}; "
            f"the snapshot needs RBAC verb 'list' on {res.plural} in API group "
            f"'{res.group or '(core)'}' (see the ClusterRole in docs/snapshot.md)"
        ) from exc


def read_live(lister: ApiLister, *, source: str, read_at: str) -> ClusterSnapshot:
    """Every catalogue resource the server has, with notes for those it does not."""
    cache: dict[str, tuple[str, ...] | None] = {}
    objects: dict[str, tuple[RawObject, ...]] = {}
    versions: dict[str, str] = {}
    skipped: list[Skipped] = []
    for res in READ_RESOURCES:
        version = served_version(lister, res, cache)
        if isinstance(version, Skipped):
            skipped.append(version)
            continue
        try:
            objects[res.key] = list_all(lister, res, version)
        except ListNotFound:
            skipped.append(Skipped(res.key, f"not found: {res.path(version)} (404)"))
            continue
        versions[res.key] = res.api_version(version)
    return ClusterSnapshot(
        source=source,
        read_at=read_at,
        server_version=lister.server_version(),
        api_versions=versions,
        skipped=tuple(skipped),
        objects={k: objects.get(k, ()) for k in SNAPSHOT_KEYS},
    )
