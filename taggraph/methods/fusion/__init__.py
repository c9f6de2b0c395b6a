"""TagGraph-Fusion (ours): the method (`method.py`), its weights, signals and features (`signals.py`),
its why signal by signal (`why.py`) and the question's time expressions (`time_expressions.py`)."""
