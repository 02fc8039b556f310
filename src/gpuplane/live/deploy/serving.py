"""The live serving stack's bundle: engines, the router, the SLO scaler and KEDA's ScaledObject.

- Engines: a StatefulSet (``podManagementPolicy: Parallel``) behind a headless Service, running
  gpuplane's emulator (``serve engine``) or a real vLLM image (``vllm serve``, one
  ``nvidia.com/gpu`` per TP rank, ``/dev/shm`` in memory). A StatefulSet rather than a Deployment
  because the router addresses every replica (``NAME-engine-<i>.NAME-engine.<ns>.svc``): it is
  started with all ``maxReplicaCount`` addresses, and a replica that does not exist (yet) fails
  its health check and is not routed to, so KEDA can scale the set without the router being told.
- The router (``serve router``) Deployment and Service. With ``discovery`` the router is given
  the engine Services (``--service NS/NAME:http``) and follows their EndpointSlices, with a
  ServiceAccount, Role and RoleBinding allowing ``get``/``list``/``watch`` on them, instead of
  every replica's address.
- The scaler (``serve scaler``) Deployment and Service (gRPC 9090, metrics 9091) and a
  ScaledObject with an ``external`` trigger pointing at it. The trigger's metadata is what
  ``live/scaler/metadata.py`` reads: the SLO, Prometheus' address, the capacity of one replica as
  the twin fits it to this engine (``serving.engine_capacity.capacity_from_engine``), the cold start
  (image pull + weights + init, the twin's ``ColdStart``), and queries over kube-state-metrics'
  StatefulSet series and the router's arrival counter instead of the Deployment defaults.

With ``pd`` there are two sets, ``NAME-prefill`` and ``NAME-decode``, both started with
``--kv-transfer-config`` (NixlConnector, ``kv_both``; vLLM's side channel on the pod's IP), the
router given ``--prefill-engine``/``--decode-engine`` addresses, and one ScaledObject per set
(trigger metadata ``role: prefill``/``decode``, the set's pods by Prometheus' ``pod`` label).

The HPA behavior lets the scaler's count through (no stabilization, policies wide enough for
any step). KEDA 2.16's CRD has no ``tolerance`` in its scaling rules (the API server would
prune it), so the HPA keeps its 10 % default: see docs/live.md, "The HPA arithmetic".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.core.errors import InputError
from gpuplane.live.deploy import objects
from gpuplane.live.deploy.objects import Obj, binding, labels, meta, rule, service_account
from gpuplane.serving.cold_start import ColdStart
from gpuplane.serving.engine_build import engine_for_gpu
from gpuplane.serving.engine_capacity import capacity_from_engine
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.serving.models.catalog import default_catalog
from gpuplane.topology.catalog import get_gpu_model

ENGINE_PORT, ROUTER_PORT, GRPC_PORT, SCALER_METRICS_PORT = 8000, 8080, 9090, 9091
VLLM_IMAGE = "vllm/vllm-openai:v0.33.0"  # the release docs/live.md's metric names follow
EngineKind = Literal["emulator", "vllm"]
Role = Literal["unified", "prefill", "decode"]
KV_TRANSFER_CONFIG = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'


@dataclass(frozen=True, slots=True)
class ServingBundle:
    """What ``gpuplane deploy render serving`` is asked for."""

    namespace: str
    image: str  # gpuplane's image (emulator, router, scaler)
    model: str = "Llama-3.1-8B"
    gpu: str = "H100-80GB"
    tp: int = 1
    served_model_name: str | None = None
    engine: EngineKind = "emulator"
    vllm_image: str = VLLM_IMAGE
    name: str = "llm"
    policy: str = "llm-d"
    min_replicas: int = 1
    max_replicas: int = 8
    prometheus: str = "http://prometheus.monitoring.svc:9090"
    ttft_p90: str = "2s"
    itl_p99: str = "200ms"
    pd: bool = False  # a prefill and a decode set (NixlConnector) instead of one
    # The router follows the engine Services' EndpointSlices (--service) instead of being
    # given every replica's address; it then has a ServiceAccount allowed to watch them.
    discovery: bool = False

    @property
    def served(self) -> str:
        return self.served_model_name or self.model

    @property
    def roles(self) -> tuple[Role, ...]:
        return ("prefill", "decode") if self.pd else ("unified",)

    def set_name(self, role: Role) -> str:
        return f"{self.name}-engine" if role == "unified" else f"{self.name}-{role}"

    def engine_urls(self, role: Role) -> list[str]:
        name = self.set_name(role)
        host = f"{name}.{self.namespace}.svc"
        return [f"http://{name}-{i}.{host}:{ENGINE_PORT}" for i in range(self.max_replicas)]


def _num(x: float) -> str:
    return f"{x:.6g}"


def _spec(b: ServingBundle) -> InferenceServerSpec:
    return InferenceServerSpec(
        kind="vllm", model=b.model, served_model_name=b.served, tensor_parallel_size=b.tp
    )


def _probe(path: str, period_s: int, failures: int) -> Obj:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": period_s,
        "failureThreshold": failures,
    }


def _hardened(c: Obj) -> Obj:
    c["securityContext"] = {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    return c


def _engine_container(b: ServingBundle, startup_s: float, role: Role) -> tuple[Obj, list[Obj]]:
    """The engine container and the pod's volumes."""
    kv = [] if role == "unified" else ["--kv-transfer-config", KV_TRANSFER_CONFIG]
    probes = {
        # /health is 503 until the weights are loaded: wait that long, then check it.
        "startupProbe": _probe("/health", 10, math.ceil(startup_s / 10) + 6),
        "readinessProbe": _probe("/health", 5, 3),
        "livenessProbe": _probe("/health", 10, 3),
    }
    ports = [{"name": "http", "containerPort": ENGINE_PORT}]
    if b.engine == "emulator":
        args = [
            "serve", "engine", "--model", b.model, "--gpu", b.gpu, "--tp", str(b.tp),
            "--engine", "vllm", "--served-model-name", b.served,
            "--host", "0.0.0.0", "--port", str(ENGINE_PORT), *kv,
        ]  # fmt: skip
        c = {"name": "engine", "image": b.image, "args": args, "ports": ports, **probes}
        c["resources"] = {"requests": {"cpu": "500m", "memory": "512Mi"}}
        return _hardened(c), []
    entry = default_catalog().find(b.model)
    model = entry.hf_id if entry is not None else b.model
    args = [
        model, "--served-model-name", b.served, "--tensor-parallel-size", str(b.tp),
        "--host", "0.0.0.0", "--port", str(ENGINE_PORT), *kv,
    ]  # fmt: skip
    gpus = {NVIDIA_GPU: str(b.tp)}
    c = {
        "name": "vllm",
        "image": b.vllm_image,
        "command": ["vllm", "serve"],
        "args": args,
        "ports": ports,
        **probes,
        "resources": {"requests": {"cpu": "4", "memory": "32Gi", **gpus}, "limits": gpus},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    if kv:  # NIXL's side channel listens on the pod's own address (vLLM's default is localhost)
        ip = {"valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        c["env"] = [{"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", **ip}]
        c["ports"] = [*ports, {"name": "nixl", "containerPort": 5600}]
    shm = {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}
    return c, [shm]


def _service(name: str, namespace: str, app: str, ports: list[Obj], **spec: object) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, namespace, app),
        "spec": {"selector": {"app.kubernetes.io/name": app}, "ports": ports, **spec},
    }


