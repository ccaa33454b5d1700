"""Each post's Colab and GitHub links come from the one repository setting in _quarto.yml, and its
shared image is a figure the post made."""
import pytest

from tests.factory import publishable
from tools.core.notebooks import NotebookError, front_matter
from tools.author.post_links import expected_links, links_drift, repository_url, write_links


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
    from tools.author import post_links
    from tools.core.notebooks import read_notebook
    path = save_post(publishable(), tmp_path / "posts", links=False)
    monkeypatch.setattr("tools.core.notebooks.find_posts", lambda substring=None: [path])
    before = path.read_bytes()
    assert post_links.main(["--check"]) == 1
    assert "cell 1 (front matter): links out of date" in capsys.readouterr().out and path.read_bytes() == before
    assert post_links.main([]) == 0
    assert links_drift(read_notebook(path), path.parent.name, repository_url()) is None
    assert post_links.main(["--check"]) == 0


def figure_cell(label, png_bytes, alt):
    from tests.factory import ran
    import base64
    import nbformat
    source = f'#| label: {label}\n#| fig-cap: "A caption."\n#| fig-alt: "{alt}"\nplot()'
    picture = nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(png_bytes).decode(),
                                                           "text/plain": "<Figure>"})
    return ran(source, picture)


def test_thumbnail_is_the_first_figure_copied_byte_for_byte(tmp_path):
    from tools.author.post_links import THUMBNAIL, write_thumbnail
    nb = publishable(figure_cell("fig-loss", b"first png", "A falling curve."),
                     figure_cell("fig-attention", b"second png", "Three heat maps."))
    write_links(nb, tmp_path.name, "https://github.com/owner/blog")
    matter = front_matter(nb)
    assert matter["image"] == THUMBNAIL and matter["image-alt"] == "A falling curve."
    assert matter["resources"] == ["index.ipynb", THUMBNAIL], "Quarto copies only listed resources"
    assert "thumbnail.png (not the stored image of fig-loss)" in links_drift(nb, tmp_path, "https://github.com/owner/blog")
    assert write_thumbnail(nb, tmp_path) == "fig-loss"
    assert (tmp_path / THUMBNAIL).read_bytes() == b"first png"
    assert links_drift(nb, tmp_path, "https://github.com/owner/blog") is None
    (tmp_path / THUMBNAIL).write_bytes(b"an older figure")
    assert "thumbnail.png" in links_drift(nb, tmp_path, "https://github.com/owner/blog")


def test_metadata_chooses_the_thumbnail_and_a_wrong_label_is_named(tmp_path):
    from tools.core.notebooks import blog_metadata
    from tools.author.post_links import thumbnail_figure
    nb = publishable(figure_cell("fig-loss", b"first", "A curve."), figure_cell("fig-attention", b"second", "Maps."))
    blog_metadata(nb)["thumbnail"] = "fig-attention"
    assert thumbnail_figure(nb) == ("fig-attention", b"second", "Maps.")
    write_links(nb, "2026-01-01-example", "https://github.com/owner/blog")
    assert front_matter(nb)["image-alt"] == "Maps."
    blog_metadata(nb)["thumbnail"] = "fig-missing"
    with pytest.raises(NotebookError, match="blog.thumbnail names 'fig-missing'.*fig-loss"):
        thumbnail_figure(nb)


def test_a_post_without_figures_gets_no_image_and_a_changed_alt_is_drift(tmp_path):
    nb = publishable()
    write_links(nb, "2026-01-01-example", "https://github.com/owner/blog")
    assert "image" not in front_matter(nb) and front_matter(nb)["resources"] == ["index.ipynb"]
    drawn = publishable(figure_cell("fig-x", b"x", "Old alt."))
    write_links(drawn, "2026-01-01-example", "https://github.com/owner/blog")
    drawn.cells[1].source = drawn.cells[1].source.replace("Old alt.", "New alt.")
    assert "image-alt" in links_drift(drawn, "2026-01-01-example", "https://github.com/owner/blog")


def test_inline_writes_the_thumbnail_and_check_mode_sees_it_missing(tmp_path, monkeypatch, capsys):
    from tests.factory import save_post
    from tools.author import post_links
    from tools.core.notebooks import read_notebook
    path = save_post(publishable(figure_cell("fig-x", b"png bytes", "An alt.")), tmp_path / "posts")
    (path.parent / "thumbnail.png").unlink()  # save_post writes it, as make inline does
    monkeypatch.setattr("tools.core.notebooks.find_posts", lambda substring=None: [path])
    assert post_links.main(["--check"]) == 1
    assert "thumbnail.png (not the stored image of fig-x)" in capsys.readouterr().out
    assert post_links.main([]) == 0
    assert (path.parent / "thumbnail.png").read_bytes() == b"png bytes"
    assert post_links.main(["--check"]) == 0 and links_drift(read_notebook(path), path.parent, repository_url()) is None


