"""The publishing checks: is every post fit to render as stored? (the top of the import order)"""
