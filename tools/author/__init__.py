"""Writing a post: scaffolding, exporting marked cells, inlining helpers, links and the series order."""
