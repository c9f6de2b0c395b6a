"""The paper's experiments over whole datasets: bench, ablation, sweeps, diagnostics, vocabulary,
answer accuracy, extraction and embedding jobs; one runner (`runner.py`) and run folders (`runs.py`)."""
