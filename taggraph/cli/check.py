"""`taggraph check-embedder`: one embedder beside another on this machine (`taggraph.studies.embedder_check`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from taggraph.cli.app import DATA_HELP, DEFAULT_DATA, EXTRACTOR_HELP, command, format_option, load_data, positive
from taggraph._infra.config import DEFAULT_EXTRACTOR


@command("check-embedder")
def check_embedder_command(
    data: Path = typer.Option(DEFAULT_DATA, help=DATA_HELP),
    fmt: Optional[str] = format_option(),
    limit: Optional[int] = typer.Option(None, help="Only the first N questions."),
    embedder: str = typer.Option("minilm-int8", help="The embedder checked."),
    against: str = typer.Option("minilm", help="The embedder it is checked against."),
    texts: int = typer.Option(300, help="At most this many of the data's note texts are timed."),
    extractor: str = typer.Option(DEFAULT_EXTRACTOR, help=EXTRACTOR_HELP),
) -> None:
    """Check an embedder against another on this machine: the CPU, its instruction sets and the onnxruntime and
    torch versions; each one's embedding CPU seconds per 100 of the data's note texts (one thread, disk cache off)
    and their ratio; the cosine between their vectors; TagGraph-Fusion's MRR with each, the paired difference with
    its p, and the share of questions whose top-5 sessions are the same."""
    from taggraph.embedders.base import get_embedder
    from taggraph.studies.embedder_check import METHOD, TOP, check_embedder

    positive(texts, "--texts")
    for name in (embedder, against):
        get_embedder(name)  # an unknown name or a missing package fails before the data is read
    result = check_embedder(load_data(data, fmt, limit), embedder, against, texts=texts, extractor=extractor)
    m, e, a = result.machine, embedder, against
    flags = ", ".join(f"{flag} {'yes' if m[flag] else 'no'}" for flag in ("avx512_vnni", "avx2", "amx_int8"))
    typer.echo(f"machine: {m['cpu']} ({m['arch']}, {m['cores']} cores); {flags}")
    typer.echo(", ".join(f"{package} {v}" for package, v in result.versions.items()))
    typer.echo(f"\nembedding CPU s per 100 texts ({result.texts} note texts; CPU, one thread, disk cache off):")
    typer.echo(f"  {e}: {result.cpu_per_100[0]:.3f}\n  {a}: {result.cpu_per_100[1]:.3f}\n"
               f"  ratio {e} / {a}: {result.cpu_ratio:.2f}")
    typer.echo(f"cosine between their vectors: mean {result.cosine_mean:.4f}, min {result.cosine_min:.4f}")
    judged, same = int(result.questions["RR_embedder"].notna().sum()), result.questions["same_top5"]
    typer.echo(f"\n{METHOD} on {judged} judged questions: MRR {result.mrr[0]:.3f} with {e}, {result.mrr[1]:.3f} "
               f"with {a}; difference {result.test.mean_diff:+.3f} (p = {result.test.p_value:.3f})")
    typer.echo(f"same top-{TOP} sessions: {int(same.sum())} of {len(same)} questions ({result.same_top5:.0%})")
