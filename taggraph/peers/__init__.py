"""Peers: other projects' memory systems run as methods, by their own installed code (``pip install 'taggraph[peers]'``).

Each peer is one module here and one line of `taggraph.methods.registry.BUILTIN_METHODS`, so bench, compare, the
report and explain take it as any method. A peer's module imports its project's package at the top; without the
extra, the registry lists the peer as needing it and naming one is one line naming the extra
(`taggraph.methods.registry.needs_extra`). Nothing imports this room but the registry, by name.
"""
