"""The paper's studies over a run's data: ablation, depth and distractor sweeps, failure diagnostics,
vocabulary, answer accuracy, and tuning an embedder on a dataset's gold."""
