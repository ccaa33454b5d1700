"""The posts as one course: each listed post knows its part and links to its neighbours, in reading order."""
import re

import pytest

from tests.factory import FRONT_MATTER, md, publishable, save_post
from tools.check.check_posts import check_notebook
from tools.core.notebooks import POSTS_DIR, REPO_ROOT, NotebookError, front_matter, read_notebook, write_notebook_atomically
from tools.author.post_links import links_drift, repository_url, write_links
from tools.author.series import SERIES_FILE, series_order

FOLDERS = ["2026-01-01-first", "2026-01-02-second", "2026-01-03-third"]


def course(tmp_path, order):
    """Three posts under tmp_path/posts, a series file listing `order`, each post's links written."""
    posts = tmp_path / "posts"
    paths = []
    for number, folder in enumerate(FOLDERS, start=1):
        front = FRONT_MATTER.replace('"An example post"', f'"Post number {number}"')
        paths.append(save_post(publishable(md("Some prose."), front=front), posts, folder, links=False))
    (posts / SERIES_FILE).write_text("".join(f"- {folder}\n" for folder in order), encoding="utf-8")
    for path in paths:
        relink(path)
    return posts, paths


def relink(path):
    nb = read_notebook(path)
    write_links(nb, path.parent, repository_url())
    write_notebook_atomically(nb, path)
    return nb


def test_each_post_gets_its_part_and_its_neighbours_in_reading_order(tmp_path):
    _, paths = course(tmp_path, [FOLDERS[0], FOLDERS[2], FOLDERS[1]])  # reading order is not date order
    first, second, third = (read_notebook(path) for path in paths)
    assert (front_matter(first)["order"], front_matter(first)["subtitle"]) == (1, "Part 1 of 3")
    assert (front_matter(third)["order"], front_matter(second)["order"]) == (2, 3)
    links = third.cells[-1].source
    assert "part 2 of 3" in links
    assert "Previous: [Post number 1](../2026-01-01-first/index.ipynb)" in links
    assert "Next: [Post number 2](../2026-01-02-second/index.ipynb)" in links
    assert "Previous: [Post number 3]" in second.cells[-1].source and "the last" in second.cells[-1].source
    assert "Previous" not in first.cells[-1].source
    assert all("[glossary](../../glossary.qmd)" in nb.cells[-1].source for nb in (first, second, third))
    for path in paths:
        assert links_drift(read_notebook(path), path.parent, repository_url()) is None
        assert check_notebook(path) == []


def test_a_change_of_order_or_a_hand_edit_is_out_of_date_until_make_inline(tmp_path):
    posts, paths = course(tmp_path, FOLDERS)
    (posts / SERIES_FILE).write_text("".join(f"- {folder}\n" for folder in reversed(FOLDERS)), encoding="utf-8")
    drift = links_drift(read_notebook(paths[0]), paths[0].parent, repository_url())
    assert "series out of date: order, subtitle, the links" in drift
    assert any("run `make inline`" in str(problem) for problem in check_notebook(paths[0]))
    nb = relink(paths[0])
    assert front_matter(nb)["order"] == 3 and links_drift(nb, paths[0].parent, repository_url()) is None
    nb.cells[-1].source = nb.cells[-1].source.replace("Previous", "Earlier")
    assert "the links to the previous and next post" in links_drift(nb, paths[0].parent, repository_url())
    nb.cells.append(md("A paragraph after the links."))
    assert "the last cell" in links_drift(nb, paths[0].parent, repository_url())


def test_a_post_left_out_of_the_series_stands_alone(tmp_path):
    posts, paths = course(tmp_path, FOLDERS[:2])
    nb = read_notebook(paths[2])
    assert "order" not in front_matter(nb) and nb.cells[-1].source == "Some prose."
    assert "Next: [Post number 2]" in read_notebook(paths[0]).cells[-1].source
    assert "the last" in read_notebook(paths[1]).cells[-1].source


