"""Where a run came from beyond its configuration: the machine (CPU model and instruction set, on which int8
rankings and every speed depend), the caches it found (cold or warm), its CPU seconds and peak memory, each
method's index and query times, and where each method's class comes from (`method_origin`). run.json records
them; the report shows them on its first screen."""

from __future__ import annotations

import hashlib
import inspect
import os
import platform
import resource
import shlex
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import diskcache
import pandas as pd

from taggraph._infra import entry_points
from taggraph._infra.config import cache_dir
from taggraph.methods.registry import METHODS, method

# the instruction sets that decide int8 and float kernels, best first (x86: /proc/cpuinfo flags; arm: NEON)
ISA_ORDER = ("avx512_vnni", "avx512f", "avx2", "avx", "sse4_2", "asimd", "neon")
CACHES = ("embeddings", "offline_extractions")  # the caches a run reads, under `cache_dir()`


def cpu_model_and_flags() -> tuple[str, set[str]]:
    """The CPU's model name and its instruction-set flags (/proc/cpuinfo; elsewhere the name platform gives and
    no flags)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                model = value.strip()
            elif key.strip() in ("flags", "Features"):
                flags |= set(value.split())
    except OSError:  # not Linux: the model platform names, no flags
        pass
    return model, flags


def machine() -> dict[str, Any]:
    """The CPU's model name, its best instruction set of ISA_ORDER, and the cores this process may use."""
    model, flags = cpu_model_and_flags()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": model, "isa": next((isa for isa in ISA_ORDER if isa in flags), "unknown"), "cores": cores,
            "arch": platform.machine()}


def cache_entries() -> dict[str, int]:
    """Entries in each of the run's caches (0 for one not made yet)."""
    out = {}
    for name in CACHES:
        folder = cache_dir() / name
        if not (folder / "cache.db").is_file():
            out[name] = 0
            continue
        try:
            with diskcache.Cache(str(folder)) as cache:
                out[name] = len(cache)
        except Exception:  # noqa: BLE001 - an unreadable cache is counted as empty; the run rebuilds it
            out[name] = 0
    return out


def cache_state(before: dict[str, int], after: dict[str, int]) -> dict[str, Any]:
    """Per cache: entries before and after, and 'cold' (empty at the start), 'warm' (nothing added) or 'partly
    warm'."""
    def state(a: int, b: int) -> str:
        return "cold" if a == 0 and b > 0 else "warm" if b == a else "partly warm"
    return {name: {"before": before[name], "after": after[name], "state": state(before[name], after[name])}
            for name in before}


def process_usage() -> tuple[float, float]:
    """(CPU seconds so far, peak resident memory in MB) of this process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, kB on Linux
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / scale


def command_line(argv: list[str] | None = None) -> str:
    """The command as typed, program name first ('taggraph bench --limit 10 ...'), shell-quoted."""
    argv = sys.argv if argv is None else argv
    return shlex.join([Path(argv[0]).name, *argv[1:]]) if argv else ""


def method_times(timings: pd.DataFrame) -> pd.DataFrame:
    """Per method: its index seconds (summed over memories) and query seconds p50 and p95, from `timings`."""
    columns = ["method", "index_s", "query_p50_ms", "query_p95_ms", "queries"]
    if timings is None or timings.empty or "method" not in timings:
        return pd.DataFrame(columns=columns)
    rows = []
    for method, t in timings[timings["method"].astype(str) != ""].groupby("method", sort=False):
        query = t.loc[t["stage"] == "query", "seconds"]
        rows.append({"method": method, "index_s": round(float(t.loc[t["stage"] == "index", "seconds"].sum()), 3),
                     "query_p50_ms": round(float(query.quantile(0.5)) * 1000, 2) if len(query) else None,
                     "query_p95_ms": round(float(query.quantile(0.95)) * 1000, 2) if len(query) else None,
                     "queries": int(len(query))})
    return pd.DataFrame(rows, columns=columns)


def method_origin(name: str) -> dict[str, Any]:
    """Where method `name` comes from, as run.json records it beside its parameters (`ORIGIN_KEYS`): ``origin``,
    the string that names its class again (a built-in's registry target, ``module:Class``, an entry point's value;
    left out for a class no module can import, as one defined in a notebook, and for a variant registered
    with its own values), and ``provenance``: the package and version that installed it (entry points and
    built-ins), its ``module:Class`` and the sha256 of its source file."""
    found = method(name)
    cls = found.cls()
    spec = f"{cls.__module__}:{cls.__qualname__}"
    provenance: dict[str, Any] = {"class": spec}
    origin = found.target if isinstance(found.target, str) else spec if _importable(cls) else None
    ep = METHODS.entry_point(name)
    if ep is not None:
        origin = ep.value
        provenance["dist"], provenance["version"] = entry_points.package(ep)
    elif METHODS.is_builtin(name) and name not in METHODS.registered_here():
        provenance["dist"], provenance["version"] = "taggraph", _taggraph_version()
    source = _source_file(cls)
    if source is not None:
        provenance["source_sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
    if found.defaults and not METHODS.is_builtin(name):
        origin = None  # module:Class would build the class under another name, without the variant's values
    if origin:
        return {"origin": origin, "provenance": provenance}
    return {"provenance": provenance} if source else {}


def _taggraph_version() -> str | None:
    try:
        return metadata.version("taggraph")
    except metadata.PackageNotFoundError:  # a source tree on the path, not installed
        return None


def _importable(cls: type) -> bool:
    """Whether ``module:Class`` imports `cls` itself (not a class of a notebook, a script or a function)."""
    module = sys.modules.get(cls.__module__)
    if cls.__module__ == "__main__" or module is None or getattr(module, "__file__", None) is None:
        return False
    found: Any = module
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is cls


def _source_file(cls: type) -> Path | None:
    """The file `cls` is defined in, if it has one."""
    try:
        source = inspect.getsourcefile(cls)
    except (TypeError, OSError):  # built in, or defined in a notebook cell or exec'd code
        return None
    return Path(source) if source and Path(source).is_file() else None
