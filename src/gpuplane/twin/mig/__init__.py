"""MIG in the twin: device books, NVIDIA's MIG manager, gpuplane's repartitioning controller."""
