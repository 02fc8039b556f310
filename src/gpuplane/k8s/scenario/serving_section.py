"""Read a scenario's ``serving:`` section: traces, services checked against the workloads."""

from __future__ import annotations

from pathlib import Path

from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.core.errors import InputError
from gpuplane.core.textio import is_file
from gpuplane.fit import workload_objects as wo
from gpuplane.k8s.field_errors import LineOf, fail, relocate, validate_model
from gpuplane.k8s.scenario.files import resolve_relative
from gpuplane.serving.cold_start import ColdStart
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.traffic.azure import load_azure_trace
from gpuplane.twin.scenario import spec as tw
from gpuplane.twin.scenario.serving import Service, ServingSection
from gpuplane.twin.scenario.serving_spec import (
    ServiceSpec,
    ServingSpec,
    SignalSource,
    SloScalerSpec,
    TrafficSpec,
)


def _deployments(workloads: tuple[tw.Workload, ...]) -> dict[tuple[str, str], wo.DeploymentSpec]:
    return {
        (w.obj.namespace, w.obj.name): w.obj
        for w in workloads
        if isinstance(w.obj, wo.DeploymentSpec)
    }


def _check_deployment(
    found: dict[tuple[str, str], wo.DeploymentSpec], svc: Service, name: str, field: str
) -> None:
    dep = found.get((svc.namespace, name))
    if dep is None:
        known = ", ".join(f"{ns}/{n}" for ns, n in sorted(found)) or "none"
        raise fail(f"no Deployment {svc.namespace}/{name} among the workloads", field, known)
    server = dep.template.inference
    if server is None:
        raise fail(
            f"Deployment {svc.namespace}/{name} runs no vLLM or SGLang server",
            field,
            "a container running vllm (vllm/vllm-openai, vllm serve) or sglang.launch_server",
        )
    try:
        resolve_model(server.model)
    except InputError as err:
        raise fail(f"Deployment {name}: {err.problem}", field, err.expected) from None


def _model_of(found: dict[tuple[str, str], wo.DeploymentSpec], svc: Service) -> str:
    server = found[(svc.namespace, svc.deployment)].template.inference
    return server.model if server is not None else ""


def _traffic(svc: Service, where: str, scenario: Path) -> TrafficSpec:
    t = svc.traffic
    if t.trace is not None:
        file = resolve_relative(t.trace.path, scenario)
        if not is_file(file):
            raise fail(f"{file} not found", f"{where}.traffic.trace.path", "an Azure trace CSV")
        trace = load_azure_trace(file)
        return TrafficSpec(
            trace=trace,
            rate_scale=t.trace.rate_scale,
            repeat=t.trace.repeat,
            start_s=t.trace.start,
            duration_s=t.trace.duration,
        )
    p = t.poisson
    assert p is not None
    return TrafficSpec(
        rate_per_s=p.rate_per_s,
        cv=p.cv,
        prompt_median=p.prompt_tokens,
        output_median=p.output_tokens,
        sigma=p.sigma,
        start_s=p.start,
        duration_s=p.duration,
    )


def serving_spec(
    section: ServingSection | None,
    workloads: tuple[tw.Workload, ...],
    scenario: Path,
    line_of: LineOf,
) -> ServingSpec | None:
    if section is None:
        return None
    found = _deployments(workloads)
    services: list[ServiceSpec] = []
    names: set[str] = set()
    for i, svc in enumerate(section.services):
        where = f"serving.services[{i}]"
        try:
            if svc.name in names:
                raise fail(f"service {svc.name!r} appears twice", f"{where}.name", "unique names")
            names.add(svc.name)
            _check_deployment(found, svc, svc.deployment, f"{where}.deployment")
            if svc.prefill_deployment is not None:
                _check_deployment(found, svc, svc.prefill_deployment, f"{where}.prefill_deployment")
            traffic = _traffic(svc, where, scenario)
        except InputError as err:
            if err.location.source is not None:
                raise
            raise relocate(err, str(scenario), line_of) from None
        services.append(
            ServiceSpec(
                name=svc.name,
                namespace=svc.namespace,
                deployment=svc.deployment,
                traffic=traffic,
                router=svc.router,
                prefill_deployment=svc.prefill_deployment,
                slo_ttft_s=svc.slo.ttft_p90,
                slo_itl_s=svc.slo.itl_p99,
                router_queue_limit=svc.router_queue_limit,
                model=_model_of(found, svc),
                kv_link_gbit_per_s=svc.kv_link_gbit_per_s,
            )
        )
    scalers = []
    for i, entry in enumerate(section.slo_scalers):
        where = f"serving.slo_scalers[{i}]"
        if entry.service not in names:
            missing = fail(f"no service {entry.service!r}", f"{where}.service", ", ".join(names))
            raise relocate(missing, str(scenario), line_of) from None
        try:
            settings = validate_model(SloScalerSettings, entry.settings)
        except InputError as err:
            raise relocate(err, str(scenario), line_of, f"{where}.settings") from None
        scalers.append(
            SloScalerSpec(
                entry.service,
                entry.min_replicas,
                entry.max_replicas,
                settings,
                SignalSource(entry.signals),
            )
        )
    cold = section.cold_start
    return ServingSpec(
        slo_scalers=tuple(scalers),
        services=tuple(services),
        scrape_interval_s=section.scrape_interval,
        cold_start=ColdStart(cold.image_pull, cold.storage_gbps, cold.init),
    )


__all__ = ["serving_spec"]
