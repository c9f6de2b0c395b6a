"""The `taggraph` command line: thin clients of the library's public functions.

`app` lives in `taggraph.cli.app` with the one error handler; the command modules
register themselves on import: `bench` (bench, embed, extract, score, methods),
`experiments` (ablation, sweeps, vocab, diagnose, answers), `views` (explain, graph), `compare`, `fuse`,
`tune` (tune-embedder), `check` (check-embedder).
"""

from taggraph.cli import bench, check, compare, experiments, fuse, pages, runs, tune  # noqa: F401  (registers the commands)
from taggraph.cli.app import app

__all__ = ["app"]
