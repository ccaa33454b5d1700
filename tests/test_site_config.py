"""The Quarto project says what the site promises, and every file it names exists.

Quarto cannot run here, so these checks read the configuration the way a reviewer would:
the settings the blog relies on (listing, feed, themes, bibliography, links) are present,
and no path in the configuration points at nothing."""
import re

import yaml

from tools.notebooks import REPO_ROOT, find_posts, front_matter, read_notebook

CONFIG = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text())


def test_blog_home_lists_posts_newest_first_with_categories_and_a_feed():
    home = yaml.safe_load((REPO_ROOT / "index.qmd").read_text().split("---")[1])
    listing = home["listing"]
    assert listing["contents"] == "posts" and listing["sort"] == "date desc"
    assert listing["categories"] is True and listing["feed"] is True
    assert {"date", "title", "description", "categories", "reading-time"} <= set(listing["fields"])
    assert CONFIG["website"]["site-url"].startswith("https://") and CONFIG["website"]["description"], \
        "Quarto writes the RSS feed only with site-url and description"


def test_site_has_themes_toc_code_copy_and_bibliography():
    html = CONFIG["format"]["html"]
    assert set(html["theme"]) == {"light", "dark"} and html["toc"] is True and html["code-copy"] is True
    bibliography = (REPO_ROOT / CONFIG["bibliography"]).read_text()
    assert re.search(r"@\w+\{vaswani2017attention,", bibliography) and "Attention Is All You Need" in bibliography


def test_posts_render_stored_outputs_folded_and_without_warnings():
    shared = yaml.safe_load((REPO_ROOT / "posts" / "_metadata.yml").read_text())
    assert shared["execute"] == {"enabled": False, "warning": False}
    assert shared["code-fold"] is True and shared["code-summary"]


def test_every_path_the_configuration_names_exists():
    built_by_make = {"reader/vendor/ort/*"}  # make reader fetches it before rendering
    for path in CONFIG["project"]["resources"]:
        assert path in built_by_make or (REPO_ROOT / path).exists(), f"_quarto.yml resources: {path} is missing"
    for page in ("index.qmd", "about.qmd", CONFIG["format"]["html"]["css"]):
        assert (REPO_ROOT / page).exists()
    for item in CONFIG["website"]["navbar"]["left"]:
        assert (REPO_ROOT / item["href"]).exists(), f"navbar link {item['href']} points at nothing"


def test_every_citation_in_a_post_is_in_the_bibliography():
    keys = set(re.findall(r"@\w+\{([\w:-]+),", (REPO_ROOT / "references.bib").read_text()))
    for path in find_posts():
        prose = " ".join(cell.source for cell in read_notebook(path).cells if cell.cell_type == "markdown")
        cited = set(re.findall(r"\[@([\w:-]+)\]", prose))
        assert cited <= keys, f"{path.parent.name} cites {sorted(cited - keys)}, which references.bib lacks"


def test_posts_link_back_to_posts_that_exist():
    folders = {path.parent.name for path in find_posts()}
    for path in find_posts():
        prose = " ".join(cell.source for cell in read_notebook(path).cells if cell.cell_type == "markdown")
        for target in re.findall(r"\]\(\.\./([^/)]+)/", prose):
            assert target in folders, f"{path.parent.name} links to missing post {target}"
        assert front_matter(read_notebook(path))["date"]
