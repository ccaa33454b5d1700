"""A held-out set of digits that are not MNIST: numbers "written" as pen strokes by a seeded script.

Why: the live reader's model scores ~96 % on MNIST canvases, but a visitor's drawing is not
MNIST. To measure that gap (domain shift), and to check any fix, we need digits that no model
trains on, that differ from MNIST the way a visitor's writing does, and that anyone can rebuild
offline, byte for byte. No such set can be downloaded here, so this tool writes one.

How the digits are written. Each digit has a few stroke templates (how people commonly write
it: a 1 with or without a flag and base, a 7 with or without a crossbar, an open or closed 4,
a 9 with a straight or curved tail, a one- or two-stroke 5, 8 and so on), as control points in
a unit box joined by Catmull-Rom curves, with sharp corners where a pen turns. Every instance
moves the control points a little, then writes the digit at its own size, aspect, slant and
rotation, somewhere inside its box, with a slow wobble along the line and the hand's jitter
at every point. One canvas is one writer with one pen (1.1 to 5.2 of the model's pixels
wide, half of them 1.8 to 2.6, at most a quarter of the digit's height; the page's is 2.2):
size, aspect, slant and care vary a little from digit to digit around that writer's habit.
The pen is sampled as a mouse or a touch screen reports it: one point per event, fast in the
middle of a line and slow at its ends and corners, so quick writing comes out as straight
chords. A canvas holds one, two or three digits, left-aligned, one per box (as the page
asks), in equal numbers; the ink stays inside its box.

What it resembles and what it does not. It is synthetic: strokes from templates, not people's
handwriting. It has what a page visitor's digits have and MNIST's lack (polygonal mouse
strokes, uniform pen width, one preprocessing pipeline), and it varies pen width, size, slant,
shape and position more than MNIST does. It lacks what real people bring: their many letter
forms, hesitations, retraced and corrected strokes, pressure, and styles no template foresaw.
A model that does well here may still fail on real handwriting; one that fails here will
fail on visitors too.

How the strokes become the model's input: `page_input` is a port of the live reader's own
preprocessing (reader/reader.js): each pointer event strokes the whole path so far onto an
840×280 canvas (10× the model's 28×84) in white on black with round caps and joins; each
28×28 box is cropped to its ink (grey > 20 of 255), its longer side scaled to 20 pixels
(area-averaged), and placed so that its centre of mass sits at the box centre. The result is
what the page feeds the model, to within the rasteriser's anti-aliasing (see
tests/test_handwriting_set.py, which compares the two in Chromium).

The strokes are shipped in reader/handwriting/strokes.npz (built once from the seed by
`--write-strokes`); the canvases are rebuilt from them, and their SHA-256 is pinned.

    python -m tools.handwriting_set                   # build the canvases, print counts and SHA-256
    python -m tools.handwriting_set --preview out.png # also draw the first canvases
    python -m tools.handwriting_set --write-strokes   # rewrite strokes.npz from the seed
    python -m tools.handwriting_set --score --hard    # read the set, and the hard inputs, with reader/model

`hard_inputs()` also writes, by the same templates, what a visitor does that the page should
answer with a hint rather than a number: writing too small or too thin, ink over a box edge,
a fourth digit, a dot, a scribble, a full canvas.
"""
import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

from tools.notebooks import REPO_ROOT

SET_DIR = REPO_ROOT / "reader" / "handwriting"
STROKES_FILE = SET_DIR / "strokes.npz"
SEED = 2026_13
CANVASES_PER_LENGTH = 1000
# The page's geometry (reader/reader.js): three 28×28 boxes, drawn on a canvas 10× larger.
BOX, HEIGHT, WIDTH, SCALE = 28, 28, 84, 10
BOX_PX = BOX * SCALE
PAGE_PEN = 2.2 * SCALE          # the page's pen width on its drawing canvas
INK_THRESHOLD = 20              # a drawing-canvas pixel counts as ink above this grey level
DIGIT_SIDE = 20                 # the longer side of a digit in the model's box, as in MNIST
# SHA-256 of the canvases built from the shipped strokes (uint8 canvases, then the labels).
CANVASES_SHA256 = "f4d405f3919d6ff52bf8a78c183a7d9e258370abbfaf739769542f5d0ef8beac"

