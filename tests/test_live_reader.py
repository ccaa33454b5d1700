"""The live reader, end to end in a real headless Chromium: served as a static folder on localhost,
it reads shipped held-out examples digit by digit, reads a drawn digit, explains an empty canvas,
answers each of tools/live/handwriting_set.py's hard inputs with its own message, reads the whole
synthetic set and the blind test's pen test half as well as its card says, quotes and links the
post its model comes from, leaves a digit's map on the canvas, stays within its download and latency budgets, and logs no console error.
It wears the site's navbar and colours (cosmo light, darkly dark) with a dark switch that shares
Quarto's stored choice, fits a phone, and embedded in a post (index.html?embed) it drops the navbar,
follows the post's theme and tells the post its height, so that its iframe never clips it."""
import base64
import json
import math
import os
import re
import subprocess
import time

import numpy as np
import pytest
import yaml

from _reader import START
from tools.site.browser import CHROMIUM, CHROMIUM_FLAGS, served
from tools.core.notebooks import REPO_ROOT
from tools.live.reader_model import as_percent  # a share as the post prints it, and as the card must show it

pytestmark = pytest.mark.slow

READER = REPO_ROOT / "reader"
RUNTIME = {"ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"}
MODEL = {"encoder.onnx", "decoder.onnx"}


@pytest.fixture(scope="module")
def site_url():
    """The reader folder, as it is, on a localhost port: exactly what a static host would serve."""
    subprocess.run(["make", "--no-print-directory", "-s", "reader"], cwd=REPO_ROOT, check=True)
    with served(READER) as base:
        yield base + "index.html"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (or set CHROMIUM to its path)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def watch(page):
    """Collect the page's console errors in `page.errors`, the URLs it asked for in `page.requested` and
    those it fetched in `page.fetched`."""
    page.errors, page.fetched, page.requested = [], [], []
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("request", lambda request: page.requested.append(request.url))
    page.on("requestfinished", lambda request: page.fetched.append(request.url))
    return page


def open_reader(browser, site_url, card=None, init_script=None, viewport=(900, 800), color_scheme="light",
                query=""):
    """A fresh page on the reader (given `card` instead of model/card.json if asked), in a system theme,
    with its console errors in `page.errors` and the URLs it fetched in `page.fetched`."""
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=color_scheme)
    page = watch(context.new_page())
    if card is not None:
        page.route(lambda url: url.endswith("/model/card.json"),
                   lambda route: route.fulfill(body=json.dumps(card), content_type="application/json"))
    if init_script:
        page.add_init_script(init_script)
    page.goto(site_url + query)
    page.wait_for_function("window.liveReader !== undefined")
    return page


@pytest.fixture
def page(browser, site_url):
    """A fresh page on the reader; the test fails if the page logs any console error."""
    page = open_reader(browser, site_url)
    yield page
    page.context.close()
    assert page.errors == [], f"console errors: {page.errors}"


def served_card():
    return json.loads((READER / "model" / "card.json").read_text(encoding="utf-8"))


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
    """Draw strokes given in the model's 28×84 pixel coordinates with real pointer events, the
    canvas scrolled into view first, as a visitor would (the mouse only reaches what is on screen)."""
    page.locator("#ink").scroll_into_view_if_needed()
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
    assert page.locator("#message").text_content().startswith(f"Read: {digits}.")


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
    widths = page.evaluate("[...document.querySelectorAll('.boxes span')].map((b) => b.getBoundingClientRect().width)")
    assert len(widths) == 3 and min(widths) >= 0.9 * 360 / 3, f"boxes too narrow for a finger on a phone: {widths}"
    how = page.locator("#how").text_content()
    assert "finger" in how and "tap" in how, how
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
    page.evaluate("window.liveReader.clear()")
    draw(page, SEVEN + FOUR + ZERO)  # a drawing is checked (checkInk) before it is read: that counts too
    page.evaluate("window.liveReader.read()")
    drawn_first_token_ms = page.evaluate("window.liveReader.firstTokenMs")
    drawn_reading_ms = page.evaluate("window.liveReader.readMs")
    names = {url.rsplit("/", 1)[-1] for url in page.fetched}
    assert RUNTIME | MODEL <= names, names
    runtime_and_model = sum((READER / "vendor" / "ort" / name).stat().st_size for name in RUNTIME) + sum(
        (READER / "model" / name).stat().st_size for name in MODEL)
    page_alone = sum((READER / name).stat().st_size for name in names - RUNTIME - MODEL if (READER / name).exists()) \
        + (READER / "model" / "card.json").stat().st_size
    print(f"\nlive reader budgets: model + runtime {runtime_and_model / 1e6:.2f} MB, page without runtime "
          f"{page_alone / 1e3:.0f} kB, first digit {first_token_ms:.0f} ms after Read "
          f"({drawn_first_token_ms:.0f} ms for a drawing, its checks included); the drawing's three digits and "
          f"its verdict, the moved copies read, {drawn_reading_ms:.0f} ms")
    assert runtime_and_model <= 18e6
    assert page_alone <= 200e3
    assert first_token_ms <= 300 and drawn_first_token_ms <= 300
    assert drawn_reading_ms <= 300, "a three-digit reading, warm, within 300 ms (the post's target)"


