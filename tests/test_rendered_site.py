"""The rendered site as a reader's browser meets it: checked on the real render in `_site/`.

CI renders the site first (`.ci/run`, with the Quarto that ../shared/quarto/install.sh assembles)
and sets REQUIRE_RENDER=1, so there a missing render fails instead of skipping; elsewhere the checks
on the real render skip when nothing was rendered. Every page is opened in Chromium in the light
and the dark theme, on a desktop and a phone, and checked for:

- every internal link and asset (href, src, fragment, social-card image) resolves;
- every image on a post page has alt text, and each of the notebook's figures is on the page;
- no console error, no failed request, no request to any host but the site's own;
- axe-core (tests/package.json, pinned) finds no serious or critical violation;
- a post page downloads at most POST_PAGE_BUDGET bytes, each response counted gzip-compressed;
- formulas typeset as MathML wherever the source writes TeX;
- figures drawn on a transparent background (they read on the light page and the dark one);
- at phone width: the contents and the notebook links reachable, no printed output that must
  scroll sideways, no page wider than the screen, no figure text under 8 CSS px;
- the embedded live reader sized to its content; thumbnails distinct and shown uncropped;
  no one-entry "On this page"; no citation that repeats its author;
- on every post page with questions (docs/questions.md), each wrong answer shows its hint and the
  right one is accepted (tests/questions_in_browser.py).

The browser-side checks (links, alt text, console errors, failed and foreign requests, axe, weight)
are first proven on a small fixture site written here, which must fail each when one thing is broken.
"""
import base64
import gzip
import hashlib
import io
import os
import re
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from tests.questions_in_browser import answer_problems, questions
from tools.site.browser import CHROMIUM, CHROMIUM_FLAGS, html_pages, served
from tools.core.notebooks import POSTS_DIR, REPO_ROOT, cell_options, find_posts, front_matter, read_notebook
from tools.author.series import series_order

SITE = REPO_ROOT / "_site"
SITE_URL = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text())["website"]["site-url"]
AXE = REPO_ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
# What a post page may download in all (HTML, styles, scripts, figures, fonts), each response counted
# gzip-compressed as the host serves it: figures (PNG, which gzip cannot shrink) are most of it.
POST_PAGE_BUDGET = 1_200_000
THEMES = ("light", "dark")
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
# Quarto's toggle keeps the visitor's choice in localStorage: "alternate" is the dark theme.
THEME_STORAGE = "localStorage.setItem('quarto-color-scheme', '{}');"
# Figure text: _style.py draws at 110 dpi; no text on a page may render under 8 CSS px.
FIGURE_DPI, SMALLEST_TEXT_PX = 110, 8
MATPLOTLIB_SIZES = {"xx-small": 0.579, "x-small": 0.694, "small": 0.833, "medium": 1.0, "large": 1.2,
                    "x-large": 1.44, "xx-large": 1.728}
SERIOUS = ("serious", "critical")
LINK_ATTRIBUTES = {("a", "href"), ("link", "href"), ("img", "src"), ("script", "src"), ("source", "src"),
                   ("iframe", "src")}
SOCIAL_IMAGES = {"og:image", "twitter:image"}


class Page(HTMLParser):
    """What the checks need from one HTML file: its ids, its links and assets, its images."""

    def __init__(self, path):
        super().__init__()
        self.path, self.ids, self.links, self.images = path, set(), [], []
        self.feed(path.read_text(encoding="utf-8", errors="replace"))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.ids.update(value for key, value in attrs.items() if key in ("id", "name") and value)
        self.links += [(tag, attrs[key]) for known, key in LINK_ATTRIBUTES if known == tag and attrs.get(key)]
        if tag == "meta" and (attrs.get("property") or attrs.get("name")) in SOCIAL_IMAGES and attrs.get("content"):
            self.links.append(("meta", attrs["content"]))
        if tag == "img":
            self.images.append((attrs.get("src", ""), attrs.get("alt")))


def target_of(page, url, site, site_url):
    """(file, fragment) an internal link points at, or None for a link to another site."""
    if site_url and url.startswith(site_url):
        url = "/" + url[len(site_url):]
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return None
    if parts.path.startswith("/"):
        file = site / unquote(parts.path.lstrip("/"))
    else:
        file = (page.parent / unquote(parts.path)) if parts.path else page
    if file.is_dir() or parts.path.endswith("/"):
        file = file / "index.html"
    return file, parts.fragment


