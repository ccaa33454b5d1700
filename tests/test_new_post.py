"""`make new` scaffolds a post that runs, and that `make check` refuses only for what the author must add."""
import errno
import re
from datetime import date

import nbformat
import pytest

from tests.factory import repository_copy
from tools.author import new_post as new_post_tool
from tools.core import notebooks
from tools.check.check_posts import check_notebook
from tools.author.inline_helpers import setup_drift
from tools.author.new_post import TITLE_VARIABLE, PostExists, create_post, main, slugify
from tools.core.notebooks import (
    PARAMETERS_TAG, SETUP_TAG, NotebookError, blog_metadata, front_matter, has_tag, read_notebook,
)


@pytest.fixture
def new_post(tmp_path):
    return create_post("Reading Words, Aloud!", date(2026, 12, 1), posts_dir=tmp_path / "posts")


def test_scaffold_has_the_expected_cells(new_post):
    assert new_post.parent.name == "2026-12-01-reading-words-aloud"
    nb = read_notebook(new_post)
    matter = front_matter(nb)
    assert matter["title"] == "Reading Words, Aloud!" and str(matter["date"]) == "2026-12-01"
    assert "Open in Colab" in str(matter["code-links"]) and matter["resources"] == ["index.ipynb"]
    assert has_tag(nb.cells[1], SETUP_TAG) and setup_drift(nb) is None
    assert sum(has_tag(cell, PARAMETERS_TAG) for cell in nb.cells) == 1
    assert blog_metadata(nb)["smoke_parameters"] == {"epochs": 1}
    assert any("hf_hub_download" in cell.source and "revision=" in cell.source for cell in nb.cells)
    assert any(cell.cell_type == "markdown" and cell.source.startswith("## Conclusion") for cell in nb.cells)
    assert "build information" in nb.cells[-1].source


def test_scaffold_fails_check_only_for_what_the_author_must_add(new_post):
    problems = [str(problem).split(": ", 1)[1] for problem in check_notebook(new_post)]
    expected = {"notebook: no provenance"} | {f"cell {n} (code): has no outputs" for n in (2, 4, 5, 7, 9, 11)} | {
        f"cell {n} (markdown): placeholder TODO left in the text" for n in (1, 8, 10)} | {
        "cell 9 (code): placeholder TODO left in fig-cap, fig-alt",
        "notebook metadata: placeholder TODO left in blog.thumbnail's alt, the thumbnail's alt text"}
    assert {re.sub(r"[:;] (its|it never|run|write).*", "", problem) for problem in problems} == expected, problems


@pytest.mark.slow
def test_scaffold_runs_as_a_smoke_run(new_post):
    from tools.run.smoke_run import smoke_run
    executed = smoke_run(new_post, echo=lambda line: None)
    assert any("image/png" in out.get("data", {}) for cell in executed.cells for out in cell.get("outputs", []))


def test_existing_post_is_not_overwritten(new_post):
    with pytest.raises(FileExistsError, match="already exists"):
        create_post("Reading words aloud", date(2026, 12, 1), posts_dir=new_post.parents[1])


def test_title_without_letters_is_refused(capsys):
    assert slugify("Ça marche — 2 fois") == "ca-marche-2-fois"
    assert main(["!!!"]) == 1
    assert "no letters or digits" in capsys.readouterr().err


# ---- any title, any failure: the post is made whole, or nothing is left ------------------------------------

def everything_under(folder):
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")) if folder.exists() else None


@pytest.mark.parametrize("title", [
    "Saving $HOME digits", 'A \\ backslash, "quotes", a #hash: and a colon', "yes", "2026", "Ça marche — 2 fois",
    "[not a list]", "{not: a mapping}", "- not an item", "*not an alias", "a" * 300, "word " * 60,
])
def test_any_title_is_kept_exactly(tmp_path, title):
    path = create_post(title, date(2026, 12, 1), posts_dir=tmp_path / "posts")
    assert front_matter(read_notebook(path))["title"] == title.strip()
    assert len(path.parent.name) <= len("2026-12-01-") + 60, "the folder name keeps the title's first words"
    assert everything_under(tmp_path / "posts") == [path.parent.name, f"{path.parent.name}/index.ipynb"]


