"""The paper's experiments over whole datasets: bench, ablation, sweeps, diagnostics, vocabulary,
answer accuracy, extraction and embedding jobs; one runner (`runner.py`), run folders (`run_folders.py`)
and the paired comparison of runs (`run_comparison.py`)."""