def broken_links(site, site_url=SITE_URL):
    """['page: <tag> url (why)'] for every internal link or asset that does not resolve."""
    pages = {path: Page(path) for path in html_pages(site)}
    broken = []
    for path, page in pages.items():
        for tag, url in page.links:
            if url in ("#", "") or url.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = target_of(path, url, site, site_url)
            if target is None:
                continue
            file, fragment = target
            where = f"{path.relative_to(site)}: <{tag}> {url}"
            if not file.resolve().is_relative_to(site.resolve()) or not file.is_file():
                broken.append(f"{where} (no such file)")
            elif fragment and file.suffix == ".html":
                ids = (pages.get(file) or Page(file)).ids
                if unquote(fragment) not in ids:
                    broken.append(f"{where} (no element with id {fragment!r})")
    return broken


def images_without_alt(page_path):
    return [src for src, alt in Page(page_path).images if not (alt or "").strip()]


@dataclass
class Visit:
    console_errors: list = field(default_factory=list)
    failed_requests: list = field(default_factory=list)
    foreign_requests: list = field(default_factory=list)
    loaded: set = field(default_factory=set)
    axe: list = field(default_factory=list)

    def weight(self):
        """Bytes downloaded, each file gzip-compressed as a static host serves it."""
        return sum(len(gzip.compress(path.read_bytes(), 6)) for path in self.loaded if path.is_file())


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (or set CHROMIUM to its path)")
    if not AXE.exists():
        subprocess.run(["make", "--no-print-directory", "-s", "axe"], cwd=REPO_ROOT, check=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


AXE_SERIOUS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; ')}`);
}"""


def visit(browser, base, site, page_path, theme="light", viewport=DESKTOP, inspect=None):
    """Open one page in a theme: its console errors, failed requests, the requests it made elsewhere
    (blocked), the files it loaded, axe's findings; `inspect(page)` runs on the open page."""
    seen = Visit()
    context = browser.new_context(viewport=viewport, color_scheme=theme)
    context.add_init_script(THEME_STORAGE.format("alternate" if theme == "dark" else "default"))

    def route(request_route):
        url = request_route.request.url
        if url.startswith(base):
            seen.loaded.add(site / unquote(urlsplit(url).path.lstrip("/")))
            request_route.continue_()
        else:
            seen.foreign_requests.append(url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda message: seen.console_errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: seen.console_errors.append(str(error)))
    page.on("requestfailed", lambda request: seen.failed_requests.append(f"{request.url} ({request.failure})")
            if request.url.startswith(base) else None)
    page.on("response", lambda response: seen.failed_requests.append(f"{response.url} ({response.status})")
            if response.status >= 400 else None)
    page.goto(base + page_path.relative_to(site).as_posix(), wait_until="networkidle")
    page.wait_for_timeout(200)  # the include's layout fixes and the reader's height message
    if inspect:
        seen.inspected = inspect(page)
    page.add_script_tag(path=str(AXE))  # inline: not a request
    seen.axe = page.evaluate(AXE_SERIOUS)
    context.close()
    seen.loaded = {path / "index.html" if path.is_dir() else path for path in seen.loaded}
    return seen


# ---- the fixture site: each check must pass it, and fail when one thing is broken ----

