"""The rendered site as a reader's browser meets it: checked on `_site/` when it exists.

Quarto cannot run on the build machines, so the checks on the real render are skipped there; the
publish workflow runs this file after `quarto render`, before deploying. Every check is first
proven on a small fixture site written here, which must fail it when one thing is broken:

- every internal link and asset (href, src, fragment, social-card image) resolves;
- every image on a post page has alt text, and each of the notebook's figures is on the page;
- in Chromium: no console error, no request to any host but the site's own;
- axe-core (tests/package.json, pinned) finds no serious or critical violation;
- a post page loads at most POST_PAGE_BUDGET bytes.
"""
import functools
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
import yaml

from tools.notebooks import REPO_ROOT, cell_options, find_posts, front_matter, read_notebook

SITE = REPO_ROOT / "_site"
SITE_URL = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text())["website"]["site-url"]
AXE = REPO_ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# What a post page may load in all (HTML, styles, scripts, figures, fonts): its three to five figures
# are 15-40 kB each; Bootstrap, Quarto's scripts and the icons font are most of the rest.
POST_PAGE_BUDGET = 2_000_000
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


def html_pages(site):
    return sorted(path for path in site.rglob("*.html") if "site_libs" not in path.parts)


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


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@dataclass
class Visit:
    console_errors: list = field(default_factory=list)
    foreign_requests: list = field(default_factory=list)
    loaded: set = field(default_factory=set)
    axe: list = field(default_factory=list)

    def weight(self):
        return sum(path.stat().st_size for path in self.loaded if path.is_file())


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


class served:
    """The folder on a localhost port, as a static host serves it."""

    def __init__(self, site):
        self.site = site

    def __enter__(self):
        handler = functools.partial(QuietHandler, directory=str(self.site))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


AXE_SERIOUS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; ')}`);
}"""


def visit(browser, base, site, page_path):
    """Open one page: its console errors, the requests it made elsewhere (blocked), the files it loaded, axe."""
    seen = Visit()
    context = browser.new_context(viewport={"width": 1280, "height": 900})

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
    page.goto(base + page_path.relative_to(site).as_posix(), wait_until="networkidle")
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
    (root / "style.css").write_text("body { color: #222; background: #fff; }\n" + "/*" + "x" * weight + "*/")
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


# ---- the real render ----

@pytest.fixture(scope="module")
def rendered_site():
    if not (SITE / "index.html").exists():
        pytest.skip("no rendered site in _site/: Quarto cannot run here. `make` renders it where Quarto is "
                    "installed, and the publish workflow runs this test after `quarto render`")
    return SITE


def published_posts():
    return [path for path in find_posts() if not front_matter(read_notebook(path)).get("draft")]


def test_every_internal_link_and_asset_resolves(rendered_site):
    assert broken_links(rendered_site) == []


def test_every_post_page_shows_its_figures_with_alt_text(rendered_site):
    for notebook in published_posts():
        page = rendered_site / "posts" / notebook.parent.name / "index.html"
        assert page.exists(), f"{notebook.parent.name} was not rendered"
        parsed = Page(page)
        labels = [str(cell_options(cell).get("label")) for cell in read_notebook(notebook).cells
                  if cell.cell_type == "code" and str(cell_options(cell).get("label", "")).startswith("fig-")]
        assert set(labels) <= parsed.ids, f"{page}: figures missing: {sorted(set(labels) - parsed.ids)}"
        assert images_without_alt(page) == [], f"{page}: images without alt text"
        assert len(parsed.images) >= len(labels)


def test_every_post_has_a_social_card_and_the_site_a_favicon(rendered_site):
    for notebook in published_posts():
        page = Page(rendered_site / "posts" / notebook.parent.name / "index.html")
        cards = [url for tag, url in page.links if tag == "meta"]
        assert any(url.endswith("thumbnail.png") for url in cards), f"{notebook.parent.name}: no og/twitter image"
    home = Page(rendered_site / "index.html")
    assert any(tag == "link" and "favicon" in url for tag, url in home.links)


@pytest.mark.slow
def test_pages_in_chromium(rendered_site, browser):
    """Every page: no console error, nothing fetched from another host, no serious axe finding; posts in budget."""
    problems = []
    with served(rendered_site) as base:
        for page in html_pages(rendered_site):
            seen = visit(browser, base, rendered_site, page)
            name = page.relative_to(rendered_site).as_posix()
            problems += [f"{name}: console error: {error}" for error in seen.console_errors]
            problems += [f"{name}: request to another host: {url}" for url in seen.foreign_requests]
            problems += [f"{name}: axe: {violation}" for violation in seen.axe]
            if name.startswith("posts/"):
                print(f"\n{name}: {seen.weight() / 1e3:.0f} kB loaded")
                if seen.weight() > POST_PAGE_BUDGET:
                    problems.append(f"{name}: loads {seen.weight()} bytes, over {POST_PAGE_BUDGET}")
    assert problems == [], "\n".join(problems)


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
