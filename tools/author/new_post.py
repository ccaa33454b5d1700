"""Start a new post: `make new TITLE="Reading words"` writes posts/<today>-<slug>/index.ipynb.

A post needs the same skeleton every time, and every piece of it is checked by
`make check`: front matter, the generated setup cell, a `parameters` cell with smoke
values, pinned data, captioned figures, a thumbnail small enough to read in the home
page's listing (a part of the first figure: metadata `blog.thumbnail`), a Conclusion
and a build-information cell.
Writing that by hand invites small omissions, so this tool writes it. What only
the author can supply (the description, the real captions, the data revision, the
outputs of a real run) is left as a marked placeholder that `make check` names
until it is filled in.

It writes the whole post folder or nothing: the folder is built under a temporary
name beside the others and renamed into place at the end, so a full disk, a
read-only posts/ folder, a broken helper or site config leaves nothing behind, and
trying again works. The title comes from the command line or, as `make new` passes
it (untouched by make or the shell: `$HOME` stays `$HOME`), from $NEW_POST_TITLE.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import unicodedata
from datetime import date
from pathlib import Path

import nbformat
import yaml

from tools.author.inline_helpers import helper_problems, inline
from tools.core.notebooks import (
    NOTEBOOK_NAME, PARAMETERS_TAG, PLACEHOLDER, POSTS_DIR, REPO_ROOT, NotebookError, blog_metadata, cannot_write, front_matter,
    new_folder_mode, notebook_text, shown, site_config, unreadable_file, write_files_atomically,
)
from tools.author.post_links import repository_url, write_links

TITLE_VARIABLE = "NEW_POST_TITLE"  # how `make new` hands over TITLE, so neither make nor the shell rewrites it
MAX_SLUG = 60  # characters of the title the folder name keeps (file systems stop at 255 bytes; URLs should not)
HOW = 'make new TITLE="Reading words aloud"'

OPENING = f"{PLACEHOLDER}: the opening paragraph. What question does this post answer?"
DESCRIPTION = f"{PLACEHOLDER}: one sentence that says what the reader will learn."


class TitleError(NotebookError, ValueError):
    """The title cannot name a post; the message says why and what to give instead."""


class PostExists(NotebookError, FileExistsError):
    """The post's folder is there already; the message says what it holds."""

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

# The home page's listing shows a part of the first figure, small enough to read there (at most 381 x 183 px,
# tools/author/post_links.py); the whole of it would not be. figure(6, 3.2) stores about 590 x 340 px (110 dpi,
# trimmed to its ink; 660 x 352 at most), so the top left 324 x 170. The author moves the crop onto the part
# worth showing and writes its alt text; `make check` gives the crop that fits if a figure outgrows it.
THUMBNAIL = {"figure": "fig-first", "crop": [0, 0, 0.55, 0.5],
             "alt": f"{PLACEHOLDER}: what this part of the first figure shows, for someone who cannot see it."}

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


