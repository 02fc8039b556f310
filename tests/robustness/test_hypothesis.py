"""Issue 16's mutation suite, the generated half: PromQL, CEL selectors, merge-hints cases and
quantities drawn by hypothesis (derandomized, bounded) and run through the CLI in-process.

Each answer is judged as ``test_mutations`` judges a mutant (``harness.problems``): exit 0, or
exit 2 naming the query, file or ``<stdin>`` with a line or field; never a traceback or a hang.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.robustness.corpus import EXAMPLES, SEEDS, snapshot_file
from tests.robustness.harness import answer, problems

FAST = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# ----- PromQL -----
_PROMQL_TOKENS = [
    "sum",
    "avg",
    "max",
    "min",
    "count",
    "rate",
    "irate",
    "increase",
    "abs",
    "histogram_quantile",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "offset",
    "bool",
    "and",
    "or",
    "unless",
    "vllm:num_requests_waiting",
    "http_requests_total",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "==",
    "!=",
    ">",
    "<",
    ">=",
    "=~",
    "!~",
    "=",
    '"a"',
    '"',
    "5m",
    "30s",
    "1e400",
    "NaN",
    "Inf",
    "0x1f",
    "1",
    "0",
    "-1",
    "@",
    " ",
    "pod",
    "job",
    "le",
    "#",
    "\\",
]
QUERIES = [
    "sum(vllm:num_requests_waiting)",
    'sum by (pod) (rate(http_requests_total{job="api"}[30s]))',
    "avg(vllm:num_requests_waiting) > bool 2",
    "max(vllm:num_requests_waiting offset 15s) / 2",
]


@st.composite
def promql(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(_PROMQL_TOKENS), max_size=30)))
    query = draw(st.sampled_from(QUERIES))
    at = draw(st.integers(0, len(query)))
    op = draw(st.sampled_from(["cut", "insert", "delete", "nest"]))
    if op == "cut":
        return query[:at]
    if op == "insert":
        return query[:at] + draw(st.sampled_from(_PROMQL_TOKENS)) + query[at:]
    if op == "delete":
        return query[:at] + query[at + 1 :]
    depth = draw(st.sampled_from([50, 500, 3000]))
    return "abs(" * depth + query + ")" * depth


@FAST
@given(query=promql(), series=st.sampled_from(["series.json", "series.csv"]))
def test_promql_queries_end_cleanly(query: str, series: str) -> None:
    ans = answer(["autoscale", "promql", query, "--series", str(SEEDS / series)])
    assert not problems(ans, source="QUERY", must_fail=False), (query, ans.err)


# ----- CEL selectors of a DRA claim -----
_CEL_TOKENS = [
    "device",
    ".",
    "driver",
    "attributes",
    "capacity",
    "['gpu.nvidia.com']",
    "['domain']",
    "type",
    "index",
    "memory",
    "==",
    "!=",
    "<",
    ">=",
    "&&",
    "||",
    "!",
    "(",
    ")",
    "[",
    "]",
    "in",
    "'gpu'",
    "'gpu.nvidia.com'",
    "1",
    "0",
    "-1",
    "1e400",
    "9223372036854775808",
    "quantity(",
    "'80Gi'",
    ")",
    ".compareTo(",
    "size(",
    "true",
    "false",
    "null",
    "?",
    ":",
    " ",
    "'",
    '"',
    "\\",
    "matches(",
    "'a+'",
    "has(",
    ".isGreaterThan(",
]
SELECTORS = [
    "device.driver == 'gpu.nvidia.com'",
    "device.attributes['gpu.nvidia.com'].index >= 1 && device.attributes['gpu.nvidia.com']"
    ".domain == 'a'",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
]
DRA = (Path(__file__).parents[1] / "golden/dra-objects.yaml").read_text()


@st.composite
def cel(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(_CEL_TOKENS), max_size=30)))
    text = draw(st.sampled_from(SELECTORS))
    at = draw(st.integers(0, len(text)))
    if draw(st.booleans()):
        return text[:at] + draw(st.sampled_from(_CEL_TOKENS)) + text[at:]
    return text[:at]


@FAST
@given(selector=cel())
def test_cel_selectors_end_cleanly(selector: str) -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "fuzzed"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.nvidia.com",
                            "selectors": [{"cel": {"expression": selector}}],
                        },
                    }
                ]
            }
        },
    }
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "dra.yaml"
        path.write_text(DRA + "---\n" + yaml.safe_dump(claim))
        ans = answer(["dra", "allocate", str(path), "--node", "node-a"])
    assert not problems(ans, source=str(path), must_fail=False, extra_codes=frozenset({1})), (
        selector,
        ans.err,
    )


# ----- merge-hints cases -----
_MASKS = st.lists(st.integers(-1, 9), min_size=0, max_size=4)
_HINT = st.fixed_dictionaries(
    {"affinity": st.one_of(_MASKS, st.none(), st.just("0")), "preferred": st.booleans()}
)
_PROVIDER = st.dictionaries(
    st.sampled_from(["nvidia.com/gpu", "cpu", "memory", ""]),
    st.one_of(st.lists(_HINT, max_size=8), st.none()),
    max_size=2,
)


@FAST
@given(
    policy=st.sampled_from(["none", "best-effort", "restricted", "single-numa-node", "bogus", 3]),
    options=st.dictionaries(
        st.sampled_from(["prefer-closest-numa-nodes", "max-allowable-numa-nodes", "x"]),
        st.one_of(st.booleans(), st.sampled_from(["true", "8", "-1", "1e400"]), st.integers()),
        max_size=2,
    ),
    numa=st.one_of(st.lists(st.integers(-1, 70), max_size=10), st.just(list(range(64)))),
    providers=st.lists(_PROVIDER, max_size=14),
)
def test_merge_hints_cases_end_cleanly(
    policy: object, options: dict[str, object], numa: list[int], providers: list[object]
) -> None:
    case = {
        "policy": policy,
        "policy_options": options,
        "numa_nodes": numa,
        "providers_hints": providers,
    }
    ans = answer(["kubelet", "merge-hints"], json.dumps(case).encode())
    assert not problems(ans, source="<stdin>", must_fail=False), (case, ans.err)


# ----- quantities in a pod's resources -----
_QUANTITY = st.one_of(
    st.from_regex(
        r"[+-]?[0-9]{0,25}(\.[0-9]{0,12})?([eE][+-]?[0-9]{1,4}|[numkMGTPE]i?|Ki)?", fullmatch=True
    ),
    st.sampled_from(["1e400", "9Ei", "0.0000000001", "1.5Gi", "nan", "Inf", ".5", "5.", ""]),
    st.text(alphabet="0123456789.eEkKMGiu+- ", max_size=12),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)


@settings(FAST, max_examples=12)
@given(cpu=_QUANTITY, memory=_QUANTITY, gpu=_QUANTITY)
def test_pod_quantities_end_cleanly(cpu: object, memory: object, gpu: object) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "q", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {"limits": {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpu}},
                }
            ]
        },
    }
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "pod.yaml"
        path.write_text(yaml.safe_dump(pod))
        argv = ["fit", str(path), "--snapshot", str(snapshot_file()), "--no-remedies"]
        argv += ["--pools", str(EXAMPLES / "snapshot/pools.yaml")]
        ans = answer(argv)
    assert not problems(ans, source=str(path), must_fail=False, extra_codes=frozenset({1})), (
        pod,
        ans.err,
    )
