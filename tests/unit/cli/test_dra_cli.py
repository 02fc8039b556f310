"""``gpuplane dra allocate``: the scheduler's DRA allocation of a file's claims on one node.

Every command test runs twice: on a throwaway typer app holding only ``dra`` (so it runs before
the lead registers the sub-command) and through ``gpuplane.cli.main.run`` (skipped until then).
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.cli import main as cli_main
from gpuplane.cli.console import err
from gpuplane.cli.dra import ALLOCATION_ERROR_EXIT, allocate_command, dra_app, parse_node_labels
from gpuplane.core.errors import GpuplaneError, InputError
from gpuplane.k8s.dra.documents import load_dra_objects
from gpuplane.slicing.dra import node_resource_slices
from gpuplane.slicing.dra.devices import ResourceSlice, attribute_to_api
from gpuplane.topology.presets import load_preset

REGISTERED = "dra" in cli_main.COMMANDS
assert REGISTERED, "the sub-command must be registered in cli/main.py"

_app = typer.Typer()
_app.add_typer(dra_app, name="dra")

Runner = Callable[[Sequence[str]], int]
DRIVER = "gpu.nvidia.com"
NODE = "node-a"
API = "resource.k8s.io/v1"
GPU_SELECTOR = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"
NAME_PIN = {
    "nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}
    ]
}


def run_throwaway(argv: Sequence[str]) -> int:
    """``gpuplane.cli.main.run``'s error boundary around an app holding only ``dra``."""
    try:
        _app(args=list(argv), prog_name="gpuplane")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except GpuplaneError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        return cli_main.USER_ERROR_EXIT
    return 0


@pytest.fixture(
    params=[
        pytest.param(run_throwaway, id="throwaway"),
        pytest.param(
            cli_main.run,
            id="main",
        ),
    ]
)
def cli(request: pytest.FixtureRequest) -> Runner:
    runner: Runner = request.param
    return runner


