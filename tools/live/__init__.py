"""The live reader: its model files, the held-out handwriting sets, post 4's ablations."""