# ---- stroke templates ----------------------------------------------------------------------------
# A digit is a list of strokes (pen down .. pen up); a stroke is a list of smooth pieces that meet at
# corners; a piece is control points (x right, y down; the digit is 1 tall and about 0.6 wide).

ZERO_CCW = [[(.33, 0), (.1, .12), (0, .5), (.1, .88), (.33, 1), (.56, .88), (.64, .5), (.56, .12), (.36, 0),
             (.24, .04)]]
ZERO_CW = [[(.3, 0), (.55, .12), (.63, .5), (.54, .88), (.3, 1), (.08, .87), (0, .5), (.09, .12), (.3, 0),
            (.4, .04)]]
TEMPLATES = {
    0: [[ZERO_CCW], [ZERO_CW]],
    1: [[[[(.3, 0), (.3, .5), (.3, 1)]]],
        [[[(.05, .22), (.32, 0)], [(.32, 0), (.32, .5), (.32, 1)]]],
        [[[(.05, .22), (.32, 0)], [(.32, 0), (.32, .5), (.32, 1)]], [[(.05, 1), (.6, 1)]]]],
    2: [[[[(.04, .24), (.2, .03), (.4, 0), (.58, .15), (.55, .38), (.3, .66), (0, 1)], [(0, 1), (.35, .99), (.66, 1)]]],
        [[[(.05, .2), (.25, .02), (.47, .03), (.58, .22), (.48, .45), (.2, .72), (.02, .98), (.2, .9), (.45, .95),
           (.66, .98)]]],
        [[[(.04, .24), (.2, .03), (.4, 0), (.58, .15), (.55, .38), (.3, .66), (.05, .95), (.12, .84), (.25, .88),
           (.2, 1), (.08, .98)], [(.08, .98), (.4, .96), (.66, .98)]]]],
    3: [[[[(.05, .12), (.3, 0), (.55, .08), (.58, .27), (.3, .45)],
          [(.3, .45), (.58, .58), (.62, .8), (.45, .98), (.2, 1), (0, .88)]]],
        [[[(.02, 0), (.6, 0)], [(.6, 0), (.25, .4)],
          [(.25, .4), (.55, .5), (.63, .75), (.45, .97), (.2, 1), (0, .88)]]]],
    4: [[[[(.45, 0), (0, .66)], [(0, .66), (.66, .66)]], [[(.5, .28), (.5, .65), (.5, 1)]]],
        [[[(.08, 0), (.05, .62)], [(.05, .62), (.66, .62)]], [[(.5, .02), (.5, .5), (.5, 1)]]],
        [[[(.52, 1), (.52, .5), (.52, 0)], [(.52, 0), (0, .68)], [(0, .68), (.66, .68)]]]],
    5: [[[[(.12, 0), (.08, .45)], [(.08, .45), (.35, .37), (.58, .52), (.6, .77), (.42, .97), (.15, 1), (0, .9)]],
         [[(.12, 0), (.62, 0)]]],
        [[[(.62, 0), (.12, 0)], [(.12, 0), (.08, .45)],
          [(.08, .45), (.35, .37), (.58, .52), (.6, .77), (.42, .97), (.15, 1), (0, .9)]]]],
    6: [[[[(.52, 0), (.25, .2), (.05, .55), (.1, .9), (.32, 1), (.55, .88), (.56, .63), (.33, .5), (.1, .6),
           (.05, .72)]]],
        [[[(.45, 0), (.12, .45), (.03, .75), (.2, .98), (.45, .97), (.58, .75), (.4, .55), (.15, .6), (.05, .7)]]]],
    7: [[[[(0, 0), (.62, 0)], [(.62, 0), (.42, .5), (.22, 1)]]],
        [[[(0, 0), (.62, 0)], [(.62, 0), (.42, .5), (.22, 1)]], [[(.2, .52), (.62, .5)]]],
        [[[(0, .14), (0, 0)], [(0, 0), (.62, 0)], [(.62, 0), (.42, .4), (.3, 1)]]]],
    8: [[[[(.56, .1), (.3, 0), (.08, .12), (.12, .34), (.5, .6), (.6, .84), (.32, 1), (.04, .85), (.12, .62),
           (.5, .36), (.56, .14), (.44, .02)]]],
        [[[(.3, .48), (.08, .36), (.08, .12), (.3, 0), (.52, .12), (.52, .36), (.3, .48), (.04, .62), (.04, .88),
           (.3, 1), (.58, .88), (.58, .62), (.3, .48)]]]],
    9: [[[[(.58, .15), (.35, 0), (.08, .1), (.04, .32), (.28, .46), (.55, .36), (.6, .12)],
          [(.6, .12), (.59, .5), (.58, 1)]]],
        [[[(.58, .15), (.35, 0), (.08, .1), (.04, .32), (.28, .46), (.55, .36), (.6, .12)],
          [(.6, .12), (.6, .55), (.48, .9), (.22, 1)]]],
        [[[(.6, .2), (.38, 0), (.08, .08), (.05, .34), (.3, .44), (.58, .3)], [(.6, .05), (.58, .5), (.55, 1)]]]],
}


