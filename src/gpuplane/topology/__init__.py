"""Layer 1: GPU node hardware.

The GPU model catalog, node hardware (NUMA nodes, PCIe host bridges and switches, GPUs, NICs,
NVLink/NVSwitch fabric), link classes exactly as ``nvidia-smi topo -m`` names them, path
bandwidth and collective cost, presets as data files, the ``nvidia-smi topo -m`` parser, NVML
discovery, GPU Feature Discovery labels and NodeResourceTopology zones.

Assumption: a node's hardware is static while gpuplane looks at it; everything here is a frozen
value that the higher layers share.
"""
