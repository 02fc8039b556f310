"""Routing requests over engines: routers (round robin, least outstanding, session affinity,
llm-d weighted scorers, Dynamo KV cost), prefill/decode disaggregation, and the
``ServingSimulation`` driver that runs a request stream through them.
"""
