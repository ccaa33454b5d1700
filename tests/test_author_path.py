"""The path a new author walks to publish a post, walked for real in a temporary copy of the repository.

`make new`, the author's writing (a cell that records one result with `result()`, prose that quotes
it, the captions and the thumbnail's alt text), `make execute`, `make bind WRITE=1`, `make check` and
Quarto's render of the site, each run as the Makefile runs it (`python -m tools…`, in the copy, so the
tools see only the new post). The post downloads nothing and trains nothing: the whole path takes
seconds of kernel time, and Quarto's render most of the rest.

Every refusal on the way must name the command that fixes it, and the author runs exactly that next:
AUTHOR_STEPS is the path, and its length the count of project-specific commands an author needs. A
change that adds a step, or a refusal that stops naming its fix, fails here first.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tools.author.inline_helpers import HELPERS
from tools.author.post_links import THUMBNAIL, largest_legible_thumbnail
from tools.core.notebooks import (
    PLACEHOLDER, REPO_ROOT, blog_metadata, front_matter, read_notebook, write_notebook_atomically,
)

TITLE = "Reading four digits"
# What the author writes after `make new`: a cell that records one result (it imports yaml, a pinned package
# the scaffold's setup cell does not install: the stale setup cell issue #31 met), and prose that quotes it.
RESULT_CELL = '''import yaml

seen = yaml.safe_load("read: [3, 1, 4, 1]\\ntruth: [3, 1, 4, 7]")
accuracy = sum(a == b for a, b in zip(seen["read"], seen["truth"])) / len(seen["truth"])
result("accuracy", accuracy, "{:.1%}", "digits read right")'''
PROSE = "The reader gets 75.0 % of the digits right on this tiny canvas. See @fig-first."
# The project-specific commands of the path, in order (the writing between them is the author's own).
AUTHOR_STEPS = [
    "make new TITLE=…",
    "make execute POST=…",    # brings the stale setup cell in line, runs, shows `accuracy = 75.0%`, writes links
    "make check POST=…",      # refused: the 75.0 unbound (make bind)
    "make bind POST=… WRITE=1",
    "make check POST=…",      # ready to publish
    "make",                   # Quarto renders the site (here only the render: no reader runtime from npm)
]
# What the site needs to render in the copy: its settings, its pages and styles (the other posts stay out).
SITE_FILES = ["_quarto.yml", "index.qmd", "about.qmd", "glossary.qmd", "references.bib", "styles.css", "assets",
              "reader/reader.css", "posts/_metadata.yml", "requirements.txt"]


def quarto():
    """The Quarto `make` uses: on the PATH, else the one assembled in .cache/quarto, else the venv's."""
    found = shutil.which(os.environ.get("QUARTO", "quarto")) or REPO_ROOT / ".cache" / "quarto" / "bin" / "quarto"
    if Path(found).is_file():
        return str(found)
    installed = sorted(REPO_ROOT.glob(".venv/lib/python*/site-packages/quarto_cli/bin/quarto"))
    return str(installed[0]) if installed else None


