"""InterPodAffinity as kube-scheduler lays it out (framework/plugins/interpodaffinity): the
plugin (``plugin``), the terms it reads (``terms``), its required rules (``filtering``) and its
preferences (``scoring``)."""
