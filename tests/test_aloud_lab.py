"""The decoding lab (reader/aloud/): the numbers-aloud post's model, read aloud in a real headless Chromium.

Served as a static folder on localhost (reader/, so the lab finds the live reader's pinned ONNX Runtime
Web in ../vendor/ort), the lab reads a sample of the post's held-out numbers greedily, word for word as
the post's own greedy decoding read them (card.json holds every reading); beam search gives a reading
and keeps at most its width of hypotheses, best first; every step shows probabilities that sum to at
most 1 and an attention row that sums to 1; it works from the keyboard, fits a 390 px phone, has no
serious axe finding in either theme, logs no console error and asks no other host for anything; inside
a post (index.html?embed) it drops its navbar and tells the post its height.

Without a browser: reader/aloud/model/ holds exactly the files whose SHA-256s the post printed, its card
has what the lab reads, and `make aloud-model` (tools/live/aloud_model.py, the live reader's publish
steps in tools/live/publish_export.py) refuses a file whose digest the post did not print.
"""
import json
import os
import shutil
import subprocess

import pytest

from tests.factory import publishable, ran, save_post, stream
from tools.core.notebooks import REPO_ROOT, read_notebook
from tools.core.printed import printed_digests
from tools.live import aloud_model
from tools.live.aloud_model import ALOUD_SLUG, MODEL_DIR, card_problems, graph_problems, publish
from tools.live.publish_export import file_sha256
from tools.live.reader_files import EXPORTED, PublishError
from tools.site.browser import CHROMIUM, CHROMIUM_FLAGS, served

READER = REPO_ROOT / "reader"
LAB = READER / "aloud"
AXE = REPO_ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SAMPLE = 20  # held-out numbers read in the browser


def served_card():
    return json.loads((MODEL_DIR / "card.json").read_text(encoding="utf-8"))


