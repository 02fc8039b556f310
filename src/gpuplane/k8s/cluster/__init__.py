"""Reading a cluster: the live API (through one client seam) or kubectl/simulator dumps, into a
``ClusterSnapshot`` file. Read-only: nothing here writes to a cluster.
"""