@pytest.mark.parametrize("text, said", [
    ("- 2026-01-09-missing\n", "lists ['2026-01-09-missing'], which hold no index.ipynb"),
    ("first: [\n", "is not valid YAML"),
    ("- 2026-01-01-first\n- 2026-01-01-first\n", "each once"),
])
def test_a_broken_series_file_is_named(tmp_path, text, said):
    posts, _ = course(tmp_path, FOLDERS)
    (posts / SERIES_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(NotebookError, match=None) as error:
        series_order(posts)
    assert said in str(error.value)


def test_the_course_lists_every_published_post_once_and_its_glossary_is_rendered():
    assert "glossary.qmd" in (REPO_ROOT / "_quarto.yml").read_text(encoding="utf-8")
    assert (REPO_ROOT / "glossary.qmd").is_file()
    order = series_order(POSTS_DIR)
    assert sorted(order) == sorted(path.parent.name for path in POSTS_DIR.glob("*/index.ipynb"))
    for part, folder in enumerate(order, start=1):
        nb = read_notebook(POSTS_DIR / folder / "index.ipynb")
        assert front_matter(nb)["subtitle"] == f"Part {part} of {len(order)}"
        assert "**After this part**" in nb.cells[0].source, f"{folder} says what the reader can do after it"


def test_every_part_asks_the_reader_at_least_four_questions_answered_on_the_page():
    """LLM-by-Hand style: questions the page checks (docs/questions.md), of more than one kind, each explained."""
    question = re.compile(r'^:{4,} *\{\.question kind="(choice|number|shape)"[^}]*\}\n(.+?)\n:{4,} *$',
                          re.DOTALL | re.MULTILINE)
    for folder in series_order(POSTS_DIR):
        nb = read_notebook(POSTS_DIR / folder / "index.ipynb")
        asked = [found for cell in nb.cells if cell.cell_type == "markdown"
                 for found in question.findall(cell.source)]
        assert len(asked) >= 4, f"{folder} asks {len(asked)} question(s)"
        assert len({kind for kind, _ in asked}) >= 2, f"{folder}: every question of one kind"
        assert all("::: explanation" in body for _, body in asked), f"{folder}: a question without its explanation"


def test_every_part_keeps_its_plumbing_in_one_folded_appendix_at_the_end():
    """The table of what a re-run gives, data checks, digests, budgets and build information sit in folded
    callouts under 'How this page was made', after the lesson and its conclusion; no post shows two folded code
    cells without prose between them."""
    for folder in series_order(POSTS_DIR):
        cells = read_notebook(POSTS_DIR / folder / "index.ipynb").cells
        heading = [i for i, c in enumerate(cells) if c.cell_type == "markdown"
                   and c.source.startswith("## How this page was made\n")]
        assert len(heading) == 1, f"{folder}: one appendix"
        start = heading[0]
        sections = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## ")]
        assert sections[-1] == start and cells[sections[-2]].source.startswith("## Conclusion\n"), \
            f"{folder}: the conclusion, then the appendix, close the page"
        appendix = cells[start:]
        opened, code_outside = 0, []
        for cell in appendix:  # every code cell of the appendix inside a folded callout
            if cell.cell_type == "code":
                if not opened:
                    code_outside.append(cell.source[:40])
                continue
            for line in cell.source.splitlines():
                if line.startswith(":::") and "collapse=\"true\"" in line:
                    opened += 1
                elif len(line.strip()) >= 3 and set(line.strip()) == {":"}:  # a fence closes, whatever its colons
                    opened -= 1
        assert opened == 0 and code_outside == [], f"{folder}: code outside the appendix's folds: {code_outside}"
        printed = "".join(o.get("text", "") for c in appendix if c.cell_type == "code" for o in c.get("outputs", []))
        assert "build information" in printed, f"{folder}: the build is printed in the appendix"
        if not folder.endswith("numbers-aloud"):  # the one part that downloads nothing
            assert "sha256" in printed, f"{folder}: the data file's digest is printed in the appendix"
        assert "show_spread(" in "".join(c.source for c in appendix if c.cell_type == "code"), \
            f"{folder}: the table of what a re-run gives is in the appendix"
        lesson = "".join(o.get("text", "") for c in cells[:start] if c.cell_type == "code"
                         for o in c.get("outputs", []))
        assert "budget" not in lesson and "build information" not in lesson, f"{folder}: plumbing in the lesson"
        for before, cell in zip(cells, cells[1:]):
            assert not (before.cell_type == cell.cell_type == "code"), \
                f"{folder}: two code cells in a row ({before.source[:40]!r} …)"


def test_the_parts_are_dated_in_their_reading_order():
    """One order everywhere: part n+1 is dated after part n, so the home page, the feed and the part numbers agree."""
    order = series_order(POSTS_DIR)
    dates = [str(front_matter(read_notebook(POSTS_DIR / folder / "index.ipynb"))["date"]) for folder in order]
    assert dates == sorted(dates) and len(set(dates)) == len(dates), list(zip(order, dates))
