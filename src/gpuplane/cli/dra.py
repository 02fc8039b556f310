"""``gpuplane dra``: Dynamic Resource Allocation (``resource.k8s.io/v1``) check commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpuplane.api.validation import qualified_name_errors
from gpuplane.cli.console import err, out, print_json
from gpuplane.cli.output_option import OutputOpt, emit
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.dra.allocation import check_allocation
from gpuplane.k8s.dra.claim_output import allocated_claim_objects
from gpuplane.k8s.dra.documents import LocatedDraObject, collect_dra_objects, read_dra_file
from gpuplane.k8s.manifests.labels import label_value_error
from gpuplane.slicing.dra.names import check_subdomain
from gpuplane.slicing.dra.node_selector import DraNode

# kubelet labels every node with its host name, which is the node name unless overridden.
HOSTNAME_LABEL = "kubernetes.io/hostname"
# The answer is an allocation error (the scheduling attempt would fail), not a usage error (2);
# "unsatisfiable" and allocations exit 0.
ALLOCATION_ERROR_EXIT = 1
_ACCEPTED = "ResourceSlice, DeviceClass and ResourceClaim objects"

dra_app = typer.Typer(
    help="Dynamic Resource Allocation (resource.k8s.io/v1): the scheduler's device allocation.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def parse_node_labels(text: str, node_name: str) -> dict[str, str]:
    """``--node-labels k=v,k2=v2`` (kubelet's format: empty items skipped, spaces around keys and
    values trimmed), each key a qualified name and each value a label value; a key given twice
    is refused. ``kubernetes.io/hostname`` defaults to the node name, as kubelet sets it."""
    labels: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise InputError(
                f"--node-labels: {item.strip()!r} is not key=value",
                expected="key=value pairs separated by commas, e.g. zone=a,gpu.example.com/rack=3",
            )
        problems = qualified_name_errors(key)
        if problems:
            raise InputError(f"--node-labels: label key {key!r}: {problems[0]}")
        problem = label_value_error(value)
        if problem is not None:
            raise InputError(f"--node-labels: label value {value!r} of {key}: {problem}")
        if key in labels:
            raise InputError(f"--node-labels: label {key} is given twice", expected="each key once")
        labels[key] = value
    labels.setdefault(HOSTNAME_LABEL, node_name)
    return labels


def _checked_objects(path: Path) -> tuple[LocatedDraObject, ...]:
    objects = read_dra_file(path)
    if not objects:
        raise InputError(
            "the file holds no objects", expected=_ACCEPTED, location=Location(str(path), 1)
        )
    for obj in objects:
        if obj.kind == "ResourceClaimTemplate":
            raise InputError(
                "a ResourceClaimTemplate is never allocated itself: Kubernetes first creates a "
                "ResourceClaim from it for each pod",
                expected=f"{_ACCEPTED} (write the template's spec.spec as a ResourceClaim's spec)",
                location=obj.at("kind"),
            )
    return objects


@dra_app.command("allocate")
def allocate_command(
    file: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="ResourceSlices, DeviceClasses and ResourceClaims: multi-document YAML, a JSON "
            "array, or a List (kubectl get -o yaml|json).",
            show_default=False,
        ),
    ],
    node: Annotated[
        str, typer.Option("--node", help="The node to allocate on (its metadata.name).")
    ],
    node_labels: Annotated[
        str,
        typer.Option(
            "--node-labels",
            help="The node's labels, k=v,k2=v2, for slices with a nodeSelector "
            f"({HOSTNAME_LABEL} defaults to the node name).",
        ),
    ] = "",
    json_out: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of a table.")
    ] = False,
    output: OutputOpt = None,
) -> None:
    """Allocate devices for a pod's ResourceClaims on one node, as kube-scheduler's DRA
    allocator (Kubernetes 1.36) would.

    Claims with status.allocation hold their devices; the others are allocated together.
    Prints each new status.allocation, or why none exists: "unsatisfiable" (the pod is
    unschedulable; exit 0) or "error" (the scheduler's attempt fails with the allocator's
    error; exit 1). ``-o yaml|json`` prints the newly allocated ResourceClaims as written,
    with status.allocation filled in (a v1 List when several); without an allocation it prints
    the answer as --json does, on stderr, and exits as above.
    """
    check_subdomain("--node", node)
    dra_node = DraNode(node, parse_node_labels(node_labels, node))
    located = _checked_objects(file)
    objects = collect_dra_objects(located)
    result = check_allocation(objects.slices, objects.classes, objects.claims, dra_node)
    if output is not None:
        if "claims" in result:
            emit(allocated_claim_objects(located, result), output)
        else:
            _print_result(result, node, str(file), console=err)
    elif json_out:
        print_json(result)
    else:
        _print_result(result, node, str(file))
    if "error" in result:
        raise typer.Exit(ALLOCATION_ERROR_EXIT)


# ----- the table -----
def _print_result(result: dict[str, Any], node: str, source: str, console: Console = out) -> None:
    out = console
    if "error" in result:
        out.print(f"[bold red]error:[/] {escape(str(result['error']))}", soft_wrap=True)
        out.print(
            f"(on node {escape(node)} the DynamicResources plugin answers Error: kube-scheduler "
            "fails the pod's scheduling attempt and retries after back-off; the pod is not "
            "unschedulable)",
            soft_wrap=True,
        )
        return
    if result.get("unsatisfiable"):
        out.print(
            f"[bold yellow]unsatisfiable[/] on node {escape(node)}: {escape(result['reason'])}",
            soft_wrap=True,
        )
        out.print(escape(str(result["detail"])), soft_wrap=True)
        return
    claims: list[dict[str, Any]] = result["claims"]
    if not claims:
        out.print(
            f"{escape(source)} has no unallocated ResourceClaim: nothing to allocate",
            soft_wrap=True,
        )
        return
    rows = [
        (claim, r) for claim in claims for r in claim["allocation"]["devices"].get("results", [])
    ]
    admin = any(r.get("adminAccess") for _, r in rows)
    table = Table(title=f"DRA allocation on node {escape(node)}")
    for column in ("claim", "request", "driver", "pool", "device", *(["adminAccess"] * admin)):
        table.add_column(column)
    for claim, r in rows:
        cells = [f"{claim['namespace']}/{claim['name']}", r["request"], r["driver"], r["pool"]]
        cells.append(r["device"])
        if admin:
            cells.append("yes" if r.get("adminAccess") else "")
        table.add_row(*(escape(c) for c in cells))
    out.print(table)
    for claim in claims:
        out.print(escape(_claim_notes(claim)), soft_wrap=True)


def _claim_notes(claim: dict[str, Any]) -> str:
    allocation = claim["allocation"]
    where = _selector_text(allocation.get("nodeSelector"))
    configs = allocation["devices"].get("config", [])
    text = f"{claim['namespace']}/{claim['name']}: usable on {where}"
    if configs:
        sources = ", ".join(
            f"{c['source']} {c.get('opaque', {}).get('driver', '')}".strip()
            + (f" ({', '.join(c['requests'])})" if c.get("requests") else "")
            for c in configs
        )
        text += f"; config: {sources}"
    return text


def _selector_text(selector: dict[str, Any] | None) -> str:
    if selector is None:
        return "all nodes"
    terms = []
    for term in selector["nodeSelectorTerms"]:
        parts = [
            f"{r['key']} {r['operator']} {','.join(r.get('values', []))}".strip()
            for group in ("matchFields", "matchExpressions")
            for r in term.get(group, [])
        ]
        terms.append(" and ".join(parts))
    return "nodes where " + " or ".join(terms)
