"""Command-line tools that build, run and check the posts (run them through make)."""
