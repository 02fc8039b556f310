"""Write a bundle as a kustomize directory: one file per concern and a ``kustomization.yaml``
listing them. The namespace is written into each object rather than set by kustomize, because
some objects live elsewhere on purpose (the MIG ConfigMap Role in the GPU Operator's namespace,
the authentication reader binding in kube-system)."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuplane.core.errors import InputError
from gpuplane.live.deploy.extender import extender_objects
from gpuplane.live.deploy.mig_controller import mig_controller_objects
from gpuplane.live.deploy.objects import Obj
from gpuplane.live.deploy.serving import ServingBundle, serving_objects

TARGETS = ("extender", "mig-controller", "serving")


def bundle(
    target: str,
    namespace: str,
    image: str,
    bind: bool = False,
    serving: ServingBundle | None = None,
) -> dict[str, list[Obj]]:
    if target == "extender":
        return extender_objects(namespace, image, bind)
    if bind:
        raise InputError(f"--bind is for the extender, not {target!r}", expected="extender")
    if target == "mig-controller":
        return mig_controller_objects(namespace, image)
    if target == "serving":
        return serving_objects(serving or ServingBundle(namespace, image))
    raise InputError(f"unknown deploy target {target!r}", expected=", ".join(TARGETS))


def namespace_object(namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}


def bundle_files(
    target: str,
    namespace: str,
    image: str,
    bind: bool = False,
    serving: ServingBundle | None = None,
) -> dict[str, list[Obj]]:
    """Every file of the kustomization but kustomization.yaml, the Namespace first."""
    made = bundle(target, namespace, image, bind, serving)
    return {"namespace.yaml": [namespace_object(namespace)], **made}


def all_objects(
    target: str,
    namespace: str,
    image: str,
    bind: bool = False,
    serving: ServingBundle | None = None,
) -> list[Obj]:
    """The bundle's objects in apply order (``-o yaml|json`` prints them as a v1 List)."""
    files = bundle_files(target, namespace, image, bind, serving)
    return [o for objects in files.values() for o in objects]


def render(
    target: str,
    namespace: str,
    image: str,
    out: Path,
    bind: bool = False,
    serving: ServingBundle | None = None,
) -> list[Path]:
    files = bundle_files(target, namespace, image, bind, serving)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, objects in files.items():
        path = out / name
        path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
        written.append(path)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": list(files),
    }
    path = out / "kustomization.yaml"
    path.write_text(yaml.safe_dump(kustomization, sort_keys=False))
    return [*written, path]
