"""A folder served as a static host serves it, and Chromium started as this project's machines need.

Shared by the rendered-site test and `tools.site.screenshots`.
"""
import functools
import os
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# As root, on a machine without outside network: no sandbox, and no background connections,
# which the closed network would refuse many at a time.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def html_pages(site):
    """Every page of a rendered site, Quarto's own libraries left out."""
    return sorted(path for path in site.rglob("*.html") if "site_libs" not in path.parts)


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class served:
    """The folder on a localhost port, as a static host serves it: `with served(site) as base_url:`."""

    def __init__(self, site):
        self.site = site

    def __enter__(self):
        handler = functools.partial(QuietHandler, directory=str(self.site))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
