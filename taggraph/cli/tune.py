"""`taggraph tune-embedder`: a sentence embedder tuned on a dataset's own gold, into the cache as ``tuned:NAME``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from taggraph.cli.app import command, data_help, load_data, positive


@command("tune-embedder")
def tune_embedder_command(data: Path = typer.Option(..., "--data", help=data_help().rsplit("; default:", 1)[0] + "."),
                  base: str = typer.Option("minilm", help="The model tuned: minilm (the bundled all-MiniLM-L6-v2)."),
                  epochs: int = typer.Option(1, help="Passes over the training pairs."),
                  max_steps: Optional[int] = typer.Option(None, "--max-steps",
                                                          help="Stop after N batches (overrides --epochs)."),
                  seed: int = typer.Option(0, help="Seed of the order of the pairs and of the training."),
                  name: Optional[str] = typer.Option(None, help="The model's name (default: <data>-<base>-seed<seed>); "
                                                                "use it as --embedder tuned:NAME."),
                  limit: Optional[int] = typer.Option(None, "--limit", help="Only the first N questions.")) -> None:
    """Tune a sentence embedder on a dataset's own gold: each question against its gold notes, with a hard
    negative BM25 ranks high outside its gold sessions (sentence-transformers' trainer, CPU, fixed seed, offline).
    Writes the model, its int8 export and its card (data files with sha256 and licence, parameters, time, commit)
    to <TAGGRAPH_CACHE>/models/tuned/NAME."""
    from taggraph.studies.tune_embedder import default_name, tune_embedder
    from taggraph.embedders.tuned import tuned_model
    positive(epochs, "--epochs")
    positive(max_steps, "--max-steps")
    dataset = load_data(data, limit=limit)
    name = name or default_name(dataset, base, seed)
    tune_embedder(dataset, name, base=base, epochs=epochs, max_steps=max_steps, seed=seed)
    folder, card = tuned_model(name)
    typer.echo(f"tuned model: {folder} ({card['pairs']} pairs of {card['questions_trained']} questions, "
               f"{card['steps']} steps, {card['seconds']} s)\nuse it: --embedder {card['embedder']}")
