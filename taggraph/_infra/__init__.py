"""Private plumbing every room may use: atomic writes, disk caches, settings, progress bars, model-server
clients and entry-point loading. Not part of the public face."""
