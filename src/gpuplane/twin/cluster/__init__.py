"""The cluster's state: the object store, nodes and pods, events, resources, QoS, names,
invariants, the nodes a pool describes and the devices their MIG layouts advertise."""
