"""The scenario file read into the twin's frozen spec (``loader``): node pools, workloads and
their arrivals, traces, the ClusterPolicy, priority classes, serving, ScaledObject checks and
faults, every mistake located at its line. ``files`` resolves and reads the files a scenario
names (manifests, traces, ClusterPolicy, DRA objects, ScaledObjects)."""