def catmull_rom(points, per_span=16):
    """A smooth curve through `points` (n, 2): `per_span` samples between neighbours, ends included."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) == 2:
        return points[0] + np.linspace(0, 1, per_span + 1)[:, None] * (points[1] - points[0])
    padded = np.vstack([2 * points[0] - points[1], points, 2 * points[-1] - points[-2]])
    t = np.linspace(0, 1, per_span, endpoint=False)[:, None]
    spans = []
    for i in range(1, len(padded) - 2):
        p0, p1, p2, p3 = padded[i - 1:i + 3]
        spans.append(0.5 * (2 * p1 + (p2 - p0) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t ** 2
                            + (3 * p1 - p0 - 3 * p2 + p3) * t ** 3))
    return np.vstack(spans + [points[-1:]])


# ---- one writer, one canvas ----------------------------------------------------------------------

def writer_habits(rng):
    """What stays roughly the same across one canvas: pen, size, slant, aspect, pace.

    The pen is at most a quarter of the digit's height: scaled to MNIST's 20 pixels, its
    line is then at most 5 pixels wide (MNIST's are about 2 to 3); thicker, a 6 or an 8
    closes up into a blot that people misread too.
    """
    height = rng.uniform(0.3, 0.95) * BOX_PX
    return {
        "pen": float(np.clip(rng.lognormal(np.log(2.2 * SCALE), 0.3), 1.1 * SCALE, 0.25 * height)),
        "height": height,
        "slant": rng.normal(0.1, 0.2),
        "aspect": rng.uniform(0.6, 1.35),
        "care": rng.uniform(0.02, 0.06),  # how far a writer strays from the template's shape
        "spacing": rng.uniform(8, 45),    # mean distance the pen travels between two events, drawing-canvas px
        "wobble": rng.uniform(0.0, 0.04),
        "tremor": rng.uniform(0, 4),      # the hand's (or the mouse's) jitter at each event, drawing-canvas px
    }


def perturbed(template, rng, amount):
    """The template with each distinct control point moved a little (shared corners move together)."""
    moves = {}
    def move(point):
        if point not in moves:
            moves[point] = rng.normal(0, amount, size=2)
        return np.asarray(point) + moves[point]
    return [[np.array([move(p) for p in piece]) for piece in stroke] for stroke in template]


def with_wobble(curve, rng, amplitude):
    """A slow sideways drift along the line: two random sines over its length."""
    length = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(curve, axis=0), axis=1))])
    drift = np.zeros_like(curve)
    for _ in range(2):
        wavelength = rng.uniform(0.4, 1.5)
        drift += amplitude * np.sin(2 * np.pi * length[:, None] / wavelength + rng.uniform(0, 2 * np.pi, size=2))
    return curve + drift


def pen_events(curve, corners, rng, spacing):
    """Where a pointer reports the pen along `curve` (drawing-canvas px): sparse where it moves fast.

    The pen slows near the stroke's ends and its `corners` (arc lengths); events come at a
    steady rate, so the distance between them follows the speed.
    """
    steps = np.linalg.norm(np.diff(curve, axis=0), axis=1)
    length = np.concatenate([[0], np.cumsum(steps)])
    total = length[-1]
    if total < 1:
        return curve[:1]
    stops = np.concatenate([[0, total], corners])
    grid = np.linspace(0, total, 200)
    distance_to_stop = np.min(np.abs(grid[:, None] - stops[None, :]), axis=1)
    speed = 0.25 + 0.75 * (1 - np.exp(-distance_to_stop / (0.12 * total + 1)))
    speed *= np.exp(rng.normal(0, 0.15, size=len(grid)))
    travelled, events = 0.0, [0.0]
    while travelled < total:
        travelled += spacing * np.interp(travelled, grid, speed) * rng.uniform(0.7, 1.3)
        events.append(min(travelled, total))
    return np.stack([np.interp(events, length, curve[:, 0]), np.interp(events, length, curve[:, 1])], axis=1)


def write_digit(digit, habits, box, rng):
    """One digit's strokes as pointer events on the drawing canvas, inside box `box` (0, 1, 2)."""
    templates = TEMPLATES[digit]
    strokes = perturbed(templates[rng.integers(len(templates))], rng, habits["care"])
    height = habits["height"] * rng.uniform(0.9, 1.1)
    aspect = habits["aspect"] * rng.uniform(0.92, 1.08)
    slant = habits["slant"] + rng.normal(0, 0.05)
    angle = np.radians(rng.normal(0, 8))
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    curves, corner_lengths = [], []
    for stroke in strokes:
        pieces = [catmull_rom(piece) for piece in stroke]
        curve = np.vstack([pieces[0]] + [piece[1:] for piece in pieces[1:]])
        curve = with_wobble(curve, rng, habits["wobble"])
        shaped = np.stack([aspect * curve[:, 0] + slant * (0.5 - curve[:, 1]), curve[:, 1]], axis=1)
        curves.append((shaped - 0.5) @ rotation.T * height)
        corner_lengths.append(np.cumsum([len(piece) - 1 for piece in pieces[:-1]], dtype=int))
    pen = habits["pen"] * rng.uniform(0.95, 1.05)
    everything = np.vstack(curves)
    low, high = everything.min(axis=0) - pen / 2 - 2, everything.max(axis=0) + pen / 2 + 2
    fit = min(1.0, (BOX_PX - 2) / max(high - low))   # too big for the box: write it smaller
    low, high = low * fit, high * fit
    offset = np.array([box * BOX_PX, 0]) + rng.uniform(-low, BOX_PX - high)
    events = []
    for curve, corners in zip(curves, corner_lengths):
        placed = curve * fit + offset
        arc = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(placed, axis=0), axis=1))])
        reported = pen_events(placed, arc[corners], rng, habits["spacing"])
        reported += rng.normal(0, habits["tremor"], size=reported.shape)
        inside = np.array([box * BOX_PX, 0]) + pen / 2 + 1   # jitter never takes ink out of its box
        reported = np.clip(reported, inside, inside + BOX_PX - pen - 2)
        events.append(np.round(reported).astype(np.int16))
    return events, pen


