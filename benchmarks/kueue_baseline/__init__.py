"""Kueue's scheduler performance test as data (``baseline.yaml``, ``large-scale.yaml``) and the
pure parts of its replay: the scenario a configuration describes (:mod:`.scenario`) and Kueue's
recorder and checker arithmetic (:mod:`.recorder`). The replay itself, with processes and I/O,
is ``benchmarks/kueue_baseline_bench.py``.
"""
