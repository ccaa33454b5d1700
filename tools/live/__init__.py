"""The live reader: its model files, the held-out handwriting sets, the handwriting post's ablations."""
