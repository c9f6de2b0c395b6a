"""What a run was run with, as the runs index and the compare page show it: its recorded settings flattened to
``METHOD.key=value`` items (`run_params`) and the items that tell two runs apart (`differences`, `difference_line`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

RUN_SETTINGS = ("extractor", "depth")  # the run-wide settings a reader changes from the command line
NOT_PARAMETERS = {"method", "origin", "provenance"}  # recorded beside a method's parameters: what it is, not how


def _flat(prefix: str, value: Any) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {k: v for key, item in value.items() for k, v in _flat(f"{prefix}.{key}", item).items()}
    return {prefix: str(value)}


def run_params(record: Mapping[str, Any]) -> dict[str, str]:
    """A run.json record's settings, {name: value as text}: the run's extractor and depth, then each method's
    parameters as ``METHOD.key`` (a dict's entries as ``METHOD.key.entry``), in the record's order."""
    config = record.get("config") if isinstance(record.get("config"), Mapping) else {}
    out = {key: str(config[key]) for key in RUN_SETTINGS if key in config}
    for method, params in (config.get("methods") or {}).items():
        if isinstance(params, Mapping):
            for key, value in params.items():
                if key not in NOT_PARAMETERS:
                    out.update(_flat(f"{method}.{key}", value))
    return out


def differences(base: Mapping[str, str], other: Mapping[str, str]) -> list[str]:
    """``name=value`` of `other`'s settings that `base` records otherwise (settings only one of them records, as a
    method only one run ran, are left out)."""
    return [f"{key}={value}" for key, value in other.items() if key in base and base[key] != value]


def difference_line(labels: Sequence[str], params: Sequence[Mapping[str, str]]) -> str:
    """One line telling the runs apart, each after the first by what it sets otherwise than the first:
    'b: TagGraph-Fusion.time=False, AdaptiveGraph.alpha=0.5'; says so when they record the same settings."""
    parts = [f"{label}: {', '.join(diff)}" for label, p in zip(labels[1:], params[1:])
             if (diff := differences(params[0], p))]
    return "; ".join(parts) if parts else "the runs record the same settings"


def unusual(params: Sequence[Mapping[str, str]]) -> list[list[str]]:
    """Per run, ``name=value`` of the settings it records otherwise than most of the runs that record them: what a
    row of the runs index says it was run with (nothing for settings all runs share)."""
    common = {key: Counter(p[key] for p in params if key in p).most_common(1)[0][0]
              for key in dict.fromkeys(k for p in params for k in p)}
    return [differences(common, p) for p in params]