def write_number(digits, rng):
    """A canvas: `digits` left-aligned, one per box, by one writer. Returns (strokes, pen width)."""
    habits = writer_habits(rng)
    strokes, pens = [], []
    for box, digit in enumerate(digits):
        events, pen = write_digit(digit, habits, box, rng)
        strokes += events
        pens.append(pen)
    return strokes, float(np.mean(pens))


def write_strokes(per_length=CANVASES_PER_LENGTH, seed=SEED):
    """All canvases' strokes, in the arrays strokes.npz holds (lengths 1, 2, 3 interleaved)."""
    rng = np.random.default_rng(seed)
    labels, pens, stroke_counts, event_counts, events = [], [], [], [], []
    for index in range(3 * per_length):
        length = 1 + index % 3
        digits = rng.integers(0, 10, size=length)
        strokes, pen = write_number(digits.tolist(), rng)
        labels.append("".join(map(str, digits)))
        pens.append(round(pen))
        stroke_counts.append(len(strokes))
        event_counts += [len(stroke) for stroke in strokes]
        events += strokes
    return {
        "labels": np.array(labels, dtype="U3"),
        "pen_width": np.array(pens, dtype=np.uint8),
        "strokes_per_canvas": np.array(stroke_counts, dtype=np.uint8),
        "events_per_stroke": np.array(event_counts, dtype=np.uint16),
        "events": np.vstack(events).astype(np.int16),
    }


