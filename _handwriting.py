"""Handwriting that is not MNIST: digits written as pen strokes by a seeded script.

A writer draws numbers of one to three digits, one per box, the way a visitor
draws on the live reader's page: stroke templates of how people commonly write
each digit, moved, sized, slanted and wobbled by a seeded hand, and sampled as a
mouse or touch screen reports the pen. `page_input` is a port of that page's
preprocessing (its reader.js): it strokes the events onto the page's drawing
canvas, then crops, scales and centres each box into the model's 28×84 input,
with the page's own arithmetic. `handwriting_set()` writes and prepares the set.
"""
import hashlib

import numpy as np

SEED = 2026_13
CANVASES_PER_LENGTH = 1000
# The page's geometry (reader.js): three 28×28 boxes, drawn on a canvas 10× larger.
BOX, HEIGHT, WIDTH, SCALE = 28, 28, 84, 10
BOX_PX = BOX * SCALE
PAGE_PEN = 2.2 * SCALE   # the page's pen width on its drawing canvas
INK_THRESHOLD = 20       # a drawing-canvas pixel counts as ink above this grey level
DIGIT_SIDE = 20          # the longer side of a digit in the model's box, as in MNIST
# digest() of handwriting_set() at the default size and seed.
CANVASES_SHA256 = "f4d405f3919d6ff52bf8a78c183a7d9e258370abbfaf739769542f5d0ef8beac"

# ---- stroke templates -------------------------------------------------------------
# A digit is a list of strokes (pen down .. pen up); a stroke is a list of smooth
# pieces that meet at corners; a piece is control points (x right, y down; the digit
# is 1 tall and about 0.6 wide).

ZERO_CCW = [[(.33, 0), (.1, .12), (0, .5), (.1, .88), (.33, 1), (.56, .88), (.64, .5),
             (.56, .12), (.36, 0), (.24, .04)]]
ZERO_CW = [[(.3, 0), (.55, .12), (.63, .5), (.54, .88), (.3, 1), (.08, .87), (0, .5),
            (.09, .12), (.3, 0), (.4, .04)]]
TEMPLATES = {
    0: [[ZERO_CCW], [ZERO_CW]],
    1: [[[[(.3, 0), (.3, .5), (.3, 1)]]],
        [[[(.05, .22), (.32, 0)], [(.32, 0), (.32, .5), (.32, 1)]]],
        [[[(.05, .22), (.32, 0)], [(.32, 0), (.32, .5), (.32, 1)]],
         [[(.05, 1), (.6, 1)]]]],
    2: [[[[(.04, .24), (.2, .03), (.4, 0), (.58, .15), (.55, .38), (.3, .66), (0, 1)],
          [(0, 1), (.35, .99), (.66, 1)]]],
        [[[(.05, .2), (.25, .02), (.47, .03), (.58, .22), (.48, .45), (.2, .72),
           (.02, .98), (.2, .9), (.45, .95), (.66, .98)]]],
        [[[(.04, .24), (.2, .03), (.4, 0), (.58, .15), (.55, .38), (.3, .66),
           (.05, .95), (.12, .84), (.25, .88), (.2, 1), (.08, .98)],
          [(.08, .98), (.4, .96), (.66, .98)]]]],
    3: [[[[(.05, .12), (.3, 0), (.55, .08), (.58, .27), (.3, .45)],
          [(.3, .45), (.58, .58), (.62, .8), (.45, .98), (.2, 1), (0, .88)]]],
        [[[(.02, 0), (.6, 0)], [(.6, 0), (.25, .4)],
          [(.25, .4), (.55, .5), (.63, .75), (.45, .97), (.2, 1), (0, .88)]]]],
    4: [[[[(.45, 0), (0, .66)], [(0, .66), (.66, .66)]],
         [[(.5, .28), (.5, .65), (.5, 1)]]],
        [[[(.08, 0), (.05, .62)], [(.05, .62), (.66, .62)]],
         [[(.5, .02), (.5, .5), (.5, 1)]]],
        [[[(.52, 1), (.52, .5), (.52, 0)], [(.52, 0), (0, .68)],
          [(0, .68), (.66, .68)]]]],
    5: [[[[(.12, 0), (.08, .45)],
          [(.08, .45), (.35, .37), (.58, .52), (.6, .77), (.42, .97), (.15, 1),
           (0, .9)]],
         [[(.12, 0), (.62, 0)]]],
        [[[(.62, 0), (.12, 0)], [(.12, 0), (.08, .45)],
          [(.08, .45), (.35, .37), (.58, .52), (.6, .77), (.42, .97), (.15, 1),
           (0, .9)]]]],
    6: [[[[(.52, 0), (.25, .2), (.05, .55), (.1, .9), (.32, 1), (.55, .88), (.56, .63),
           (.33, .5), (.1, .6), (.05, .72)]]],
        [[[(.45, 0), (.12, .45), (.03, .75), (.2, .98), (.45, .97), (.58, .75),
           (.4, .55), (.15, .6), (.05, .7)]]]],
    7: [[[[(0, 0), (.62, 0)], [(.62, 0), (.42, .5), (.22, 1)]]],
        [[[(0, 0), (.62, 0)], [(.62, 0), (.42, .5), (.22, 1)]],
         [[(.2, .52), (.62, .5)]]],
        [[[(0, .14), (0, 0)], [(0, 0), (.62, 0)], [(.62, 0), (.42, .4), (.3, 1)]]]],
    8: [[[[(.56, .1), (.3, 0), (.08, .12), (.12, .34), (.5, .6), (.6, .84), (.32, 1),
           (.04, .85), (.12, .62), (.5, .36), (.56, .14), (.44, .02)]]],
        [[[(.3, .48), (.08, .36), (.08, .12), (.3, 0), (.52, .12), (.52, .36),
           (.3, .48), (.04, .62), (.04, .88), (.3, 1), (.58, .88), (.58, .62),
           (.3, .48)]]]],
    9: [[[[(.58, .15), (.35, 0), (.08, .1), (.04, .32), (.28, .46), (.55, .36),
           (.6, .12)],
          [(.6, .12), (.59, .5), (.58, 1)]]],
        [[[(.58, .15), (.35, 0), (.08, .1), (.04, .32), (.28, .46), (.55, .36),
           (.6, .12)],
          [(.6, .12), (.6, .55), (.48, .9), (.22, 1)]]],
        [[[(.6, .2), (.38, 0), (.08, .08), (.05, .34), (.3, .44), (.58, .3)],
          [(.6, .05), (.58, .5), (.55, 1)]]]],
}


