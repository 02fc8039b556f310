"""``gpuplane fit``'s Kubernetes side: the workload file's objects read into the fit's
``WorkloadObject`` values (``workload``) and its answer rendered back as annotated objects
(``output``, ``-o yaml``)."""