def save_strokes(arrays, path=STROKES_FILE):
    """Events are stored as steps from the previous event (small numbers compress well)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    steps = np.diff(arrays["events"], axis=0, prepend=np.zeros((1, 2), np.int16)).astype(np.int16)
    np.savez_compressed(path, **{**arrays, "events": steps})


def load_strokes(path=STROKES_FILE):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    arrays["events"] = np.cumsum(arrays["events"], axis=0, dtype=np.int64).astype(np.int16)
    return arrays


def canvas_strokes(arrays):
    """[(label, pen width, [stroke events (n, 2), ...]), ...] from the stored arrays."""
    stroke_ends = np.cumsum(arrays["events_per_stroke"])
    strokes = np.split(arrays["events"], stroke_ends[:-1])
    canvas_ends = np.cumsum(arrays["strokes_per_canvas"])
    grouped = np.split(np.arange(len(strokes)), canvas_ends[:-1])
    return [(str(label), float(pen), [strokes[i] for i in members])
            for label, pen, members in zip(arrays["labels"], arrays["pen_width"], grouped)]


# ---- inputs a visitor makes that the page should not read as a number --------------------------

def neat_digit(digit, centre_x, height, centre_y=BOX_PX / 2, variant=0):
    """A digit's strokes from its template, unperturbed, upright, every 6 px, centred at (centre_x, centre_y)."""
    strokes = []
    for stroke in TEMPLATES[digit][variant]:
        pieces = [catmull_rom(piece) for piece in stroke]
        curve = np.vstack([pieces[0]] + [piece[1:] for piece in pieces[1:]]) - [0.3, 0.5]
        placed = curve * height + [centre_x, centre_y]
        length = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(placed, axis=0), axis=1))])
        at = np.append(np.arange(0, length[-1], 6.0), length[-1])
        strokes.append(np.stack([np.interp(at, length, placed[:, 0]), np.interp(at, length, placed[:, 1])], 1))
    return [np.round(stroke).astype(np.int16) for stroke in strokes]


def zigzag(left, right, top, bottom, turns):
    """One stroke back and forth between `left` and `right`, moving down from `top` to `bottom`."""
    ys = np.linspace(top, bottom, turns + 1)
    xs = np.where(np.arange(turns + 1) % 2 == 0, left, right)
    return [np.stack([xs, ys], 1).round().astype(np.int16)]


def hard_inputs():
    """{name: (strokes, pen, what a visitor meant)} for the cases the page should answer with a hint.

    From the issue's report: writing too small (a 740 drawn 50 px tall) or too thin (2 px
    strokes), ink that crosses a box edge, a fourth digit squeezed into the last box, and
    garbage that deserves "that doesn't look like digits" (a dot, a scribble, a full canvas).
    """
    box_centre = lambda box: box * BOX_PX + BOX_PX / 2
    seven_four_zero = lambda height: sum((neat_digit(d, box_centre(k), height) for k, d in enumerate((7, 4, 0))), [])
    return {
        "small": (seven_four_zero(50), PAGE_PEN, "740"),
        "thin": (seven_four_zero(200), 2.0, "740"),
        "crossing an edge": (neat_digit(3, 255, 200) + neat_digit(5, box_centre(1), 200), PAGE_PEN, "35"),
        "fourth digit": (neat_digit(1, box_centre(0), 200) + neat_digit(2, box_centre(1), 200)
                         + neat_digit(3, 2 * BOX_PX + 70, 120) + neat_digit(4, 2 * BOX_PX + 200, 120),
                         PAGE_PEN, "1234"),
        "dot": ([np.array([[140, 140]], dtype=np.int16)], PAGE_PEN, None),
        "scribble": (zigzag(30, 250, 30, 250, 24) + zigzag(250, 30, 40, 240, 17), PAGE_PEN, None),
        "full canvas": (zigzag(15, 825, 15, 265, 40), PAGE_PEN, None),
    }


# ---- the page's preprocessing, in Python -------------------------------------------------------

def segment_distance(xs, ys, a, b):
    """Distance from pixel centres (xs, ys) to the segment a-b."""
    d = b - a
    length2 = float(d @ d)
    px, py = xs - a[0], ys - a[1]
    t = np.clip((px * d[0] + py * d[1]) / length2, 0, 1) if length2 > 0 else 0.0
    return np.hypot(px - t * d[0], py - t * d[1])


