"""The rendered site in a browser: serving it, Chromium, screenshots."""
