"""The two ways to make a snapshot, as the CLI asks for them: a kubeconfig or dump files.

This is the only module that builds the library-backed ``ApiLister``; its callers see a
``ClusterSnapshot`` and gpuplane's own errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gpuplane.k8s.cluster.file_reader import read_files
from gpuplane.k8s.cluster.live_reader import read_live
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot


def snapshot_from_kubeconfig(path: Path, context: str | None, *, read_at: str) -> ClusterSnapshot:
    # Imported here: the client library is large, and every other gpuplane command would pay
    # for loading it at start-up.
    from gpuplane.k8s.cluster.kube_lister import KubernetesApiLister

    lister = KubernetesApiLister.from_kubeconfig(path, context)
    try:
        source = f"kubeconfig {path}" + (f" (context {context})" if context else "")
        return read_live(lister, source=f"{source}, server {lister.server}", read_at=read_at)
    finally:
        lister.close()


def snapshot_from_files(paths: Sequence[Path], *, read_at: str) -> ClusterSnapshot:
    return read_files(paths, read_at=read_at)
