"""Where a run came from, in the words and table its reports show (`viz.report` renders them): commit, date,
command, data and sha256; the machine and resources; each method's parameters, embedder and times
(`runs.provenance`)."""

from __future__ import annotations

import pandas as pd

from taggraph.runs.provenance import method_times


def provenance_table(result) -> pd.DataFrame:
    """Per method: its parameters as run.json records them, its embedder, its index seconds and query p50/p95
    (`provenance.method_times`)."""
    times = method_times(result.timings).set_index("method")
    rows = []
    for method, cfg in result.config.get("methods", {}).items():
        params = {k: v for k, v in cfg.items() if k not in ("method", "embedder", "device", "origin", "provenance")}
        row = {"method": method, "embedder": cfg.get("embedder") or "–",
               "parameters": ", ".join(f"{k}={v}" for k, v in params.items()) or "–"}
        if method in times.index:
            row.update(times.loc[method].to_dict())
        rows.append(row)
    return pd.DataFrame(rows)


def provenance_lines(result, record: dict | None) -> list[str]:
    """Where the run came from, one fact a line: commit (dirty or not), date, command, data file and sha256,
    machine, resources and caches (`record`: what run.json holds of them; None: from the result alone)."""
    cfg, record = result.config, record or {}
    data = record.get("data") or {}
    lines = [f"commit {record.get('git_commit', 'unknown')}"
             + (" (the work tree had uncommitted changes)" if str(record.get("git_commit", "")).endswith("+dirty")
                else ""),
             f"date {record.get('created', 'unknown')}",
             f"command {cfg.get('command') or 'not run from the command line (tg.bench)'}"]
    if data:
        lines.append(f"data {data.get('path')} ({data.get('format')}), sha256 {data.get('sha256')}")
    m, r = cfg.get("machine") or {}, cfg.get("resources") or {}
    if m:
        lines.append(f"machine {m.get('cpu')}, {m.get('isa')}, {m.get('cores')} cores")
    if r:
        caches = ", ".join(f"{n} {c['state']} ({c['before']} → {c['after']} entries)"
                           for n, c in (r.get("caches") or {}).items())
        lines.append(f"resources {r.get('wall_seconds')} s wall, {r.get('cpu_seconds')} CPU s, peak "
                     f"{r.get('peak_memory_mb')} MB; caches: {caches}")
    return lines
