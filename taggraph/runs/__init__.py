"""Runs over whole datasets: one runner (`runner.py`), bench, run folders (`folders.py`), paired comparison
(`compare.py`), runs fused (`fuse_runs.py`), extraction and embedding jobs, provenance, and one question opened
for the views (`question.py`)."""
