"""Photograph every page of the rendered site as readers see it: desktop and phone, light and dark.

    .venv/bin/python -m tools.site.screenshots [--site _site] [--out .cache/screenshots] [--page PART]

Serves `_site/` on a localhost port, opens each page in Debian's Chromium (Playwright) at
1280 px and 390 px wide, in the light theme and in the dark one (Quarto's own switch, set the way
its toggle stores it), and writes full-page pictures cut into screen-high parts:
`<out>/<page>-<desktop|phone>-<light|dark>-<n>.png`. The folder is git-ignored; look at it before
saying a change to a post or to the site is done.

Each line it prints also measures the page against what a post should be: its length in screens
(folds closed) against SCREENS_TARGET, on a phone the figures that scroll sideways (a frame
wider than the screen, assets/layout.html's fallback for a figure too wide to read shrunk) and the
wrapped code lines whose later rows do not hang in, and on a desktop the code lines on screen that
wrap and the printed outputs cut at the column's edge.
"""
import argparse
import io
import sys
from pathlib import Path

from tools.core.notebooks import REPO_ROOT
from tools.site.browser import CHROMIUM, CHROMIUM_FLAGS, html_pages, served

VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}
THEMES = ("light", "dark")
PART_HEIGHT = {"desktop": 1800, "phone": 2400}  # CSS px per picture: long pages come in parts
# Quarto's toggle keeps the visitor's choice here: "default" is the light theme, "alternate" the dark.
THEME_SCRIPT = "localStorage.setItem('quarto-color-scheme', '{value}');"
# A post reads as a lesson in at most this many screens, folds closed (the viewport's height each).
SCREENS_TARGET = {"desktop": 12, "phone": 20}
LAYOUT = """() => {
const HANG_FLOOR = 12;
const opening = (line) => line.textContent.trim().slice(0, 60);  // how a problem names a line
// the left edge of each row a line of code takes, top to bottom, from its text's boxes
function rowStarts(line) {
  const range = document.createRange();
  range.selectNodeContents(line);
  const rows = [];
  for (const box of [...range.getClientRects()].filter((box) => box.width > 0).sort((a, b) => a.top - b.top)) {
    const row = rows.find((known) => Math.abs(known.top - box.top) < box.height / 2);
    if (row) row.left = Math.min(row.left, box.left);
    else rows.push({top: box.top, left: box.left});
  }
  return rows.map((row) => row.left);
}
// the code lines on screen (folds closed) that wrap, each with where its rows start, measured once
const wrappedLines = [...document.querySelectorAll("main div.sourceCode pre code > span")]
  .filter((line) => line.checkVisibility())
  .map((line) => ({line, starts: rowStarts(line)}))
  .filter(({starts}) => starts.length > 1);
const canvas = document.createElement("canvas").getContext("2d");
return {
  screens: document.documentElement.scrollHeight / innerHeight,
  // a figure's frame, or a box inside it (Quarto's .quarto-figure), that scrolls: its image was widened
  sideways: [...document.querySelectorAll("main .cell-output-display")]
    .filter((frame) => frame.querySelector("img") && [frame, ...frame.querySelectorAll("*")].some(
      (box) => box.scrollWidth > box.clientWidth + 1 && ["auto", "scroll"].includes(getComputedStyle(box).overflowX)))
    .map((frame) => (frame.querySelector("[id^='fig-']") || frame.closest("[id^='fig-']") || frame).id
                    || "a figure without a label"),
  // code on screen (folds closed) whose line wraps: Quarto writes each line of a cell as a span, an
  // inline-block (one box however many rows it wraps into), so its rows are counted from its text
  wrapped: wrappedLines.map(({line}) => opening(line)),
  // a wrapped line of code whose later rows do not start further in than its code does (nor, for a
  // deeply indented line, at least HANG_FLOOR columns in): it would read as a line of its own
  unhung: wrappedLines.filter(({line, starts}) => {
    canvas.font = getComputedStyle(line).font;
    const column = canvas.measureText("0").width;
    const indent = line.textContent.match(/^ */)[0].length;
    const floor = Math.min(indent + 1, HANG_FLOOR) * column - 1;
    return starts.slice(1).some((start) => start - line.getBoundingClientRect().left < floor);
  }).map(({line}) => opening(line)),
  // printed output on screen that scrolls sideways: its longest line is cut at the column's edge
  cut: [...document.querySelectorAll("main .cell-output pre")]
    .filter((pre) => pre.checkVisibility() && pre.scrollWidth > pre.clientWidth + 1)
    .map((pre) => pre.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a)).trim().slice(0, 60)),
};
}"""


def settled_layout(page):
    """LAYOUT on an open page once it has settled as a reader would see it: scrolled to the bottom and
    back, so lazy images and the embedded reader have loaded and sized themselves."""
    page.evaluate("""async () => {
      for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight) {
        scrollTo(0, y);
        await new Promise((done) => setTimeout(done, 50));
      }
      scrollTo(0, 0);
    }""")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)  # iframes sizing themselves, fonts settling
    return page.evaluate(LAYOUT)


def layout_words(viewport, found):
    """"14.2 screens (over 12); scrolls sideways: fig-a, fig-b" for what LAYOUT found on a page."""
    target = SCREENS_TARGET[viewport]
    words = f"{found['screens']:.1f} screens" + (f" (over {target})" if found["screens"] > target else "")
    if viewport == "phone" and found["sideways"]:
        words += f"; scrolls sideways: {', '.join(found['sideways'])}"
    if viewport == "phone" and found.get("unhung"):
        words += f"; {len(found['unhung'])} wrapped code line(s) not hung in"
    if viewport == "desktop" and (found.get("wrapped") or found.get("cut")):
        words += f"; {len(found.get('wrapped', []))} code line(s) wrap, {len(found.get('cut', []))} output(s) cut"
    return words


def page_name(site, page):
    relative = page.relative_to(site).with_suffix("")
    parts = [part for part in relative.parts if part != "posts"]
    if parts[-1] == "index" and len(parts) > 1:
        parts = parts[:-1]
    return "-".join(parts)


def photograph(browser, url, viewport, theme, out_stem):
    """Write the page's parts; return how many, and what LAYOUT found on the page."""
    from PIL import Image
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1,
                                  color_scheme="dark" if theme == "dark" else "light")
    context.add_init_script(THEME_SCRIPT.format(value="alternate" if theme == "dark" else "default"))
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    found = settled_layout(page)
    picture = Image.open(io.BytesIO(page.screenshot(full_page=True)))
    context.close()
    step = PART_HEIGHT[viewport]
    parts = range(0, picture.height, step)
    for number, top in enumerate(parts, start=1):
        picture.crop((0, top, picture.width, min(top + step, picture.height))).save(f"{out_stem}-{number}.png")
    return len(parts), found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=REPO_ROOT / "_site")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / ".cache" / "screenshots")
    parser.add_argument("--page", help="only pages whose path contains this")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        sys.exit(f"no rendered site in {args.site}: run `make` first")
    from playwright.sync_api import sync_playwright
    pages = [page for page in html_pages(args.site) if not args.page or args.page in page.as_posix()]
    args.out.mkdir(parents=True, exist_ok=True)
    with served(args.site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        for page in pages:
            name = page_name(args.site, page)
            for viewport in VIEWPORTS:
                for theme in THEMES:
                    count, found = photograph(browser, base + page.relative_to(args.site).as_posix(), viewport,
                                              theme, args.out / f"{name}-{viewport}-{theme}")
                    print(f"{name}: {viewport} {theme}: {count} picture(s), {layout_words(viewport, found)}",
                          flush=True)
        browser.close()
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