def draw_stroke(canvas, events, pen):
    """Stroke `events` onto `canvas` (float grey 0..1) the way the page does with a 2D context.

    The page strokes the whole path so far after every pointer event (round caps and joins,
    white over black), so the anti-aliased rim of early segments is painted many times over:
    a pixel ends at 1 - (1 - c1)(1 - c2)..., one factor per stroke() call, where c is its
    coverage by the path at that call (the share of the pixel within the pen's radius, linear
    across the rim). Coverage only changes where a new segment comes nearer, so the product is
    kept as a sum of logarithms, updated only around each new segment.
    """
    points = np.asarray(events, dtype=np.float64)
    points = np.vstack([points[:1], points[:1] + [0.01, 0], points[1:]])  # the page's starting dot
    radius = pen / 2
    left, top = np.floor(points.min(axis=0) - radius - 1).astype(int)
    right, bottom = np.ceil(points.max(axis=0) + radius + 1).astype(int)
    left, top = max(left, 0), max(top, 0)
    right, bottom = min(right, canvas.shape[1]), min(bottom, canvas.shape[0])
    if right <= left or bottom <= top:
        return
    shape = (bottom - top, right - left)
    nearest = np.full(shape, np.inf)
    since = np.ones(shape)          # the stroke() call from which `nearest` has held
    log_kept = np.zeros(shape)      # log of the share of black that survives the calls so far

    def log_survival(distance):
        with np.errstate(divide="ignore"):
            return np.log1p(-np.clip(radius + 0.5 - distance, 0, 1))

    for call in range(1, len(points)):  # call k strokes the path through points[0..k]
        a, b = points[call - 1], points[call]
        x0, y0 = np.floor(np.minimum(a, b) - radius - 1).astype(int)
        x1, y1 = np.ceil(np.maximum(a, b) + radius + 1).astype(int)
        x0, y0, x1, y1 = max(x0, left), max(y0, top), min(x1, right), min(y1, bottom)
        if x1 <= x0 or y1 <= y0:
            continue
        ys, xs = np.mgrid[y0:y1, x0:x1] + 0.5
        window = (slice(y0 - top, y1 - top), slice(x0 - left, x1 - left))
        distance = segment_distance(xs, ys, a, b)
        nearer = distance < nearest[window]
        old = nearest[window][nearer]
        with np.errstate(invalid="ignore"):  # (call - since) * -inf is -inf; 0 * -inf never happens
            log_kept[window][nearer] += (call - since[window][nearer]) * log_survival(old)
        nearest[window][nearer] = distance[nearer]
        since[window][nearer] = call
    with np.errstate(invalid="ignore"):
        log_kept += np.where(np.isinf(nearest), 0, (len(points) - since) * log_survival(nearest))
    region = canvas[top:bottom, left:right]
    region[:] = 1 - (1 - region) * np.exp(log_kept)


def drawing_canvas(strokes, pen=PAGE_PEN):
    """The page's 840×280 drawing canvas (grey bytes) after the strokes, each a list of pointer events."""
    canvas = np.zeros((HEIGHT * SCALE, WIDTH * SCALE))
    for stroke in strokes:
        draw_stroke(canvas, stroke, pen)
    # a hair below one half, so that exact ties (a pixel covered by exactly half, say) round the
    # same way on every machine, whatever ulp its exp and log happen to give
    return np.floor(canvas * 255 + 0.5 - 1e-7).astype(np.uint8)


def js_round(value):
    """JavaScript's Math.round: halves go up."""
    return int(np.floor(value + 0.5))


def overlaps(source, target):
    """(target, source) integer matrix: how much of each source pixel lies in each target pixel.

    In units of 1/target of a source pixel, so the overlaps are whole numbers and every target
    pixel's row adds up to `source`: the average is exact, the same on any machine.
    """
    starts = np.arange(target)[:, None] * source
    cells = np.arange(source)[None, :] * target
    return np.clip(np.minimum(starts + source, cells + target) - np.maximum(starts, cells), 0, None)