def slugify(title, limit=MAX_SLUG):
    """'Reading Words, Aloud!' -> 'reading-words-aloud'; a long title keeps its first words, up to `limit` chars."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    if len(slug) > limit:
        cut = slug[:limit + 1]
        slug = cut.rsplit("-", 1)[0] if "-" in cut else slug[:limit]
    return slug.strip("-")


def checked_title(title):
    """The title with its outer spaces removed, or TitleError saying what is wrong with it."""
    title = (title or "").strip()
    if not title:
        raise TitleError(f"give the title: {HOW}")
    for position, character in enumerate(title, start=1):
        kind = unicodedata.category(character)
        if kind == "Cs":  # argv bytes that were not UTF-8
            raise TitleError(f"the title is not UTF-8 text (character {position}); type it again, or give it "
                             f"in UTF-8: {HOW}")
        if kind in ("Cc", "Zl", "Zp"):
            raise TitleError(f"the title holds a line break or control character ({character!r} at character "
                             f"{position}); give it on one line: {HOW}")
    if not slugify(title):
        raise TitleError(f"title {title!r} has no letters or digits to make a folder name from (only ASCII "
                         f"letters and digits go into it); add a word or two in Latin letters")
    return title


def front_matter_cell(title, day):
    """The first cell: front matter written by YAML itself (any title survives: quotes, backslashes, `$`, `#`)."""
    matter = {"title": title, "description": DESCRIPTION, "date": day, "categories": ["transformers"]}
    block = yaml.safe_dump(matter, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    return nbformat.v4.new_markdown_cell(f"---\n{block.strip()}\n---\n\n{OPENING}")


def scaffold(title, day, root=REPO_ROOT):
    """The notebook of a new post titled `title`, dated `day`, with `root`'s helpers inlined."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    blog_metadata(nb).update(helpers=["_results.py", "_style.py", "_arch.py"], smoke_parameters={"epochs": 1},
                             thumbnail=dict(THUMBNAIL))
    parameters = nbformat.v4.new_code_cell(PARAMETERS, metadata={"tags": [PARAMETERS_TAG]})
    nb.cells = [
        front_matter_cell(title, day),
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
    inline(nb, root)
    return nb


def existing_folder_problem(folder):
    """Why `folder` cannot become the new post, or None when it is free (absent, or an empty folder)."""
    if not folder.exists() and not folder.is_symlink():
        return None
    if folder.is_dir() and not folder.is_symlink():
        held = sorted(entry.name for entry in folder.iterdir())
        if not held:
            return None
        listed = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
        if NOTEBOOK_NAME in held:
            return f"{shown(folder)}/{NOTEBOOK_NAME} already exists (that post is there); pick another title"
        return (f"{shown(folder)}/ already exists and holds {listed}; pick another title, or move those files "
                f"away if you do not need them")
    return f"{shown(folder)} already exists and is not a folder; pick another title, or remove it"


def create_post(title, day=None, posts_dir=POSTS_DIR, root=REPO_ROOT):
    """Write the scaffold for `title`; returns its path. Refuses to overwrite an existing post.

    Every check is made and the whole folder written under a temporary name first; only
    then is it renamed into place. On any failure nothing is left behind (NotebookError:
    TitleError, PostExists, or the file that could not be read or written and the fix).
    """
    title = checked_title(title)
    day = day or date.today()
    folder = Path(posts_dir) / f"{day.isoformat()}-{slugify(title)}"
    path = folder / NOTEBOOK_NAME
    taken = existing_folder_problem(folder)
    if taken:
        raise PostExists(taken)
    site_config(root)  # a missing or malformed _quarto.yml is named here, not by a YAML traceback
    problems = helper_problems(root)
    if problems:
        raise NotebookError(problems[0])
    try:
        nb = scaffold(title, day, root)
    except (OSError, UnicodeDecodeError) as error:
        raise NotebookError(unreadable_file(error, None)) from None
    write_links(nb, folder.name, repository_url(root))
    if (front_matter(nb) or {}).get("title") != title:
        raise TitleError(f"the title {title!r} does not survive the front matter's YAML; simplify it")
    write_post_folder(nb, folder)
    return path


def write_post_folder(nb, folder):
    """Write the post's folder whole, or raise NotebookError and leave nothing behind.

    The folder is made under a temporary name beginning with "." (which the tools and
    Quarto skip) and renamed into place once its notebook is written in full.
    """
    posts_dir = folder.parent
    missing = [parent for parent in [posts_dir, *posts_dir.parents] if not parent.exists()]
    staging, done = None, False
    try:
        posts_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".new-{folder.name[:40]}-", dir=posts_dir))
        os.chmod(staging, new_folder_mode())  # mkdtemp's own mode is 0700
        write_files_atomically([(staging / NOTEBOOK_NAME, notebook_text(nb))])
        taken = existing_folder_problem(folder)  # made meanwhile, by another command or by hand
        if taken:
            raise PostExists(taken)
        if folder.is_dir():
            folder.rmdir()  # empty: a leftover of an earlier attempt, nothing to lose
        os.rename(staging, folder)
        done = True
    except OSError as error:
        failed = Path(error.filename) if error.filename else None
        if failed is not None and failed.name.startswith(".new-"):  # the temporary folder: name the post's own
            error.filename = str(folder)
        elif failed is not None and failed.parent.name.startswith(".new-"):
            error.filename = str(folder / failed.name)
        raise NotebookError(f"{cannot_write(error, folder / NOTEBOOK_NAME)}; nothing was created") from None
    finally:
        if not done:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            if missing:  # posts/ (and folders above it) made for this post only
                shutil.rmtree(missing[-1], ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("title", nargs="?",
                        help=f'the post\'s title, e.g. "Reading words aloud" (default: ${TITLE_VARIABLE})')
    args = parser.parse_args(argv)
    title = args.title if args.title is not None else os.environ.get(TITLE_VARIABLE, "")
    try:
        path = create_post(title, posts_dir=POSTS_DIR, root=REPO_ROOT)  # looked up now: a test may point them away
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"created {shown(path)}")
    print(f"next: open it (make lab), fill in the {PLACEHOLDER}s (the thumbnail's part of a figure and its alt text "
          f"are in notebook metadata blog.thumbnail), then `make smoke POST={path.parent.name}`, "
          f"`make execute POST={path.parent.name}`, `make bind POST={path.parent.name} WRITE=1` and `make check`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
