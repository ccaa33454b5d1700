"""The posts as one course: their reading order, each post's place in it, and links to its neighbours.

The order is written once, in `posts/_series.yml` (a list of post folders; Quarto skips
files whose names start with `_`). From it `make inline` writes into each listed post:

- `order: n` and `subtitle: "Part n of N"` in the front matter: the home page lists
  the posts by `order` (index.qmd), and the title block says where the reader is;
- a last markdown cell, generated (metadata `blog.generated: series`), that links to
  the previous and the next post by their titles, and to the glossary.

`make check` refuses a listed post whose place or links are out of date, and a list that
names a folder without a post. A post left out of the list is a post on its own: it gets
none of these.
"""
from pathlib import Path

import nbformat
import yaml

from tools.core.notebooks import NOTEBOOK_NAME, NotebookError, blog_metadata, front_matter, read_notebook

SERIES_FILE = "_series.yml"
SERIES_NAME = "Reading digits with transformers"
GENERATED = "series"
GLOSSARY = "glossary.qmd"  # at the site's root, two folders above a post


def series_order(posts_dir):
    """The post folders of the series in reading order; [] when there is no series file."""
    path = Path(posts_dir) / SERIES_FILE
    if not path.exists():
        return []
    try:
        order = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise NotebookError(f"{path.name} is not valid YAML ({error}); it lists the post folders in "
                            "reading order") from None
    if not isinstance(order, list) or not all(isinstance(name, str) for name in order) or \
            len(set(order)) != len(order):
        raise NotebookError(f"{path.name} must be a list of post folder names, each once, not {order!r}")
    missing = [name for name in order if not (Path(posts_dir) / name / NOTEBOOK_NAME).is_file()]
    if missing:
        raise NotebookError(f"{path.name} lists {missing}, which hold no {NOTEBOOK_NAME} under {Path(posts_dir)}")
    return order


def title_of(posts_dir, folder):
    matter = front_matter(read_notebook(Path(posts_dir) / folder / NOTEBOOK_NAME)) or {}
    return str(matter.get("title") or folder)


def place_in_series(post_dir):
    """(part, parts, previous folder or None, next folder or None), or None for a post outside the series."""
    post_dir = Path(post_dir)
    order = series_order(post_dir.parent)
    if post_dir.name not in order:
        return None
    index = order.index(post_dir.name)
    return (index + 1, len(order), order[index - 1] if index else None,
            order[index + 1] if index + 1 < len(order) else None)


def expected_series(post_dir):
    """({front matter keys}, text of the generated last cell) for the post, read from the series
    file once; ({}, None) for a post outside the series."""
    place = place_in_series(post_dir)
    if place is None:
        return {}, None
    part, parts, previous, following = place
    posts_dir = Path(post_dir).parent
    lines = [f"This was part {part} of {parts} of *{SERIES_NAME}*" + ("." if following else ", the last.")]
    if previous:
        lines.append(f"Previous: [{title_of(posts_dir, previous)}](../{previous}/{NOTEBOOK_NAME})")
    if following:
        lines.append(f"Next: [{title_of(posts_dir, following)}](../{following}/{NOTEBOOK_NAME})")
    lines.append(f"The words the parts share are in the [glossary](../../{GLOSSARY}).")
    # one paragraph, a line each (Markdown's hard breaks): the lines belong together, and paragraph gaps
    # between them would only lengthen the page
    return {"order": part, "subtitle": f"Part {part} of {parts}"}, "---\n\n" + "\\\n".join(lines)


def generated_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "markdown"
            and cell.metadata.get("blog", {}).get("generated") == GENERATED]


def series_drift(nb, post_dir):
    """What is out of date in the post's place in the series, or None."""
    matter = front_matter(nb) or {}
    keys, expected = expected_series(post_dir)
    wrong = [key for key, value in keys.items() if matter.get(key) != value]
    cells = generated_cells(nb)
    if expected is None:
        if cells:
            wrong.append("a series links cell, though the post is not in posts/_series.yml")
    elif len(cells) != 1 or cells[0] is not nb.cells[-1] or cells[0].source != expected:
        wrong.append("the links to the previous and next post (the last cell)")
    return f"series out of date: {', '.join(wrong)}" if wrong else None


def write_series(nb, post_dir, matter):
    """Bring the post's place in the series up to date: `matter` (its front matter, written by the
    caller) and the generated last cell."""
    keys, expected = expected_series(post_dir)
    matter.update(keys)
    for cell in generated_cells(nb):
        nb.cells.remove(cell)
    if expected is not None:
        cell = nbformat.v4.new_markdown_cell(expected)
        blog_metadata(cell)["generated"] = GENERATED
        nb.cells.append(cell)