def _pod(app: str, containers: list[Obj], port: int, volumes: list[Obj]) -> Obj:
    scrape = {"prometheus.io/scrape": "true", "prometheus.io/port": str(port)}
    spec: Obj = {"containers": containers, "automountServiceAccountToken": False}
    if volumes:
        spec["volumes"] = volumes
    return {"metadata": {"labels": labels(app), "annotations": scrape}, "spec": spec}


def _engines(b: ServingBundle, startup_s: float, role: Role) -> list[Obj]:
    name = b.set_name(role)
    container, volumes = _engine_container(b, startup_s, role)
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta(name, b.namespace, name),
        "spec": {
            "serviceName": name,
            "replicas": b.min_replicas,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": _pod(name, [container], ENGINE_PORT, volumes),
        },
    }
    port = [{"name": "http", "port": ENGINE_PORT, "targetPort": "http"}]
    return [_service(name, b.namespace, name, port, clusterIP="None"), sts]


def _deployment(name: str, namespace: str, container: Obj, port: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, namespace, name),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": _pod(name, [container], port, []),
        },
    }


def router_args(b: ServingBundle) -> list[str]:
    args = ["serve", "router", "--policy", b.policy, "--host", "0.0.0.0"]
    args += ["--port", str(ROUTER_PORT), "--scrape-interval", "0.1"]
    flag: dict[Role, str] = {
        "unified": "--engine",
        "prefill": "--prefill-engine",
        "decode": "--decode-engine",
    }
    service: dict[Role, str] = {
        "unified": "--service",
        "prefill": "--prefill-service",
        "decode": "--decode-service",
    }
    for role in b.roles:
        if b.discovery:
            args += [service[role], f"{b.namespace}/{b.set_name(role)}:http"]
            continue
        for url in b.engine_urls(role):
            args += [flag[role], url]
    return args


