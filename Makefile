# The two commands a new user runs: `make demo` (the main job) and `make test`.
# Both create .venv from pyproject.toml themselves; nothing else needs installing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_OUT ?= out/demo

.PHONY: grpc demo test lint types contracts unit bench bench-twin bench-gpu-sets bench-topology bench-mig bench-serving bench-twin-speed native bench-pd bench-autoscale demo-live clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "gpuplane needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gpuplane demo examples/scenario.yaml --out $(DEMO_OUT)
	$(BIN)/gpuplane snapshot save --from examples/snapshot/mixed-cluster.yaml --out $(DEMO_OUT)/snapshot.yaml
	$(BIN)/gpuplane fit examples/snapshot/workloads/preempt.yaml --snapshot $(DEMO_OUT)/snapshot.yaml --pools examples/snapshot/pools.yaml

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

types: $(STAMP)
	$(BIN)/mypy

contracts: $(STAMP)
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/python -m pytest -n auto

test: lint types contracts unit

bench: $(STAMP)
	$(BIN)/python bench/twin_kernel.py
	$(BIN)/python bench/bench_topology.py

bench-topology: $(STAMP)
	$(BIN)/python bench/topology_alignment.py

bench-mig: $(STAMP)
	$(BIN)/python bench/mig_planner.py

bench-serving: $(STAMP)
	$(BIN)/python bench/serving_fidelity.py

# The serving twin, plain Python then with its compiled modules (issue 18; docs/benchmarks.md).
bench-twin-speed: native
	$(BIN)/python bench/twin_speed.py
	GPUPLANE_NATIVE=1 $(BIN)/python bench/twin_speed.py

# mypyc-compiled copies of the serving twin's hot modules, used when GPUPLANE_NATIVE=1.
native: $(STAMP)
	$(BIN)/python -m gpuplane.core.native_build build

bench-pd: $(STAMP)
	$(BIN)/python bench/pd_disaggregation.py

bench-autoscale: $(STAMP)
	$(BIN)/python bench/autoscale.py

# Two emulator engines, the router, the KEDA scaler and Prometheus (when installed) on loopback.
demo-live: $(STAMP)
	$(BIN)/python -m gpuplane.live.demo_live --duration 60

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache .hypothesis

bench-twin: $(STAMP)
	$(BIN)/python bench/twin_kernel.py

bench-gpu-sets: $(STAMP)
	$(BIN)/python bench/gpu_sets.py

# Regenerate the KEDA external scaler's protobuf modules (committed; see scripts/gen_keda_grpc.sh).
grpc: $(STAMP)
	PYTHON=$(BIN)/python scripts/gen_keda_grpc.sh