@pytest.mark.parametrize("title, said", [
    ("", "give the title: make new TITLE="),
    ("   ", "give the title: make new TITLE="),
    ("Two\nlines", "the title holds a line break or control character ('\\n' at character 4); give it on one line"),
    ("A\x1b[31m colour", "control character ('\\x1b' at character 2)"),
    ("bad \udcff byte", "the title is not UTF-8 text (character 5)"),
    ("数字", "no letters or digits to make a folder name from"),
])
def test_unusable_title_is_refused_in_one_line(tmp_path, title, said):
    with pytest.raises(NotebookError) as refused:
        create_post(title, date(2026, 12, 1), posts_dir=tmp_path / "posts")
    assert said in str(refused.value) and "\n" not in str(refused.value), str(refused.value)
    assert not (tmp_path / "posts").exists()


def test_make_new_takes_the_title_from_the_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(new_post_tool, "POSTS_DIR", tmp_path / "posts")
    monkeypatch.setenv(TITLE_VARIABLE, "Saving $HOME digits")
    assert main([]) == 0
    created = list((tmp_path / "posts").glob("*/index.ipynb"))
    assert len(created) == 1 and front_matter(read_notebook(created[0]))["title"] == "Saving $HOME digits"
    monkeypatch.setenv(TITLE_VARIABLE, "")
    assert main([]) == 1 and "give the title" in capsys.readouterr().err


def fail_at(monkeypatch, where, error):
    """Make one step of writing the post fail with `error` (a full disk, a read-only folder, ...)."""
    if where == "the temporary folder":
        monkeypatch.setattr(new_post_tool.tempfile, "mkdtemp", lambda **kwargs: (_ for _ in ()).throw(error))
    elif where == "the notebook's temporary file":
        monkeypatch.setattr(notebooks.tempfile, "mkstemp", lambda **kwargs: (_ for _ in ()).throw(error))
    elif where == "writing the notebook":
        monkeypatch.setattr(notebooks.os, "fsync", lambda fd: (_ for _ in ()).throw(error))
    elif where == "renaming the notebook":
        monkeypatch.setattr(notebooks.os, "replace", lambda *args: (_ for _ in ()).throw(error))
    elif where == "renaming the folder":
        monkeypatch.setattr(new_post_tool.os, "rename", lambda *args: (_ for _ in ()).throw(error))


