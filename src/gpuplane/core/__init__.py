"""Layer 0: ids, units, seeded randomness, the clock protocol and located errors.

Nothing here knows about GPUs or Kubernetes; every other layer may import it.
"""