def sample_numbers(card, count=SAMPLE):
    """`count` of the card's held-out numbers, spread over the set (every k-th in numeric order)."""
    numbers = sorted(card["greedy_readings"], key=int)
    step = max(1, len(numbers) // count)
    return numbers[::step][:count]


# ---- reader/aloud/model against the real post ----------------------------------------------------

def test_served_files_are_the_ones_the_post_printed():
    post = aloud_model.aloud_post()
    printed = printed_digests(read_notebook(post))
    missing = [name for name in EXPORTED if name not in printed]
    assert not missing, (f"{post.parent.name}: its outputs print no `  <name>  sha256 <hex>` line for {missing}: "
                         "re-execute the post (make execute POST=numbers-aloud), then make aloud-model")
    served = sorted(path.name for path in MODEL_DIR.iterdir())
    assert served == sorted(EXPORTED), f"reader/aloud/model holds {served}, not only {sorted(EXPORTED)}: make aloud-model"
    for name in EXPORTED:
        assert file_sha256(MODEL_DIR / name) in printed[name], (
            f"reader/aloud/model/{name} is not the file {post.parent.name} printed the digest of: make aloud-model")


def test_card_has_what_the_lab_reads_and_every_held_out_number():
    card = served_card()
    assert card_problems(card, ALOUD_SLUG) == []
    assert graph_problems(MODEL_DIR) == []
    nb = read_notebook(aloud_model.aloud_post())
    held_out = next(output for cell in nb.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
                    if output.get("metadata", {}).get("reading-digits/result", {}).get("name") == "held_out_numbers")
    assert len(card["greedy_readings"]) == held_out["metadata"]["reading-digits/result"]["number"]


# ---- the publish step refuses what the post did not print ----------------------------------------

def fixture_card(folder):
    card = served_card()
    card["post"]["url"] = f"{aloud_model.site_url()}posts/{folder}/"
    return card


def exporting_fixture(posts_dir, card=None, printed=EXPORTED):
    """The numbers-aloud post under `posts_dir`, its model/ holding the served graphs and a card, printing the
    digests of `printed`."""
    export = posts_dir / ALOUD_SLUG / "model"
    export.mkdir(parents=True)
    for name in ("encoder.onnx", "decoder.onnx"):
        shutil.copyfile(MODEL_DIR / name, export / name)
    (export / "card.json").write_text(json.dumps(card or fixture_card(ALOUD_SLUG), indent=1), encoding="utf-8")
    lines = "".join(f"  {name}  sha256 {file_sha256(export / name)}\n" for name in printed)
    return save_post(publishable(ran("export_for_the_lab()", stream(lines))), posts_dir, folder=ALOUD_SLUG, links=False)


@pytest.fixture
def lab_model(tmp_path):
    """The lab's model folder as it is before publishing: older files."""
    folder = tmp_path / "aloud" / "model"
    folder.mkdir(parents=True)
    for name in EXPORTED:
        (folder / name).write_bytes(b"old " + name.encode())
    return folder


def folder_state(folder):
    return {path.name: path.read_bytes() for path in folder.iterdir()}, sorted(p.name for p in folder.parent.iterdir())


def test_publish_copies_the_printed_export(tmp_path, lab_model):
    post = exporting_fixture(tmp_path / "posts")
    card = publish(post, lab_model, echo=lambda line: None)
    assert sorted(path.name for path in lab_model.iterdir()) == sorted(EXPORTED)
    for name in EXPORTED:
        assert (lab_model / name).read_bytes() == (post.parent / "model" / name).read_bytes(), name
    assert card == fixture_card(ALOUD_SLUG)


@pytest.mark.parametrize("changed", EXPORTED)
def test_publish_refuses_a_file_whose_digest_the_post_did_not_print(tmp_path, lab_model, changed):
    post = exporting_fixture(tmp_path / "posts")
    with open(post.parent / "model" / changed, "ab") as file:
        file.write(b" ")  # no longer the file the stored run printed the digest of
    before = folder_state(lab_model)
    with pytest.raises(PublishError) as refused:
        publish(post, lab_model)
    message = str(refused.value)
    assert "\n" not in message and f"model/{changed}" in message and "make execute POST=reading-numbers-aloud" in message
    assert folder_state(lab_model) == before, "a refused export changed the lab's folder"


def test_publish_refuses_a_file_the_post_prints_no_line_for(tmp_path, lab_model):
    post = exporting_fixture(tmp_path / "posts", printed=("encoder.onnx", "decoder.onnx"))
    with pytest.raises(PublishError, match=r"model/card\.json .*prints no digest"):
        publish(post, lab_model)


@pytest.mark.parametrize("change, said", [
    (lambda card: card["greedy_readings"].update({"1000": "one thousand"}), "not numbers from 0 to 999"),
    (lambda card: card["greedy_readings"].update({"7": "sevven"}), "uses words not in \"words\""),
    (lambda card: card.update(tokens={"start": 1, "end": 11, "pad": 12}), "does not hold <start>"),
    (lambda card: card["sizes"].pop("target_length"), "\"sizes\" needs whole numbers"),
    (lambda card: card.update(beam_width=0), "\"beam_width\" is 0"),
    (lambda card: card["post"].update(url="https://example.org/"), "\"post\".\"url\""),
])
def test_publish_refuses_a_card_the_lab_cannot_read(tmp_path, lab_model, change, said):
    card = fixture_card(ALOUD_SLUG)
    change(card)
    post = exporting_fixture(tmp_path / "posts", card=card)
    before = folder_state(lab_model)
    with pytest.raises(PublishError) as refused:
        publish(post, lab_model)
    assert said in str(refused.value) and "is not what the decoding lab loads" in str(refused.value)
    assert folder_state(lab_model) == before


def test_publish_refuses_graphs_the_lab_cannot_feed(tmp_path, lab_model):
    """The live reader's graphs load, but take an image, not source ids."""
    post = exporting_fixture(tmp_path / "posts")
    for name in ("encoder.onnx", "decoder.onnx"):
        shutil.copyfile(READER / "model" / name, post.parent / "model" / name)
    lines = "".join(f"  {name}  sha256 {file_sha256(post.parent / 'model' / name)}\n" for name in EXPORTED)
    save_post(publishable(ran("export_for_the_lab()", stream(lines))), tmp_path / "posts", ALOUD_SLUG, links=False)
    with pytest.raises(PublishError, match=r"encoder\.onnx takes \['image'\]"):
        publish(post, lab_model)


def test_make_aloud_model_says_what_to_run_in_one_line(tmp_path, monkeypatch, capsys, lab_model):
    post = exporting_fixture(tmp_path / "posts")
    (post.parent / "model" / "decoder.onnx").write_bytes(b"retrained, never printed")
    monkeypatch.setattr(aloud_model, "POSTS_DIR", tmp_path / "posts")
    monkeypatch.setattr(aloud_model, "MODEL_DIR", lab_model)
    assert aloud_model.main([]) == 1
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "decoder.onnx" in said and "make execute POST=reading-numbers-aloud" in said, said


# ---- in Chromium ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lab_url():
    """The reader folder, as it is, on a localhost port; the lab is its aloud/ page."""
    subprocess.run(["make", "--no-print-directory", "-s", "reader"], cwd=REPO_ROOT, check=True)
    with served(READER) as base:
        yield base + "aloud/index.html"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (or set CHROMIUM to its path)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def open_lab(browser, url, viewport=(900, 800), color_scheme="light", query=""):
    """A fresh page on the lab: its console errors in `page.errors`, every URL it asked for in `page.requested`."""
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=color_scheme)
    page = context.new_page()
    page.errors, page.requested = [], []
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("request", lambda request: page.requested.append(request.url))
    page.goto(url + query)
    page.wait_for_function("window.aloudLab !== undefined")
    page.evaluate("window.aloudLab.ready")
    return page


