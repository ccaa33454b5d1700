"""What every tool needs to know about a post notebook, written once.

A post is `posts/<yyyy-mm-dd>-<slug>/index.ipynb`. The tools keep their own
records in the notebook's metadata under the key `blog`:

- `nb.metadata.blog.helpers`: the single-source helper files the notebook uses;
- `nb.metadata.blog.smoke_parameters`: small values for a test run on a CPU;
- `nb.metadata.blog.provenance`: where, when and how the stored outputs were made;
- `cell.metadata.blog.source_sha256`: the hash of the code a cell's outputs came from.
"""
import ast
import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
POSTS_DIR = REPO_ROOT / "posts"
NOTEBOOK_NAME = "index.ipynb"
SETUP_TAG = "generated-setup"
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"


class NotebookError(Exception):
    """A problem with a notebook file that the author has to fix; the message says how."""


def find_posts(substring=None, posts_dir=POSTS_DIR):
    """The post notebooks, oldest first, optionally only those whose folder name contains `substring`."""
    posts = sorted(posts_dir.glob(f"*/{NOTEBOOK_NAME}"))
    if substring:
        posts = [path for path in posts if substring in path.parent.name]
        if not posts:
            raise NotebookError(f"no post folder under {posts_dir} matches {substring!r}")
    return posts


def post_name(path):
    """How messages name a post: its folder, relative to the repository when it lives there."""
    path = Path(path).resolve()
    try:
        return str(path.parent.relative_to(REPO_ROOT))
    except ValueError:
        return str(path.parent)


def read_notebook(path):
    try:
        return nbformat.read(str(path), as_version=4)
    except FileNotFoundError:
        raise NotebookError(f"{path}: no such notebook") from None
    except Exception as error:  # nbformat raises several unrelated types for a broken file
        raise NotebookError(f"{path}: not a readable notebook ({error})") from None


def write_notebook_atomically(nb, path):
    """Write to a temporary file beside `path`, then rename it over `path`.

    A crash or Ctrl-C at any moment leaves either the old file or the new one,
    never a truncated notebook.
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            nbformat.write(nb, out)
            out.flush()
            os.fsync(out.fileno())
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def blog_metadata(node):
    """The tools' own metadata dict on a notebook or a cell, created if missing."""
    return node.metadata.setdefault("blog", {})


def source_sha256(source):
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def code_cells(nb):
    """(1-based cell number, cell) for every code cell, numbered as in the whole notebook."""
    return [(number, cell) for number, cell in enumerate(nb.cells, start=1) if cell.cell_type == "code"]


def describe_cell(number, cell):
    """'cell 7 (code)': how a message points the author at a cell."""
    return f"cell {number} ({cell.cell_type})"


def has_tag(cell, tag):
    return tag in cell.metadata.get("tags", [])


def cell_options(cell):
    """Quarto's `#|` options at the top of a code cell, as a dict."""
    lines = []
    for line in cell.source.splitlines():
        if not line.startswith("#|"):
            break
        lines.append(line[2:].strip())
    if not lines:
        return {}
    try:
        options = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError as error:
        raise NotebookError(f"cell options are not valid YAML: {error}") from None
    return options if isinstance(options, dict) else {}


FRONT_MATTER = re.compile(r"\A\s*---\s*\n(.*?)\n---\s*(\n|\Z)", re.DOTALL)


def front_matter(nb):
    """The YAML front matter in the notebook's first cell, or None when there is none."""
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        return None
    match = FRONT_MATTER.match(nb.cells[0].source)
    if not match:
        return None
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        raise NotebookError(f"front matter is not valid YAML: {error}") from None
    return data if isinstance(data, dict) else {}


def prose_of(cell):
    """A markdown cell's text without its front matter block."""
    return FRONT_MATTER.sub("", cell.source, count=1)


def python_of(source):
    """Cell source that `ast` can parse: IPython magics and shell escapes become blank lines."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def parse_cell(source):
    """The cell's syntax tree, or None if it is not valid Python (the kernel would have said so)."""
    try:
        return ast.parse(python_of(source))
    except SyntaxError:
        return None


def parameters_cell(nb):
    cells = [cell for cell in nb.cells if cell.cell_type == "code" and has_tag(cell, PARAMETERS_TAG)]
    return cells[0] if cells else None


def assigned_names(source):
    """Names bound by plain top-level assignments, e.g. the knobs of a parameters cell."""
    tree = parse_cell(source)
    names = []
    for node in tree.body if tree else []:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names += [target.id for target in targets if isinstance(target, ast.Name)]
    return names


def sync_posts(drift_of, bring_in_line, *, check, substring=None):
    """Report (`check`) or mend each post's generated parts; returns the exit status.

    `drift_of(nb, path)` says what is out of date, or None; `bring_in_line(nb, path)`
    mends it in memory and says what it did; the notebook is then written atomically.
    """
    problems = 0
    try:
        for path in find_posts(substring):
            nb = read_notebook(path)
            try:
                drift = drift_of(nb, path)
                if drift and check:
                    problems += 1
                    print(f"{post_name(path)}: {drift}; run `make inline`")
                elif drift:
                    done = bring_in_line(nb, path)
                    write_notebook_atomically(nb, path)
                    print(f"{post_name(path)}: {done}")
            except NotebookError as error:
                problems += 1
                print(f"{post_name(path)}: {error}")
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2
    return 1 if problems else 0