@pytest.fixture
def repository(tmp_path):
    """A copy of the repository with no posts: the tools, the helpers, the site's settings and pages."""
    root = tmp_path / "blog"
    shutil.copytree(REPO_ROOT / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    for name in [*sorted(path.name for path in REPO_ROOT.glob("_*.py")), *SITE_FILES]:
        source, target = REPO_ROOT / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    assert set(HELPERS) <= {path.name for path in root.glob("_*.py")}
    return root


class Author:
    """Runs the project's commands in the copy as the Makefile does, and keeps the list of them."""

    def __init__(self, root):
        self.root, self.steps, self.seconds = root, [], []

    def make(self, step, *commands, ok=True, env=None):
        """Run the commands `step` runs (`make inline` runs two), each a list; the output of all of them."""
        started, said = time.monotonic(), ""
        for command in commands:
            done = subprocess.run(command, cwd=self.root, capture_output=True, text=True, timeout=600,
                                  env={**os.environ, "PYTHONPATH": "", **(env or {})})
            said += done.stdout + done.stderr
            if done.returncode:
                break
        self.steps.append(step)
        self.seconds.append(round(time.monotonic() - started, 1))
        assert (done.returncode == 0) == ok, f"{step} exited {done.returncode}:\n{said}"
        assert "Traceback" not in said, f"{step}:\n{said}"
        return said

    def tool(self, step, module, *arguments, ok=True, env=None):
        return self.make(step, [sys.executable, "-m", module, *arguments], ok=ok, env=env)

    def execute(self, slug):
        """`make execute` as the Makefile runs it: make inline (setup cells, links), the run, the links again.
        (make inline's `make export` is left out: the copy holds none of the posts the shared modules come from.)"""
        python = sys.executable
        return self.make("make execute POST=…", [python, "-m", "tools.author.inline_helpers"], [python, "-m", "tools.author.post_links"],
                         [python, "-m", "tools.run.execute_posts", f"--post={slug}"],
                         [python, "-m", "tools.author.post_links"])


def write_the_post(path):
    """What the author does in the notebook after `make new`: every TODO written, one result recorded."""
    nb = read_notebook(path)
    matter = front_matter(nb)
    first = nb.cells[0]
    first.source = first.source.replace(matter["description"], "How well a tiny reader reads four digits.")
    first.source = re.sub(rf"{PLACEHOLDER}: the opening paragraph\..*", "A post small enough to run in seconds.",
                          first.source)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and PLACEHOLDER in cell.source:
            cell.source = re.sub(rf"{PLACEHOLDER}: the idea, then the code that shows it\. See @fig-first\.", PROSE,
                                 cell.source)
            cell.source = re.sub(rf"{PLACEHOLDER}: what the reader should remember\.", "A run records its results.",
                                 cell.source)
        elif cell.cell_type == "code" and "label: fig-first" in cell.source:
            cell.source = re.sub(rf'fig-cap: "{PLACEHOLDER}[^"]*"', 'fig-cap: "A line that rises."', cell.source)
            cell.source = re.sub(rf'fig-alt: "{PLACEHOLDER}[^"]*"', 'fig-alt: "A line that rises from left to right."',
                                 cell.source)
            figure_at = nb.cells.index(cell)
    nb.cells.insert(figure_at + 1, nbformat.v4.new_code_cell(RESULT_CELL))
    blog_metadata(nb)["thumbnail"]["alt"] = "The start of a rising line, on its axes."
    assert not any(PLACEHOLDER in cell.source for cell in nb.cells), "the author wrote every TODO"
    write_notebook_atomically(nb, path)


def test_a_new_author_publishes_a_tiny_post(repository):
    author = Author(repository)
    said = author.tool("make new TITLE=…", "tools.author.new_post", env={"NEW_POST_TITLE": TITLE})
    path = next((repository / "posts").glob("*-reading-four-digits/index.ipynb"))
    slug = path.parent.name
    assert f"created posts/{slug}/index.ipynb" in said and "make execute POST=" in said, said

    write_the_post(path)
    # The tool alone refuses the stale setup cell before any kernel starts, naming the fix; `make execute` runs
    # that fix first, so the author never meets it.
    refused = subprocess.run([sys.executable, "-m", "tools.run.execute_posts", f"--post={slug}"], cwd=repository,
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    said = refused.stdout + refused.stderr
    assert refused.returncode and re.search(r"setup cell does not install PyYAML==[\d.]+ \(cell \d+ \(code\) imports "
                                            r"yaml\); run `make inline`.*nothing was run", said), said
    assert "executing from" not in said, "refused before any kernel started"

    ran = author.execute(slug)
    assert "setup cell regenerated" in ran, "make execute says it rewrote the setup cell"
    assert "1 result(s) recorded" in ran and "  accuracy = 75.0%" in ran, ran

    refused = author.tool("make check POST=…", "tools.check.check_posts", f"--post={slug}", ok=False)
    problems = [line for line in refused.splitlines() if line.startswith(f"posts/{slug}:")]
    assert problems and all("make bind" in line for line in problems), refused
    assert any("75.0" in line and "make bind" in line for line in problems), refused

    bound = author.tool("make bind POST=… WRITE=1", "tools.author.bind_numbers", f"--post={slug}", "--write")
    assert "wrote 1 marker(s)" in bound and "75.0 %<!--=accuracy-->" in path.read_text(), bound
    ready = author.tool("make check POST=…", "tools.check.check_posts", f"--post={slug}")
    assert "checked 1 post(s): ready to publish" in ready, ready
    width, height = struct.unpack(">II", (path.parent / THUMBNAIL).read_bytes()[16:24])
    most = largest_legible_thumbnail()
    assert width <= most[0] and height <= most[1], "the scaffold's thumbnail reads in the listing"

    assert author.steps == AUTHOR_STEPS[:-1], author.steps
    binary = quarto()
    if binary is None:
        pytest.skip(f"no Quarto (make installs one); the path up to the render passed in {sum(author.seconds)} s")
    author.make("make", [binary, "render", "--no-execute"])
    home = (repository / "_site" / "index.html").read_text(encoding="utf-8")
    assert TITLE in home and f"posts/{slug}/index.html" in home, "the home page lists the post"
    assert f"posts/{slug}/{THUMBNAIL}" in home, "with its thumbnail"
    page = (repository / "_site" / "posts" / slug / "index.html").read_text(encoding="utf-8")
    # assets/units.lua keeps the number and its sign together with a no-break space (Quarto writes &nbsp;)
    assert re.search(r"gets 75\.0(&nbsp;|\u00a0)% of the digits right", re.sub(r"<!--.*?-->", "", page)), \
        "the page quotes the result"

    assert author.steps == AUTHOR_STEPS, author.steps
    print(f"\n{len(author.steps)} project-specific commands from `make new` to the rendered site:\n"
          + "\n".join(f"  {step:26} {seconds:5.1f} s" for step, seconds in zip(author.steps, author.seconds)))