def box_as_digit(canvas, index):
    """reader.js's boxAsDigit: box `index` of the drawing canvas as 28×28 grey bytes, or None if empty.

    Crop to the ink, scale the longer side to 20 pixels by averaging areas, and place the digit
    so that its centre of mass sits at the box centre. Sums are kept in integers, so a rounding
    tie goes the same way everywhere.
    """
    box = canvas[:, index * BOX_PX:(index + 1) * BOX_PX]
    rows, columns = np.nonzero(box > INK_THRESHOLD)
    if len(rows) == 0:
        return None
    top, left = rows.min(), columns.min()
    height, width = rows.max() - top + 1, columns.max() - left + 1
    factor = DIGIT_SIDE / max(width, height)   # the page's own float arithmetic, step for step
    w, h = max(1, js_round(width * factor)), max(1, js_round(height * factor))
    crop = box[top:top + height, left:left + width].astype(np.int64)
    total = overlaps(height, h) @ crop @ overlaps(width, w).T
    area = height * width
    small = ((2 * total + area) // (2 * area)).astype(np.uint8)   # round half up, as floor(x + 0.5)
    grey = small.astype(np.int64)
    mass = int(grey.sum())
    ys, xs = np.mgrid[0:h, 0:w]
    # Math.round(BOX / 2 - 0.5 - sum / mass) = floor(BOX / 2 - sum / mass), in integers
    place_left = min(max((BOX // 2 * mass - int((grey * xs).sum())) // mass, 0), BOX - w)
    place_top = min(max((BOX // 2 * mass - int((grey * ys).sum())) // mass, 0), BOX - h)
    digit = np.zeros((BOX, BOX), dtype=np.uint8)
    digit[place_top:place_top + h, place_left:place_left + w] = small
    return digit


def page_input(strokes, pen=PAGE_PEN):
    """What the page feeds the model for these strokes: a 28×84 canvas of grey bytes (÷255 for the model).

    The page refuses an empty canvas or a gap before a drawn box; this set never has either.
    """
    canvas = drawing_canvas(strokes, pen)
    model_input = np.zeros((HEIGHT, WIDTH), dtype=np.uint8)
    for index in range(3):
        digit = box_as_digit(canvas, index)
        if digit is not None:
            model_input[:, index * BOX:(index + 1) * BOX] = digit
    return model_input


# ---- the set -----------------------------------------------------------------------------------

def build(arrays=None, limit=None):
    """(canvases uint8 (N, 28, 84), labels) from the shipped strokes, or the first `limit` of them."""
    items = canvas_strokes(load_strokes() if arrays is None else arrays)[:limit]
    canvases = np.stack([page_input(strokes, pen) for _, pen, strokes in items])
    return canvases, [label for label, _, _ in items]


def cached_build():
    """build() of the whole shipped set, kept under .cache/ keyed by the strokes and this builder's code."""
    key = hashlib.sha256(STROKES_FILE.read_bytes() + Path(__file__).read_bytes()).hexdigest()
    cache = REPO_ROOT / ".cache" / "handwriting" / f"canvases-{key[:16]}.npz"
    if cache.exists():
        with np.load(cache, allow_pickle=False) as archive:
            return archive["canvases"], archive["labels"].tolist()
    canvases, labels = build()
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(cache, canvases=canvases, labels=np.array(labels, dtype="U3"))
    return canvases, labels


def digest(canvases, labels):
    """SHA-256 of the canvases' bytes followed by the labels, comma-separated."""
    sha = hashlib.sha256(np.ascontiguousarray(canvases, dtype=np.uint8).tobytes())
    sha.update(",".join(labels).encode())
    return sha.hexdigest()


def as_model_inputs(canvases, labels):
    """(images (N, 1, 28, 84) float32 in [0, 1], tokens (N, 4)) in the live reader's token scheme."""
    import torch
    from tools.reader_model import END, PAD
    tokens = np.full((len(labels), 4), PAD, dtype=np.int64)
    for row, label in enumerate(labels):
        tokens[row, :len(label)] = [int(c) for c in label]
        tokens[row, len(label)] = END
    return torch.from_numpy(canvases.astype(np.float32) / 255).unsqueeze(1), torch.from_numpy(tokens)


def exact_by_length(readings, tokens):
    """{1: share, 2: share, 3: share, "all": share} of canvases read exactly, by number of digits."""
    from tools.reader_model import PAD
    tokens = np.asarray(tokens)
    right = ((np.asarray(readings) == tokens) | (tokens == PAD)).all(axis=1)
    lengths = (tokens < 10).sum(axis=1)
    return {**{k: float(right[lengths == k].mean()) for k in (1, 2, 3)}, "all": float(right.mean())}


def score_onnx(folder):
    """Exact-sequence accuracy by length of the exported reader in `folder` on the whole set."""
    from tools.reader_model import onnx_reader, read_all
    images, tokens = as_model_inputs(*cached_build())
    return exact_by_length(read_all(onnx_reader(folder), images), tokens)


def read_with_probabilities(folder, canvas):
    """(digits read, [probability of each token chosen]) for one canvas, greedily, as the page reads."""
    from tools.reader_model import START, onnx_sessions
    encoder, decoder = onnx_sessions(folder)
    memory = encoder.run(None, {"image": (canvas / 255).astype(np.float32)[None, None]})[0]
    tokens, chosen = [START], []
    for _ in range(4):
        logits = decoder.run(None, {"memory": memory, "tokens": np.array([tokens])})[0][0, -1]
        shares = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        token = int(shares.argmax())
        chosen.append(float(shares[token]))
        if token >= 10:
            break
        tokens.append(token)
    return "".join(map(str, tokens[1:])), chosen


def save_preview(canvases, labels, path, count=48):
    from PIL import Image, ImageDraw
    columns, shown = 4, min(count, len(canvases))
    rows = -(-shown // columns)
    sheet = Image.new("L", (columns * (WIDTH * 3 + 8), rows * (HEIGHT * 3 + 16)), 255)
    pen = ImageDraw.Draw(sheet)
    for i in range(shown):
        x, y = (i % columns) * (WIDTH * 3 + 8), (i // columns) * (HEIGHT * 3 + 16)
        sheet.paste(Image.fromarray(255 - canvases[i]).resize((WIDTH * 3, HEIGHT * 3), Image.NEAREST), (x, y + 14))
        pen.text((x, y), labels[i], fill=0)
    sheet.save(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-strokes", action="store_true", help=f"rewrite {STROKES_FILE.name} from the seed")
    parser.add_argument("--limit", type=int, help="build only the first LIMIT canvases")
    parser.add_argument("--preview", help="write a PNG of the first canvases to this path")
    parser.add_argument("--score", metavar="FOLDER", nargs="?", const="reader/model",
                        help="read the set with the encoder.onnx and decoder.onnx in FOLDER (default reader/model)")
    parser.add_argument("--hard", action="store_true", help="also read the hard inputs (hard_inputs()) with that model")
    args = parser.parse_args(argv)
    if args.write_strokes:
        save_strokes(write_strokes())
        print(f"wrote {STROKES_FILE.relative_to(REPO_ROOT)} ({STROKES_FILE.stat().st_size / 1e3:.0f} kB)")
    canvases, labels = build(limit=args.limit) if args.limit else cached_build()
    lengths = np.bincount([len(label) for label in labels], minlength=4)[1:]
    print(f"non-MNIST handwriting: {len(labels):,} canvases; digits per canvas "
          + ", ".join(f"{k}: {n:,}" for k, n in zip((1, 2, 3), lengths)))
    sha = digest(canvases, labels)
    pinned = "" if args.limit else ("  (as pinned)" if sha == CANVASES_SHA256 else "  (NOT the pinned digest)")
    print(f"SHA-256 of the built canvases: {sha}{pinned}")
    if args.preview:
        save_preview(canvases, labels, args.preview)
    if args.score:
        shares = score_onnx(REPO_ROOT / args.score)
        print(f"exact-sequence accuracy of {args.score}: "
              + ", ".join(f"{k} digit{'s' if k > 1 else ''} {100 * shares[k]:.1f} %" for k in (1, 2, 3))
              + f"; all {100 * shares['all']:.1f} %")
    if args.score and args.hard:
        for name, (strokes, pen, meant) in hard_inputs().items():
            digits, chosen = read_with_probabilities(REPO_ROOT / args.score, page_input(strokes, pen))
            print(f"  {name:<17} meant {meant or '(no digits)':<12} read {digits or '(nothing)':<10} "
                  + " ".join(f"{100 * p:.0f}%" for p in chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
