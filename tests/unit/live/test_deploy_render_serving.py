"""``gpuplane deploy render serving``: built-in kinds validate against Kubernetes v1.31's schemas
(kubernetes-validate), the ScaledObject against KEDA 2.16.1's CRD schema (transcribed in
tests/fixtures/keda, checked with jsonschema), the trigger metadata reads back through the
scaler's own parser, and every container's args parse through the command they run."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from gpuplane.cli.main import run
from gpuplane.k8s.manifests.inference_args import inference_server
from gpuplane.live.deploy.serving import ServingBundle, serving_objects
from gpuplane.live.scaler.metadata import parse_metadata
from gpuplane.serving.engine_build import engine_for_gpu
from gpuplane.serving.engine_capacity import capacity_from_engine
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.topology.catalog import get_gpu_model

K8S_VERSION = "1.31.0"
SCHEMA = Path(__file__).parents[2] / "fixtures" / "keda" / "scaledobject-v2.16.1.schema.yaml"
Obj = dict[str, Any]


def _render(tmp_path: Path, *extra: str) -> list[Obj]:
    out = tmp_path / "serving"
    argv = ["deploy", "render", "serving", "--namespace", "llm", "--out", str(out), *extra]
    assert run(argv) == 0
    kust = yaml.safe_load((out / "kustomization.yaml").read_text())
    assert "scaledobject.yaml" in kust["resources"]
    return [
        d for name in kust["resources"] for d in yaml.safe_load_all((out / name).read_text()) if d
    ]


def _closed(schema: Obj) -> Obj:
    """The schema with every object that lists its properties closed: the API server prunes
    undeclared fields of a structural schema silently, here they are an error."""
    out = copy.deepcopy(schema)

    def walk(node: Obj) -> None:
        if "properties" in node:
            node.setdefault("additionalProperties", False)
            for child in node["properties"].values():
                walk(child)
        if isinstance(node.get("items"), dict):
            walk(node["items"])

    walk(out)
    return out


def _keda_schema() -> Obj:
    return _closed(yaml.safe_load(SCHEMA.read_text()))


def _kind(objs: list[Obj], kind: str, name: str | None = None) -> Obj:
    return next(o for o in objs if o["kind"] == kind and name in (None, o["metadata"]["name"]))


@pytest.mark.parametrize("engine", ["emulator", "vllm"])
def test_objects_validate_against_kubernetes_and_keda_schemas(tmp_path: Path, engine: str) -> None:
    objs = _render(tmp_path, "--engine", engine)
    kinds = sorted(o["kind"] for o in objs)
    expected = ["Namespace", "ScaledObject", "StatefulSet", *["Deployment"] * 2]
    assert kinds == sorted([*expected, *["Service"] * 3])
    schema = _keda_schema()
    for obj in objs:
        if obj["kind"] == "ScaledObject":
            jsonschema.validate(obj, schema)
        else:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def test_the_keda_schema_catches_a_field_keda_2_16_would_prune(tmp_path: Path) -> None:
    so = _kind(_render(tmp_path), "ScaledObject")
    so["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleUp"]["tolerance"] = 0
    with pytest.raises(jsonschema.ValidationError, match="tolerance"):
        jsonschema.validate(so, _keda_schema())
    del so["spec"]["scaleTargetRef"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(so, yaml.safe_load(SCHEMA.read_text()))


def test_trigger_metadata_is_what_the_scaler_reads(tmp_path: Path) -> None:
    objs = _render(tmp_path, "--max-replicas", "5", "--ttft-p90", "1s")
    so = _kind(objs, "ScaledObject")
    trigger = so["spec"]["triggers"][0]
    assert trigger["type"] == "external" and trigger["metricType"] == "AverageValue"
    meta = trigger["metadata"]
    assert meta["scalerAddress"] == "llm-scaler.llm.svc:9090"
    assert all(isinstance(v, str) for v in meta.values())
    config = parse_metadata(meta, "llm")
    assert (config.namespace, config.deployment) == ("llm", "llm-engine")
    assert (config.min_replicas, config.max_replicas) == (1, 5)
    assert config.slo.ttft_p90_s == 1.0
    assert config.replica_queries.ready.startswith("kube_statefulset_status_replicas_ready{")
    assert "vllm:num_incoming_requests_total" in config.queries.arrival_rate
    spec = InferenceServerSpec(kind="vllm", model="Llama-3.1-8B", served_model_name="x")
    built = engine_for_gpu(spec, get_gpu_model("H100-80GB"))
    cap = capacity_from_engine(built.step_model, built.plan)
    assert config.capacity.prefill_tokens_per_s == pytest.approx(cap.prefill_tokens_per_s, 1e-5)
    assert config.capacity.decode_base_step_s == pytest.approx(cap.decode_base_step_s, 1e-5)
    assert config.capacity.max_num_batched_tokens == cap.max_num_batched_tokens
    target = so["spec"]["scaleTargetRef"]
    sts = _kind(objs, "StatefulSet")
    assert (target["kind"], target["name"]) == ("StatefulSet", sts["metadata"]["name"])
    # The scaler's Service is where scalerAddress points.
    svc = _kind(objs, "Service", "llm-scaler")
    assert {p["name"]: p["port"] for p in svc["spec"]["ports"]}["grpc"] == 9090


def _args(obj: Obj) -> list[str]:
    args: list[str] = obj["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def test_rendered_args_are_accepted_by_the_cli(tmp_path: Path) -> None:
    """Each gpuplane container's args parse as its command's options (click parses every
    option before running --help, so an unknown one exits 2)."""
    objs = _render(tmp_path)
    for obj, command in (
        (_kind(objs, "StatefulSet"), ["serve", "engine"]),
        (_kind(objs, "Deployment", "llm-router"), ["serve", "router"]),
        (_kind(objs, "Deployment", "llm-scaler"), ["serve", "scaler"]),
    ):
        args = _args(obj)
        assert args[:2] == command
        assert run([*args, "--help"]) == 0
        assert run([*args, "--no-such-flag", "--help"]) == 2


def test_router_knows_every_replica_the_scaler_may_start(tmp_path: Path) -> None:
    objs = _render(tmp_path, "--max-replicas", "3")
    args = _args(_kind(objs, "Deployment", "llm-router"))
    urls = [args[i + 1] for i, a in enumerate(args) if a == "--engine"]
    sts, svc = _kind(objs, "StatefulSet"), _kind(objs, "Service", "llm-engine")
    assert svc["spec"]["clusterIP"] == "None" and sts["spec"]["serviceName"] == "llm-engine"
    assert urls == [f"http://llm-engine-{i}.llm-engine.llm.svc:8000" for i in range(3)]


def test_vllm_engine_args_read_back_as_the_same_server(tmp_path: Path) -> None:
    objs = _render(tmp_path, "--engine", "vllm", "--tp", "2", "--served-model-name", "llama")
    c = _kind(objs, "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    spec = inference_server(c["name"], c["image"], c["command"], c["args"], {}, "args")
    assert spec is not None
    assert (spec.kind, spec.model, spec.served_model_name) == (
        "vllm",
        "meta-llama/Llama-3.1-8B",
        "llama",
    )
    assert spec.tensor_parallel_size == 2
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "2"


def test_bad_bounds_are_located_errors() -> None:
    from gpuplane.core.errors import InputError

    with pytest.raises(InputError, match="--min-replicas 3 --max-replicas 2"):
        serving_objects(ServingBundle("llm", "img", min_replicas=3, max_replicas=2))


@pytest.mark.parametrize("engine", ["emulator", "vllm"])
def test_pd_bundle_has_two_sets_two_scaled_objects_and_a_pd_router(
    tmp_path: Path, engine: str
) -> None:
    objs = _render(tmp_path, "--pd", "--engine", engine, "--max-replicas", "2")
    schema = _keda_schema()
    for obj in objs:
        if obj["kind"] == "ScaledObject":
            jsonschema.validate(obj, schema)
        else:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    sets = [o for o in objs if o["kind"] == "StatefulSet"]
    assert [s["metadata"]["name"] for s in sets] == ["llm-prefill", "llm-decode"]
    for sts in sets:
        args = _args(sts)
        at = args.index("--kv-transfer-config")
        assert json.loads(args[at + 1]) == {"kv_connector": "NixlConnector", "kv_role": "kv_both"}
        if engine == "emulator":
            assert run([*args, "--help"]) == 0
    router = _args(_kind(objs, "Deployment", "llm-router"))
    assert run([*router, "--help"]) == 0
    pairs = list(itertools.pairwise(router))
    prefill = [u for f, u in pairs if f == "--prefill-engine"]
    decode = [u for f, u in pairs if f == "--decode-engine"]
    assert prefill == [f"http://llm-prefill-{i}.llm-prefill.llm.svc:8000" for i in range(2)]
    assert decode == [f"http://llm-decode-{i}.llm-decode.llm.svc:8000" for i in range(2)]
    scaled = [o for o in objs if o["kind"] == "ScaledObject"]
    for so, role in zip(scaled, ("prefill", "decode"), strict=True):
        config = parse_metadata(so["spec"]["triggers"][0]["metadata"], "llm")
        assert config.role.value == role and config.deployment == f"llm-{role}"
        assert f'pod=~"llm-{role}-[0-9]+"' in config.queries.waiting
        assert so["spec"]["scaleTargetRef"]["name"] == f"llm-{role}"


@pytest.mark.parametrize("pd", [False, True])
def test_discovery_router_watches_the_engine_services(tmp_path: Path, pd: bool) -> None:
    objs = _render(tmp_path, "--discovery", *(["--pd"] if pd else []))
    for obj in objs:
        if obj["kind"] != "ScaledObject":
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    router = _kind(objs, "Deployment", "llm-router")
    args = _args(router)
    assert run([*args, "--help"]) == 0
    assert not any(a.startswith("--engine") or a.endswith("-engine") for a in args[2:])
    pairs = dict(itertools.pairwise(args))
    services = {
        f: pairs[f] for f in ("--service", "--prefill-service", "--decode-service") if f in pairs
    }
    if pd:
        assert services == {
            "--prefill-service": "llm/llm-prefill:http",
            "--decode-service": "llm/llm-decode:http",
        }
    else:
        assert services == {"--service": "llm/llm-engine:http"}
    # The named Services exist, with the port named http, and the router may watch their slices.
    for ref in services.values():
        name = ref.split("/")[1].split(":")[0]
        svc = _kind(objs, "Service", name)
        assert "http" in [p["name"] for p in svc["spec"]["ports"]]
    pod = router["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "llm-router" and pod["automountServiceAccountToken"]
    role = _kind(objs, "Role", "llm-router")
    assert role["rules"] == [
        {
            "apiGroups": ["discovery.k8s.io"],
            "resources": ["endpointslices"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    bound = _kind(objs, "RoleBinding", "llm-router")
    assert bound["roleRef"]["name"] == "llm-router"
    assert bound["subjects"] == [
        {"kind": "ServiceAccount", "name": "llm-router", "namespace": "llm"}
    ]
    _kind(objs, "ServiceAccount", "llm-router")
