"""kube-scheduler's framework/plugins/noderesources: NodeResourcesFit (``fit``) and
NodeResourcesBalancedAllocation (``balanced_allocation``, which reads fit's resource specs)."""
