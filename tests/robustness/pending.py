"""Mutants accepted today that issue 16's validation work (label/taint keys, names, ports,
probes, duplicates, warnings, ``gpuplane validate``) is to refuse; see the issue's "Accepted
silently" list. Each entry is a case id of ``test_mutations``; the case still must not crash,
hang or answer unlocated, only exit 0 is tolerated for it."""

from __future__ import annotations

PENDING: frozenset[str] = frozenset()
