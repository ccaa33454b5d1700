"""Running posts: execution with provenance and seal, smoke runs, the offline stand-in data."""
