"""Start a new post: `make new TITLE="Reading words"` writes posts/<today>-<slug>/index.ipynb.

A post needs the same skeleton every time, and every piece of it is checked by
`make check`: front matter, the generated setup cell, a `parameters` cell with smoke
values, pinned data, captioned figures, a Conclusion and a build-information cell.
Writing that by hand invites small omissions, so this tool writes it. What only
the author can supply (the description, the real captions, the data revision, the
outputs of a real run) is left as a marked placeholder that `make check` names
until it is filled in.
"""
import argparse
import re
import sys
import unicodedata
from datetime import date

import nbformat

from tools.check_posts import PLACEHOLDER
from tools.inline_helpers import inline
from tools.notebooks import PARAMETERS_TAG, POSTS_DIR, blog_metadata, write_notebook_atomically
from tools.post_links import repository_url, write_links


FRONT_MATTER = f'''---
title: "{{title}}"
description: "{PLACEHOLDER}: one sentence that says what the reader will learn."
date: {{date}}
categories: [transformers]
---

{PLACEHOLDER}: the opening paragraph. What question does this post answer?'''

PARAMETERS = '''epochs = 1
seed = 0
device = "auto"            # "auto" picks MPS, then CUDA, then CPU'''

IMPORTS = '''import hashlib

import matplotlib.pyplot as plt
import numpy as np
import torch


def pick_device(preference):
    if preference != "auto":
        return torch.device(preference)
    if torch.backends.mps.is_available():
        return torch.device("mps")
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


torch.manual_seed(seed)
torch.set_num_threads(1)  # one thread: on CPU a re-run repeats bit for bit
device = pick_device(device)
print(f"device: {device}")'''

DATA = '''# Data: download at a full 40-hex commit revision and print the file's digest, e.g.
# from huggingface_hub import hf_hub_download
# DATA_REVISION = "<40-hex commit>"
# path = hf_hub_download("<owner>/<dataset>", "<file>", repo_type="dataset", revision=DATA_REVISION)
# with open(path, "rb") as stream:
#     print(f"sha256 {hashlib.sha256(stream.read()).hexdigest()}")'''

FIGURE = f'''#| label: fig-first
#| fig-cap: "{PLACEHOLDER}: what the reader should see in this figure."
#| fig-alt: "{PLACEHOLDER}: the figure described for someone who cannot see it."
fig, ax = figure(6, 3.2)
ax.plot(range(epochs + 1))
style_axes(ax, "epoch", "value")
plt.show()'''

BUILD_INFORMATION = '''import platform
from datetime import datetime, timezone

import matplotlib

print("build information")
print(f"  run finished  {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
print(f"  python        {platform.python_version()}")
print(f"  torch         {torch.__version__}")
print(f"  numpy         {np.__version__}")
print(f"  matplotlib    {matplotlib.__version__}")
print(f"  device        {device}, {torch.get_num_threads()} thread(s)")
print(f"  machine       {platform.machine()}, {platform.system()} {platform.release()}")'''


def slugify(title):
    """'Reading Words, Aloud!' -> 'reading-words-aloud'."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")


def scaffold(title, day):
    """The notebook of a new post titled `title`, dated `day`."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    blog_metadata(nb).update(helpers=["_style.py", "_arch.py"], smoke_parameters={"epochs": 1})
    parameters = nbformat.v4.new_code_cell(PARAMETERS, metadata={"tags": [PARAMETERS_TAG]})
    nb.cells = [
        nbformat.v4.new_markdown_cell(FRONT_MATTER.format(title=title.replace('"', "'"), date=day.isoformat())),
        nbformat.v4.new_markdown_cell("## The knobs\n\nEvery setting a re-runner may turn is in the next cell."),
        parameters,
        nbformat.v4.new_code_cell(IMPORTS),
        nbformat.v4.new_markdown_cell("## The data"),
        nbformat.v4.new_code_cell(DATA),
        nbformat.v4.new_markdown_cell(f"{PLACEHOLDER}: the idea, then the code that shows it. See @fig-first."),
        nbformat.v4.new_code_cell(FIGURE),
        nbformat.v4.new_markdown_cell(f"## Conclusion\n\n- {PLACEHOLDER}: what the reader should remember.\n\n"
                                      "*Build information for this run:*"),
        nbformat.v4.new_code_cell(BUILD_INFORMATION),
    ]
    inline(nb)
    return nb


def create_post(title, day=None, posts_dir=POSTS_DIR):
    """Write the scaffold for `title`; returns its path. Refuses to overwrite an existing post."""
    slug = slugify(title)
    if not slug:
        raise ValueError(f"title {title!r} has no letters or digits to make a folder name from")
    day = day or date.today()
    path = posts_dir / f"{day.isoformat()}-{slug}" / "index.ipynb"
    if path.exists():
        raise FileExistsError(f"{path} already exists; pick another title")
    nb = scaffold(title, day)
    write_links(nb, path.parent.name, repository_url())
    path.parent.mkdir(parents=True)
    write_notebook_atomically(nb, path)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("title", help='the post\'s title, e.g. "Reading words aloud"')
    args = parser.parse_args(argv)
    try:
        path = create_post(args.title)
    except (ValueError, FileExistsError) as error:
        print(error, file=sys.stderr)
        return 1
    print(f"created {path}")
    print(f"next: open it (make lab), fill in the {PLACEHOLDER}s, then `make smoke POST={path.parent.name}`, "
          f"`make execute POST={path.parent.name}` and `make check`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
