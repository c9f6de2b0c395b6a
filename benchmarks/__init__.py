"""The benchmark scripts (README.md here lists them), a package so that a script imports another as
``benchmarks.NAME`` or ``benchmarks.history.NAME``: run those from the repository root as modules,
``python -m benchmarks.NAME``. Not part of the installed taggraph."""
