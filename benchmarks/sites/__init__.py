"""Citations against real docs sites built with their own toolchains (issue 23).

``build_sites.py`` builds the conformance root from ``sites.toml``; ``python -m
benchmarks.sites --root ROOT`` compares citewise's citations with every site's ground truth
(``conformance.py``, ``truth.py``); ``python -m benchmarks.pages`` parses the built pages.
"""
