"""The cluster's state: the object store, nodes and pods, events, resources, QoS, names,
invariants."""