def closed_cleanly(page, url):
    origin = url.rsplit("/aloud/", 1)[0] + "/"
    elsewhere = [request for request in page.requested if not request.startswith((origin, "data:"))]
    page.context.close()
    assert page.errors == [], f"console errors: {page.errors}"
    assert elsewhere == [], f"requests to another host: {elsewhere}"


def shown_is_sound(shown, where):
    """The bars' probabilities lie in [0, 1] and sum to at most 1; the latest attention row sums to 1."""
    probabilities, attention = shown["probabilities"], shown["attention"]
    assert probabilities and all(0 <= p <= 1 for p in probabilities), f"{where}: {probabilities}"
    assert sum(probabilities) <= 1 + 1e-6, f"{where}: the bars sum to {sum(probabilities)}"
    assert probabilities == sorted(probabilities, reverse=True), f"{where}: bars not likeliest first"
    assert len(attention) == served_card()["sizes"]["source_length"], f"{where}: {attention}"
    assert all(0 <= weight <= 1 for weight in attention) and abs(sum(attention) - 1) < 1e-3, f"{where}: {attention}"


@pytest.mark.slow
def test_greedy_readings_match_the_posts_word_for_word(browser, lab_url):
    card = served_card()
    page = open_lab(browser, lab_url)
    numbers = sample_numbers(card)
    read = {number: page.evaluate(f"window.aloudLab.read({number}, 'greedy')") for number in numbers}
    print(f"\ndecoding lab: {len(numbers)} held-out numbers read greedily, e.g. "
          + "; ".join(f"{n} -> {read[n]}" for n in numbers[:3]))
    wrong = {number: (read[number], card["greedy_readings"][number]) for number in numbers
             if read[number] != card["greedy_readings"][number]}
    assert len(numbers) == min(SAMPLE, len(card["greedy_readings"])) and not wrong, f"lab vs the post: {wrong}"
    message = page.locator("#message").text_content()
    assert message.startswith(f"Read aloud: “{read[numbers[-1]]}”") and "held out of training" in message, message
    closed_cleanly(page, lab_url)


