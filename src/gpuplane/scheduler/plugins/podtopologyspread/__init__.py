"""PodTopologySpread as kube-scheduler lays it out (framework/plugins/podtopologyspread): the
plugin (``plugin``), the constraints and the nodes each counts (``constraints``, kube's
common.go), the hard rule (``filtering``) and the preference (``scoring``). The topology domains
it counts pods in are ``plugins.topology_domains``, shared with InterPodAffinity."""
