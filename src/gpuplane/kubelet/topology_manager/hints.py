"""TopologyHint and the normalisation of what hint providers return (policy.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuplane.kubelet.topology_manager.bitmask import BitMask


@dataclass(frozen=True, slots=True)
class TopologyHint:
    """``affinity`` None means "any NUMA node / no preference" (a nil bitmask in Go)."""

    affinity: BitMask | None
    preferred: bool


# One provider's answer: resource name -> hints; None for a resource = "no preference",
# [] = "no possible affinity". A provider returning None or {} has no opinion at all.
ProviderHints = Mapping[str, Sequence[TopologyHint] | None] | None


def filter_providers_hints(providers: Sequence[ProviderHints]) -> list[list[TopologyHint]]:
    """policy.go filterProvidersHints: one hint list per (provider, resource)."""
    out: list[list[TopologyHint]] = []
    for provider in providers:
        if not provider:
            out.append([TopologyHint(None, True)])
            continue
        for hints in provider.values():
            if hints is None:
                out.append([TopologyHint(None, True)])
            elif len(hints) == 0:
                out.append([TopologyHint(None, False)])
            else:
                out.append(list(hints))
    return out


def max_of_min_affinity_counts(lists: Sequence[Sequence[TopologyHint]]) -> int:
    """Max over lists of the bit count of the list's narrowest non-nil hint (0 if none)."""
    best = 0
    for hints in lists:
        narrowest = 0
        for hint in hints:
            if hint.affinity is None:
                continue
            c = hint.affinity.count()
            if narrowest == 0 or c < narrowest:
                narrowest = c
        best = max(best, narrowest)
    return best
