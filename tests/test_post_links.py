"""Each post's Colab and GitHub links come from the one repository setting in _quarto.yml."""
import pytest

from tests.factory import publishable
from tools.notebooks import NotebookError, front_matter
from tools.post_links import expected_links, links_drift, repository_url, write_links


def test_links_point_at_this_posts_notebook():
    links = expected_links("2026-06-18-reader", "https://github.com/owner/blog")
    colab, github = (link["href"] for link in links["code-links"])
    assert colab == "https://colab.research.google.com/github/owner/blog/blob/main/posts/2026-06-18-reader/index.ipynb"
    assert github == "https://github.com/owner/blog/blob/main/posts/2026-06-18-reader/index.ipynb"
    assert links["other-links"][0]["href"] == "index.ipynb"


def test_writing_links_keeps_the_rest_of_the_front_matter_and_the_prose():
    nb = publishable()
    nb.cells[0].source += "\n\nAn opening paragraph."
    matter = front_matter(nb)
    matter["resources"] = ["widget.js"]
    write_links(nb, "2026-01-01-example", "https://github.com/owner/blog")
    written = front_matter(nb)
    assert written["title"] == "An example post" and written["categories"] == ["testing"]
    assert written["resources"] == ["index.ipynb"]  # the edit above was on a parsed copy, not the cell
    assert nb.cells[0].source.endswith("An opening paragraph.")
    assert links_drift(nb, "2026-01-01-example", "https://github.com/owner/blog") is None
    assert "code-links" in links_drift(nb, "2026-01-02-renamed", "https://github.com/owner/blog")


def test_repository_url_is_read_from_quarto_config(tmp_path):
    assert repository_url().startswith("https://github.com/")
    (tmp_path / "_quarto.yml").write_text("website:\n  repo-url: https://gitlab.com/x/y\n")
    with pytest.raises(NotebookError, match="must be https://github.com/<owner>/<repo>"):
        repository_url(tmp_path)


def test_check_mode_reports_and_fix_mode_writes_links(tmp_path, monkeypatch, capsys):
    from tests.factory import save_post
    from tools import post_links
    from tools.notebooks import read_notebook
    path = save_post(publishable(), tmp_path / "posts", links=False)
    monkeypatch.setattr("tools.notebooks.find_posts", lambda substring=None: [path])
    before = path.read_bytes()
    assert post_links.main(["--check"]) == 1
    assert "cell 1 (front matter): links out of date" in capsys.readouterr().out and path.read_bytes() == before
    assert post_links.main([]) == 0
    assert links_drift(read_notebook(path), path.parent.name, repository_url()) is None
    assert post_links.main(["--check"]) == 0
