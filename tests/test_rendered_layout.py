"""The rendered posts' length and their figures on a phone (issue 34, items 7 and 8).

Measured on the real render in Chromium, with the folds closed, the way `make screenshots` measures
(tools/site/screenshots.py's `settled_layout`, one definition for both):

- a post's length in screens (the viewport's height each) at 1280 px and at 390 px;
- the figures that need a sideways scroll on a phone (a frame wider than the screen);
- on a desktop, the code on screen whose lines wrap and the printed output cut at the column's edge;
- on a phone, a wrapped line of code whose later rows do not hang in from its indentation.

The target is SCREENS_TARGET (12 screens on a desktop, 20 on a phone) and no sideways figure; every post
meets it (2026-12-06). A post that cannot yet (a new one) gets a ceiling in LAYOUT_CEILING, its length as
last measured: it may get shorter, never longer, and no figure may start to scroll sideways. A post that
meets the target is held to the target. Each check is first proven on a page written here, which must
fail it.
"""
import pytest

from tests.test_rendered_site import DESKTOP, PHONE, browser, post_page, published_posts, rendered_site  # noqa: F401
from tools.core.notebooks import REPO_ROOT
from tools.site.browser import served
from tools.site.screenshots import SCREENS_TARGET, settled_layout

VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
# Each post as last measured, rounded up to the next half screen with a little room for another
# machine's fonts (screens at 1280 × 900 and 390 × 844, folds closed), and the figures that still
# scroll sideways on a phone. Lower a number when a post gets shorter; never raise one to let a
# post grow: fold what is secondary instead (docs/writing-posts.md).
LAYOUT_CEILING = {
    "2026-06-18-reading-three-digits": {"desktop": 12.0, "phone": 20.0, "sideways": []},
    "2026-06-25-reading-when-to-stop": {"desktop": 12.0, "phone": 20.0, "sideways": []},
    "2026-07-02-reading-numbers-aloud": {"desktop": 12.0, "phone": 20.0, "sideways": []},
    "2026-07-09-reading-handwriting": {"desktop": 12.0, "phone": 20.0, "sideways": []},
}


def layout_problems(name, viewport, found, ceiling):
    """What is wrong with one page's LAYOUT measure against the target, or against its ceiling."""
    target = SCREENS_TARGET[viewport]
    allowed = max(target, ceiling.get(viewport, target)) if ceiling else target
    problems = []
    if found["screens"] > allowed:
        problems.append(f"{name}: {found['screens']:.1f} screens on a {viewport}, over "
                        + (f"its ceiling of {allowed:g} (the target is {target})" if allowed > target
                           else f"the target of {target}")
                        + ": fold what is secondary (a figure's code, a side experiment)")
    if viewport == "desktop":  # a phone wraps code and scrolls output; a desktop's column need not
        problems += [f"{name}: a line of code wraps at 1280 px: {line!r}: keep it within 88 columns"
                     for line in found.get("wrapped", [])]
        problems += [f"{name}: printed output is cut at 1280 px: {line!r}: print shorter lines"
                     for line in found.get("cut", [])]
    if viewport == "phone":
        problems += [f"{name}: a wrapped line of code does not hang in on a phone: {line!r}: its later rows "
                     "would read as lines of their own (assets/layout.html hangs them)" for line in found.get("unhung", [])]
        spreading = sorted(set(found["sideways"]) - set((ceiling or {}).get("sideways", [])))
        problems += [f"{name}: {label} scrolls sideways on a phone: draw it at most 4.9 in wide "
                     "(stack its panels)" for label in spreading]
    return problems


def measure(browser, url, viewport):  # noqa: F811
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    found = settled_layout(page)
    context.close()
    return found


# ---- each check proven on a page written here --------------------------------------------------------

def a_page(body):
    return f"<!doctype html><html><head><meta charset='utf-8'></head><body><main>{body}</main></body></html>"


# As Quarto writes a figure: the output frame, and inside it the box that scrolls once assets/layout.html
# widens the image; and a frame that scrolls itself, its label outside it.
WIDE_FIGURE = ("<div class='cell-output-display'><div id='fig-wide' class='quarto-figure' style='overflow-x:auto'>"
               "<figure><img style='width:700px;height:50px;display:block'></figure></div></div>")
SCROLLING_FRAME = ("<div id='fig-frame'><div class='cell-output-display' style='overflow-x:auto'>"
                   "<img style='width:700px;height:50px;display:block'></div></div>")
NARROW_FIGURE = WIDE_FIGURE.replace("700px", "300px").replace("fig-wide", "fig-narrow")
# As Quarto writes a code cell (a span per line, each an inline-block, wrapping) and a printed output
# (scrolling), in a 30em column.
CODE_LINE = "<span style='display:inline-block'>{}</span>"
CODE_AND_OUTPUT = ("<div style='width:30em'><div class='sourceCode'><pre class='sourceCode' style='white-space:pre-wrap'>"
                   "<code class='sourceCode'>" + CODE_LINE.format("short = 1") + "\n" + CODE_LINE.format("{code}")
                   + "</code></pre></div>"
                   "<div class='cell-output'><pre style='overflow-x:auto'><code>ok\n{output}</code></pre></div>"
                   "<details><summary>folded</summary><div class='sourceCode'><pre class='sourceCode' "
                   "style='white-space:pre-wrap'><code><span>{folded}</span></code></pre></div></details></div>")