GOOD_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="{up}style.css"><link rel="icon" href="{up}favicon.png">
<meta property="og:image" content="{site_url}posts/one/figure.png">
{head}</head>
<body><main><h1>{title}</h1>
<p>Read <a href="{up}posts/one/index.html#fig-one">the figure</a> or <a href="https://example.org/">elsewhere</a>.</p>
<figure id="fig-one"><img src="{up}posts/one/figure.png" alt="A blue square."></figure>
{body}</main></body></html>"""

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db40000000049454e44ae426082")


def fixture_site(root, *, head="", body="", weight=0):
    site_url = "https://example.github.io/blog/"
    (root / "posts" / "one").mkdir(parents=True)
    # `weight` bytes that gzip cannot shrink (random), as figures are
    (root / "style.css").write_text("body { color: #222; background: #fff; }\n/*" +
                                    base64.b64encode(os.urandom(weight)).decode() + "*/")
    (root / "favicon.png").write_bytes(PNG)
    (root / "posts" / "one" / "figure.png").write_bytes(PNG)
    (root / "index.html").write_text(GOOD_PAGE.format(title="Home", up="", site_url=site_url, head="", body=""))
    (root / "posts" / "one" / "index.html").write_text(
        GOOD_PAGE.format(title="Post one", up="../../", site_url=site_url, head=head, body=body))
    return root, site_url


def test_fixture_site_passes_the_static_checks(tmp_path):
    site, site_url = fixture_site(tmp_path)
    assert broken_links(site, site_url) == []
    assert images_without_alt(site / "posts" / "one" / "index.html") == []


@pytest.mark.parametrize("body, broken", [
    ('<a href="../two/index.html">a missing post</a>', "<a> ../two/index.html (no such file)"),
    ('<a href="index.html#fig-two">a missing figure</a>', "<a> index.html#fig-two (no element with id 'fig-two')"),
    ('<img src="missing.png" alt="Gone.">', "<img> missing.png (no such file)"),
    ('<script src="../../site_libs/quarto.js"></script>', "<script> ../../site_libs/quarto.js (no such file)"),
    ('<a href="../../../outside.html">out of the site</a>', "(no such file)"),
], ids=["page", "fragment", "image", "script", "outside"])
def test_a_broken_link_or_asset_is_caught(tmp_path, body, broken):
    site, site_url = fixture_site(tmp_path, body=body)
    found = broken_links(site, site_url)
    assert len(found) == 1 and found[0].startswith("posts/one/index.html: ") and broken in found[0], found


def test_a_broken_social_card_image_is_caught(tmp_path):
    site, site_url = fixture_site(tmp_path)
    (site / "posts" / "one" / "figure.png").rename(site / "posts" / "one" / "thumbnail.png")
    found = broken_links(site, site_url)
    assert any("<meta> https://example.github.io/blog/posts/one/figure.png (no such file)" in line for line in found)


@pytest.mark.parametrize("image", ['<img src="figure.png">', '<img src="figure.png" alt=" ">'])
def test_a_missing_alt_is_caught(tmp_path, image):
    site, _ = fixture_site(tmp_path, body=image)
    assert images_without_alt(site / "posts" / "one" / "index.html") == ["figure.png"]


@pytest.mark.slow
def test_fixture_page_passes_in_chromium(tmp_path, browser):
    site, _ = fixture_site(tmp_path)
    with served(site) as base:
        seen = visit(browser, base, site, site / "posts" / "one" / "index.html")
    assert (seen.console_errors, seen.foreign_requests, seen.axe) == ([], [], [])
    assert site / "posts" / "one" / "figure.png" in seen.loaded and 0 < seen.weight() < 5_000


@pytest.mark.slow
@pytest.mark.parametrize("head, body, failure", [
    ("<script>console.error('boom')</script>", "", "console"),
    ("", "<script>undefinedFunction()</script>", "console"),
    ('<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Lato">', "", "foreign"),
    ("", '<img src="https://cdn.example.com/x.png" alt="x">', "foreign"),
    ("", '<button></button>', "axe"),
    ("", '<p style="color:#bbb">faint text</p>', "axe"),
], ids=["console-error", "page-error", "font-import", "cdn-image", "nameless-button", "low-contrast"])
def test_a_console_error_a_foreign_request_or_an_axe_violation_is_caught(tmp_path, browser, head, body, failure):
    site, _ = fixture_site(tmp_path, head=head, body=body)
    with served(site) as base:
        seen = visit(browser, base, site, site / "posts" / "one" / "index.html")
    found = {"console": seen.console_errors, "foreign": seen.foreign_requests, "axe": seen.axe}
    assert found[failure], f"{failure} not caught: {found}"
    if failure == "foreign":
        assert all(url.startswith("https://") for url in seen.foreign_requests)


@pytest.mark.slow
def test_a_page_over_its_budget_is_caught(tmp_path, browser):
    site, _ = fixture_site(tmp_path, weight=20_000)
    with served(site) as base:
        seen = visit(browser, base, site, site / "posts" / "one" / "index.html")
    assert seen.weight() > 20_000


@pytest.mark.slow
def test_the_weight_counts_what_gzip_sends(tmp_path, browser):
    site, _ = fixture_site(tmp_path)
    (site / "style.css").write_text("body { color: #222; }\n" + "/* the same comment */\n" * 5_000)
    with served(site) as base:
        seen = visit(browser, base, site, site / "posts" / "one" / "index.html")
    assert 0 < seen.weight() < 10_000 < (site / "style.css").stat().st_size


@pytest.mark.slow
@pytest.mark.parametrize("theme", THEMES)
def test_a_missing_file_is_a_failed_request(tmp_path, browser, theme):
    site, _ = fixture_site(tmp_path, body='<script>fetch("listings.json")</script>')
    with served(site) as base:
        seen = visit(browser, base, site, site / "posts" / "one" / "index.html", theme)
    assert any(url.endswith("/posts/one/listings.json (404)") for url in seen.failed_requests), seen.failed_requests


# ---- the real render ----

@pytest.fixture(scope="module")
def rendered_site():
    if not (SITE / "index.html").exists():
        if os.environ.get("REQUIRE_RENDER"):
            pytest.fail("REQUIRE_RENDER is set but _site/ holds no render: run `make` (CI's .ci/run renders first)")
        pytest.skip("no rendered site in _site/: run `make` (it renders where Quarto is installed); "
                    "CI renders it and sets REQUIRE_RENDER=1, so there nothing skips")
    return SITE


def published_posts():
    return [path for path in find_posts() if not front_matter(read_notebook(path)).get("draft")]


def post_page(site, notebook):
    return site / "posts" / notebook.parent.name / "index.html"


def test_every_internal_link_and_asset_resolves(rendered_site):
    assert broken_links(rendered_site) == []


def test_every_post_page_shows_its_figures_with_alt_text(rendered_site):
    for notebook in published_posts():
        page = post_page(rendered_site, notebook)
        assert page.exists(), f"{notebook.parent.name} was not rendered"
        parsed = Page(page)
        labels = [str(cell_options(cell).get("label")) for cell in read_notebook(notebook).cells
                  if cell.cell_type == "code" and str(cell_options(cell).get("label", "")).startswith("fig-")]
        assert set(labels) <= parsed.ids, f"{page}: figures missing: {sorted(set(labels) - parsed.ids)}"
        assert images_without_alt(page) == [], f"{page}: images without alt text"
        assert len(parsed.images) >= len(labels)


def test_the_home_page_lists_the_course_in_reading_order_and_each_part_links_its_neighbours(rendered_site):
    order = series_order(POSTS_DIR)
    home = (rendered_site / "index.html").read_text(encoding="utf-8")
    first_link = [home.find(f"posts/{folder}/index.html") for folder in order]
    assert -1 not in first_link and first_link == sorted(first_link), f"home page order differs from {order}"
    for part, folder in enumerate(order, start=1):
        page = (rendered_site / "posts" / folder / "index.html").read_text(encoding="utf-8")
        assert f"Part {part} of {len(order)}" in page, f"{folder}: its part is not in the title block"
        neighbours = [order[index] for index in (part - 2, part) if 0 <= index < len(order)]
        for neighbour in neighbours:
            assert re.search(rf'href="(?:\.\./)+(?:posts/)?{neighbour}/index\.html"', page), \
                f"{folder} does not link to {neighbour}"


def test_every_post_has_a_social_card_and_the_site_a_favicon(rendered_site):
    for notebook in published_posts():
        page = Page(post_page(rendered_site, notebook))
        cards = [url for tag, url in page.links if tag == "meta"]
        assert any(url.endswith("thumbnail.png") for url in cards), f"{notebook.parent.name}: no og/twitter image"
    home = Page(rendered_site / "index.html")
    assert any(tag == "link" and "favicon" in url for tag, url in home.links)


@pytest.mark.slow
def test_pages_in_chromium(rendered_site, browser):
    """Every page, light and dark: no console error or failed request, nothing fetched from another host,
    no serious axe finding; posts within their budget."""
    problems = []
    with served(rendered_site) as base:
        for page in html_pages(rendered_site):
            for theme in THEMES:
                seen = visit(browser, base, rendered_site, page, theme)
                name = f"{page.relative_to(rendered_site).as_posix()} ({theme})"
                problems += [f"{name}: console error: {error}" for error in seen.console_errors]
                problems += [f"{name}: failed request: {url}" for url in seen.failed_requests]
                problems += [f"{name}: request to another host: {url}" for url in seen.foreign_requests]
                problems += [f"{name}: axe: {violation}" for violation in seen.axe]
                if name.startswith("posts/") and theme == "light":
                    print(f"\n{name}: {seen.weight() / 1e3:.0f} kB downloaded (gzip)")
                    if seen.weight() > POST_PAGE_BUDGET:
                        problems.append(f"{name}: downloads {seen.weight()} bytes gzip-compressed, "
                                        f"over {POST_PAGE_BUDGET}")
    assert problems == [], "\n".join(problems)


# TeX in markdown: $$display$$ or $inline$ (a `$` that opens is followed by a non-space, one that
# closes follows one), outside code spans and fenced blocks.
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
TEX = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?=\S)[^$\n]+?(?<=\S)\$(?!\d)", re.S)


def tex_spans(markdown):
    return TEX.findall(CODE.sub("", markdown))


def test_tex_spans_are_found_where_a_reader_sees_math():
    assert tex_spans(r"the score $q \cdot k$ and $$\frac{a}{b}$$") == [r"$q \cdot k$", r"$$\frac{a}{b}$$"]
    assert tex_spans("costs $5 and $10 each; `x = $y$` in code") == []


def test_math_is_typeset_as_mathml(rendered_site):
    """A page whose source writes TeX shows MathML for each formula, and no formula is left as TeX."""
    carrying = []
    for notebook in published_posts():
        markdown = "\n".join(cell.source for cell in read_notebook(notebook).cells if cell.cell_type == "markdown")
        html = post_page(rendered_site, notebook).read_text(encoding="utf-8")
        spans = tex_spans(markdown)
        typeset = html.count("<math")
        assert typeset >= len(spans), f"{notebook.parent.name}: {len(spans)} formulas in the source, {typeset} typeset"
        if spans:
            carrying.append(notebook.parent.name)
        text = re.sub(r"<math.*?</math>|<pre.*?</pre>|<code.*?</code>|<script.*?</script>", "", html, flags=re.S)
        assert not re.search(r"\\(frac|sqrt|varepsilon|operatorname)\b", text), f"{notebook.parent.name}: raw TeX"
    assert carrying, "no post writes a formula as TeX"
    pages = [post_page(rendered_site, notebook).read_text(encoding="utf-8") for notebook in published_posts()]
    assert any("softmax" in math for page in pages for math in re.findall(r"<math.*?</math>", page, re.S)), \
        "the attention formula is typeset nowhere"


def stored_figures_of(notebook):
    """[(label, png bytes, smallest font in pt)] of a post's figures, the font read from the cell's code."""
    figures = []
    default = float(re.search(r'"font.size":\s*([\d.]+)', (REPO_ROOT / "_style.py").read_text()).group(1))
    for cell in read_notebook(notebook).cells:
        label = str(cell_options(cell).get("label", "")) if cell.cell_type == "code" else ""
        pngs = [output["data"]["image/png"] for output in cell.get("outputs", []) if "image/png" in output.get("data", {})]
        if not (label.startswith("fig-") and pngs):
            continue
        sizes = [default]
        # `\b`: a text size (fontsize=, labelsize=, size=), not markersize= or linewidth
        for value in re.findall(r"\b(?:fontsize|labelsize|size)\s*=\s*(\"[a-z-]+\"|'[a-z-]+'|[\d.]+)", cell.source):
            value = value.strip("\"'")
            sizes.append(default * MATPLOTLIB_SIZES[value] if value in MATPLOTLIB_SIZES else float(value))
        png = pngs[0] if isinstance(pngs[0], str) else "".join(pngs[0])
        figures.append((label, base64.b64decode(png), min(sizes)))
    return figures


def test_figures_have_transparent_backgrounds_so_they_read_in_both_themes(rendered_site):
    """A figure drawn on white is a white slab on the dark page: each must let the page show through."""
    from PIL import Image
    for notebook in published_posts():
        for label, png, _ in stored_figures_of(notebook):
            picture = Image.open(io.BytesIO(png))
            assert picture.mode in ("RGBA", "LA", "P"), f"{notebook.parent.name} {label}: no alpha channel"
            alpha = picture.convert("RGBA").getchannel("A")
            clear = sum(alpha.histogram()[:8]) / (picture.width * picture.height)
            assert clear > 0.1, f"{notebook.parent.name} {label}: only {clear:.0%} of it is transparent"


def open_every_fold(page):
    """Open each collapsed callout as a reader would, by its header, and let the page lay it out: what a
    fold holds (a side experiment's figures, an embedded reader) must read as well as the rest."""
    # Outer headers come first in the document, so a fold inside a fold opens after its parent.
    page.evaluate("""() => document.querySelectorAll(
      '.callout-header[data-bs-toggle="collapse"][aria-expanded="false"]').forEach((header) => header.click())""")
    page.wait_for_timeout(800)  # Bootstrap's collapse animation, then the include's layout fixes


PHONE_LAYOUT = """(labels) => {
  const wide = (element) => element.scrollWidth > element.clientWidth + 1;
  const visible = (element) => !!element && element.getClientRects().length > 0 &&
                               getComputedStyle(element).visibility !== "hidden";
  const narrow = document.querySelector(".toc-narrow");
  const links = narrow ? [...narrow.querySelectorAll("a")].map((a) => a.href) : [];
  return {
    pageScrolls: wide(document.documentElement),
    contents: visible(narrow) ? links : null,
    tocEntries: [...document.querySelectorAll("#TOC > ul a")].map((a) => a.href),
    scrollingOutputs: [...document.querySelectorAll(".cell-output pre")].filter(wide)
                        .map((pre) => pre.textContent.slice(0, 60)),
    figures: Object.fromEntries(labels.map((label) => {
      const image = document.querySelector(`#${label} img`);
      return [label, image ? [image.getBoundingClientRect().width, image.naturalWidth] : null];
    })),
  };
}"""


@pytest.mark.slow
def test_a_phone_reader_reaches_everything_and_reads_every_figure(rendered_site, browser):
    """At 390 px: the contents and the notebook links are on the page, no printed output or the page
    scrolls sideways, and no figure's smallest text renders under 8 CSS px (on a desktop neither)."""
    problems = []
    with served(rendered_site) as base:
        for notebook in published_posts():
            figures = stored_figures_of(notebook)
            labels = [label for label, _, _ in figures]
            seen = visit(browser, base, rendered_site, post_page(rendered_site, notebook), "light", PHONE,
                         inspect=lambda page: open_every_fold(page) or page.evaluate(PHONE_LAYOUT, labels))
            found, name = seen.inspected, notebook.parent.name
            if found["pageScrolls"]:
                problems.append(f"{name}: the page is wider than the phone")
            if found["contents"] is None:
                problems.append(f"{name}: no table of contents at phone width")
            else:
                missing = [href for href in found["tocEntries"] if href not in found["contents"]]
                notebook_links = [href for href in found["contents"] if "colab.research.google.com" in href
                                  or (href.startswith(base) and href.endswith("/index.ipynb"))
                                  or "github.com" in href]
                if missing or len(notebook_links) < 3:
                    problems.append(f"{name}: phone contents lack {missing} or the notebook links ({notebook_links})")
            problems += [f"{name}: printed output scrolls sideways: {text!r}" for text in found["scrollingOutputs"]]
            problems += small_figure_text(name, figures, found["figures"])
            desktop = visit(browser, base, rendered_site, post_page(rendered_site, notebook), "light", DESKTOP,
                            inspect=lambda page: open_every_fold(page) or page.evaluate(PHONE_LAYOUT, labels)).inspected
            problems += small_figure_text(f"{name} (desktop)", figures, desktop["figures"])
    assert problems == [], "\n".join(problems)


def small_figure_text(name, figures, shown_widths):
    """A line for each figure whose smallest text renders under SMALLEST_TEXT_PX: its font at its natural
    size (pt at FIGURE_DPI), times the width it is shown at over its natural width."""
    problems = []
    for label, _, smallest_pt in figures:
        shown, natural = shown_widths[label] or (0, 0)
        text_px = smallest_pt * FIGURE_DPI / 72 * (shown / natural if natural else 0)
        if text_px < SMALLEST_TEXT_PX:
            problems.append(f"{name} {label}: its {smallest_pt:g} pt text renders at {text_px:.1f} px")
    return problems


READER_FRAMES = """() => [...document.querySelectorAll("iframe")].map((frame) => {
  const inner = frame.contentDocument && frame.contentDocument.documentElement;
  return {src: frame.getAttribute("src"), height: frame.getBoundingClientRect().height,
          content: inner ? inner.scrollHeight : null, header: frame.contentDocument ?
            !!frame.contentDocument.querySelector("header, nav.navbar") &&
            frame.contentDocument.querySelector("header, nav.navbar").getClientRects().length > 0 : null};
})"""


@pytest.mark.slow
def test_the_embedded_reader_is_sized_to_its_content(rendered_site, browser):
    """Each post that embeds the live reader shows all of it, without its own site header, at any width."""
    problems, embeds = [], 0
    with served(rendered_site) as base:
        for notebook in published_posts():
            page = post_page(rendered_site, notebook)
            if "<iframe" not in page.read_text(encoding="utf-8"):
                continue
            for viewport in (PHONE, DESKTOP):
                def frames(tab):
                    open_every_fold(tab)
                    tab.locator("iframe").first.scroll_into_view_if_needed()
                    tab.wait_for_timeout(1500)  # lazy loading, then the reader's height message
                    return tab.evaluate(READER_FRAMES)
                seen = visit(browser, base, rendered_site, page, "light", viewport, inspect=frames)
                for frame in seen.inspected:
                    embeds += 1
                    where = f"{notebook.parent.name} at {viewport['width']} px: {frame['src']}"
                    if frame["content"] is None or frame["height"] + 1 < frame["content"]:
                        problems.append(f"{where}: {frame['height']:.0f} px tall, its content {frame['content']}")
                    if frame["header"]:
                        problems.append(f"{where}: shows its own site header inside the post")
    assert embeds, "no post embeds the live reader"
    assert problems == [], "\n".join(problems)


@pytest.mark.slow
def test_every_question_on_a_post_page_takes_its_answers(rendered_site, browser):
    """Each post page with questions (docs/questions.md), as rendered: every wrong answer that has a hint
    shows it, an unlisted wrong answer is refused, and the right answer opens the explanation."""
    problems, asked = [], 0
    with served(rendered_site) as base:
        for notebook in published_posts():
            page_path = post_page(rendered_site, notebook)
            if 'class="question' not in page_path.read_text(encoding="utf-8"):
                continue
            context = browser.new_context(viewport=DESKTOP)
            page = context.new_page()
            page.goto(base + page_path.relative_to(rendered_site).as_posix())
            found = questions(page)
            asked += len(found)
            if not found:
                problems.append(f"{notebook.parent.name}: its page holds questions, but none has a kind (data-kind)")
            problems += [f"{notebook.parent.name}: {problem}" for problem in answer_problems(page)]
            context.close()
    assert asked, "no post page asks a question"
    assert problems == [], "\n".join(problems)


LISTING = """() => [...document.querySelectorAll("img.thumbnail-image")].map((image) => {
  const box = image.getBoundingClientRect();
  return {src: image.getAttribute("src"), box: [box.width, box.height],
          natural: [image.naturalWidth, image.naturalHeight], fit: getComputedStyle(image).objectFit};
})"""


@pytest.mark.slow
def test_thumbnails_are_distinct_legible_and_shown_whole(rendered_site, browser):
    """The listing's cards: no two posts show the same picture, none is cut by the box, and its text
    is drawn at least as large as figure text must be (8 pt at 110 dpi shown at 8 px or more)."""
    with served(rendered_site) as base:
        seen = visit(browser, base, rendered_site, rendered_site / "index.html", "light", DESKTOP,
                     inspect=lambda page: page.evaluate(LISTING))
    thumbnails = seen.inspected
    assert len(thumbnails) == len(published_posts())
    digests = [hashlib.sha256((rendered_site / unquote(t["src"]).lstrip("./")).read_bytes()).hexdigest()
               for t in thumbnails]
    assert len(set(digests)) == len(digests), "two posts show the same thumbnail"
    for thumbnail in thumbnails:
        (width, height), (natural_width, natural_height) = thumbnail["box"], thumbnail["natural"]
        scale = min(width / natural_width, height / natural_height)
        if thumbnail["fit"] in ("cover", "fill"):
            assert abs(width / height - natural_width / natural_height) < 0.05 * width / height, thumbnail
        assert scale * 8 * FIGURE_DPI / 72 >= SMALLEST_TEXT_PX, (
            f"{thumbnail['src']}: shown at {scale:.2f} of its size, its text under {SMALLEST_TEXT_PX} px; crop it with "
            "notebook metadata blog.thumbnail (`make check` names a crop that fits), then `make inline`")


def test_no_one_entry_contents_and_no_citation_that_repeats_its_author(rendered_site):
    for page in html_pages(rendered_site):
        html = page.read_text(encoding="utf-8")
        for toc in re.findall(r'<nav id="TOC".*?</nav>', html, re.S):
            entries = re.findall(r'<li><a href="#', toc)
            assert len(entries) != 1, f"{page.relative_to(rendered_site)}: an 'On this page' box with one entry"
        text = re.sub(r"<[^>]+>", "", html)
        repeated = re.search(r"\b(\w+) et al\.\s*\(\1 et al\.", text)
        assert not repeated, f"{page.relative_to(rendered_site)}: a citation repeats its author: {repeated.group(0)!r}"


# A model token written into the HTML as a tag: a browser drops it ("smallest P() where it is due").
TOKEN_TAG = re.compile(r"<(start|end|pad)>")


def token_tags(html):
    """The tokens a page's HTML holds as tags, outside its scripts (code on a page is escaped: &lt;end&gt;)."""
    return TOKEN_TAG.findall(re.sub(r"<script\b.*?</script>", "", html, flags=re.S))


def test_a_token_written_as_a_tag_is_caught():
    assert token_tags('<td style="text-align: left;">hundred on <end></end></td>') == ["end"]
    assert token_tags("<p>P(&lt;end&gt;) and <code>&lt;pad&gt;</code></p><script>'<start>'</script>") == []


def test_no_model_token_is_written_as_an_html_tag(rendered_site):
    """assets/tokens.lua keeps <start>, <end> and <pad> as text, in prose and in printed tables."""
    found = {str(page.relative_to(rendered_site)): tags for page in html_pages(rendered_site)
             if (tags := token_tags(page.read_text(encoding="utf-8")))}
    assert found == {}, f"tokens the browser will drop, by page: {found}"


# A share whose sign a line may break away from: a number, an ordinary space, "%", in the words of a page
# (outside code, printed outputs and scripts, which keep their spaces).
PARTED_SHARE = re.compile(r"\d (?:%|&#37;)")


def parted_shares(html):
    """The shares in a page's words that a line break could split before their "%"."""
    words = re.sub(r"<(script|pre|code|style)\b.*?</\1>", "", html, flags=re.S)
    return PARTED_SHARE.findall(re.sub(r"<[^>]+>", "", words))


def test_a_share_that_can_part_from_its_sign_is_caught():
    assert parted_shares("<p>reads 87.5 %<!--=x--> of them</p>") == ["5 %"]
    assert parted_shares("<p>reads 87.5\u00a0% of them, and <code>x = 5 %</code></p><pre>9 %</pre>") == []


def test_no_share_parts_from_its_sign(rendered_site):
    """assets/units.lua puts a no-break space between a number and its "%", in every page's words."""
    found = {str(page.relative_to(rendered_site)): shares[:3] for page in html_pages(rendered_site)
             if (shares := parted_shares(page.read_text(encoding="utf-8")))}
    assert found == {}, f"shares a line may split before their sign, by page: {found}"


# Markup as Quarto 1.7 writes it for a folding callout and a long printed line.
QUARTO_LIKE_BODY = """
<div class="callout callout-style-default callout-note callout-titled">
<div class="callout-header d-flex align-content-center collapsed" data-bs-toggle="collapse"
     data-bs-target=".callout-1-contents" aria-controls="callout-1" aria-expanded="false" aria-label="Toggle callout">
<div class="callout-title-container flex-fill">Check yourself: what shape?</div>
<div class="callout-btn-toggle d-inline-block border-0 py-1 ps-1 pe-0 float-end"><i class="callout-toggle"></i></div>
</div>
<div id="callout-1" class="callout-1-contents callout-collapse collapse"><p>(32, 4, 6, 4)</p></div>
</div>
<div class="cell-output cell-output-stdout"><pre style="overflow-x: auto; width: 20em"><code>""" + "x" * 300 + """</code></pre></div>
"""


@pytest.mark.slow
@pytest.mark.parametrize("with_include", [False, True], ids=["as-quarto-writes-it", "with-assets-a11y"])
def test_the_include_fixes_callout_aria_and_keyboard_scrolling(tmp_path, browser, with_include):
    include = (REPO_ROOT / "assets" / "a11y.html").read_text() if with_include else ""
    site, _ = fixture_site(tmp_path, body=QUARTO_LIKE_BODY + include)
    with served(site) as base:
        seen = visit(browser, base, site, site / "posts" / "one" / "index.html")
    found = {violation.split(" ")[0] for violation in seen.axe}
    if with_include:
        assert (found, seen.console_errors) == (set(), [])
    else:
        assert "scrollable-region-focusable" in found and found & {"aria-allowed-attr", "aria-prohibited-attr"}, found
