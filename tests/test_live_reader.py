"""The live reader, end to end in a real headless Chromium: served as a static folder on localhost,
it reads shipped held-out examples digit by digit, reads a drawn digit, explains an empty canvas,
stays within its download and latency budgets, and logs no console error."""
import functools
import json
import os
import shutil
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tools.notebooks import REPO_ROOT

pytestmark = pytest.mark.slow

READER = REPO_ROOT / "reader"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Flags for a sandboxed root user on a machine without outside network (see .ci/run).
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
RUNTIME = {"ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"}
MODEL = {"encoder.onnx", "decoder.onnx"}


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site_url():
    """The reader folder, as it is, on a localhost port: exactly what a static host would serve."""
    subprocess.run(["make", "--no-print-directory", "-s", "reader"], cwd=REPO_ROOT, check=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(READER)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (or set CHROMIUM to its path)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, site_url):
    """A fresh page on the reader; the test fails if the page logs any console error."""
    context = browser.new_context(viewport={"width": 900, "height": 800})
    page = context.new_page()
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    fetched = []
    page.on("requestfinished", lambda request: fetched.append(request.url))
    page.goto(site_url)
    page.wait_for_function("window.liveReader !== undefined")
    page.fetched = fetched
    yield page
    context.close()
    assert errors == [], f"console errors: {errors}"


# Records how many tokens are on show after each change to the reading, to see them arrive one by one.
ARRIVALS = """() => {
  window.arrivals = [];
  window.arrivalObserver?.disconnect();
  window.arrivalObserver = new MutationObserver(
    () => window.arrivals.push(document.querySelectorAll('#reading li').length));
  window.arrivalObserver.observe(document.getElementById('reading'), { childList: true });
}"""


def read_example(page, index):
    label = page.evaluate(f"window.liveReader.loadExample({index})")
    page.evaluate(ARRIVALS)
    digits = page.evaluate("window.liveReader.read()")
    return label, digits, page.evaluate("window.arrivals")


def test_shipped_examples_are_read_one_digit_at_a_time(page):
    results = [read_example(page, index) for index in range(10)]
    score = sum(label == digits for label, digits, _ in results)
    print(f"\nlive reader: {score}/10 shipped held-out examples read right: "
          + ", ".join(f"{label}->{digits}" for label, digits, _ in results))
    assert score >= 9
    for label, digits, arrivals in results:
        tokens = len(digits) + 1  # the digits, then <end>
        assert arrivals[-tokens:] == list(range(1, tokens + 1)), f"{label}: tokens arrived as {arrivals}"
    assert page.locator("#reading li.end").count() == 1
    assert page.locator("#announce").text_content().startswith("The model stops")


def draw(page, strokes):
    """Draw strokes given in the model's 28×84 pixel coordinates with real pointer events."""
    box = page.locator("#ink").bounding_box()
    to_screen = lambda x, y: (box["x"] + x * box["width"] / 84, box["y"] + y * box["height"] / 28)
    for stroke in strokes:
        page.mouse.move(*to_screen(*stroke[0]))
        page.mouse.down()
        for point in stroke[1:]:
            page.mouse.move(*to_screen(*point), steps=4)
        page.mouse.up()


SEVEN = [[(8, 7), (20, 7), (12, 22)]]
FOUR = [[(38, 5), (34, 16), (46, 16)], [(44, 6), (44, 23)]]
ZERO = [[(70, 5), (64, 10), (64, 18), (70, 23), (76, 18), (76, 10), (70, 5)]]


def test_drawn_digits_are_read(page):
    draw(page, SEVEN + FOUR + ZERO)  # "740", one digit per box
    digits = page.evaluate("window.liveReader.read()")
    print(f"\nlive reader: strokes drawn as 7, 4, 0 were read as {digits}")
    assert digits and digits.isdigit() and len(digits) == 3, digits
    assert page.locator("#reading li").last.get_attribute("data-token") == "end"
    assert page.locator("#message").text_content() == f"Read: {digits}"


def test_empty_canvas_gets_a_clear_message(page):
    page.click("#clear")
    page.click("#read")
    assert "The canvas is empty" in page.locator("#message").text_content()
    assert page.locator("#reading li").count() == 0


def test_gap_before_a_drawn_box_is_reported(page):
    draw(page, [[(42, 5), (42, 23)]])  # only the middle box
    page.click("#read")
    assert "Box 1 is empty" in page.locator("#message").text_content()


def test_controls_work_from_the_keyboard_and_on_a_phone(page):
    page.set_viewport_size({"width": 360, "height": 740})
    assert page.evaluate("document.documentElement.scrollWidth") <= 360, "no sideways scrolling on a phone"
    page.focus("#example")
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('message').textContent.startsWith('Held-out example')")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.id") == "read"
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('message').textContent.startsWith('Read: ')", timeout=20_000)


def test_budgets(page):
    read_example(page, 0)  # loads the runtime and the model
    read_example(page, 1)
    first_token_ms = page.evaluate("window.liveReader.firstTokenMs")
    names = {url.rsplit("/", 1)[-1] for url in page.fetched}
    assert RUNTIME | MODEL <= names, names
    runtime_and_model = sum((READER / "vendor" / "ort" / name).stat().st_size for name in RUNTIME) + sum(
        (READER / "model" / name).stat().st_size for name in MODEL)
    page_alone = sum((READER / name).stat().st_size for name in names - RUNTIME - MODEL if (READER / name).exists()) \
        + (READER / "model" / "card.json").stat().st_size
    card = json.loads((READER / "model" / "card.json").read_text())
    print(f"\nlive reader budgets: model + runtime {runtime_and_model / 1e6:.2f} MB, page without runtime "
          f"{page_alone / 1e3:.0f} kB, first digit {first_token_ms:.0f} ms after Read; "
          f"held-out exact through ONNX {100 * card['held_out_exact_onnx']:.1f} %")
    assert runtime_and_model <= 18e6
    assert page_alone <= 200e3
    assert first_token_ms <= 300
