"""Scripts of closed lab sections (../README.md, "History"), importable as ``benchmarks.history.NAME``."""
