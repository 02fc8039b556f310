"""The mutation suite of issue 16: every valid input of every command, mutated systematically.

``mutate.py`` turns one valid input (YAML, JSON, CSV, ``nvidia-smi topo -m`` text) into its
mutants; ``corpus.py`` names every command, its valid inputs and how each is run; ``harness.py``
runs one case in-process under a hard time limit and judges the answer (exit 0, or exit 2 with
a located message, never a traceback). ``bench/input_robustness.py`` times the same corpus.
"""