FAILURES = {
    "full disk": (OSError(errno.ENOSPC, "No space left on device"), "the disk is full: free some space"),
    "read-only folder": (PermissionError(errno.EACCES, "Permission denied"), "is not writable: make it writable"),
    "read-only file system": (OSError(errno.EROFS, "Read-only file system"), "on a read-only file system"),
    "anything else": (OSError(errno.EIO, "Input/output error"), "Input/output error"),
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("where", ["the temporary folder", "the notebook's temporary file", "writing the notebook",
                                   "renaming the notebook", "renaming the folder"])
def test_failed_write_leaves_nothing_and_a_retry_works(tmp_path, monkeypatch, where, failure, capsys):
    posts = tmp_path / "posts"
    create_post("An older post", date(2026, 11, 1), posts_dir=posts)
    before = everything_under(posts)
    error, said = FAILURES[failure]
    with monkeypatch.context() as patched:
        fail_at(patched, where, error)
        patched.setattr(new_post_tool, "POSTS_DIR", posts)
        assert main(["Reading words aloud"]) == 1
    message = capsys.readouterr().err
    assert said in message and "nothing was created" in message and message.count("\n") == 1, message
    assert "Traceback" not in message and everything_under(posts) == before, "a failed make new left something"
    path = create_post("Reading words aloud", date(2026, 11, 2), posts_dir=posts)  # no "File exists"
    assert path.exists() and read_notebook(path)


def test_failed_write_removes_a_posts_folder_it_made(tmp_path, monkeypatch):
    fail_at(monkeypatch, "writing the notebook", FAILURES["full disk"][0])
    with pytest.raises(NotebookError, match="disk is full"):
        create_post("Reading words aloud", date(2026, 12, 1), posts_dir=tmp_path / "new" / "posts")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_named_with_what_it_holds(tmp_path):
    folder = tmp_path / "posts" / "2026-12-01-reading-words-aloud"
    folder.mkdir(parents=True)
    (folder / "draft.md").write_text("notes")
    (folder / "figure.png").write_bytes(b"")
    with pytest.raises(PostExists) as refused:
        create_post("Reading words aloud", date(2026, 12, 1), posts_dir=tmp_path / "posts")
    assert "already exists and holds draft.md, figure.png; pick another title" in str(refused.value)
    assert sorted(path.name for path in folder.iterdir()) == ["draft.md", "figure.png"]


def test_an_empty_folder_left_by_an_earlier_attempt_is_used(tmp_path):
    (tmp_path / "posts" / "2026-12-01-reading-words-aloud").mkdir(parents=True)
    path = create_post("Reading words aloud", date(2026, 12, 1), posts_dir=tmp_path / "posts")
    assert read_notebook(path) and everything_under(tmp_path / "posts") == [path.parent.name, str(path.relative_to(
        tmp_path / "posts"))]


@pytest.fixture
def repo_root(tmp_path):
    return repository_copy(tmp_path)


@pytest.mark.parametrize("break_it, said", [
    (lambda root: (root / "_quarto.yml").unlink(), "_quarto.yml is missing"),
    (lambda root: (root / "_quarto.yml").write_text("website:\n  repo-url: [\n"), "_quarto.yml is not valid YAML (line"),
    (lambda root: (root / "_quarto.yml").write_text("website:\n  repo-url: https://example.com/x\n"),
     "website.repo-url must be https://github.com/<owner>/<repo>"),
    (lambda root: (root / "_style.py").write_text("def broken(:\n"), "helper _style.py does not parse as Python (line 1"),
    (lambda root: (root / "_arch.py").write_bytes(b"# caf\xe9\n"), "helper _arch.py is not UTF-8 text"),
    (lambda root: (root / "_arch.py").unlink(), "helper _arch.py is missing"),
])
def test_a_broken_site_config_or_helper_is_named_and_nothing_made(tmp_path, repo_root, break_it, said):
    break_it(repo_root)
    with pytest.raises(NotebookError) as refused:
        create_post("Reading words aloud", date(2026, 12, 1), posts_dir=tmp_path / "posts", root=repo_root)
    assert said in str(refused.value) and "\n" not in str(refused.value), str(refused.value)
    assert not (tmp_path / "posts").exists()


def test_the_scaffolds_thumbnail_reads_in_the_listing(new_post):
    """The first figure as `figure(6, 3.2)` draws it (660 x 352 px at 110 dpi) is illegible whole in the
    home page's listing; the scaffold's blog.thumbnail shows a part that reads, and check says so if dropped."""
    import base64
    from tests.test_post_links import png_of
    from tools.author.post_links import png_size, thumbnail_figure, thumbnail_problem
    nb = read_notebook(new_post)
    assert blog_metadata(nb)["thumbnail"]["figure"] == "fig-first" and thumbnail_figure(nb) is None
    figure_cell = next(cell for cell in nb.cells if "label: fig-first" in cell.source)
    figure_cell.outputs = [nbformat.v4.new_output("display_data", data={
        "image/png": base64.b64encode(png_of(660, 352)).decode(), "text/plain": "<Figure>"})]
    assert thumbnail_problem(nb) is None and png_size(thumbnail_figure(nb)[1]) == (363, 176)
    del blog_metadata(nb)["thumbnail"]
    assert thumbnail_problem(nb).startswith("all of fig-first, the first figure, 660\u00d7352 px: the home page's")
