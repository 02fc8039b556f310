"""``gpuplane deploy render``: kustomize-able manifests for gpuplane's live services."""
