"""citewise's own benchmarks: the code that measures the project, and its committed reports.

Nothing here is in the wheel (``pyproject.toml`` packages ``src/citewise`` only): these are
the measurements the project's development runs on its own data sets, ground truths and
external tools. Each runner is a module with an argparse ``main``, run from a checkout::

    python -m benchmarks.langrag ../shared/data/langrag-benchmarks --output benchmarks/langrag.json

They use citewise as any client does (the ``citewise`` package installed, ``pip install -e
'.[dev]'``). What users run on their own data stays in the product: ``citewise eval`` and
``citewise bench beir | embed | latency``. README.md here lists every report and its command.
"""
