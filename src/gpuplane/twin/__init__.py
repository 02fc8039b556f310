"""Layer 4: the digital twin of a Kubernetes GPU cluster.

``build`` makes a ``Cluster`` and the list of components a scenario needs; ``simulation`` starts
them, runs the event kernel (``core.kernel``) and collects the typed run summary (``summary``).
The rooms, lowest first: ``component`` (the protocol), ``scenario`` (values), ``cluster``
(state), ``kubelet``; then ``controllers``, ``dra``, ``mig``, ``operator``, ``scheduling`` and
``serving``, which do not import each other; then ``autoscaling``. docs/architecture.md, "Twin
rooms", says what each owns. Everything here is deterministic given a scenario and a seed.
"""
