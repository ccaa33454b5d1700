"""The non-MNIST handwriting set: rebuilt byte for byte from the shipped strokes and from the seed
alone (what a post does with the inlined _handwriting.py), balanced, shaped as the page's input;
and the Python port of the page's preprocessing matches the page in Chromium."""
import json
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import _handwriting
from tests.test_live_reader import browser, replay, site_url  # noqa: F401  (fixtures: Chromium, the served page)
from tools.live import handwriting_set
from tools.live.handwriting_set import BOX, DIGIT_SIDE, build, digest, load_strokes
from tools.author.inline_helpers import imported_modules
from tools.core.notebooks import REPO_ROOT

# SHA-256 of the first SUBSET canvases built from reader/handwriting/strokes.npz (the whole set's
# digest is handwriting_set.CANVASES_SHA256, checked by the slow test below).
SUBSET = 24
SUBSET_SHA256 = "94bfa31bd893d56d949700f9cc0d3410ebbad7ecf0a4ed0b4c905a4cbfeaed62"


@pytest.fixture(scope="module")
def strokes():
    return load_strokes()


@pytest.fixture(scope="module")
def subset(strokes):
    return build(strokes, limit=SUBSET)


def test_subset_rebuilds_byte_for_byte(strokes, subset):
    canvases, labels = subset
    again = build(strokes, limit=SUBSET)
    assert np.array_equal(canvases, again[0]) and labels == again[1]
    assert digest(canvases, labels) == SUBSET_SHA256, (
        "the canvases built from reader/handwriting/strokes.npz changed: if _handwriting.py's "
        "preprocessing changed on purpose, pin the new digests (python -m tools.live.handwriting_set prints the "
        "whole set's)")