def test_card_quotes_the_post_and_links_to_it(page):
    card = served_card()
    page.wait_for_function("!document.getElementById('card').textContent.startsWith('Loading')")
    shown = page.locator("#card").text_content()
    quoted = {"parameters": f"{card['parameters']:,} parameters",
              "MNIST, all lengths": f"{as_percent(card['mnist_exact']['all'])} of {card['mnist_canvases']:,} "
                                    "held-out MNIST",
              "pen, all lengths": f"{as_percent(card['pen_exact']['all'])} of {card['pen_canvases']:,} numbers "
                                  "written by real people with a pen",
              **{f"pen, {k} digits": f"{k} digit{'s' if k > '1' else ''} {as_percent(card['pen_exact'][k])}"
                 for k in ("1", "2", "3")},
              "synthetic": f"synthetic handwriting: {as_percent(card['handwriting_exact']['all'])}",
              "people's digits in training": f"learned from {card['recipe']['people_digits']:,} digits written "
                                             f"with a pen by {card['recipe']['people_writers']} other people",
              **({"how it reads": f"together with {len(card['read_with_shifts'])} copies of it, each moved a pixel"}
                 if card.get("read_with_shifts") else {})}
    missing = {what: text for what, text in quoted.items() if text not in shown}
    assert not missing, f"the card does not show {missing}: {shown!r}"
    link = page.locator("#card a")
    assert link.count() == 1 and link.get_attribute("href") == card["post"]["url"], "no link to the post"
    assert link.text_content() == card["post"]["title"]


# ---- what a visitor does that is not one digit per box (tools/live/handwriting_set.py's hard_inputs) ----

PAINT = """(b64) => {
  window.liveReader.clear();
  const grey = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const ink = document.getElementById('ink');
  const context = ink.getContext('2d');
  const picture = context.createImageData(ink.width, ink.height);
  grey.forEach((v, i) => picture.data.set([v, v, v, 255], i * 4));
  context.putImageData(picture, 0, 0);
}"""


def paint(page, canvas):
    """Put a drawing canvas (grey bytes, 280×840) on the page as it is: for a pen the page does not draw with."""
    page.evaluate(PAINT, base64.b64encode(canvas.tobytes()).decode())


def replay(page, strokes):
    """Draw strokes given in drawing-canvas pixels (840×280) with one pointer event per point."""
    page.evaluate("window.liveReader.clear()")
    box = page.locator("#ink").bounding_box()
    to_screen = lambda x, y: (box["x"] + float(x) * box["width"] / 840, box["y"] + float(y) * box["height"] / 280)
    for stroke in strokes:
        page.mouse.move(*to_screen(*stroke[0]))
        page.mouse.down()
        for x, y in stroke[1:]:
            page.mouse.move(*to_screen(x, y))
        page.mouse.up()


NOT_DIGITS = "That doesn't look like digits"
# What the page must say to each hard input: refused with this message, or (small) read with a hint.
HARD_MESSAGES = {
    "dot": NOT_DIGITS,
    "dash": NOT_DIGITS,
    "scribble": NOT_DIGITS,
    "full canvas": NOT_DIGITS,
    "crossing an edge": "The ink crosses the line between box 1 and box 2",
    "fourth digit": "Box 3 seems to hold two digits",
    "thin": "The strokes in boxes 1, 2 and 3 are too thin to read",
}
HINTED_READS = {"small": "boxes 1, 2 and 3 is small: digits that fill most of their box read more reliably"}


# A scribble inside one box, as the handwriting post's cure draws them (a smooth line through 7 to 15 random
# points), here in the page's pen and from another seed. The post measures 300 new scribbles in one box, in the
# cure's pens (`scribbles_one_box_refused`, `scribbles_one_box_stopped`), beside its scribbles of one to three
# boxes, which are refused more often (each box is a chance to see no digit). The page is held to its own bars,
# most refused and nearly all refused or flagged, and its refused share to the post's one-box share less 2.33
# standard errors of the difference (one-sided, 1 %): the page's one pen against the cure's many is the only
# change. (Until 2026-12-07 the post reported the mixed scribbles alone, and the page's one-box share looked like
# a gap of 10 points.)
SCRIBBLES, MOSTLY, NEARLY_ALL = 80, 0.7, 0.9
POST_SCRIBBLES = 300


def posts_scribble_shares():
    """The shares of new one-box scribbles the handwriting post's run (the one that made reader/model) read as
    nothing, and refused or flagged."""
    from tools.core.notebooks import read_notebook
    from tools.live.reader_model import exporting_post
    from tools.numbers.bindings import recorded_results
    records, _ = recorded_results(read_notebook(exporting_post()))
    return records["scribbles_one_box_refused"].number / 100, records["scribbles_one_box_stopped"].number / 100


def below_by_chance(share, count, reference, reference_count, z=2.33):
    """Whether `share` of `count` lies more than z standard errors of the difference below `reference` of
    `reference_count`: a real shortfall, not sampling."""
    pooled = (share * count + reference * reference_count) / (count + reference_count)
    error = math.sqrt(pooled * (1 - pooled) * (1 / count + 1 / reference_count))
    return reference - share > z * error


def test_scribbles_inside_one_box_mostly_get_not_digits(page):
    import numpy as np
    from _handwriting import BOX_PX, PAGE_PEN, catmull_rom
    rng = np.random.default_rng(2026_12_01)
    scribbles = []
    for _ in range(SCRIBBLES):
        size = rng.uniform(0.4, 0.95) * BOX_PX
        points = rng.uniform(0, BOX_PX - size, 2) + rng.uniform(0, size, (int(rng.integers(7, 16)), 2))
        line = np.clip(catmull_rom(points, per_span=8), PAGE_PEN / 2 + 1, BOX_PX - PAGE_PEN / 2 - 2)
        scribbles.append([PAGE_PEN, [np.round(line).astype(int).tolist()]])
    # the page's own pointer handlers, dispatched in the page (this page has no writer's pen: its own draws)
    said = [message for _, message in page.evaluate(READ_CANVASES, scribbles)]
    refused = sum(message.startswith(NOT_DIGITS) for message in said)
    unsure = sum("unsure" in message for message in said if not message.startswith(NOT_DIGITS))
    refused_by_post, stopped_by_post = posts_scribble_shares()
    print(f"\nlive reader: {refused} of {SCRIBBLES} one-box scribbles get {NOT_DIGITS!r}, {unsure} more an unsure "
          f"flag (the post, of its {POST_SCRIBBLES} in one box in the cure's pens: {refused_by_post:.1%} read as "
          f"nothing, {stopped_by_post:.1%} refused or flagged); the others: "
          f"{[m for m in said if not m.startswith(NOT_DIGITS)][:5]}")
    assert refused >= MOSTLY * SCRIBBLES, said
    assert refused + unsure >= NEARLY_ALL * SCRIBBLES, [m for m in said if not m.startswith(NOT_DIGITS)]
    assert not below_by_chance(refused / SCRIBBLES, SCRIBBLES, refused_by_post, POST_SCRIBBLES), (
        f"the page refuses {refused} of {SCRIBBLES} one-box scribbles, the post {refused_by_post:.1%} of its "
        f"{POST_SCRIBBLES}: more apart than sampling explains")