@pytest.mark.slow
def test_a_long_page_and_a_sideways_figure_are_caught(tmp_path, browser):  # noqa: F811
    (tmp_path / "long.html").write_text(a_page("<div style='height:20000px'></div>" + WIDE_FIGURE + SCROLLING_FRAME))
    (tmp_path / "short.html").write_text(a_page("<p>A short page.</p>" + NARROW_FIGURE))
    with served(tmp_path) as base:
        long_phone, short_phone = (measure(browser, base + page, "phone") for page in ("long.html", "short.html"))
        long_desktop = measure(browser, base + "long.html", "desktop")
    assert long_phone["sideways"] == ["fig-wide", "fig-frame"] and short_phone["sideways"] == []
    assert layout_problems("short", "phone", short_phone, None) == []
    assert any("over the target of 12" in problem for problem in layout_problems("long", "desktop", long_desktop, None))
    caught = layout_problems("long", "phone", long_phone, None)
    assert any("fig-wide scrolls sideways" in problem for problem in caught) and any("screens" in p for p in caught)
    assert not [p for p in caught if "wraps" in p or "cut" in p], "a phone may wrap code"
    ceiling = {"desktop": 30, "phone": 30, "sideways": ["fig-wide", "fig-frame"]}
    assert layout_problems("long", "desktop", long_desktop, ceiling) == [], "within its ceiling"
    assert layout_problems("long", "phone", long_phone, {**ceiling, "phone": 20}) == [
        f"long: {long_phone['screens']:.1f} screens on a phone, over the target of 20: fold what is secondary "
        "(a figure's code, a side experiment)"], "a ceiling under the target means the target"


def test_every_post_has_a_ceiling():
    assert sorted(LAYOUT_CEILING) == sorted(path.parent.name for path in published_posts())


# ---- the real render -----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("notebook", published_posts(), ids=lambda path: path.parent.name)
def test_no_post_grows_and_no_figure_scrolls_sideways(rendered_site, browser, notebook):  # noqa: F811
    name = notebook.parent.name
    with served(rendered_site) as base:
        url = base + post_page(rendered_site, notebook).relative_to(rendered_site).as_posix()
        problems = [problem for viewport in VIEWPORTS
                    for problem in layout_problems(name, viewport, measure(browser, url, viewport),
                                                   LAYOUT_CEILING.get(name))]
    assert problems == [], "\n".join(problems)


@pytest.mark.slow
def test_wrapped_code_and_cut_output_on_a_desktop_are_caught(tmp_path, browser):  # noqa: F811
    long, folded = "x = " + "1 + " * 40 + "1", "y = " + "2 + " * 40 + "2"
    (tmp_path / "cut.html").write_text(a_page(CODE_AND_OUTPUT.format(code=long, output="z" * 200, folded=folded)))
    (tmp_path / "fits.html").write_text(a_page(CODE_AND_OUTPUT.format(code="x = 1", output="z", folded=folded)))
    with served(tmp_path) as base:
        cut, fits = (measure(browser, base + page, "desktop") for page in ("cut.html", "fits.html"))
    assert cut["wrapped"] == [long[:60]] and cut["cut"] == ["z" * 60], cut
    assert fits["wrapped"] == [] and fits["cut"] == [], "a folded cell's long line is not on screen"
    said = layout_problems("cut", "desktop", cut, None)
    assert [p.split(":")[1].strip() for p in said] == ["a line of code wraps at 1280 px",
                                                       "printed output is cut at 1280 px"], said


@pytest.mark.slow
def test_a_wrapped_line_of_code_that_does_not_hang_in_on_a_phone_is_caught(tmp_path, browser):  # noqa: F811
    """Without assets/layout.html a wrapped line's later rows start at the column's edge, left of the
    line's own indentation; with it they hang in."""
    indented = "        total = " + " + ".join(["value"] * 20)
    page = a_page(CODE_AND_OUTPUT.format(code=indented, output="z", folded="y = 2"))
    script = (REPO_ROOT / "assets" / "layout.html").read_text(encoding="utf-8")
    (tmp_path / "flat.html").write_text(page)
    (tmp_path / "hung.html").write_text(page.replace("</body>", script + "</body>"))
    with served(tmp_path) as base:
        flat, hung = (measure(browser, base + name, "phone") for name in ("flat.html", "hung.html"))
    assert flat["wrapped"] == hung["wrapped"] == [indented.strip()[:60]], (flat, hung)
    assert flat["unhung"] == [indented.strip()[:60]] and hung["unhung"] == [], (flat, hung)
    assert any("does not hang in" in problem for problem in layout_problems("flat", "phone", flat, None))
    assert not [p for p in layout_problems("hung", "phone", hung, None) if "hang" in p]