def _router_rbac(b: ServingBundle, name: str) -> list[Obj]:
    """What ``serve router --service`` reads: the engine Services' EndpointSlices."""
    watch = rule(["discovery.k8s.io"], ["endpointslices"], ["get", "list", "watch"])
    return [
        service_account(name, b.namespace),
        objects.role("Role", name, b.namespace, name, [watch]),
        binding("RoleBinding", name, b.namespace, name, "Role", name, b.namespace),
    ]


def _router(b: ServingBundle) -> list[Obj]:
    name = f"{b.name}-router"
    c: Obj = {
        "name": "router",
        "image": b.image,
        "args": router_args(b),
        "ports": [{"name": "http", "containerPort": ROUTER_PORT}],
        # /health is 503 while no engine is ready: fine for readiness, not for liveness.
        "readinessProbe": _probe("/health", 5, 3),
        "livenessProbe": {"tcpSocket": {"port": "http"}, "periodSeconds": 10},
        "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
    }
    port = [{"name": "http", "port": ROUTER_PORT, "targetPort": "http"}]
    deployment = _deployment(name, b.namespace, _hardened(c), ROUTER_PORT)
    if not b.discovery:
        return [deployment, _service(name, b.namespace, name, port)]
    pod = deployment["spec"]["template"]["spec"]
    pod["serviceAccountName"] = name
    pod["automountServiceAccountToken"] = True  # the in-cluster config reads its token
    return [*_router_rbac(b, name), deployment, _service(name, b.namespace, name, port)]


def scaler_args() -> list[str]:
    return [
        "serve", "scaler", "--listen", f"0.0.0.0:{GRPC_PORT}",
        "--metrics-listen", f"0.0.0.0:{SCALER_METRICS_PORT}",
    ]  # fmt: skip


def _scaler(b: ServingBundle) -> list[Obj]:
    name = f"{b.name}-scaler"
    c: Obj = {
        "name": "scaler",
        "image": b.image,
        "args": scaler_args(),
        "ports": [
            {"name": "grpc", "containerPort": GRPC_PORT},
            {"name": "http", "containerPort": SCALER_METRICS_PORT},
        ],
        "readinessProbe": {"grpc": {"port": GRPC_PORT}, "periodSeconds": 5},
        "livenessProbe": _probe("/healthz", 10, 3),
        "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}},
    }
    ports = [
        {"name": "grpc", "port": GRPC_PORT, "targetPort": "grpc", "appProtocol": "grpc"},
        {"name": "http", "port": SCALER_METRICS_PORT, "targetPort": "http"},
    ]
    return [
        _deployment(name, b.namespace, _hardened(c), SCALER_METRICS_PORT),
        _service(name, b.namespace, name, ports),
    ]


