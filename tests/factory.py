"""Build small post notebooks in code, so each test shows the one cell that makes it fail.

`publishable(...)` gives a notebook that passes every publishing check: front
matter, cells that ran, provenance, and the seal `make execute` records over them.
A test then adds or changes one thing: after the seal to play an author editing
a finished notebook, or followed by `reseal(nb)` to play a run that made it so.
"""
import shutil

import nbformat

from tools.numbers.bindings import RESULT_KEY
from tools.core.data_sources import STAND_IN_DATA
from tools.author.inline_helpers import HELPERS, inline
from tools.core.notebooks import (
    HELPER_TAG, NO_DOWNLOAD, REPO_ROOT, SETUP_TAG, blog_metadata, download_calls, front_matter, has_tag, record_seal,
    write_notebook_atomically,
)
from tools.author.post_links import repository_url, write_links, write_thumbnail

FRONT_MATTER = """---
title: "An example post"
description: "A post built by the test factory."
date: 2026-01-01
categories: [testing]
---"""

READ_DATA = STAND_IN_DATA  # what provenance says of a post that read the stand-in

PROVENANCE = {
    "executed_at": "2026-01-01T00:00:00+00:00", "duration_s": 1.0, "python": "3.11.7",
    "packages": {}, "device": "cpu", "machine": {}, "parameters_overridden": {}, "data": NO_DOWNLOAD,
}


def md(text):
    return nbformat.v4.new_markdown_cell(text)


def stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def image(caption_text="a plot"):
    return nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": caption_text})


def recorded(name, text, number, reference=False, label=None):
    """The output `result(name, …)` of _results.py leaves: the value shown, the record in its metadata."""
    shown = f"{label or name.replace('_', ' ')}: {text}" + ("  (reference)" if reference else "")
    record = {"name": name, "text": text, "number": number, "reference": reference}
    return nbformat.v4.new_output("display_data", data={"text/plain": shown}, metadata={RESULT_KEY: record})


def error(ename="ValueError", evalue="bad"):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])


def ran(source, *outputs, tags=()):
    """A code cell as `make execute` leaves it: outputs and an execution count (the notebook's seal covers it)."""
    cell = nbformat.v4.new_code_cell(source, execution_count=1, outputs=list(outputs))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def never_ran(source):
    return nbformat.v4.new_code_cell(source)


def publishable(*cells, front=FRONT_MATTER, helpers=(), provenance=PROVENANCE):
    """A notebook that passes every check, with `cells` after its front matter."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [md(front), *cells]
    if helpers:
        blog_metadata(nb)["helpers"] = list(helpers)
        inline(nb)
        for count, cell in enumerate((cell for cell in nb.cells if has_tag(cell, SETUP_TAG) or has_tag(cell, HELPER_TAG)),
                                     start=1):
            cell.execution_count = count
    if provenance is not None:
        blog_metadata(nb)["provenance"] = dict(provenance)
        if download_calls(nb) and provenance.get("data") == NO_DOWNLOAD:
            blog_metadata(nb)["provenance"]["data"] = READ_DATA
        record_seal(nb)
    return nb


def reseal(nb):
    """Seal `nb` as it is now, as `make execute` would have after a run that left it so."""
    record_seal(nb)
    return nb


def save_post(nb, posts_dir, folder="2026-01-01-example", links=True):
    """Write `nb` as a post under `posts_dir` (with its generated links and thumbnail, unless told not to);
    returns its path."""
    path = posts_dir / folder / "index.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    if links and front_matter(nb) is not None:
        write_links(nb, folder, repository_url())
        write_thumbnail(nb, path.parent)
    write_notebook_atomically(nb, path)
    return path


def repository_copy(tmp_path):
    """A repository root holding the site config and the helpers the tools read, for a test to break one."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("_quarto.yml", *HELPERS):
        shutil.copy(REPO_ROOT / name, root / name)
    return root
