"""Mutants that must-refuse rules would fail but that are accepted today, each with its reason.

Both lists hold patterns of case ids of ``test_mutations`` (``target/mutant``). A listed case
may exit 0; it must still never crash, hang or answer with an unlocated message.
"""

from __future__ import annotations

import re

# Accepted (pending validation work): issue 16's "Accepted silently" list, which its validation
# work (Kubernetes names, labels, ports, probes, duplicate objects, case-file strictness,
# ``gpuplane validate``) is to refuse. Remove an entry once that work refuses the input; the
# suite then holds it to exit 2.
# Patterns of case ids (``re.fullmatch``), each with its reason.
PENDING: dict[str, str] = {}

# Valid by design: the mutant looks hostile but the real system accepts it too. Patterns of
# case ids (``re.fullmatch``), each with its reason.
VALID_BY_DESIGN: dict[str, str] = {
    # Prometheus sample values may be NaN or +-Inf (staleness markers, division by zero); the
    # series file takes them as numbers or as "NaN"/"+Inf".
    r"promql:series\.json/series\[\d+\]\.samples\[\d+\]\[1\]:(nan|inf|neginf|1e400)": (
        "a non-finite sample value"
    ),
}


def tolerated(case_id: str) -> bool:
    """May this case exit 0 although its mutant must be refused?"""
    patterns = [*PENDING, *VALID_BY_DESIGN]
    return any(re.fullmatch(p, case_id) for p in patterns)
