"""Traffic for the serving simulation: Azure traces, synthetic arrivals and lengths, sessions.

Everything random takes a ``numpy.random.Generator``; the same generator state gives the same
requests.
"""
