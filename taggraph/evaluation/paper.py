"""The paper's published numbers, to print beside ours (labelled as the paper's).

Source: TagGraph paper, Table 1 (MRR). OpenClaw reads raw text, so one value per benchmark.
"""

import pandas as pd

_METHODS = ["TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph", "BM25", "OpenClaw"]
_TABLE1 = {
    ("LongMemEval-S", "GPT-OSS"): [0.296, 0.404, 0.428, 0.768, 0.794, 0.880],
    ("LongMemEval-S", "Qwen3-Small"): [0.263, 0.419, 0.435, 0.817, 0.847, 0.880],
    ("LongMemEval-S", "Gemma"): [0.495, 0.706, 0.718, 0.844, 0.867, 0.880],
    ("LongMemEval (oracle)", "all three (TagGraph-Stopwords: 0.996-0.998)"): [1.000, 0.996, 1.000, 1.000, 1.000, 0.990],
    ("ATANT (Core)", "GPT-OSS"): [0.682, 0.703, 0.691, 0.544, 0.641, 0.705],
    ("ATANT (Core)", "Qwen3-Small"): [0.729, 0.734, 0.708, 0.554, 0.631, 0.705],
    ("ATANT (Core)", "Gemma"): [0.677, 0.695, 0.682, 0.554, 0.640, 0.705],
}


def paper_table1(benchmark: str | None = None) -> pd.DataFrame:
    """Paper Table 1 as rows (benchmark, extraction, method, MRR)."""
    rows = [{"benchmark": b, "extraction": e, "method": m, "MRR": v}
            for (b, e), vals in _TABLE1.items() for m, v in zip(_METHODS, vals)
            if benchmark is None or b == benchmark]
    return pd.DataFrame(rows)
