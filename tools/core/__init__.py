"""Notebook I/O, paths, what outputs print, data sources, the pinned numeric path: what every tool needs."""