def test_a_post_writes_the_shipped_sets_first_canvases_from_the_seed(subset):
    """handwriting_set() at a small size is the start of the full set: same strokes, same canvases."""
    canvases, labels = _handwriting.handwriting_set(per_length=SUBSET // 3)
    assert labels == subset[1] and np.array_equal(canvases, subset[0])
    assert digest(canvases, labels) == SUBSET_SHA256


@pytest.mark.slow
def test_a_post_builds_the_whole_set_to_the_pinned_digest():
    """From the seed alone, as a post does; the shipped strokes are the same (the test below)."""
    canvases, labels = _handwriting.handwriting_set()
    assert digest(canvases, labels) == _handwriting.CANVASES_SHA256, (
        "_handwriting.handwriting_set() no longer builds the pinned set; if the writer or the preprocessing "
        "changed on purpose, run python -m tools.live.handwriting_set --write-strokes and pin the new digests")


def test_helper_needs_only_numpy_and_the_standard_library():
    """It is inlined into posts that must run anywhere: no repository, no files, no torch."""
    text = (REPO_ROOT / "_handwriting.py").read_text()
    outside = imported_modules(text) - set(sys.stdlib_module_names) - {"numpy"}
    assert outside == set(), f"_handwriting.py imports {outside}; a post's setup cell may need only numpy"
    reaches_out = [word for word in ("REPO_ROOT", "__file__", "open(", "np.load", "Path(", "argparse") if word in text]
    assert reaches_out == [], f"_handwriting.py uses {reaches_out}: keep repository and file access in tools/"


def test_tools_module_is_the_helpers_code(strokes):
    """tools.live.handwriting_set re-exports the helper's functions themselves, not copies that could drift."""
    for name in ("page_input", "write_strokes", "build", "digest", "canvas_strokes", "drawing_canvas"):
        assert getattr(handwriting_set, name) is getattr(_handwriting, name), name
    assert handwriting_set.CANVASES_SHA256 == _handwriting.CANVASES_SHA256


def test_cached_build_is_rebuilt_when_the_helper_changes(tmp_path, monkeypatch):
    helper = tmp_path / "_handwriting.py"
    helper.write_bytes((REPO_ROOT / "_handwriting.py").read_bytes())
    builds = []
    monkeypatch.setattr(handwriting_set, "_handwriting", SimpleNamespace(__file__=str(helper)))
    monkeypatch.setattr(handwriting_set, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(handwriting_set, "build",
                        lambda arrays: builds.append(1) or (np.zeros((1, 28, 84), np.uint8), ["7"]))
    handwriting_set.cached_build()
    handwriting_set.cached_build()
    assert len(builds) == 1, "the second call reads the cache"
    helper.write_text(helper.read_text() + "\n# an edit\n")
    assert handwriting_set.cached_build()[1] == ["7"] and len(builds) == 2, "an edited helper is a new key"


def test_shipped_strokes_are_what_the_seeded_script_writes(strokes):
    written = handwriting_set.write_strokes()
    assert sorted(written) == sorted(strokes)
    for name, array in written.items():
        assert np.array_equal(array, strokes[name]), f"{name} differs: rerun --write-strokes and pin the digests"


def test_lengths_are_balanced_and_digits_even(strokes):
    labels = strokes["labels"].tolist()
    lengths = np.bincount([len(label) for label in labels], minlength=4)[1:]
    assert lengths.tolist() == [handwriting_set.CANVASES_PER_LENGTH] * 3
    digits = np.bincount([int(d) for label in labels for d in label], minlength=10)
    assert digits.min() >= 0.85 * digits.mean() and digits.max() <= 1.15 * digits.mean(), digits
    assert handwriting_set.STROKES_FILE.stat().st_size <= 500e3


def test_canvases_are_the_page_input_one_digit_per_drawn_box(subset):
    canvases, labels = subset
    assert canvases.shape == (SUBSET, 28, 84) and canvases.dtype == np.uint8
    for canvas, label in zip(canvases, labels):
        for box in range(3):
            tile = canvas[:, box * BOX:(box + 1) * BOX]
            if box >= len(label):
                assert not tile.any(), f"{label}: box {box + 1} should be empty"
                continue
            rows, columns = np.nonzero(tile)
            longer = max(np.ptp(rows), np.ptp(columns)) + 1
            assert DIGIT_SIDE - 1 <= longer <= DIGIT_SIDE + 1, f"{label}: box {box + 1} spans {longer} pixels"


def test_port_follows_the_pages_rules():
    """A lone dot is still a digit scaled to 20 pixels; ink only in box 2 fills box 2 alone."""
    dot = handwriting_set.page_input([np.array([[420, 140]])])
    assert dot[:, :BOX].sum() == 0 and dot[:, 2 * BOX:].sum() == 0
    rows, columns = np.nonzero(dot[:, BOX:2 * BOX])
    assert max(np.ptp(rows), np.ptp(columns)) + 1 >= DIGIT_SIDE - 1


def test_hard_inputs_cover_the_reported_cases():
    cases = handwriting_set.hard_inputs()
    assert {"small", "thin", "crossing an edge", "fourth digit", "dot", "dash", "scribble", "full canvas"} <= set(cases)
    drawn = {name: handwriting_set.page_input(strokes, pen) for name, (strokes, pen, _) in cases.items()}
    boxes = lambda canvas: [bool(canvas[:, k * BOX:(k + 1) * BOX].any()) for k in range(3)]
    assert boxes(drawn["dot"]) == boxes(drawn["dash"]) == [True, False, False]
    assert boxes(drawn["full canvas"]) == boxes(drawn["small"]) == [True, True, True]
    assert drawn["thin"].max() < drawn["small"].max(), "a 2 px pen leaves only faint grey once scaled"
    crossing = handwriting_set.drawing_canvas(cases["crossing an edge"][0])
    assert crossing[:, 275:285].any(axis=0).all(), "the 3's ink runs over the edge between boxes 1 and 2"


# ---- the port against the page, in Chromium ------------------------------------------------------

# The page loads ONNX Runtime as a module; the test serves a thin wrapper in its place that records
# every canvas the page feeds the encoder, and passes everything else through to the real runtime.
RUNTIME_SPY = """
import * as real from "./ort.wasm.min.mjs?real";
export const env = real.env;
export const Tensor = real.Tensor;
export const InferenceSession = {
  async create(...args) {
    const session = await real.InferenceSession.create(...args);
    return {
      run(feeds, ...rest) {
        if (feeds.image) (window.fedImages ??= []).push(Array.from(feeds.image.data));
        return session.run(feeds, ...rest);
      },
    };
  },
};
"""

# Records the drawing-canvas point of every pointer event the page draws with (same formula as
# reader.js's canvasPoint), so the port is given exactly the path the page stroked.
RECORDER = """() => {
  const ink = document.getElementById('ink');
  window.recordedStrokes = [];
  const point = (event) => {
    const box = ink.getBoundingClientRect();
    return [(event.clientX - box.left) * ink.width / box.width, (event.clientY - box.top) * ink.height / box.height];
  };
  ink.addEventListener('pointerdown', (event) => window.recordedStrokes.push([point(event)]));
  ink.addEventListener('pointermove', (event) => {
    if (event.buttons & 1) window.recordedStrokes.at(-1).push(point(event));
  });
}"""
PARITY_CANVASES = 8
# The page rasterises with Skia and downscales with Chromium's "high" smoothing; the port computes
# coverage analytically and averages areas. Measured on the first 8 canvases: a box's digit agrees
# to within 3 grey levels of 255 on average; where its centre of mass falls within a few hundredths
# of a half pixel, the two round it apart and place the digit one pixel apart. So each box is
# compared at the best of the nine placements within one pixel, and most must need no shift.
MEAN_TOLERANCE = 0.015      # mean |difference| over a box, grey in [0, 1]
PIXEL_TOLERANCE = 0.25      # largest |difference| of one pixel
UNSHIFTED_SHARE = 0.75      # boxes that must match where they are


def best_alignment(fed, ported):
    """(shift, mean |diff|, max |diff|) of `ported` against `fed` (28×28) at the best one-pixel shift."""
    padded = np.pad(ported, 1)
    options = []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            difference = np.abs(fed - padded[1 + dy:29 + dy, 1 + dx:29 + dx])
            options.append((difference.mean(), difference.max(), (dy, dx)))
    mean, top, shift = min(options)
    return shift, mean, top


@pytest.mark.slow
def test_python_port_feeds_the_model_what_the_page_does(browser, site_url):
    from tools.live.onnx_reading import onnx_reader, read_all, served_reading
    from tools.live.reader_files import MODEL_DIR
    # the page draws with its own pen whatever the set's pen width; the port is given the page's pen too
    picked = handwriting_set.canvas_strokes(load_strokes())[:PARITY_CANVASES]
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.route(lambda url: url.endswith("/vendor/ort/ort.wasm.min.mjs"),
               lambda route: route.fulfill(body=RUNTIME_SPY, content_type="text/javascript"))
    page.goto(site_url)
    page.wait_for_function("window.liveReader !== undefined")
    page.evaluate(RECORDER)
    page_reads, fed_canvases, ported_canvases = [], [], []
    for _, _, strokes in picked:
        page.evaluate("window.recordedStrokes = []; window.fedImages = []")
        replay(page, strokes)
        page_reads.append(page.evaluate("window.liveReader.read()"))
        # the drawing is the first canvas of the encoder's first batch; the copies of it moved by the
        # card's read_with_shifts follow it in that batch
        fed = page.evaluate("Array.from(window.fedImages[0].slice(0, 28 * 84))")
        fed_canvases.append(np.array(fed, dtype=np.float32).reshape(28, 84))
        recorded = [np.array(stroke) for stroke in page.evaluate("window.recordedStrokes")]
        ported_canvases.append(handwriting_set.page_input(recorded).astype(np.float32) / 255)
    context.close()
    assert errors == []
    boxes = []
    for (label, _, _), fed, ported in zip(picked, fed_canvases, ported_canvases):
        for k in range(3):
            tile = slice(k * BOX, (k + 1) * BOX)
            assert fed[:, tile].any() == ported[:, tile].any() == (k < len(label)), f"{label}: box {k + 1}"
            if k < len(label):
                boxes.append((label, k + 1, *best_alignment(fed[:, tile], ported[:, tile])))
    import torch
    port_reads = read_all(onnx_reader(MODEL_DIR), torch.from_numpy(np.stack(ported_canvases))[:, None],
                          **served_reading(MODEL_DIR))
    port_reads = ["".join(str(t) for t in row[:list(row).index(11)] if t < 10) if 11 in row else "?"
                  for row in port_reads.tolist()]
    print("\nport vs page, per box (label, box, shift, mean |diff|, max |diff|): "
          + json.dumps([(label, k, shift, round(float(mean), 4), round(float(top), 3))
                        for label, k, shift, mean, top in boxes]))
    print(f"page read {page_reads}; the model read the port's canvases as {port_reads}")
    for label, k, shift, mean, top in boxes:
        assert mean <= MEAN_TOLERANCE and top <= PIXEL_TOLERANCE, (label, k, shift, mean, top)
    assert sum(shift == (0, 0) for _, _, shift, _, _ in boxes) >= UNSHIFTED_SHARE * len(boxes)
    assert port_reads == page_reads
