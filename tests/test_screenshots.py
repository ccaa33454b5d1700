"""`make screenshots` photographs each page and measures it against what a post should be: its length in
screens and, on a phone, the figures that scroll sideways. Proven here on a page made to fail both."""
import pytest

from tools.site import screenshots

WIDE_AND_LONG = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>.cell-output-display { overflow-x: auto; } .drawing { height: 40px; }</style></head>
<body><main>
<div id="fig-wide"><div class="cell-output-display"><img class="drawing" style="width: 900px; max-width: none"></div></div>
<div id="fig-narrow"><div class="cell-output-display"><img class="drawing" style="width: 200px"></div></div>
<div style="height: 30000px">text</div></main></body></html>"""


def test_the_words_say_the_target_and_the_sideways_figures():
    assert screenshots.layout_words("desktop", {"screens": 14.21, "sideways": ["fig-a"]}) == "14.2 screens (over 12)"
    assert screenshots.layout_words("desktop", {"screens": 9, "sideways": [], "wrapped": ["x = 1 + 1"], "cut": []}) == \
        "9.0 screens; 1 code line(s) wrap, 0 output(s) cut"
    assert screenshots.layout_words("phone", {"screens": 3, "sideways": ["fig-a", "fig-b"]}) == \
        "3.0 screens; scrolls sideways: fig-a, fig-b"


@pytest.mark.slow
def test_a_long_page_and_a_figure_wider_than_a_phone_are_measured(tmp_path):
    from playwright.sync_api import sync_playwright
    from tools.site.browser import CHROMIUM, CHROMIUM_FLAGS, served
    (tmp_path / "index.html").write_text(WIDE_AND_LONG)
    with served(tmp_path) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        counts = {}
        for viewport in ("desktop", "phone"):
            counts[viewport] = screenshots.photograph(browser, base + "index.html", viewport, "light",
                                                      tmp_path / viewport)
        browser.close()
    (desktop_parts, desktop), (_, phone) = counts["desktop"], counts["phone"]
    assert desktop["screens"] > 30 and desktop_parts == len(list(tmp_path.glob("desktop-*.png")))
    assert desktop["sideways"] == [], "900 px fits a desktop column"
    assert phone["sideways"] == ["fig-wide"], phone