# ----- manifests -----
def gpu_class(name: str = DRIVER, *, config: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": GPU_SELECTOR}}]}
    if config:
        params = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}
        spec["config"] = [{"opaque": {"driver": DRIVER, "parameters": params}}]
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def gpu(i: int, **attrs: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {"type": {"string": "gpu"}, "index": {"int": i}}
    attributes.update({k: {"int" if isinstance(v, int) else "string": v} for k, v in attrs.items()})
    return {"name": f"gpu-{i}", "attributes": attributes, "capacity": {"memory": {"value": "80Gi"}}}


def rslice(
    name: str, devices: list[dict[str, Any]], *, pool: str = NODE, **selection: Any
) -> dict[str, Any]:
    spec = {
        "driver": DRIVER,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
        **(selection or {"nodeName": NODE}),
        "devices": devices,
    }
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def node_gpus(n: int = 2, node: str = NODE) -> dict[str, Any]:
    return rslice(f"{node}-gpus", [gpu(i) for i in range(n)], pool=node, nodeName=node)


def exact(name: str = "gpu", count: int = 1, *selectors: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": DRIVER, "count": count, **extra}
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": body}


def claim(
    name: str,
    *requests: dict[str, Any],
    namespace: str | None = None,
    constraints: list[dict[str, Any]] | None = None,
    holds: Sequence[str] = (),
    admin: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    devices: dict[str, Any] = {"requests": list(requests or [exact()])}
    if constraints:
        devices["constraints"] = constraints
    doc: dict[str, Any] = {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": devices},
    }
    if holds:
        results = [
            {"request": "gpu", "driver": DRIVER, "pool": NODE, "device": d}
            | ({"adminAccess": True} if admin else {})
            for d in holds
        ]
        doc["status"] = {"allocation": {"devices": {"results": results}, "nodeSelector": NAME_PIN}}
    return doc


def slice_manifest(value: ResourceSlice) -> dict[str, Any]:
    """A ResourceSlice value (as gpuplane's NVIDIA driver model publishes it) as a manifest."""
    spec = value.spec
    devices = [
        {
            "name": d.name,
            "attributes": {k: attribute_to_api(v) for k, v in d.attributes.items()},
            "capacity": {k: {"value": q.text} for k, q in d.capacity.items()},
        }
        for d in spec.devices
    ]
    pool = spec.pool
    return {
        "apiVersion": API,
        "kind": "ResourceSlice",
        "metadata": {"name": value.name},
        "spec": {
            "driver": spec.driver,
            "nodeName": spec.node_name,
            "pool": {
                "name": pool.name,
                "generation": pool.generation,
                "resourceSliceCount": pool.resource_slice_count,
            },
            "devices": devices,
        },
    }


def write(tmp_path: Path, docs: Sequence[dict[str, Any]], name: str = "objects.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    return path


def allocate_json(
    cli: Runner,
    capsys: pytest.CaptureFixture[str],
    path: Path,
    *extra: str,
    node: str = NODE,
    exit_code: int = 0,
) -> Any:
    """The JSON answer; the command exits 0, or 1 (``exit_code=1``) for an allocation error."""
    code = cli(["dra", "allocate", str(path), "--node", node, *extra, "--json"])
    captured = capsys.readouterr()
    assert code == exit_code, captured.err
    return json.loads(captured.out)


def devices_of(data: Any, index: int = 0) -> list[str]:
    return [r["device"] for r in data["claims"][index]["allocation"]["devices"]["results"]]


def fails(cli: Runner, capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> str:
    code = cli(["dra", "allocate", str(path), "--node", NODE, *extra, "--json"])
    captured = capsys.readouterr()
    assert code == 2, captured.out
    assert captured.out == ""
    return " ".join(captured.err.split())


# ----- allocation -----
def test_simple_claim_gets_status_allocation_as_kubernetes_writes_it(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, [gpu_class(), node_gpus(2), claim("one")])
    data = allocate_json(cli, capsys, path)
    assert data == {
        "claims": [
            {
                "name": "one",
                "namespace": "default",
                "allocation": {
                    "devices": {
                        "results": [
                            {"request": "gpu", "driver": DRIVER, "pool": NODE, "device": "gpu-0"}
                        ],
                        "config": [
                            {
                                "source": "FromClass",
                                "opaque": {
                                    "driver": DRIVER,
                                    "parameters": {
                                        "apiVersion": "resource.nvidia.com/v1beta1",
                                        "kind": "GpuConfig",
                                    },
                                },
                            }
                        ],
                    },
                    "nodeSelector": NAME_PIN,
                },
            }
        ]
    }


def test_empty_config_is_omitted_and_claim_config_follows_class_config(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bare = claim("bare")
    configured = claim("configured", exact("a"), exact("b"))
    opaque = {"driver": DRIVER, "parameters": {"sharing": {"strategy": "TimeSlicing"}}}
    configured["spec"]["devices"]["config"] = [{"requests": ["b"], "opaque": opaque}]
    path = write(tmp_path, [gpu_class(config=False), node_gpus(4), bare, configured])
    data = allocate_json(cli, capsys, path)
    assert "config" not in data["claims"][0]["allocation"]["devices"]
    assert data["claims"][1]["allocation"]["devices"]["config"] == [
        {"source": "FromClaim", "requests": ["b"], "opaque": opaque}
    ]
    assert [devices_of(data, 0), devices_of(data, 1)] == [["gpu-0"], ["gpu-1", "gpu-2"]]


def test_nvlink_pair_on_the_seed_8gpu_slice(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """seed-8gpu has NVLink rings 0-3 and 4-7: with 0-2 held, a pair asking for one NVLink
    domain is 4-5, not the first two free GPUs 3-4."""
    slices = node_resource_slices(load_preset("seed-8gpu"), node_name=NODE)
    pair = claim(
        "pair",
        exact("gpus", 2),
        namespace="team-b",
        constraints=[{"matchAttribute": "gpuplane.io/nvlinkDomain"}],
    )
    docs = [
        gpu_class(),
        *map(slice_manifest, slices),
        claim("trio", holds=["gpu-0", "gpu-1", "gpu-2"]),
        pair,
    ]
    path = write(tmp_path, docs)
    data = allocate_json(cli, capsys, path)
    assert [c["name"] for c in data["claims"]] == ["pair"]
    assert data["claims"][0]["namespace"] == "team-b"
    assert devices_of(data) == ["gpu-4", "gpu-5"]
    # Without the constraint the first free GPUs are taken.
    del pair["spec"]["devices"]["constraints"]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert devices_of(data) == ["gpu-3", "gpu-4"]


def test_allocated_claims_hold_their_devices_but_admin_access_does_not(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [gpu_class(), node_gpus(3), claim("held", holds=["gpu-0", "gpu-2"]), claim("new")]
    assert devices_of(allocate_json(cli, capsys, write(tmp_path, docs))) == ["gpu-1"]
    docs[2] = claim("monitor", holds=["gpu-0", "gpu-1", "gpu-2"], admin=True)
    assert devices_of(allocate_json(cli, capsys, write(tmp_path, docs))) == ["gpu-0"]
    docs[2] = claim("held", holds=["gpu-0", "gpu-1", "gpu-2"])
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert data["unsatisfiable"] is True and data["reason"] == "cannot allocate all claims"
    assert "3 device(s), 3 held" in data["detail"]


def test_only_allocated_claims_means_nothing_to_allocate(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, [gpu_class(), node_gpus(1), claim("held", holds=["gpu-0"])])
    assert allocate_json(cli, capsys, path) == {"claims": []}
    assert cli(["dra", "allocate", str(path), "--node", NODE]) == 0
    assert "nothing to allocate" in capsys.readouterr().out


def test_claims_are_allocated_together_in_file_order(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [gpu_class(), node_gpus(3), claim("b", exact("gpu", 2)), claim("a")]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert [c["name"] for c in data["claims"]] == ["b", "a"]
    assert [devices_of(data, 0), devices_of(data, 1)] == [["gpu-0", "gpu-1"], ["gpu-2"]]


def test_first_available_falls_back_to_the_next_subrequest(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = {
        "name": "gpus",
        "firstAvailable": [
            {"name": "four", "deviceClassName": DRIVER, "count": 4},
            {"name": "two", "deviceClassName": DRIVER, "count": 2},
        ],
    }
    docs = [gpu_class(), node_gpus(3), claim("flex", request)]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    results = data["claims"][0]["allocation"]["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [
        ("gpus/two", "gpu-0"),
        ("gpus/two", "gpu-1"),
    ]
    # The class config covers the claim's only request: its request list is cleared.
    assert "requests" not in data["claims"][0]["allocation"]["devices"]["config"][0]


def test_admin_access_and_tolerations_are_written_to_the_results(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tainted = gpu(0)
    tainted["taints"] = [{"key": "maintenance", "effect": "NoSchedule"}]
    slice_doc = rslice("s", [tainted])
    toleration = {"key": "maintenance", "operator": "Exists"}
    docs = [gpu_class(config=False), slice_doc, claim("plain")]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert data["unsatisfiable"] is True
    docs[2] = claim("tolerant", exact("gpu", 1, tolerations=[toleration]))
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    (result,) = data["claims"][0]["allocation"]["devices"]["results"]
    assert result["tolerations"] == [{"key": "maintenance", "operator": "Exists"}]
    assert "adminAccess" not in result
    docs[2] = claim("admin", exact("gpu", 1, adminAccess=True, tolerations=[toleration]))
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    (result,) = data["claims"][0]["allocation"]["devices"]["results"]
    assert result["adminAccess"] is True
    assert cli(["dra", "allocate", str(write(tmp_path, docs)), "--node", NODE]) == 0
    assert "adminAccess" in capsys.readouterr().out


def test_invalid_pool_is_a_node_error(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Two slices of one pool publish gpu-0: the pool is invalid, and with nothing else on the
    node the plugin reports the allocator's node-local error as unschedulable."""
    halves = [rslice(f"half-{i}", [gpu(0)]) for i in range(2)]
    for half in halves:
        half["spec"]["pool"]["resourceSliceCount"] = 2
    data = allocate_json(cli, capsys, write(tmp_path, [gpu_class(), *halves, claim("c")]))
    assert data["unsatisfiable"] is True
    assert data["reason"] == "invalid resource pools were encountered"
    assert f"pool {DRIVER}/{NODE} is invalid" in data["detail"]


# ----- no allocation -----
def test_unsatisfiable_names_the_claim_that_cannot_fit(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [gpu_class(), node_gpus(2), claim("small"), claim("big", exact("gpu", 3))]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert data["unsatisfiable"] is True
    assert data["reason"] == "cannot allocate all claims"
    assert "even on its own: default/big" in data["detail"]
    assert "claims" not in data


def test_unsatisfiable_together_but_each_fits_alone(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [gpu_class(), node_gpus(2), claim("a", exact("gpu", 2)), claim("b")]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert data["reason"] == "cannot allocate all claims"
    assert "each claim fits on its own, but not all together" in data["detail"]
    assert cli(["dra", "allocate", str(write(tmp_path, docs)), "--node", NODE]) == 0
    text = capsys.readouterr().out
    assert "unsatisfiable on node node-a: cannot allocate all claims" in text


def test_missing_device_class_is_prefilter_unschedulable(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wrong = claim("c", {"name": "gpu", "exactly": {"deviceClassName": "nope.example.com"}})
    data = allocate_json(cli, capsys, write(tmp_path, [gpu_class(), node_gpus(1), wrong]))
    assert data == {
        "unsatisfiable": True,
        "reason": "request gpu: device class nope.example.com does not exist",
        "detail": "claim default/c",
    }


def test_claim_being_deleted_is_unschedulable(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doomed = claim("doomed")
    doomed["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    data = allocate_json(cli, capsys, write(tmp_path, [gpu_class(), node_gpus(1), doomed]))
    assert data["reason"] == 'resourceclaim "doomed" is being deleted'


# ----- node selection -----
def test_a_slice_for_another_node_is_ignored(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [gpu_class(), node_gpus(2, "node-b"), node_gpus(1), claim("c", exact("gpu", 2))]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert data["unsatisfiable"] is True
    data = allocate_json(cli, capsys, write(tmp_path, docs), node="node-b")
    assert devices_of(data) == ["gpu-0", "gpu-1"]
    assert data["claims"][0]["allocation"]["devices"]["results"][0]["pool"] == "node-b"
    data = allocate_json(cli, capsys, write(tmp_path, docs), node="node-c")
    assert data["detail"].startswith("node node-c sees no devices")
    assert "for node-a, node-b" in data["detail"]


def test_all_nodes_slice_allocates_without_node_selector(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = rslice("fabric", [gpu(0)], pool="fabric", allNodes=True)
    data = allocate_json(cli, capsys, write(tmp_path, [gpu_class(), shared, claim("c")]))
    assert data["claims"][0]["allocation"] == {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "fabric", "device": "gpu-0"}],
            "config": data["claims"][0]["allocation"]["devices"]["config"],
        }
    }


def test_node_selector_slice_needs_matching_node_labels(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rack = {"key": "example.com/rack", "operator": "In", "values": ["r1"]}
    selector = {"nodeSelectorTerms": [{"matchExpressions": [rack]}]}
    docs = [gpu_class(), rslice("rack", [gpu(0)], pool="rack-r1", nodeSelector=selector)]
    path = write(tmp_path, [*docs, claim("c")])
    data = allocate_json(cli, capsys, path)
    assert data["unsatisfiable"] is True
    assert "no ResourceSlice nodeSelector matches" in data["detail"]
    data = allocate_json(cli, capsys, path, "--node-labels", "zone=a, example.com/rack=r1")
    assert data["claims"][0]["allocation"]["nodeSelector"] == selector
    data = allocate_json(cli, capsys, path, "--node-labels", "example.com/rack=r2")
    assert data["unsatisfiable"] is True


def test_hostname_label_defaults_to_the_node_name(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    host = {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}
    selector = {"nodeSelectorTerms": [{"matchExpressions": [host]}]}
    docs = [gpu_class(), rslice("s", [gpu(0)], nodeSelector=selector), claim("c")]
    data = allocate_json(cli, capsys, write(tmp_path, docs))
    assert data["claims"][0]["allocation"]["nodeSelector"] == selector
    data = allocate_json(
        cli, capsys, write(tmp_path, docs), "--node-labels", "kubernetes.io/hostname=other"
    )
    assert data["unsatisfiable"] is True


def test_parse_node_labels() -> None:
    assert parse_node_labels("a=1,,b.example.com/c = x ,", "n") == {
        "a": "1",
        "b.example.com/c": "x",
        "kubernetes.io/hostname": "n",
    }
    assert parse_node_labels("empty=", "n")["empty"] == ""
    for bad in ("novalue", "a=1,a=2", "bad key=1", "k=-bad-", "a/b/c=1"):
        with pytest.raises(InputError, match="--node-labels"):
            parse_node_labels(bad, "n")


# ----- file formats -----
def test_json_list_input(cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    docs = [gpu_class(), node_gpus(2), claim("held", holds=["gpu-0"]), claim("c")]
    path = tmp_path / "objects.json"
    path.write_text(json.dumps(docs, indent="\t"), encoding="utf-8")
    assert devices_of(allocate_json(cli, capsys, path)) == ["gpu-1"]


def test_kubectl_list_and_typed_list_input(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    listed = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [gpu_class(), claim("c")],
    }
    bare = node_gpus(2)
    del bare["apiVersion"], bare["kind"]
    typed = {"apiVersion": API, "kind": "ResourceSliceList", "metadata": {}, "items": [bare]}
    path = write(tmp_path, [listed, typed])
    assert devices_of(allocate_json(cli, capsys, path)) == ["gpu-0"]
    path = tmp_path / "list.json"
    path.write_text(json.dumps({**listed, "items": [*listed["items"], node_gpus(1)]}))
    assert devices_of(allocate_json(cli, capsys, path)) == ["gpu-0"]


def test_table_output(cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    docs = [gpu_class(), node_gpus(2), claim("pair", exact("gpus", 2), namespace="ml")]
    assert cli(["dra", "allocate", str(write(tmp_path, docs)), "--node", NODE]) == 0
    text = capsys.readouterr().out
    assert "DRA allocation on node node-a" in text
    assert "ml/pair" in text and "gpu-0" in text and "gpu-1" in text
    assert "usable on nodes where metadata.name In node-a" in text
    assert "config: FromClass gpu.nvidia.com" in text


# ----- user mistakes: exit 2 with file:line: field -----
MALFORMED_YAML = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c
spec: {}
"""

BAD_FIELD = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        count: -1
"""


def test_malformed_yaml_exits_2_with_the_line(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(MALFORMED_YAML)
    message = fails(cli, capsys, path)
    assert f"{path}:9" in message and "YAML syntax error" in message


def test_invalid_field_exits_2_with_file_line_and_field(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_FIELD)
    message = fails(cli, capsys, path)
    assert f"{path}:16: spec.devices.requests[0].exactly.count" in message
    path.write_text(BAD_FIELD.replace("count: -1", "count: 1\n        colour: red"))
    assert f'{path}:17: spec.devices.requests[0].exactly.colour: unknown field "colour"' in fails(
        cli, capsys, path
    )


def test_invalid_field_in_a_json_list_is_located(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = claim("c")
    bad["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    path = tmp_path / "objects.json"
    path.write_text(json.dumps([gpu_class(), bad], indent=2))
    line = next(
        i for i, text in enumerate(path.read_text().splitlines(), 1) if '"count": "two"' in text
    )
    message = fails(cli, capsys, path)
    assert f"{path}:{line}: [1].spec.devices.requests[0].exactly.count" in message
    path.write_text('[\n  {"kind": "DeviceClass",\n   "apiVersion": 1,,}\n]')
    assert f"{path}:3: invalid JSON" in fails(cli, capsys, path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ":1: the file holds no objects"),
        (
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
            "spec: {spec: {}}\n",
            ":2: kind: a ResourceClaimTemplate is never allocated itself",
        ),
        (
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n---\n"
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c\n",
            ":8: metadata.name: ResourceClaim default/c is given twice",
        ),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", ":2: kind: unsupported kind 'Pod'"),
        ("kind: List\nitems: {}\n", ":2: items: got {}"),
        ('[\n {"kind": "DeviceClass",\n  "kind": "DeviceClass"}\n]', ":3: [0].kind: duplicate key"),
        ("\ufeff[]", ":1: the file holds no objects"),
    ],
    ids=["empty", "template", "duplicate", "pod", "list-items", "json-key-twice", "bom"],
)
def test_file_mistakes_exit_2(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    assert f"{path}{expected}" in fails(cli, capsys, path)


def test_flag_mistakes_exit_2(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, [gpu_class(), node_gpus(1), claim("c")])
    assert "not found" in fails(cli, capsys, tmp_path / "missing.yaml")
    assert "is a directory" in fails(cli, capsys, tmp_path)
    assert "not key=value" in fails(cli, capsys, path, "--node-labels", "zone")
    code = cli(["dra", "allocate", str(path), "--node", "Bad_Node", "--json"])
    assert code == 2 and "--node" in capsys.readouterr().err
    assert cli(["dra", "allocate", str(path)]) == 2  # --node is required (click usage error)
    capsys.readouterr()


def test_help(cli: Runner, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["dra", "--help"]) == 0
    assert "allocate" in capsys.readouterr().out
    assert cli(["dra", "allocate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--node" in text and "--node-labels" in text and "--json" in text


def test_command_function_called_directly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, [gpu_class(), node_gpus(1), claim("c")])
    allocate_command(path, NODE, "", json_out=True)
    assert json.loads(capsys.readouterr().out)["claims"][0]["name"] == "c"
    with pytest.raises(InputError, match="no objects"):
        (tmp_path / "empty.yaml").write_text("---\n")
        allocate_command(tmp_path / "empty.yaml", NODE, "", json_out=True)


def test_yaml_text_manifest_round_trip(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A hand-written manifest (flow mappings, comments, ``...`` end marker)."""
    text = textwrap.dedent(
        f"""\
        # the node's GPUs
        {{apiVersion: {API}, kind: ResourceSlice, metadata: {{name: s}},
          spec: {{driver: {DRIVER}, nodeName: {NODE}, pool: {{name: p, generation: 0,
          resourceSliceCount: 1}},
          devices: [{{name: gpu-0, attributes: {{type: {{string: gpu}}}}}}]}}}}
        ...
        ---
        apiVersion: {API}
        kind: DeviceClass
        metadata: {{name: {DRIVER}}}
        spec:
          selectors:
          - cel: {{expression: "{GPU_SELECTOR}"}}
        ---
        apiVersion: {API}
        kind: ResourceClaim
        metadata: {{name: c}}
        spec: {{devices: {{requests: [{{name: g, exactly: {{deviceClassName: {DRIVER}}}}}]}}}}
        """
    )
    path = tmp_path / "hand.yaml"
    path.write_text(text)
    data = allocate_json(cli, capsys, path)
    assert data["claims"][0]["allocation"]["devices"] == {
        "results": [{"request": "g", "driver": DRIVER, "pool": "p", "device": "gpu-0"}]
    }


def test_yaml_flow_document_that_is_not_json(
    cli: Runner, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Text starting with ``{`` is tried as JSON first, then as YAML."""
    docs = [gpu_class(), node_gpus(1), claim("c")]
    path = tmp_path / "flow.yaml"
    path.write_text("\n---\n".join(yaml.safe_dump(d, default_flow_style=True) for d in docs))
    assert path.read_text().startswith("{") and not path.read_text().startswith('{"')
    assert devices_of(allocate_json(cli, capsys, path)) == ["gpu-0"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
_KEYS = st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status", "items", "name"])


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.text(max_size=60),
        _JSON.map(json.dumps),
        st.dictionaries(_KEYS, _JSON, max_size=4).map(
            lambda d: json.dumps([{"apiVersion": API, "kind": "ResourceClaim", **d}])
        ),
        st.dictionaries(_KEYS, _JSON, max_size=4).map(
            lambda d: yaml.safe_dump({"kind": "List", "items": [d]})
        ),
    )
)
def test_loader_fuzz_only_raises_located_input_errors(text: str) -> None:
    try:
        load_dra_objects(text, "fuzz.yaml")
    except InputError as exc:
        assert exc.location.source == "fuzz.yaml"


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_mutated_files_exit_0_or_2(data: st.DataObject) -> None:
    """End to end: a valid file with lines dropped, doubled, cut, swapped or replaced gives an
    answer, the allocator's error as the scheduler would meet it (exit 1: a selector that is
    valid CEL but fails at run time, say) or a located error (exit 2), never a traceback."""
    docs = [gpu_class(), node_gpus(2), claim("held", holds=["gpu-0"]), claim("c", exact("g", 1))]
    lines = yaml.safe_dump_all(docs, sort_keys=False).splitlines(keepends=True)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["drop", "dup", "cut", "junk", "swap"]))
        if op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "cut":
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
        elif op == "junk":
            lines[i] = data.draw(st.text(alphabet="agpu-01{}[]:, \t\"'", max_size=30)) + "\n"
        else:
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutated.yaml"
        path.write_text("".join(lines), encoding="utf-8")
        code = run_throwaway(["dra", "allocate", str(path), "--node", NODE, "--json"])
        assert code in (0, ALLOCATION_ERROR_EXIT, 2)
