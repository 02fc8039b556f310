"""GPU sharing by the device plugin: time-slicing and MPS replicas, labels, failure modes."""
