"""resource.k8s.io/v1 manifests read by gpuplane.k8s.dra.manifests: defaulting, values, and
errors located at file:line: field."""

from __future__ import annotations

import textwrap

import pytest

from gpuplane.core.errors import InputError
from gpuplane.k8s.dra.manifests import load_dra_manifests, pod_claims
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.cel.semver import Version
from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.node_selector import DraNode
from gpuplane.slicing.dra.pod_claims import PodResourceClaim
from tests.unit.slicing.test_dra_support import chosen, qty, run

GOOD = textwrap.dedent(
    """\
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata:
      name: gpu.nvidia.com
    spec:
      selectors:
      - cel:
          expression: device.driver == "gpu.nvidia.com"
      config:
      - opaque:
          driver: gpu.nvidia.com
          parameters: {sharing: {strategy: TimeSlicing}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata:
      name: n0-gpu.nvidia.com-0
    spec:
      driver: gpu.nvidia.com
      nodeName: n0
      pool: {name: n0, generation: 1, resourceSliceCount: 1}
      devices:
      - name: gpu-0
        attributes:
          type: {string: gpu}
          index: {int: 0}
          cudaComputeCapability: {version: 9.0.0}
          gpuplane.io/nvlinkDomain: {int: 0}
        capacity:
          memory: {value: 80Gi}
      - name: gpu-1
        attributes:
          type: {string: gpu}
          index: {int: 1}
          gpuplane.io/nvlinkDomain: {int: 0}
        capacity:
          memory: {value: 80Gi}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata:
      name: pair
      namespace: team-a
    spec:
      spec:
        devices:
          requests:
          - name: gpus
            exactly:
              deviceClassName: gpu.nvidia.com
              count: 2
          constraints:
          - matchAttribute: gpuplane.io/nvlinkDomain
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata:
      name: shared
    spec:
      devices:
        requests:
        - name: any
          firstAvailable:
          - {name: one, deviceClassName: gpu.nvidia.com}
          - {name: all, deviceClassName: gpu.nvidia.com, allocationMode: All}
    status:
      allocation:
        devices:
          results:
          - {request: any/one, driver: gpu.nvidia.com, pool: n0, device: gpu-0}
        nodeSelector:
          nodeSelectorTerms:
          - matchFields: [{key: metadata.name, operator: In, values: [n0]}]
      reservedFor:
      - {resource: pods, name: p, uid: uid-p}
    """
)


def test_a_good_file_reads_into_values() -> None:
    objs = load_dra_manifests(GOOD, "dra.yaml")
    (device_class,) = objs.classes
    assert device_class.spec.config[0].parameters == {"sharing": {"strategy": "TimeSlicing"}}
    (rslice,) = objs.slices
    gpu0 = rslice.spec.devices[0]
    assert gpu0.attributes["cudaComputeCapability"] == Version(9, 0, 0)
    assert gpu0.attributes["index"] == 0 and gpu0.capacity["memory"] == qty("80Gi")
    (template,) = objs.templates
    assert template.namespace == "team-a"
    (claim,) = objs.claims
    assert claim.namespace == "default"
    subs = claim.spec.devices.requests[0].first_available
    assert (subs[0].allocation_mode, subs[0].count) == (limits.EXACT_COUNT, 1)  # defaulted
    assert (subs[1].allocation_mode, subs[1].count) == (limits.ALL, 0)
    allocation = claim.status.allocation
    assert allocation is not None and allocation.node_selector is not None
    assert allocation.node_selector.matches(DraNode("n0", {}))
    assert claim.is_reserved_for("uid-p")
    pair = ResourceClaim("c", "team-a", "u", template.spec)
    assert chosen(run([pair], objs.slices, objs.classes)) == ["gpu-0", "gpu-1"]


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def error_of(text: str) -> InputError:
    with pytest.raises(InputError) as err:
        load_dra_manifests(text, "bad.yaml")
    return err.value