def test_a_shortfall_is_told_from_sampling():
    # 58 of 80 against 86 % of 300 is the gap the mixed scribbles showed; 58 of 80 against 78 % is sampling
    assert below_by_chance(58 / 80, 80, 0.86, 300)
    assert not below_by_chance(58 / 80, 80, 0.78, 300)


@pytest.mark.parametrize("name", [*HARD_MESSAGES, *HINTED_READS])
def test_hard_inputs_get_their_message(page, name):
    from tools.live import handwriting_set
    from tools.live.reader_model import MODEL_DIR
    strokes, pen, meant = handwriting_set.hard_inputs()[name]
    before, _ = handwriting_set.read_with_probabilities(MODEL_DIR, handwriting_set.page_input(strokes, pen))
    if pen == handwriting_set.PAGE_PEN:
        replay(page, strokes)
    else:
        paint(page, handwriting_set.drawing_canvas(strokes, pen))
    digits = page.evaluate("window.liveReader.read()")
    said = page.locator("#message").text_content()
    print(f"\nlive reader, {name} (meant {meant}): the model alone reads {before or '(nothing)'!r}; "
          f"the page reads {digits!r} and says {said!r}")
    if name in HARD_MESSAGES:
        assert said.startswith(HARD_MESSAGES[name]), said
        assert digits is None and page.locator("#reading li").count() == 0, "refused, yet a reading is on show"
        assert "problem" in page.locator("#message").get_attribute("class")
    else:
        assert digits and said.startswith(f"Read: {digits}.") and HINTED_READS[name] in said, said


SET_SAMPLE = 40