@pytest.mark.slow
def test_each_step_shows_probabilities_and_where_the_word_looked(browser, lab_url):
    card = served_card()
    number = sample_numbers(card)[0]
    words = card["greedy_readings"][number].split()
    page = open_lab(browser, lab_url)
    page.fill("#number", number)
    for step in range(1, len(words) + 2):  # the words, then <end>
        page.click("#step")
        page.wait_for_function(f"document.querySelectorAll('#said li').length === {step}")
        shown = page.evaluate("window.aloudLab.shown()")
        shown_is_sound(shown, f"{number}, step {step}")
        assert shown["said"] == (words + ["<end>"])[:step]
        assert len(page.locator("#attention tbody tr").all()) == step
    assert page.locator("#step").is_disabled() and page.locator("#message").text_content().startswith("Read aloud")
    page.click("#reset")
    assert page.evaluate("window.aloudLab.shown()")["said"] == [] and page.locator("#step").is_enabled()
    closed_cleanly(page, lab_url)


@pytest.mark.slow
def test_beam_search_returns_a_reading_and_keeps_its_best_hypotheses(browser, lab_url):
    card = served_card()
    page = open_lab(browser, lab_url)
    for number in sample_numbers(card, 5) + ["0", "777"]:
        reading = page.evaluate(f"window.aloudLab.read({number}, 'beam')")
        shown = page.evaluate("window.aloudLab.shown()")
        scores = shown["beams"]
        assert reading and page.locator("#beam-panel").is_visible(), number
        assert 1 <= len(scores) <= card["beam_width"] and scores == sorted(scores, reverse=True), (number, scores)
        assert all(score <= 1e-6 for score in scores), (number, scores)
        shown_is_sound(shown, f"{number}, beam")
        if number in card["greedy_readings"]:
            assert "Greedy decoding reads it" in page.locator("#message").text_content()
    print(f"\ndecoding lab: beam search read 777 as {reading!r}, kept {len(scores)} hypotheses: {scores}")
    page.evaluate("window.aloudLab.read(5, 'greedy')")
    assert not page.locator("#beam-panel").is_visible(), "the beam's table stays after switching to greedy"
    closed_cleanly(page, lab_url)


@pytest.mark.slow
def test_it_works_from_the_keyboard_and_refuses_what_is_not_a_number(browser, lab_url):
    page = open_lab(browser, lab_url)
    page.focus("#number")
    page.keyboard.press("Control+A")
    page.keyboard.type("7a")
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('message').textContent.includes('from 0 to 999')")
    assert page.get_attribute("#number", "aria-invalid") == "true"
    page.keyboard.press("Control+A")
    page.keyboard.type("40")
    page.keyboard.press("Enter")  # Enter in the box is Step
    page.wait_for_function("document.querySelectorAll('#said li').length === 1")
    page.keyboard.press("Tab")  # to the decoding switch
    page.keyboard.press("ArrowDown")  # beam search: the reading starts over
    assert page.evaluate("document.querySelector('input[name=mode]:checked').value") == "beam"
    assert page.evaluate("window.aloudLab.shown()")["said"] == []
    page.keyboard.press("Tab")  # Step
    page.keyboard.press("Tab")  # Run to the end
    assert page.evaluate("document.activeElement.id") == "run"
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('message').textContent.startsWith('Read aloud')")
    assert page.evaluate("window.aloudLab.shown()")["said"][-1] == "<end>"
    closed_cleanly(page, lab_url)


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_390_px_phone_in_either_theme(browser, lab_url, scheme):
    page = open_lab(browser, lab_url, viewport=(390, 844), color_scheme=scheme)
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    page.evaluate("window.aloudLab.read(777, 'beam')")
    sideways = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert sideways[0] <= sideways[1], f"sideways scrolling at 390 px: {sideways}"
    frames = page.evaluate("[...document.querySelectorAll('.table-frame')].map((f) => f.scrollWidth - f.clientWidth)")
    assert max(frames) <= 1, f"a table scrolls sideways at 390 px: {frames}"
    small = page.evaluate("""[...document.querySelectorAll('button, .mode label, #number')]
      .filter((e) => e.getClientRects().length)
      .map((e) => [e.id || e.textContent.trim(), e.getBoundingClientRect().width, e.getBoundingClientRect().height])
      .filter(([, w, h]) => Math.min(w, h) < 44)""")
    assert small == [], f"tap targets under 44 px: {small}"
    closed_cleanly(page, lab_url)


