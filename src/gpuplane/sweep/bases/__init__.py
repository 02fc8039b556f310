"""What a sweep point runs, one base a module, and the registry of kinds (``registry.bases()``):

- ``openb``: the OpenB replay (``scheduler.openb``), one policy and seed a point;
- ``scenario``: one twin run of a scenario file, re-read through ``k8s.scenario.loader`` with the
  point's values;
- ``fit``: one ``gpuplane fit`` answer (``k8s.fit.run``, the code the command runs) on a snapshot
  and a workload; ``fit_figures`` names its figures;
- ``autoscaling``: the autoscaling benchmark (trace, scaler, objective, cold start) with the
  twin's instruments (``twin.autoscale_bench``); ``autoscale_configs`` reads its scaler
  configuration strings.

Each base is a frozen, picklable value that holds its input, so any executor can ship it."""
