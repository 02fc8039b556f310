"""PreFilter's claim checks (``slicing.dra.scheduling.claim_problem``): rejections in the
plugin's words, and the one Error (a request naming no device class)."""

from __future__ import annotations

from gpuplane.slicing.dra.claims import DeviceRequest
from gpuplane.slicing.dra.outcome import Features
from gpuplane.slicing.dra.scheduling import ClaimProblem, claim_problem
from tests.unit.slicing.test_dra_support import claim, dclass, first, req, sub

CLASSES = {"gpu": dclass()}


def problem(*requests: DeviceRequest, features: Features | None = None) -> ClaimProblem | None:
    c = claim("c", *requests)
    return claim_problem(c, "uid-p", False, CLASSES, features or Features())


def test_a_known_class_passes() -> None:
    assert problem(req("gpu"), first("flex", sub("a"), sub("b"))) is None


def test_a_missing_class_is_a_rejection() -> None:
    assert problem(req("gpu", cls="nope")) == ClaimProblem(
        "request gpu: device class nope does not exist"
    )
    assert problem(first("flex", sub("a"), sub("b", cls="nope"))) == ClaimProblem(
        "request flex/b: device class nope does not exist"
    )


def test_a_request_naming_no_class_is_an_error() -> None:
    found = problem(req("gpu", cls=""))
    assert found == ClaimProblem("request gpu: unsupported request type", error=True)


def test_subrequests_with_the_feature_off_are_a_rejection() -> None:
    found = problem(first("flex", sub("a")), features=Features(prioritized_list=False))
    assert found is not None and not found.error
    assert found.message == (
        "resource claim default/c, request flex: has subrequests, but the DRAPrioritizedList "
        "feature is disabled"
    )


def test_a_claim_in_flight_for_another_pod_must_wait() -> None:
    found = claim_problem(claim("c", req()), "uid-p", True, CLASSES, Features())
    assert found == ClaimProblem("resource claim default/c is in the process of being allocated")
