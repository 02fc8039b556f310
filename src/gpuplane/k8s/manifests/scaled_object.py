"""Read KEDA ScaledObject manifests (``keda.sh/v1alpha1``) from YAML.

The model and every rule live in ``autoscaler.keda.validation``; this module only splits the
file into documents, keeps the ScaledObjects (other kinds in the same file are allowed and
skipped), and hands each one to the validator with the document's line index, so errors point
at ``file:line: spec.triggers[0].metadata.query``.
"""

from __future__ import annotations

from pathlib import Path

from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.keda.validation import scaled_object_from_dict
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.k8s.yaml_documents import read_documents


def scaled_objects_from_text(text: str, source: str) -> list[ScaledObjectIn]:
    found: list[ScaledObjectIn] = []
    for doc in read_documents(text, source):
        data = doc.data
        if not isinstance(data, dict):
            raise InputError(
                f"a document is a {type(data).__name__}",
                expected="a Kubernetes object (a mapping with apiVersion and kind)",
                location=Location(source, doc.first_line),
            )
        if data.get("kind") != "ScaledObject":
            continue
        found.append(scaled_object_from_dict(data, doc.index, source))
    if not found:
        raise InputError(
            "no ScaledObject in the file",
            expected="a document with apiVersion: keda.sh/v1alpha1 and kind: ScaledObject",
            location=Location(source, 1),
        )
    return found


def load_scaled_objects(path: Path) -> list[ScaledObjectIn]:
    """Every ScaledObject of a YAML file; InputError if the file has none or one is invalid."""
    try:
        text = read_user_text(path)
    except OSError as err:
        raise InputError(
            f"cannot read {path}: {err.strerror}", location=Location(str(path))
        ) from None
    return scaled_objects_from_text(text, str(path))
