"""What the benchmark scripts share: the repositories they build and their `--smoke` size.

A package, not a script, so that `tests/integration/test_benchmarks.py` (which runs every
`benchmarks/*.py`) runs only the benchmarks themselves; each script finds it beside
itself, as Python puts a script's own folder first on its path.
"""
