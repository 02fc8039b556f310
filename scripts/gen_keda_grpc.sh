#!/bin/sh
# Regenerate gpuplane.live.scaler.keda_grpc's protobuf modules (messages and their .pyi stubs) from externalscaler.proto.
# Needs grpcio-tools (the dev extra). The generated files are committed: a user installing
# gpuplane needs only grpcio and protobuf at run time.
set -eu
PYTHON=${PYTHON:-.venv/bin/python}
cd "$(dirname "$0")/../src"
"$PYTHON" -m grpc_tools.protoc -I. --python_out=. --pyi_out=. \
    gpuplane/live/scaler/keda_grpc/externalscaler.proto
# No grpc_python_out: the service's handlers are written by hand in live/scaler/grpc_service.py
# (typed, so mypy strict checks them; the plugin's output is untyped).
