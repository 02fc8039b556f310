"""scheduler-plugins' NodeResourceTopologyMatch (pkg/noderesourcetopology): the plugin
(``plugin``), the NUMA zones and their fit rules (``numa_zones``) and the LeastNUMANodes scoring
strategy (``least_numa``)."""