def catmull_rom(points, per_span=16):
    """A smooth curve through `points` (n, 2): `per_span` samples between neighbours."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) == 2:
        along = np.linspace(0, 1, per_span + 1)[:, None]
        return points[0] + along * (points[1] - points[0])
    padded = np.vstack([2 * points[0] - points[1], points, 2 * points[-1] - points[-2]])
    t = np.linspace(0, 1, per_span, endpoint=False)[:, None]
    spans = []
    for i in range(1, len(padded) - 2):
        p0, p1, p2, p3 = padded[i - 1:i + 3]
        spans.append(0.5 * (2 * p1 + (p2 - p0) * t
                            + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t ** 2
                            + (3 * p1 - p0 - 3 * p2 + p3) * t ** 3))
    return np.vstack(spans + [points[-1:]])


# ---- one writer, one canvas -------------------------------------------------------

def writer_habits(rng):
    """What stays roughly the same across one canvas: pen, size, slant, aspect, pace.

    The pen is at most a quarter of the digit's height: scaled to MNIST's 20 pixels, its
    line is then at most 5 pixels wide (MNIST's are about 2 to 3); thicker, a 6 or an 8
    closes up into a blot that people misread too.
    """
    height = rng.uniform(0.3, 0.95) * BOX_PX
    pen = rng.lognormal(np.log(2.2 * SCALE), 0.3)
    return {
        "pen": float(np.clip(pen, 1.1 * SCALE, 0.25 * height)),
        "height": height,
        "slant": rng.normal(0.1, 0.2),
        "aspect": rng.uniform(0.6, 1.35),
        # how far a writer strays from the template's shape
        "care": rng.uniform(0.02, 0.06),
        # mean distance the pen travels between two events, drawing-canvas px
        "spacing": rng.uniform(8, 45),
        "wobble": rng.uniform(0.0, 0.04),
        # the hand's (or the mouse's) jitter at each event, drawing-canvas px
        "tremor": rng.uniform(0, 4),
    }


def perturbed(template, rng, amount):
    """The template with each distinct control point moved a little.

    Shared corners move together, so pieces that meet still meet.
    """
    moves = {}
    def move(point):
        if point not in moves:
            moves[point] = rng.normal(0, amount, size=2)
        return np.asarray(point) + moves[point]
    return [[np.array([move(p) for p in piece]) for piece in stroke]
            for stroke in template]


def arc_length(curve):
    """Distance along `curve` (n, 2) from its first point to each point."""
    steps = np.linalg.norm(np.diff(curve, axis=0), axis=1)
    return np.concatenate([[0], np.cumsum(steps)])


def with_wobble(curve, rng, amplitude):
    """A slow sideways drift along the line: two random sines over its length."""
    length = arc_length(curve)
    drift = np.zeros_like(curve)
    for _ in range(2):
        wavelength = rng.uniform(0.4, 1.5)
        drift += amplitude * np.sin(2 * np.pi * length[:, None] / wavelength
                                    + rng.uniform(0, 2 * np.pi, size=2))
    return curve + drift


def pen_events(curve, corners, rng, spacing):
    """Where a pointer reports the pen along `curve` (drawing-canvas px).

    Sparse where it moves fast: the pen slows near the stroke's ends and its `corners`
    (arc lengths); events come at a steady rate, so the distance between them follows
    the speed.
    """
    length = arc_length(curve)
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
    return np.stack([np.interp(events, length, curve[:, 0]),
                     np.interp(events, length, curve[:, 1])], axis=1)


def write_digit(digit, habits, box, rng, template=None):
    """One digit's strokes as pointer events on the drawing canvas, in box 0, 1 or 2.

    The writer picks one of the digit's TEMPLATES unless given a `template`.
    """
    if template is None:
        templates = TEMPLATES[digit]
        template = templates[rng.integers(len(templates))]
    strokes = perturbed(template, rng, habits["care"])
    height = habits["height"] * rng.uniform(0.9, 1.1)
    aspect = habits["aspect"] * rng.uniform(0.92, 1.08)
    slant = habits["slant"] + rng.normal(0, 0.05)
    angle = np.radians(rng.normal(0, 8))
    rotation = np.array([[np.cos(angle), -np.sin(angle)],
                         [np.sin(angle), np.cos(angle)]])
    curves, corner_lengths = [], []
    for stroke in strokes:
        pieces = [catmull_rom(piece) for piece in stroke]
        curve = np.vstack([pieces[0]] + [piece[1:] for piece in pieces[1:]])
        curve = with_wobble(curve, rng, habits["wobble"])
        sheared = aspect * curve[:, 0] + slant * (0.5 - curve[:, 1])
        shaped = np.stack([sheared, curve[:, 1]], axis=1)
        curves.append((shaped - 0.5) @ rotation.T * height)
        corners = np.cumsum([len(piece) - 1 for piece in pieces[:-1]], dtype=int)
        corner_lengths.append(corners)
    pen = habits["pen"] * rng.uniform(0.95, 1.05)
    everything = np.vstack(curves)
    low = everything.min(axis=0) - pen / 2 - 2
    high = everything.max(axis=0) + pen / 2 + 2
    # too big for the box: write it smaller
    fit = min(1.0, (BOX_PX - 2) / max(high - low))
    low, high = low * fit, high * fit
    offset = np.array([box * BOX_PX, 0]) + rng.uniform(-low, BOX_PX - high)
    events = []
    for curve, corners in zip(curves, corner_lengths):
        placed = curve * fit + offset
        corner_arcs = arc_length(placed)[corners]
        reported = pen_events(placed, corner_arcs, rng, habits["spacing"])
        reported += rng.normal(0, habits["tremor"], size=reported.shape)
        # jitter never takes ink out of its box
        inside = np.array([box * BOX_PX, 0]) + pen / 2 + 1
        reported = np.clip(reported, inside, inside + BOX_PX - pen - 2)
        events.append(np.round(reported).astype(np.int16))
    return events, pen


def write_number(digits, rng):
    """A canvas of `digits`, left-aligned, one per box, by one writer.

    Returns (strokes, pen width).
    """
    habits = writer_habits(rng)
    strokes, pens = [], []
    for box, digit in enumerate(digits):
        events, pen = write_digit(digit, habits, box, rng)
        strokes += events
        pens.append(pen)
    return strokes, float(np.mean(pens))


def write_strokes(per_length=CANVASES_PER_LENGTH, seed=SEED):
    """Every canvas's strokes, as flat arrays; lengths 1, 2, 3 interleaved.

    `labels`, `pen_width` and `strokes_per_canvas` hold one entry per canvas,
    `events_per_stroke` one per stroke, and `events` every pointer event (x, y) in
    order. A smaller `per_length` writes the first canvases of the larger set.
    """
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


def canvas_strokes(arrays):
    """[(label, pen width, [stroke events (n, 2), ...]), ...] from write_strokes()."""
    stroke_ends = np.cumsum(arrays["events_per_stroke"])
    strokes = np.split(arrays["events"], stroke_ends[:-1])
    canvas_ends = np.cumsum(arrays["strokes_per_canvas"])
    grouped = np.split(np.arange(len(strokes)), canvas_ends[:-1])
    return [(str(label), float(pen), [strokes[i] for i in members])
            for label, pen, members
            in zip(arrays["labels"], arrays["pen_width"], grouped)]


# ---- the page's preprocessing, in Python ------------------------------------------

def segment_distance(xs, ys, a, b):
    """Distance from pixel centres (xs, ys) to the segment a-b.

    xs may be a row and ys a column (broadcast together), or both full grids.
    """
    d = b - a
    length2 = float(d @ d)
    px, py = xs - a[0], ys - a[1]
    t = (np.minimum(np.maximum((px * d[0] + py * d[1]) / length2, 0), 1)
         if length2 > 0 else 0.0)
    return np.hypot(px - t * d[0], py - t * d[1])


def draw_stroke(canvas, events, pen):
    """Stroke `events` onto `canvas` (float grey 0..1) as the page's 2D context does.

    The page strokes the whole path so far after every pointer event (round caps and
    joins, white over black), so the anti-aliased rim of early segments is painted many
    times over: a pixel ends at 1 - (1 - c1)(1 - c2)..., one factor per stroke() call,
    where c is its coverage by the path at that call (the share of the pixel within the
    pen's radius, linear across the rim). Coverage only changes where a new segment
    comes nearer, so the product is kept as a sum of logarithms, updated only in a
    window around each new segment.
    """
    points = np.asarray(events, dtype=np.float64)
    # the page's starting dot
    points = np.vstack([points[:1], points[:1] + [0.01, 0], points[1:]])
    radius = pen / 2
    left, top = np.floor(points.min(axis=0) - radius - 1).astype(int)
    right, bottom = np.ceil(points.max(axis=0) + radius + 1).astype(int)
    left, top = max(left, 0), max(top, 0)
    right, bottom = min(right, canvas.shape[1]), min(bottom, canvas.shape[0])
    if right <= left or bottom <= top:
        return
    shape = (bottom - top, right - left)
    nearest = np.full(shape, np.inf)
    since = np.ones(shape)       # the stroke() call from which `nearest` has held
    log_kept = np.zeros(shape)   # log of the share of black that survives the calls
    # pixel centres: a row and a column, broadcast together
    centres_x = np.arange(left, right) + 0.5
    centres_y = (np.arange(top, bottom) + 0.5)[:, None]
    # each segment's window: its bounding box, widened by the pen's radius and a pixel
    lows = np.floor(np.minimum(points[:-1], points[1:]) - radius - 1).astype(int)
    highs = np.ceil(np.maximum(points[:-1], points[1:]) + radius + 1).astype(int)

    def log_survival(distance):
        return np.log1p(-np.minimum(np.maximum(radius + 0.5 - distance, 0), 1))

    # log1p(-1) is -inf (a pixel fully covered), and (call - since) * -inf is -inf;
    # 0 * -inf never happens where it is kept. Whole windows are updated with np.where
    # rather than boolean indexing: the same values, in a fraction of the calls.
    with np.errstate(divide="ignore", invalid="ignore"):
        # call k strokes the path through points[0..k]
        for call in range(1, len(points)):
            (x0, y0), (x1, y1) = lows[call - 1], highs[call - 1]
            x0, y0, x1, y1 = (max(x0, left), max(y0, top),
                              min(x1, right), min(y1, bottom))
            if x1 <= x0 or y1 <= y0:
                continue
            window = (slice(y0 - top, y1 - top), slice(x0 - left, x1 - left))
            distance = segment_distance(centres_x[window[1]], centres_y[window[0]],
                                        points[call - 1], points[call])
            held = nearest[window]
            nearer = distance < held
            kept = log_kept[window]
            log_kept[window] = np.where(
                nearer, kept + (call - since[window]) * log_survival(held), kept)
            nearest[window] = np.where(nearer, distance, held)
            since[window] = np.where(nearer, call, since[window])
        calls_held = len(points) - since
        log_kept += np.where(np.isinf(nearest), 0, calls_held * log_survival(nearest))
    region = canvas[top:bottom, left:right]
    region[:] = 1 - (1 - region) * np.exp(log_kept)


def drawing_canvas(strokes, pen=PAGE_PEN, boxes=3):
    """The page's 840×280 drawing canvas (grey bytes) after these pointer strokes.

    `boxes=1` keeps only the first box's 280 columns, all a single digit's tile
    needs: ink beyond them is cut off, as box_as_digit cuts it.
    """
    canvas = np.zeros((HEIGHT * SCALE, boxes * BOX_PX))
    for stroke in strokes:
        draw_stroke(canvas, stroke, pen)
    # a hair below one half, so that exact ties (a pixel covered by exactly half, say)
    # round the same way on every machine, whatever ulp its exp and log happen to give
    return np.floor(canvas * 255 + 0.5 - 1e-7).astype(np.uint8)


def js_round(value):
    """JavaScript's Math.round: halves go up."""
    return int(np.floor(value + 0.5))


def overlaps(source, target):
    """(target, source) integers: how much of each source pixel lies in each target one.

    In units of 1/target of a source pixel, so the overlaps are whole numbers and every
    target pixel's row adds up to `source`: the average is exact, on any machine.
    """
    starts = np.arange(target)[:, None] * source
    cells = np.arange(source)[None, :] * target
    shared = np.minimum(starts + source, cells + target) - np.maximum(starts, cells)
    return np.clip(shared, 0, None)


def box_as_digit(canvas, index):
    """reader.js's boxAsDigit: box `index` of the drawing canvas as 28×28 grey bytes.

    None if the box is empty. Crop to the ink, scale the longer side to 20 pixels by
    averaging areas, and place the digit so that its centre of mass sits at the box
    centre. Sums are kept in integers, so a rounding tie goes the same way everywhere.
    """
    box = canvas[:, index * BOX_PX:(index + 1) * BOX_PX]
    rows, columns = np.nonzero(box > INK_THRESHOLD)
    if len(rows) == 0:
        return None
    top, left = rows.min(), columns.min()
    height, width = rows.max() - top + 1, columns.max() - left + 1
    # the page's own float arithmetic, step for step
    factor = DIGIT_SIDE / max(width, height)
    w, h = max(1, js_round(width * factor)), max(1, js_round(height * factor))
    crop = box[top:top + height, left:left + width].astype(np.int64)
    total = overlaps(height, h) @ crop @ overlaps(width, w).T
    area = height * width
    # round half up, as floor(x + 0.5)
    small = ((2 * total + area) // (2 * area)).astype(np.uint8)
    grey = small.astype(np.int64)
    mass = int(grey.sum())
    ys, xs = np.mgrid[0:h, 0:w]
    # Math.round(BOX / 2 - 0.5 - sum / mass) = floor(BOX / 2 - sum / mass), in integers
    place_left = min(max((BOX // 2 * mass - int((grey * xs).sum())) // mass, 0),
                     BOX - w)
    place_top = min(max((BOX // 2 * mass - int((grey * ys).sum())) // mass, 0),
                    BOX - h)
    digit = np.zeros((BOX, BOX), dtype=np.uint8)
    digit[place_top:place_top + h, place_left:place_left + w] = small
    return digit


def page_input(strokes, pen=PAGE_PEN):
    """What the page feeds the model for these strokes: 28×84 grey bytes (÷255 to read).

    The page refuses an empty canvas or a gap before a drawn box; this set has neither.
    """
    canvas = drawing_canvas(strokes, pen)
    model_input = np.zeros((HEIGHT, WIDTH), dtype=np.uint8)
    for index in range(3):
        digit = box_as_digit(canvas, index)
        if digit is not None:
            model_input[:, index * BOX:(index + 1) * BOX] = digit
    return model_input


# ---- the set ----------------------------------------------------------------------

def build(arrays, limit=None):
    """(canvases uint8 (N, 28, 84), labels) from write_strokes() arrays.

    `limit` builds only the first canvases.
    """
    items = canvas_strokes(arrays)[:limit]
    canvases = np.stack([page_input(strokes, pen) for _, pen, strokes in items])
    return canvases, [label for label, _, _ in items]


def handwriting_set(per_length=CANVASES_PER_LENGTH, seed=SEED):
    """(canvases uint8 (N, 28, 84), labels): `per_length` numbers of each length.

    Written by the seeded hand and prepared as the page would; digest() of the default
    set is CANVASES_SHA256.
    """
    return build(write_strokes(per_length, seed))


def digest(canvases, labels):
    """SHA-256 of the canvases' bytes followed by the labels, comma-separated."""
    sha = hashlib.sha256(np.ascontiguousarray(canvases, dtype=np.uint8).tobytes())
    sha.update(",".join(labels).encode())
    return sha.hexdigest()