def _claim_doc(request_lines: str) -> str:
    head = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
    return head + "spec:\n  devices:\n    requests:\n" + textwrap.indent(request_lines, "    ")


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        (
            _claim_doc("- name: g\n  exactly:\n    deviceClassName: gpu\n    count: -1\n"),
            "bad.yaml:10: spec.devices.requests[0].exactly.count: Invalid value: -1: must be "
            "greater than zero",
        ),
        (
            _claim_doc("- name: g\n  exactly:\n    deviceClassName: gpu\n    cout: 2\n"),
            'bad.yaml:10: spec.devices.requests[0].exactly.cout: unknown field "cout"',
        ),
        (
            _claim_doc("- name: g\n  exactly:\n    deviceClassName: gpu\n    capacity: {}\n"),
            'bad.yaml:10: spec.devices.requests[0].exactly.capacity: field "capacity" is not '
            "modelled by gpuplane",
        ),
        (
            _claim_doc("- name: g\n  exactly:\n    deviceClassName: gpu\n    count: two\n"),
            "bad.yaml:10: spec.devices.requests[0].exactly.count: got 'two'; expected an integer",
        ),
        (
            _claim_doc(
                "- name: g\n  exactly:\n    deviceClassName: gpu\n    selectors:\n"
                "    - cel: {expression: 'device.x == 1'}\n"
            ),
            "bad.yaml:11: spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid "
            "value: \"device.x == 1\": CEL: undefined field 'x' at column 8",
        ),
    ],
)
def test_errors_are_located(text: str, rendered: str) -> None:
    assert str(error_of(text)).startswith(rendered)


def test_errors_in_later_documents_count_lines_from_the_top() -> None:
    text = GOOD + "---\n" + _claim_doc("- name: Bad\n  exactly: {deviceClassName: gpu}\n")
    err = error_of(text)
    assert err.location.line == line_of(text, "- name: Bad")
    assert err.location.field == "spec.devices.requests[0].name"


def test_slice_errors_are_located() -> None:
    bad = GOOD.replace(
        "cudaComputeCapability: {version: 9.0.0}", "cudaComputeCapability: {version: '9.0'}"
    )
    err = error_of(bad)
    assert err.location.line == line_of(bad, "version: '9.0'")
    assert err.location.field == "spec.devices[0].attributes.cudaComputeCapability.version"
    two = GOOD.replace("index: {int: 0}", "index: {int: 0, string: x}")
    assert "exactly one value must be specified" in str(error_of(two))


def test_unknown_kinds_and_versions() -> None:
    assert "unsupported kind 'Pod'" in str(error_of("apiVersion: v1\nkind: Pod\n"))
    text = "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata: {name: x}\n"
    assert "expected resource.k8s.io/v1" in str(error_of(text))


def test_pod_claims() -> None:
    spec = {
        "resourceClaims": [
            {"name": "gpus", "resourceClaimTemplateName": "pair"},
            {"name": "shared", "resourceClaimName": "shared"},
        ]
    }
    status = {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "p-gpus-abcde"}]}
    claims = pod_claims(spec, status)
    assert claims.resource_claims == (
        PodResourceClaim("gpus", None, "pair"),
        PodResourceClaim("shared", "shared", None),
    )
    assert claims.claim_statuses == {"gpus": "p-gpus-abcde"}
    with pytest.raises(InputError, match="must specify one of"):
        pod_claims({"resourceClaims": [{"name": "x"}]})
    with pytest.raises(InputError, match="at most one of"):
        pod_claims(
            {
                "resourceClaims": [
                    {"name": "x", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}
                ]
            }
        )
    with pytest.raises(InputError, match="Duplicate value"):
        pod_claims({"resourceClaims": [{"name": "x", "resourceClaimName": "a"}] * 2})
    with pytest.raises(InputError, match="RFC 1123 label"):
        pod_claims({"resourceClaims": [{"name": "X", "resourceClaimName": "a"}]})
