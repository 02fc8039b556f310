"""Scale-down in the serving twin terminates pods as Kubernetes does: the endpoint leaves the
router, requests in flight drain within terminationGracePeriodSeconds, SIGKILL aborts the rest."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpuplane.fit.workload_objects import DeploymentSpec
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.serving.routing.outcome import Status
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.scenario.spec import ScenarioSpec, Workload
from gpuplane.twin.serving.runtime import ServingRuntime
from gpuplane.twin.serving.summary import ServiceSummary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/autoscaling/scenario.yaml"


def with_grace(spec: ScenarioSpec, grace_s: float) -> ScenarioSpec:
    def one(w: Workload) -> Workload:
        d = w.obj
        if isinstance(d, DeploymentSpec):
            template = replace(d.template, termination_grace_period_s=grace_s)
            return replace(w, obj=replace(d, template=template))
        return w

    assert any(isinstance(w.obj, DeploymentSpec) for w in spec.workloads)
    return replace(spec, workloads=tuple(one(w) for w in spec.workloads))


def run(grace_s: float) -> tuple[ServiceSummary, list[str]]:
    spec = with_grace(load_scenario_spec(EXAMPLE).spec, grace_s)
    sim = simulation_from_spec(spec, seed=0, check_invariants=False)
    result = sim.run(1800.0)
    assert result.summary.serving is not None
    (svc,) = result.summary.serving.services
    outcomes = sim.component(ServingRuntime).services[svc.name].sim.result().outcomes
    reasons = [o.reason for o in outcomes if o.status is Status.ABORTED]
    return svc, reasons


def test_scale_down_drains_within_the_grace_period_or_kills() -> None:
    svc, reasons = run(30.0)
    term = svc.termination
    assert term.pods >= 1, "KEDA scales the example down within half an hour"
    # Each terminated pod drained or was killed (or was still terminating at the end).
    assert term.drained + term.killed <= term.pods
    assert term.drained >= 1
    # Held at most the grace period each, on 4 GPUs (TP=4).
    assert 0 < term.gpu_hours <= term.pods * 4 * 30.0 / 3600 + 1e-9
    # Nothing is rerouted away from a terminating pod: the only aborts are SIGKILL's.
    assert all("terminationGracePeriodSeconds" in r for r in reasons)
    assert len(reasons) == term.requests_aborted
    req = svc.requests
    assert req.arrived == req.completed + req.rejected + req.aborted + req.in_flight


def test_a_zero_grace_period_kills_at_once_and_aborts_in_flight_requests() -> None:
    svc, reasons = run(0.0)
    term = svc.termination
    assert term.pods >= 1 and term.gpu_hours == 0.0
    assert term.killed >= 1 and term.requests_aborted >= 1
    assert len(reasons) == term.requests_aborted
    assert all("(0 s)" in r for r in reasons)