def test_ink_checks_let_non_mnist_digits_through(page):
    """The rules that refuse garbage refuse none of the set's digits, drawn with the page's pen (22 px) or
    with their own (11 to 52 px)."""
    from tools.live import handwriting_set
    items = handwriting_set.canvas_strokes(handwriting_set.load_strokes())
    picked = items[::len(items) // SET_SAMPLE][:SET_SAMPLE]
    refused = []
    for label, own_pen, strokes in picked:
        for pen in (handwriting_set.PAGE_PEN, own_pen):
            paint(page, handwriting_set.drawing_canvas(strokes, pen))
            problem = page.evaluate("window.liveReader.checkInk().problem ?? null")
            if problem:
                refused.append((label, pen, problem))
    assert refused == [], f"the page refuses digits of the non-MNIST set: {refused}"


# The set's writers each have their own pen (11 to 52 px, card.json's numbers read them so); the page
# strokes with whatever width its drawing context is given, so the test hands it the canvas's pen.
PEN_OF_THE_WRITER = """
addEventListener('DOMContentLoaded', () => {
  const context = document.getElementById('ink').getContext('2d');
  const lineWidth = Object.getOwnPropertyDescriptor(CanvasRenderingContext2D.prototype, 'lineWidth');
  Object.defineProperty(context, 'lineWidth', {
    get() { return lineWidth.get.call(this); },
    set(width) { lineWidth.set.call(this, window.writersPen ?? width); },
  });
});
"""

# Draws each canvas's strokes (drawing-canvas pixels) with pointer events dispatched on #ink at the
# client coordinates a pointer there reports, then presses Read: the page's own handlers, ink checks
# and preprocessing, without one round trip to Playwright per event. Returns, per canvas, the tokens
# the page showed ("740end"; "" when it refused) and its message.
READ_CANVASES = """async (canvases) => {
  const ink = document.getElementById('ink');
  const box = ink.getBoundingClientRect();
  const pointer = (type, [x, y]) => ink.dispatchEvent(new PointerEvent(type, {
    bubbles: true, cancelable: true, pointerId: 1, pointerType: 'mouse', isPrimary: true,
    button: 0, buttons: type === 'pointerup' ? 0 : 1,
    clientX: box.left + x * box.width / ink.width, clientY: box.top + y * box.height / ink.height,
  }));
  const results = [];
  for (const [pen, strokes] of canvases) {
    window.liveReader.clear();
    window.writersPen = pen;
    for (const stroke of strokes) {
      pointer('pointerdown', stroke[0]);
      for (const point of stroke.slice(1)) pointer('pointermove', point);
      pointer('pointerup', stroke.at(-1));
    }
    await window.liveReader.read();
    const tokens = [...document.querySelectorAll('#reading li')].map((item) => item.dataset.token).join('');
    results.push([tokens, document.getElementById('message').textContent]);
  }
  return results;
}"""
SET_BATCH = 100
# One point of exact-sequence accuracy, counted in canvases (1 in 100 of each group, boundary included):
# the page rasterises with Skia, the post's port of it analytically, so a few canvases read differently.
SET_TOLERANCE = 0.01


def synthetic_items():
    from tools.live import handwriting_set
    return handwriting_set.canvas_strokes(handwriting_set.load_strokes())


def pen_test_items():
    """The blind test's test half as the post draws it: (label, the page's pen, strokes) per number."""
    from _handwriting import PAGE_PEN
    from _pen import pen_halves, pen_numbers
    from tools.live import pen_set
    points, labels = pen_set.pen_digits()
    numbers = pen_numbers(points, labels, pen_halves(labels)[1], pen_set.mnist_aspects(),
                          pen_set.NUMBERS_PER_LENGTH)
    return [(label, PAGE_PEN, strokes) for label, strokes in numbers]


# Each set takes minutes: a worker of its own (tests/conftest.py) reads it while the others run.
@pytest.mark.parametrize("items, card_key", [
    pytest.param(synthetic_items, "handwriting_exact", marks=pytest.mark.xdist_group("live-reader-synthetic-set")),
    pytest.param(pen_test_items, "pen_exact", marks=pytest.mark.xdist_group("live-reader-pen-test-half"))],
    ids=["synthetic set", "pen test half"])
def test_page_reads_each_set_as_well_as_its_card_says(browser, site_url, items, card_key):
    """All 3,000 numbers of a set, drawn through the page: exact-sequence accuracy by length within a
    point of card.json's figure (what the post measured on the same strokes through the same files)."""
    items = items()
    page = open_reader(browser, site_url, init_script=PEN_OF_THE_WRITER)
    started = time.perf_counter()
    results = []
    for start in range(0, len(items), SET_BATCH):
        batch = [[float(pen), [stroke.tolist() for stroke in strokes]]
                 for _, pen, strokes in items[start:start + SET_BATCH]]
        results += page.evaluate(READ_CANVASES, batch)
    seconds = time.perf_counter() - started
    page.context.close()
    assert page.errors == [], f"console errors: {page.errors}"
    right = {k: [] for k in ("1", "2", "3", "all")}
    refused = []
    for (label, _, _), (tokens, said) in zip(items, results):
        exact = tokens == f"{label}end"
        right[str(len(label))].append(exact)
        right["all"].append(exact)
        if not tokens:
            refused.append((label, said))
    shares = {k: sum(v) / len(v) for k, v in right.items()}
    card = served_card()[card_key]
    print(f"\nlive reader in Chromium, {len(items):,} numbers ({card_key}) in {seconds:.0f} s, exact by length: "
          + ", ".join(f"{k} {as_percent(shares[k])} (card {as_percent(card[k])})" for k in right)
          + f"; refused {len(refused)}: {refused[:5]}")
    off = {k: (as_percent(shares[k]), as_percent(card[k])) for k, v in right.items()
           if abs(sum(v) - round(card[k] * len(v))) > round(SET_TOLERANCE * len(v))}
    assert not off, f"the page reads the set unlike card.json says (page, card): {off}; refused: {refused[:10]}"


def test_unsure_threshold_comes_from_the_card(browser, site_url):
    """A reading under card.unsure_below is flagged: with 1.01 every reading is, with 0 none is."""
    said = {}
    for threshold in (1.01, 0.0):
        page = open_reader(browser, site_url, card={**served_card(), "unsure_below": threshold})
        digits = page.evaluate("window.liveReader.loadExample(0).then(() => window.liveReader.read())")
        said[threshold] = page.locator("#message").text_content()
        page.context.close()
        assert digits and page.errors == [], (digits, page.errors)
    assert "The model is unsure of this reading" in said[1.01], said
    assert "unsure" not in said[0.0], said


def test_a_card_with_a_threshold_per_length_flags_by_the_number_of_digits_read(browser, site_url):
    """With one threshold per number of digits read, the one for the reading's own length decides."""
    said = {}
    for flagged_length in (None, 1, 2, 3):
        thresholds = {str(k): (1.01 if k == flagged_length else 0.0) for k in (1, 2, 3)}
        page = open_reader(browser, site_url, card={**served_card(), "unsure_below": thresholds})
        digits = page.evaluate("window.liveReader.loadExample(0).then(() => window.liveReader.read())")
        said[flagged_length] = (len(digits), page.locator("#message").text_content())
        page.context.close()
        assert digits and page.errors == [], (digits, page.errors)
    length = said[None][0]
    for flagged_length, (_, message) in said.items():
        assert ("The model is unsure of this reading" in message) == (flagged_length == length), (length, said)


SHIFTS = [[1, 0], [0, -1], [2, 1]]  # not symmetric: a move in the wrong direction would show


def steady_in_python(pixels, chosen, temperature, shifts):
    """What the post's steady confidence gives for this canvas and reading, through the served graphs: the
    mean over the canvas and its moved copies of each one's product (tools/live/flag_overlap.py's)."""
    import torch
    from tools.live.flag_overlap import view_products
    from tools.live.onnx_reading import onnx_reader
    image = torch.tensor(pixels, dtype=torch.float32).reshape(1, 1, 28, 84)
    return float(view_products(onnx_reader(READER / "model"), image, torch.tensor([chosen]),
                               [tuple(shift) for shift in shifts], temperature).mean())


def test_unsure_flag_reads_the_drawing_moved_a_pixel_each_way(browser, site_url):
    """With the card's unsure_shifts, the page flags by the post's steady confidence: the mean, over the
    canvas and its copies moved by each shift, of the probability each gives the reading. It is the number
    onnxruntime gives for the page's own input, and a card without shifts keeps the canvas's own product."""
    seen = {}
    for shifts in (SHIFTS, []):
        card = {**served_card(), "unsure_shifts": shifts, "unsure_below": 1.01}
        page = open_reader(browser, site_url, card=card)
        digits = page.evaluate("window.liveReader.loadExample(3).then(() => window.liveReader.read())")
        seen[len(shifts)] = page.evaluate("""() => ({steady: window.liveReader.steady, own: window.liveReader.confidence,
          pixels: Array.from(window.liveReader.pixels), chosen: window.liveReader.chosen,
          said: document.getElementById('message').textContent})""")
        page.context.close()
        assert digits and page.errors == [], (digits, page.errors)
    shifted, plain = seen[len(SHIFTS)], seen[0]
    expected = steady_in_python(shifted["pixels"], shifted["chosen"], served_card()["temperature"], SHIFTS)
    assert abs(shifted["steady"] - expected) < 1e-4, (shifted["steady"], expected)
    assert abs(shifted["steady"] - shifted["own"]) > 1e-6, "the moved copies count"
    assert plain["steady"] == plain["own"], plain
    assert "moved a pixel each way" in shifted["said"] and "moved a pixel" not in plain["said"], (shifted, plain)


def test_a_card_with_read_with_shifts_reads_the_views_together(browser, site_url):
    """With the card's read_with_shifts the page reads as the post's read_views(together=True): its tokens
    are onnxruntime's together-reading of the same input; its own confidence is the drawing's product and
    its steady one (unsure_shifts being the same moves) the mean of every view's, from the same decoder runs.
    Without them it reads the drawing alone, one view."""
    import torch
    from tools.live.onnx_reading import onnx_reader, read_all, read_together
    temperature, seen = served_card()["temperature"], {}
    for reading in (SHIFTS, []):
        card = {**served_card(), "read_with_shifts": reading, "unsure_shifts": SHIFTS, "unsure_below": 1.01}
        page = open_reader(browser, site_url, card=card)
        digits = page.evaluate("window.liveReader.loadExample(3).then(() => window.liveReader.read())")
        seen[len(reading)] = page.evaluate("""() => ({steady: window.liveReader.steady, own: window.liveReader.confidence,
          views: window.liveReader.views, pixels: Array.from(window.liveReader.pixels), chosen: window.liveReader.chosen})""")
        page.context.close()
        assert digits and page.errors == [], (digits, page.errors)
    together, alone = seen[len(SHIFTS)], seen[0]
    assert (together["views"], alone["views"]) == (len(SHIFTS) + 1, 1)
    reader = onnx_reader(READER / "model")
    for shown, expected in (
            (together["chosen"], read_together(reader, torch.tensor(together["pixels"]).reshape(1, 1, 28, 84),
                                               SHIFTS, temperature)[0].tolist()),
            (alone["chosen"], read_all(reader, torch.tensor(alone["pixels"]).reshape(1, 1, 28, 84))[0].tolist())):
        assert shown == expected[:len(shown)] and (shown[-1] >= 10 or len(shown) == len(expected)), (shown, expected)
    assert abs(together["own"] - steady_in_python(together["pixels"], together["chosen"], temperature, [])) < 1e-4
    assert abs(together["steady"] - steady_in_python(together["pixels"], together["chosen"], temperature, SHIFTS)) < 1e-4


# ---- after a read ------------------------------------------------------------------------------

OVERLAY = "document.getElementById('attention').toDataURL()"
OVERLAY_EMPTY = """(() => {
  const canvas = document.getElementById('attention');
  return canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data.every((v) => v === 0);
})()"""


def test_a_digits_map_stays_and_drawing_again_clears_it(page):
    label, digits, _ = read_example(page, 2)
    assert digits, f"example {label} read as nothing"
    shown = page.locator("#reading li.shown")
    assert shown.count() == 1, "no token marked as the one whose map is on the canvas"
    assert shown.get_attribute("class").split() == ["digit", "shown"], "the end token's map is left on the canvas"
    assert shown.get_attribute("data-step") == str(len(digits))
    said = page.locator("#looked").text_content()
    assert f"digit {len(digits)}, “{digits[-1]}”" in said, said
    left = page.evaluate(OVERLAY)
    assert not page.evaluate(OVERLAY_EMPTY)
    page.hover("#reading li.end")
    assert page.evaluate(OVERLAY) != left and "end token" in page.locator("#looked").text_content()
    page.locator("#reading li.digit").last.click()  # a tap brings the digit's map back
    assert page.evaluate(OVERLAY) == left
    draw(page, SEVEN)
    assert page.locator("#reading li").count() == 0 and page.evaluate(OVERLAY_EMPTY)
    assert page.locator("#message").text_content() == page.locator("#looked").text_content() == ""


def test_probabilities_are_not_capped_by_label_smoothing(page):
    """Label smoothing (0.1 over 13 tokens) holds the softmax near 91 %; the card's temperature (below 1)
    lifts a sure token above that, and the note under the reading says how the percentages are made."""
    shown = []
    for index in range(4):
        read_example(page, index)
        shown += [float(text.rstrip("%")) for text in page.locator("#reading .probability").all_text_contents()]
    print(f"\nlive reader: percentages shown for 4 examples: {shown}")
    assert all(0 <= value <= 100 for value in shown)
    assert max(shown) > 92, "no reading above the label-smoothing cap: the temperature is not applied"
    note = page.locator("#percent-note").text_content()
    assert "temperature" in note and "label smoothing" in note.lower(), note


# ---- inside the site, in either theme -----------------------------------------------------------

# The site's colours as Quarto 1.7 renders them (cosmo with assets/theme-light.scss, darkly with
# assets/theme-dark.scss); reader/reader.css copies them.
THEMES = {
    "light": {"background": "rgb(255, 255, 255)", "text": "rgb(52, 58, 64)", "navbar": "rgb(26, 95, 180)"},
    "dark": {"background": "rgb(34, 34, 34)", "text": "rgb(255, 255, 255)", "navbar": "rgb(55, 90, 127)"},
}
# Where Quarto keeps the visitor's choice, and how: "alternate" is the dark theme, "default" the light.
QUARTO_KEY = "quarto-color-scheme"
def site_links():
    """The site's navbar (left) as the reader's page must link it: _quarto.yml is the one list."""
    navbar = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text())["website"]["navbar"]["left"]
    return [(item["text"], "index.html" if item["href"] == "reader/index.html"
             else "../" + item["href"].replace(".qmd", ".html")) for item in navbar]