def png_of(width, height):
    """A real PNG: the left half blue, the right half orange, so a crop can be told apart."""
    import io
    from PIL import Image
    picture = Image.new("RGBA", (width, height), (42, 120, 214, 255))
    picture.paste((235, 104, 52, 255), (width // 2, 0, width, height))
    out = io.BytesIO()
    picture.save(out, format="PNG")
    return out.getvalue()


def test_a_thumbnail_may_be_a_part_of_a_figure_with_its_own_alt(tmp_path):
    import io
    from PIL import Image
    from tools.core.notebooks import blog_metadata
    from tools.author.post_links import THUMBNAIL, write_thumbnail
    nb = publishable(figure_cell("fig-grid", png_of(200, 100), "The whole grid."))
    blog_metadata(nb)["thumbnail"] = {"figure": "fig-grid", "crop": [0.5, 0, 1, 0.5], "alt": "Its orange corner."}
    write_links(nb, tmp_path.name, "https://github.com/owner/blog")
    assert front_matter(nb)["image-alt"] == "Its orange corner."
    assert write_thumbnail(nb, tmp_path) == "fig-grid"
    written = (tmp_path / THUMBNAIL).read_bytes()
    part = Image.open(io.BytesIO(written))
    assert part.size == (100, 50) and part.getpixel((10, 10)) == (235, 104, 52, 255)
    assert links_drift(nb, tmp_path, "https://github.com/owner/blog") is None
    assert write_thumbnail(nb, tmp_path) and (tmp_path / THUMBNAIL).read_bytes() == written, "the same bytes again"
    blog_metadata(nb)["thumbnail"]["crop"] = [0, 0, 0.5, 0.5]  # another part: the file is now out of step
    assert "thumbnail.png (not the stored image of fig-grid)" in links_drift(nb, tmp_path, "https://github.com/owner/blog")


@pytest.mark.parametrize("choice, message", [
    ({"figure": "fig-grid", "crop": [0.5, 0, 0.4, 1], "alt": "x"}, "left < right"),
    ({"figure": "fig-grid", "crop": [0, 0, 1.5, 1], "alt": "x"}, "fractions from 0 to 1"),
    ({"figure": "fig-grid", "crop": "top half", "alt": "x"}, "crop must be"),
    ({"figure": "fig-grid", "crop": [0, 0, 1, 0.5]}, 'needs its own "alt"'),
    ({"figure": "fig-grid", "zoom": 2}, "must be a figure label or"),
    (["fig-grid"], "must be a figure label or"),
], ids=["reversed", "outside", "not-a-box", "no-alt", "unknown-key", "a-list"])
def test_a_malformed_thumbnail_choice_is_named(choice, message):
    from tools.core.notebooks import blog_metadata
    from tools.author.post_links import thumbnail_figure
    nb = publishable(figure_cell("fig-grid", png_of(20, 10), "The grid."))
    blog_metadata(nb)["thumbnail"] = choice
    with pytest.raises(NotebookError, match=message):
        thumbnail_figure(nb)


def test_an_apostrophe_in_the_cards_alt_is_typographic():
    """Quarto's listing escapes a straight apostrophe twice ("set&#039;s" on the page)."""
    nb = publishable(figure_cell("fig-x", b"x", "The synthetic set's digits."))
    write_links(nb, "2026-01-01-example", "https://github.com/owner/blog")
    assert front_matter(nb)["image-alt"] == "The synthetic set\u2019s digits."


def test_markup_characters_in_the_cards_alt_are_not_escaped_twice():
    nb = publishable(figure_cell("fig-x", b"x", "Tokens 7, 8, <end> & <pad>; 2 < 3."))
    write_links(nb, "2026-01-01-example", "https://github.com/owner/blog")
    assert front_matter(nb)["image-alt"] == "Tokens 7, 8, end and pad; 2 less than 3."


# ---- the thumbnail reads in the listing: the browser test's rule, from the PNG alone ----------------------

def test_the_legibility_rule_is_the_listings_and_the_browser_tests():
    """LISTING_BOX's height is index.qmd's image-height, FIGURE_DPI _style.py's, and the rule the one
    tests/test_rendered_site.py asserts: shown at scale s, 8 pt text at 110 dpi must be 8 px or more."""
    import yaml
    from tests import test_rendered_site as browser_test
    from tools.author.post_links import FIGURE_DPI, LISTING_BOX, largest_legible_thumbnail, shown_text_px
    from tools.core.notebooks import FRONT_MATTER, REPO_ROOT
    listing = yaml.safe_load(FRONT_MATTER.match((REPO_ROOT / "index.qmd").read_text()).group(1))["listing"]
    assert listing["image-height"] == f"{LISTING_BOX[1]}px"
    assert f'"figure.dpi": {FIGURE_DPI},' in (REPO_ROOT / "_style.py").read_text()
    assert (browser_test.FIGURE_DPI, browser_test.SMALLEST_TEXT_PX) == (FIGURE_DPI, 8)
    most = largest_legible_thumbnail()
    assert most == (381, 183)
    assert shown_text_px(most) >= 8 > shown_text_px((most[0], most[1] + 1)) and 8 > shown_text_px((most[0] + 1, 10))


@pytest.mark.parametrize("size", [(232, 109), (275, 130), (264, 164), (276, 127), (381, 183)])
def test_the_published_thumbnails_sizes_read(size):
    from tools.core.notebooks import blog_metadata
    from tools.author.post_links import thumbnail_problem
    nb = publishable(figure_cell("fig-x", png_of(*size), "A part."))
    assert thumbnail_problem(nb) is None
    blog_metadata(nb)["thumbnail"] = {"figure": "fig-x", "crop": [0, 0, 1, 1], "alt": "All of it."}
    assert thumbnail_problem(nb) is None


def test_a_whole_figure_as_thumbnail_is_refused_with_the_crop_that_fits(tmp_path):
    import json
    import re
    from tools.core.notebooks import blog_metadata
    from tools.author.post_links import THUMBNAIL, png_size, thumbnail_problem, write_thumbnail
    nb = publishable(figure_cell("fig-wide", png_of(660, 352), "The whole figure."))
    problem = thumbnail_problem(nb)
    assert problem.startswith("all of fig-wide, the first figure, 660\u00d7352 px: the home page's listing"), problem
    assert "reads at 4.2 px (under 8)" in problem and "at most 381\u00d7183 px" in problem, problem
    assert problem.endswith("then `make inline`") and "set notebook metadata blog.thumbnail to {" in problem
    setting = json.loads(re.search(r"blog\.thumbnail to (\{.*?\}) \(crop", problem).group(1))
    assert setting["figure"] == "fig-wide" and setting["crop"] == [0, 0, 0.575, 0.517], setting
    blog_metadata(nb)["thumbnail"] = setting  # what the message says, as the author would paste it
    assert thumbnail_problem(nb) is None
    write_thumbnail(nb, tmp_path)
    width, height = png_size((tmp_path / THUMBNAIL).read_bytes())
    assert width <= 381 and height <= 183
    blog_metadata(nb)["thumbnail"] = {"figure": "fig-wide", "crop": [0.2, 0.1, 0.9, 0.9], "alt": "Its middle."}
    tall = thumbnail_problem(nb)  # a crop too large keeps its corner and its alt, and is narrowed
    assert "a part of fig-wide, 462\u00d7282 px: " in tall, tall
    assert '{"figure": "fig-wide", "crop": [0.2, 0.1, 0.775, 0.617], "alt": "Its middle."}' in tall, tall


def test_a_figure_that_has_not_run_yet_gives_no_thumbnail_and_no_error():
    from tests.factory import never_ran
    from tools.core.notebooks import blog_metadata
    from tools.author.post_links import thumbnail_figure, thumbnail_problem
    nb = publishable(never_ran('#| label: fig-first\n#| fig-cap: "A."\n#| fig-alt: "B."\nplot()'))
    blog_metadata(nb)["thumbnail"] = {"figure": "fig-first", "crop": [0, 0, 0.5, 0.5], "alt": "C."}
    assert thumbnail_figure(nb) is None and thumbnail_problem(nb) is None
    write_links(nb, "2026-01-01-example", "https://github.com/owner/blog")
    assert "image" not in front_matter(nb)


def test_the_same_thumbnail_as_another_posts_is_named(tmp_path):
    from tests.factory import save_post
    from tools.core.notebooks import read_notebook
    from tools.author.post_links import duplicate_thumbnail
    first = save_post(publishable(figure_cell("fig-x", png_of(200, 100), "A.")), tmp_path / "posts", "2026-01-01-one")
    second = save_post(publishable(figure_cell("fig-y", png_of(200, 100), "B.")), tmp_path / "posts", "2026-01-02-two")
    said = duplicate_thumbnail(read_notebook(second), second.parent)
    assert said.startswith("the same picture as 2026-01-01-one's thumbnail.png") and "blog.thumbnail" in said
    third = save_post(publishable(figure_cell("fig-z", png_of(200, 90), "C.")), tmp_path / "posts", "2026-01-03-three")
    assert duplicate_thumbnail(read_notebook(third), third.parent) is None
    assert duplicate_thumbnail(read_notebook(first), first.parent).endswith("then `make inline`")
