"""Engine metrics under vLLM V1 and SGLang names, as series-store samples and Prometheus text."""
