"""gpuplane's live MIG repartitioning controller (``gpuplane serve mig-controller``): rounds of
read (polling lists), decide (the pure decision in ``slicing.mig.controller_decision``), report
and, with ``--apply``, write through ``k8s.cluster.api_writer``."""