AXE_SERIOUS = """async () => {
  // A word fades in over 0.25 s; judge the page once every animation has run.
  await Promise.all(document.getAnimations().map(a => a.finished));
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join('; ')}`);
}"""


@pytest.mark.slow
@pytest.mark.parametrize("scheme, width, query", [("light", 1280, ""), ("dark", 390, ""), ("dark", 390, "?embed")])
def test_axe_finds_nothing_serious_and_nothing_comes_from_elsewhere(browser, lab_url, scheme, width, query):
    if not AXE.exists():
        subprocess.run(["make", "--no-print-directory", "-s", "axe"], cwd=REPO_ROOT, check=True)
    page = open_lab(browser, lab_url, viewport=(width, 800), color_scheme=scheme, query=query)
    page.evaluate("window.aloudLab.read(896, 'beam')")
    page.add_script_tag(path=str(AXE))  # inline: not a request
    assert page.evaluate(AXE_SERIOUS) == []
    page.click("#reset")
    page.fill("#number", "abc")
    page.click("#step")  # the problem colour shows
    assert page.evaluate(AXE_SERIOUS) == []
    closed_cleanly(page, lab_url)


POST_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>A post</title><link rel="icon" href="data:,">
<style>
  body { margin: 0; font: 17px/1.5 system-ui, sans-serif; }
  main { max-width: 800px; margin: 0 auto; padding: 1rem 25px; }
  iframe.live-reader-embed { display: block; width: 100%; border: 0; height: 600px; }
</style></head>
<body class="quarto-dark"><main>
  <h1>A post</h1>
  <iframe class="live-reader-embed" src="reader/aloud/index.html?embed" title="Decoding lab"></iframe>
</main>
<script>
  window.labHeights = [];
  addEventListener("message", (e) => {
    if (!e.data || e.data.type !== "reader-height") return;
    window.labHeights.push(e.data.height);
    for (const iframe of document.querySelectorAll("iframe.live-reader-embed")) {
      if (iframe.contentWindow === e.source) iframe.style.height = e.data.height + "px";
    }
  });
</script>
</body></html>"""

FIT = """() => {
  const frame = document.querySelector('iframe.live-reader-embed');
  const inner = frame.contentDocument;
  return {frame: frame.clientHeight, content: inner.documentElement.scrollHeight,
          card: inner.getElementById('card').getBoundingClientRect().bottom,
          navbar: inner.getElementById('site-header').getClientRects().length > 0,
          theme: inner.documentElement.dataset.theme,
          sideways: inner.documentElement.scrollWidth - inner.documentElement.clientWidth};
}"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [390, 1280])
def test_embedded_in_a_post_it_drops_its_navbar_and_sizes_its_iframe(browser, lab_url, tmp_path, width):
    (tmp_path / "reader").symlink_to(READER, target_is_directory=True)
    (tmp_path / "post.html").write_text(POST_PAGE, encoding="utf-8")
    with served(tmp_path) as base:
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(base + "post.html")
        page.frame_locator("iframe.live-reader-embed").locator("#card a").wait_for()
        lab = next(frame for frame in page.frames if "embed" in frame.url)
        lab.evaluate("window.aloudLab.read(896, 'beam')")
        settled = ("() => { const f = (" + FIT + ")(); return f.frame === f.content && f.frame - f.card <= 12; }")
        page.wait_for_function(settled, timeout=10_000)
        fit = page.evaluate(FIT)
        context.close()
    assert fit["content"] <= fit["frame"] and fit["frame"] - fit["card"] <= 12, fit
    assert not fit["navbar"] and fit["theme"] == "dark" and fit["sideways"] <= 0, fit
    assert errors == [], errors
