"""The Quarto project says what the site promises, and every file it names exists.

Quarto cannot run here, so these checks read the configuration the way a reviewer would:
the settings the blog relies on (listing, feed, themes, bibliography, links) are present,
and no path in the configuration points at nothing."""
import re

import yaml

from tools.core.notebooks import REPO_ROOT, find_posts, front_matter, read_notebook

CONFIG = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text())


def test_blog_home_lists_the_course_in_reading_order_with_categories_and_a_feed():
    """The posts are one course (posts/_series.yml): the home page lists them by part, not by date."""
    home = yaml.safe_load((REPO_ROOT / "index.qmd").read_text().split("---")[1])
    listing = home["listing"]
    assert listing["contents"] == "posts" and listing["sort"] == "order"
    assert listing["categories"] is True and listing["feed"] is True
    assert {"image", "date", "title", "description", "categories", "reading-time"} <= set(listing["fields"])
    assert CONFIG["website"]["site-url"].startswith("https://") and CONFIG["website"]["description"], \
        "Quarto writes the RSS feed only with site-url and description"


def test_site_has_themes_toc_code_copy_and_bibliography():
    html = CONFIG["format"]["html"]
    assert set(html["theme"]) == {"light", "dark"} and html["toc"] is True and html["code-copy"] is True
    assert html["theme"]["light"][0] == "cosmo" and html["theme"]["dark"][0] == "darkly"
    bibliography = (REPO_ROOT / CONFIG["bibliography"]).read_text()
    assert re.search(r"@\w+\{vaswani2017attention,", bibliography) and "Attention Is All You Need" in bibliography


def test_posts_render_stored_outputs_with_their_code_shown_and_without_warnings():
    shared = yaml.safe_load((REPO_ROOT / "posts" / "_metadata.yml").read_text())
    assert shared["execute"] == {"enabled": False, "warning": False}
    assert shared["code-fold"] is False and "code-summary" not in shared, \
        "the lesson's code is shown; a cell that folds names what it hides"


def test_every_path_the_configuration_names_exists():
    built_by_make = {"reader/vendor/ort/*"}  # make reader fetches it before rendering
    for path in CONFIG["project"]["resources"]:
        assert path in built_by_make or (REPO_ROOT / path).exists(), f"_quarto.yml resources: {path} is missing"
    html = CONFIG["format"]["html"]
    themes = [name for theme in html["theme"].values() for name in theme if name.endswith(".scss")]
    includes = html["include-after-body"]
    includes = includes if isinstance(includes, list) else [includes]
    for page in ("index.qmd", "about.qmd", html["css"], *includes, CONFIG["website"]["favicon"], *themes):
        assert (REPO_ROOT / page).exists(), f"_quarto.yml names {page}, which is missing"
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
        for target in re.findall(r"\]\(\.\./(?!\.\./)([^/)]+)/", prose):  # ../../ leaves posts/
            assert target in folders, f"{path.parent.name} links to missing post {target}"
        assert front_matter(read_notebook(path))["date"]


def scss_defaults(path):
    """The `$name: value;` settings in a Quarto theme file's defaults section."""
    text = (REPO_ROOT / path).read_text().split("/*-- scss:rules --*/")[0]
    return dict(re.findall(r"^\$([\w-]+):\s*([^;]+);", text, re.M))


def test_no_page_asks_another_host_for_fonts_or_math():
    """cosmo and darkly @import Google Fonts unless $web-font-path is false; MathJax (and its polyfill)
    come from a CDN, MathML needs no script."""
    for theme in CONFIG["format"]["html"]["theme"].values():
        per_theme = [name for name in theme if name.endswith(".scss") and "$web-font-path" in (REPO_ROOT / name).read_text()]
        assert len(per_theme) == 1 and scss_defaults(per_theme[0])["web-font-path"] == "false", theme
        assert "googleapis" not in " ".join((REPO_ROOT / name).read_text() for name in theme if name.endswith(".scss"))
    assert CONFIG["format"]["html"]["html-math-method"] == "mathml"
    assert "@import" not in (REPO_ROOT / CONFIG["format"]["html"]["css"]).read_text()


def test_shared_posts_get_cards_and_the_site_a_favicon():
    website = CONFIG["website"]
    assert website["open-graph"] is True and website["twitter-card"] is True
    assert (REPO_ROOT / website["favicon"]).read_bytes().startswith(b"\x89PNG")
    assert website["favicon"] in CONFIG["project"]["resources"]
    for path in find_posts():
        matter = front_matter(read_notebook(path))
        assert matter.get("image") == "thumbnail.png" and matter.get("image-alt"), f"{path.parent.name}: run make inline"
        assert "thumbnail.png" in matter["resources"]


def contrast(foreground, background):
    def luminance(colour):
        channels = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_light_theme_links_and_muted_text_meet_wcag_aa_on_white():
    light = scss_defaults(next(name for name in CONFIG["format"]["html"]["theme"]["light"] if "light" in name))
    for variable in ("link-color", "text-muted"):
        assert contrast(light[variable], "#ffffff") >= 4.5, f"${variable} {light[variable]}"
        assert contrast(light[variable], "#f8f9fa") >= 4.5, f"${variable} {light[variable]} on cosmo's light grey"
    assert light["link-decoration"] == "underline"


def test_search_is_off_and_the_listing_headings_step_down_one_level():
    assert CONFIG["website"]["search"] is False, "Quarto's search button has no accessible name"
    body = (REPO_ROOT / "index.qmd").read_text().split("---", 2)[2]
    assert re.search(r"^## Posts \{\.visually-hidden\}$", body, re.M), "an h2 between the h1 and the h3 post titles"
