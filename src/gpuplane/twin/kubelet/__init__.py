"""The twin's kubelets: pod admission (Topology Manager, CPU/memory managers), device choice,
GPU memory."""