SITE_LINKS = site_links()


def storing(choice):
    """An init script that stores `choice` under Quarto's key before the page's own scripts run."""
    return f"localStorage.setItem('{QUARTO_KEY}', '{choice}')"


def stored(page):
    return page.evaluate(f"localStorage.getItem('{QUARTO_KEY}')")


def luminance(css_colour):
    channels = [float(v) / 255 for v in re.findall(r"[\d.]+", css_colour)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(foreground, background):
    lighter, darker = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


# An element's text colour and the first opaque background behind it (its own or an ancestor's).
COLOURS = """(selector) => {
  const element = document.querySelector(selector);
  let behind = element;
  while (behind && /, 0\\)$|transparent/.test(getComputedStyle(behind).backgroundColor)) behind = behind.parentElement;
  return [getComputedStyle(element).color, getComputedStyle(behind ?? document.documentElement).backgroundColor];
}"""


def theme(page):
    """The theme a page (or frame) shows: its <html data-theme>, which its body's colours must match."""
    shown = page.evaluate("document.documentElement.dataset.theme")
    assert shown in THEMES, f"no theme on <html>: {shown!r}"
    colours = page.evaluate(COLOURS, "body")
    assert colours == [THEMES[shown]["text"], THEMES[shown]["background"]], f"{shown} theme, yet body colours {colours}"
    return shown


def closed_cleanly(page):
    page.context.close()
    assert page.errors == [], f"console errors: {page.errors}"


def test_the_navbar_is_the_sites(page):
    header = page.locator("header.site-header")
    assert header.is_visible()
    title = header.locator(".site-title")
    assert title.text_content() == "Reading digits with transformers" and title.get_attribute("href") == "../index.html"
    links = header.locator("nav a")
    assert [(link.text_content(), link.get_attribute("href")) for link in links.all()] == SITE_LINKS
    assert header.locator("nav a[aria-current=page]").text_content() == "Try it"
    switch = page.get_by_role("button", name="Dark mode")
    assert switch.count() == 1 and switch.is_visible() and header.locator("#theme-switch").count() == 1


def test_the_switch_toggles_the_theme_and_stores_it_as_quarto_does(browser, site_url):
    page = open_reader(browser, site_url, color_scheme="light")
    switch = page.get_by_role("button", name="Dark mode")
    assert theme(page) == "light" and stored(page) is None and switch.get_attribute("aria-pressed") == "false"
    switch.click()
    assert theme(page) == "dark" and stored(page) == "alternate" and switch.get_attribute("aria-pressed") == "true"
    page.locator("header nav a", has_text="About").focus()
    page.keyboard.press("Tab")  # the next stop after the links
    assert page.evaluate("document.activeElement.id") == "theme-switch"
    page.keyboard.press("Enter")
    assert theme(page) == "light" and stored(page) == "default" and switch.get_attribute("aria-pressed") == "false"
    page.keyboard.press("Space")
    assert theme(page) == "dark" and stored(page) == "alternate"
    # The next page of the site shares the storage: the choice holds there, whatever the system says.
    again = watch(page.context.new_page())
    again.goto(site_url)
    again.wait_for_function("window.liveReader !== undefined")
    assert theme(again) == "dark"
    assert again.errors == [], f"console errors: {again.errors}"
    closed_cleanly(page)


@pytest.mark.parametrize("choice, system, shown", [
    ("alternate", "light", "dark"),  # chosen on the site (Quarto's dark theme): over the system's
    ("default", "dark", "light"),
    (None, "dark", "dark"),          # nothing chosen yet: the system's
    (None, "light", "light"),
])
def test_the_stored_choice_opens_in_its_theme_else_the_systems(browser, site_url, choice, system, shown):
    page = open_reader(browser, site_url, init_script=choice and storing(choice), color_scheme=system)
    assert theme(page) == shown
    pressed = page.get_by_role("button", name="Dark mode").get_attribute("aria-pressed")
    assert pressed == ("true" if shown == "dark" else "false"), pressed
    closed_cleanly(page)


def test_the_theme_follows_the_system_and_other_tabs(browser, site_url):
    page = open_reader(browser, site_url, color_scheme="light")
    page.emulate_media(color_scheme="dark")  # nothing stored: the system's change counts
    page.wait_for_function("document.documentElement.dataset.theme === 'dark'", timeout=5_000)
    other = page.context.new_page()  # the site in another tab: its switch stores Quarto's value
    other.goto(site_url.rsplit("/", 1)[0] + "/examples.json")
    other.evaluate(f"localStorage.setItem('{QUARTO_KEY}', 'default')")
    page.wait_for_function("document.documentElement.dataset.theme === 'light'", timeout=5_000)
    assert theme(page) == "light"
    closed_cleanly(page)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_lives_in_the_site_in_either_theme(browser, site_url, scheme):
    page = open_reader(browser, site_url, color_scheme=scheme)
    colours = THEMES[scheme]
    assert theme(page) == scheme
    assert page.evaluate(COLOURS, "header .site-title")[1] == colours["navbar"]
    page.evaluate("window.liveReader.loadExample(0).then(() => window.liveReader.read())")
    page.wait_for_function("!document.getElementById('card').textContent.startsWith('Loading')")
    texts = ["body", "h1", "#how", "#percent-note", "#card", "#card a", "#message", "#looked", "#reading .token",
             "#reading .probability", "#clear", "#example", "header .site-title", "header nav a",
             "header nav a[aria-current=page]", "#theme-switch"]
    page.click("#clear")
    page.click("#read")  # an empty canvas: the problem colour shows
    texts.append("#message.problem")
    for selector in texts:
        if selector.startswith("#reading") or selector == "#looked":
            continue  # cleared with the canvas: checked below, after another read
        colour, behind = page.evaluate(COLOURS, selector)
        assert contrast(colour, behind) >= 4.5, f"{scheme}: {selector} {colour} on {behind}"
    page.evaluate("window.liveReader.loadExample(1).then(() => window.liveReader.read())")
    for selector in ("#reading .token", "#reading .probability", "#looked", "#message"):
        colour, behind = page.evaluate(COLOURS, selector)
        assert contrast(colour, behind) >= 4.5, f"{scheme}: {selector} {colour} on {behind}"
    colour, button = page.evaluate(COLOURS, "#read")
    assert contrast(colour, button) >= 4.5 and button == colours["navbar"], f"Read button {colour} on {button}"
    closed_cleanly(page)


# ---- on a phone ----------------------------------------------------------------------------------

# Elements that stick out of the viewport sideways, or whose text is cut (an ellipsis, hidden overflow).
CUT_OFF = """() => {
  const width = document.documentElement.clientWidth;
  const name = (e) => e.id || (typeof e.className === 'string' && e.className) || e.tagName;
  const shown = [...document.body.querySelectorAll('*')]
    .filter((e) => e.getClientRects().length && !e.closest('.visually-hidden'));
  return shown.filter((e) => {
    const box = e.getBoundingClientRect();
    return box.left < -0.5 || box.right > width + 0.5 || e.scrollWidth > e.clientWidth + 1;
  }).map(name);
}"""
# Each control's size: buttons, the navbar's links, the tokens of a reading.
TARGETS = """() => [...document.querySelectorAll('button, header a, #reading li')]
  .filter((e) => e.getClientRects().length)
  .map((e) => [e.id || e.textContent.trim(), e.getBoundingClientRect().width, e.getBoundingClientRect().height])"""


@pytest.mark.parametrize("width", [360, 390])
def test_fits_a_phone(browser, site_url, width):
    page = open_reader(browser, site_url, viewport=(width, 800))
    page.evaluate("window.liveReader.loadExample(0).then(() => window.liveReader.read())")
    page.wait_for_function("!document.getElementById('card').textContent.startsWith('Loading')")
    sideways = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert sideways[0] <= sideways[1], f"sideways scrolling at {width} px: {sideways}"
    canvas = page.locator("#ink").bounding_box()["width"]
    assert canvas >= 0.95 * width, f"the drawing area is {canvas:.0f} px wide on a {width} px phone"
    assert page.evaluate(CUT_OFF) == [], f"cut off at {width} px"
    small = [(name, round(w), round(h)) for name, w, h in page.evaluate(TARGETS) if min(w, h) < 44]
    assert small == [], f"tap targets under 44 px at {width} px: {small}"
    closed_cleanly(page)


# ---- inside a post: index.html?embed -------------------------------------------------------------

# What a post puts after its iframe, as recommended in the README: each embedded reader's iframe
# takes the height its reader posts (several readers on one page each get their own).
PARENT_SNIPPET = """<script>
  // Size each embedded live reader to its content: the reader posts its height whenever it changes.
  addEventListener("message", (e) => {
    if (!e.data || e.data.type !== "reader-height") return;
    for (const iframe of document.querySelectorAll("iframe.live-reader-embed")) {
      if (iframe.contentWindow === e.source) iframe.style.height = e.data.height + "px";
    }
  });
</script>"""
# A post as Quarto renders one, reduced to what matters here: the theme class on <body>, a text
# column with padding, the iframe, and the snippet.
POST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>A post</title><link rel="icon" href="data:,">
<style>
  body {{ margin: 0; font: 17px/1.5 system-ui, sans-serif; }}
  body.quarto-light {{ background: #fff; color: #343a40; }}
  body.quarto-dark {{ background: #222; color: #fff; }}
  main {{ max-width: 800px; margin: 0 auto; padding: 1rem 25px; }}
  iframe.live-reader-embed {{ display: block; width: 100%; border: 0; height: 600px; }}
</style></head>
<body class="nav-fixed quarto-light"><main>
  <h1>A post</h1>
  <p>Draw a number below.</p>
  <iframe class="live-reader-embed" src="reader/index.html?embed"
          title="Live reader: draw a number, watch it being read"></iframe>
  <p>After the reader.</p>
</main>
{snippet}
</body></html>"""
# The heights the reader posted, in the order they came (in the post, not in the reader's own frame).
RECORD_HEIGHTS = """if (window === window.top) {
  window.readerHeights = [];
  addEventListener('message', (e) => { if (e.data?.type === 'reader-height') window.readerHeights.push(e.data.height); });
}"""
FIT = """() => {
  const frame = document.querySelector('iframe.live-reader-embed');
  const inner = frame.contentDocument;
  const bottom = (selector) => inner.querySelector(selector).getBoundingClientRect().bottom;
  return {
    ready: inner.readyState === 'complete' && !!inner.defaultView.liveReader
      && !inner.getElementById('card').textContent.startsWith('Loading'),
    frame: frame.clientHeight, scrollHeight: inner.documentElement.scrollHeight,
    posted: window.readerHeights.at(-1) ?? null, card: bottom('#card'),
    sideways: inner.documentElement.scrollWidth - inner.documentElement.clientWidth,
    navbar: inner.getElementById('site-header').getClientRects().length > 0,
    top: inner.querySelector('main').firstElementChild.getBoundingClientRect().top,
  };
}"""


@pytest.fixture(scope="module")
def post_url(site_url, tmp_path_factory):
    """A post-like page on its own localhost port, with the reader folder beside it (the same origin)."""
    folder = tmp_path_factory.mktemp("post")
    (folder / "reader").symlink_to(READER, target_is_directory=True)
    (folder / "post.html").write_text(POST_PAGE.format(snippet=PARENT_SNIPPET), encoding="utf-8")
    with served(folder) as base:
        yield base + "post.html"


def open_post(browser, post_url, width, color_scheme="light", init_script=None):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=color_scheme)
    page = watch(context.new_page())
    page.add_init_script(RECORD_HEIGHTS)
    if init_script:
        page.add_init_script(init_script)
    page.goto(post_url)
    return page


def reader_frame(page):
    frame = page.frame_locator("iframe.live-reader-embed").locator("html")  # waits for the frame to attach
    frame.wait_for()
    inner = next(f for f in page.frames if "embed" in f.url)
    inner.wait_for_function("window.liveReader !== undefined")
    return inner


def assert_fits(page, when):
    """The iframe shows all of the reader, and no more: it has taken the height the reader last posted."""
    # Right after a resize the old height still matches the old layout: wait for all of it to hold.
    settled = ("() => { const f = (" + FIT + ")(); return f.ready && f.posted === f.frame "
               "&& f.scrollHeight === f.frame && f.frame - f.card <= 12; }")
    try:
        page.wait_for_function(settled, timeout=10_000)
    except Exception:
        pass  # the assertions below say what is wrong
    fit = page.evaluate(FIT)
    assert fit["ready"], f"{when}: the reader did not load: {fit}"
    assert fit["scrollHeight"] <= fit["frame"], f"{when}: the iframe clips the reader: {fit}"
    assert fit["posted"] == fit["scrollHeight"], f"{when}: posted height is not the document's: {fit}"
    assert fit["card"] <= fit["frame"], f"{when}: the model card is cut: {fit}"
    assert fit["frame"] - fit["card"] <= 12, f"{when}: a blank band under the card (the iframe did not shrink): {fit}"
    assert fit["sideways"] <= 0 and not fit["navbar"] and fit["top"] <= 1, f"{when}: {fit}"


@pytest.mark.parametrize("start", [390, 1280])
def test_the_embedded_reader_sizes_its_iframe_to_fit(browser, post_url, start):
    page = open_post(browser, post_url, start)
    frame = reader_frame(page)
    assert_fits(page, f"at {start} px")
    frame.evaluate("window.liveReader.loadExample(0).then(() => window.liveReader.read())")
    assert_fits(page, f"at {start} px, after a read")
    other = 1280 if start == 390 else 390
    for width in (other, start):  # narrower makes it taller, wider shorter again: both ways
        page.set_viewport_size({"width": width, "height": 900})
        assert_fits(page, f"resized from {start} to {width} px")
    closed_cleanly(page)


def test_the_embedded_reader_follows_the_posts_theme(browser, post_url):
    # the system and the stored choice both say dark: the post's own theme (light) wins
    page = open_post(browser, post_url, 900, color_scheme="dark", init_script=storing("alternate"))
    frame = reader_frame(page)
    assert theme(frame) == "light"
    for quarto_class, shown in (("quarto-dark", "dark"), ("quarto-light", "light")):
        page.evaluate(f"document.body.classList.remove('quarto-dark', 'quarto-light');"
                      f"document.body.classList.add('{quarto_class}')")
        frame.wait_for_function(f"document.documentElement.dataset.theme === '{shown}'", timeout=5_000)
        assert theme(frame) == shown
    closed_cleanly(page)


def test_embed_mode_on_its_own_drops_the_navbar_and_opens_links_in_the_post(browser, site_url):
    page = open_reader(browser, site_url, query="?embed", init_script=storing("alternate"))
    assert not page.locator("#site-header").is_visible()
    top = page.evaluate("document.querySelector('main').firstElementChild.getBoundingClientRect().top")
    assert top <= 1, f"a blank band of {top} px above the reader"
    assert theme(page) == "dark"  # no Quarto page around it: the stored choice
    page.wait_for_function("!document.getElementById('card').textContent.startsWith('Loading')")
    target = page.evaluate("document.querySelector('#card a').target || document.querySelector('base')?.target")
    assert target == "_top", "the card's link would open the post inside the iframe"
    closed_cleanly(page)


# ---- accessibility and requests, as the rendered-site test checks the site's pages ---------------

AXE = REPO_ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_SERIOUS = """async () => {
  // A token box fades in over 0.25 s; mid-fade its text is paler than it will stay, so axe would
  // measure a contrast no reader is left with. Judge the page once every animation has run.
  await Promise.all(document.getAnimations().map(a => a.finished));
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; ')}`);
}"""


@pytest.mark.parametrize("scheme, width, query", [("light", 1280, ""), ("dark", 390, ""), ("dark", 390, "?embed")])
def test_axe_finds_nothing_serious_and_nothing_comes_from_elsewhere(browser, site_url, scheme, width, query):
    if not AXE.exists():
        subprocess.run(["make", "--no-print-directory", "-s", "axe"], cwd=REPO_ROOT, check=True)
    page = open_reader(browser, site_url, viewport=(width, 800), color_scheme=scheme, query=query)
    page.evaluate("window.liveReader.loadExample(0).then(() => window.liveReader.read())")
    page.add_script_tag(path=str(AXE))  # inline: not a request
    assert page.evaluate(AXE_SERIOUS) == []
    origin = site_url.rsplit("/", 1)[0] + "/"
    elsewhere = [url for url in page.requested if not url.startswith((origin, "data:"))]
    assert elsewhere == [], f"requests to another host: {elsewhere}"
    closed_cleanly(page)
