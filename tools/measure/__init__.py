"""Measuring runs: the spread of re-runs, comparing a reader's run with the page, the benchmark."""