def scaler_metadata(b: ServingBundle, cold_start_s: float, role: Role) -> dict[str, str]:
    """The trigger's metadata (``live/scaler/metadata.py`` reads every key)."""
    built = engine_for_gpu(_spec(b), get_gpu_model(b.gpu))
    cap = capacity_from_engine(built.step_model, built.plan)
    name = b.set_name(role)
    sts = f'{{namespace="{b.namespace}",statefulset="{name}"}}'
    selector = f'namespace="{b.namespace}",model_name="{b.served}"'
    if role != "unified":  # the pods of this set only (Prometheus' pod label)
        selector += f',pod=~"{name}-[0-9]+"'
    meta_: dict[str, str] = {
        "scalerAddress": f"{b.name}-scaler.{b.namespace}.svc:{GRPC_PORT}",
        "prometheusAddress": b.prometheus,
        "deployment": f"{b.namespace}/{name}",
        "role": role,
        "podSelector": selector,
        "coldStart": f"{math.ceil(cold_start_s)}s",
        "minReplicas": str(b.min_replicas),
        "maxReplicas": str(b.max_replicas),
        "ttftP90": b.ttft_p90,
        "itlP99": b.itl_p99,
        "prefillTokensPerSecond": _num(cap.prefill_tokens_per_s),
        "prefillSecondsPerTokenSquared": _num(cap.prefill_s_per_token_squared),
        "decodeBaseStepSeconds": _num(cap.decode_base_step_s),
        "decodeStepPerKvTokenSeconds": _num(cap.decode_step_per_kv_token_s),
        "decodeStepPerSeqSeconds": _num(cap.decode_step_per_seq_s),
        "maxNumSeqs": str(cap.max_num_seqs),
        "itlTailFactor": _num(cap.itl_tail_factor),
        # The router counts arrivals; vLLM's own counter counts completions (a latency late).
        "arrivalRateQuery": (
            f'sum(rate(vllm:num_incoming_requests_total{{namespace="{b.namespace}",'
            f'model="{b.served}"}}[1m]))'
        ),
        "readyReplicasQuery": f"kube_statefulset_status_replicas_ready{sts}",
        "specReplicasQuery": f"kube_statefulset_replicas{sts}",
    }
    if cap.max_num_batched_tokens is not None:
        meta_["maxNumBatchedTokens"] = str(cap.max_num_batched_tokens)
    if cap.kv_capacity_tokens is not None:
        meta_["kvCapacityTokens"] = _num(cap.kv_capacity_tokens)
    return meta_


def scaled_object(b: ServingBundle, cold_start_s: float, role: Role) -> Obj:
    step = {"stabilizationWindowSeconds": 0}
    name = b.set_name(role)
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": meta(name, b.namespace, name),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name},
            "minReplicaCount": b.min_replicas,
            "maxReplicaCount": b.max_replicas,
            "pollingInterval": 15,
            "cooldownPeriod": 30,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "behavior": {
                        "scaleUp": {
                            **step,
                            "policies": [
                                {"type": "Pods", "value": b.max_replicas, "periodSeconds": 15}
                            ],
                        },
                        "scaleDown": {
                            **step,
                            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                        },
                    }
                }
            },
            "triggers": [
                {
                    "type": "external",
                    "metricType": "AverageValue",
                    "metadata": scaler_metadata(b, cold_start_s, role),
                }
            ],
        },
    }


def serving_objects(b: ServingBundle) -> dict[str, list[Obj]]:
    if not 0 <= b.min_replicas <= b.max_replicas or b.max_replicas < 1:
        raise InputError(
            f"--min-replicas {b.min_replicas} --max-replicas {b.max_replicas}",
            expected="0 <= min <= max and max >= 1",
        )
    built = engine_for_gpu(_spec(b), get_gpu_model(b.gpu))  # fails early if it cannot run
    cs = ColdStart()
    load_s = built.plan.weights_bytes / (cs.storage_gbps * 1e9) + cs.init_s
    pull_s = cs.image_pull_s if b.engine == "vllm" else 0.0
    return {
        "engine.yaml": [o for role in b.roles for o in _engines(b, load_s, role)],
        "router.yaml": _router(b),
        "scaler.yaml": _scaler(b),
        "scaledobject.yaml": [scaled_object(b, pull_s + load_s, role) for role in b.roles],
    }
