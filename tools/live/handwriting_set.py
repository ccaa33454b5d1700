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

Where the code lives. The writer, the port, `build()` and `handwriting_set()` (strokes
written from the seed, then built) are in `_handwriting.py` at the top of the repository: a
post that reads this set builds it itself, because a post must run lifted out of the
repository, so `make inline` copies that helper into a folded cell of its own in every post
that declares it (metadata `blog.helpers`). This tool re-exports its names and keeps what needs
the repository: the shipped strokes, a cache, the hard inputs, scoring with the exported
reader, and the command line.

The strokes are shipped in reader/handwriting/strokes.npz (built once from the seed by
`--write-strokes`); the canvases are rebuilt from them, and their SHA-256 is pinned
(`CANVASES_SHA256`; `handwriting_set()` reaches the same digest from the seed alone).

    python -m tools.live.handwriting_set                   # build the canvases, print counts and SHA-256
    python -m tools.live.handwriting_set --preview out.png # also draw the first canvases
    python -m tools.live.handwriting_set --write-strokes   # rewrite strokes.npz from the seed
    python -m tools.live.handwriting_set --score --hard    # read the set, and the hard inputs, with reader/model

`hard_inputs()` also writes, by the same templates, what a visitor does that the page should
answer with a hint rather than a number: writing too small or too thin, ink over a box edge,
a fourth digit, a dot, a scribble, a full canvas.
"""
import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
import torch

import _handwriting
# Re-exported, so that callers keep reading the set's code as tools.live.handwriting_set.<name>.
from _handwriting import (  # noqa: F401
    BOX, BOX_PX, CANVASES_PER_LENGTH, CANVASES_SHA256, DIGIT_SIDE, HEIGHT, INK_THRESHOLD, PAGE_PEN, SCALE, SEED,
    TEMPLATES, WIDTH, arc_length, box_as_digit, build, canvas_strokes, catmull_rom, digest, draw_stroke,
    drawing_canvas, handwriting_set, js_round, overlaps, page_input, pen_events, perturbed, segment_distance,
    with_wobble, write_digit, write_number, write_strokes, writer_habits,
)
from _reader import END, PAD, START
from tools.core.notebooks import REPO_ROOT
from tools.live.onnx_reading import onnx_reader, onnx_sessions, read_all, served_reading

SET_DIR = REPO_ROOT / "reader" / "handwriting"
STROKES_FILE = SET_DIR / "strokes.npz"


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


# ---- inputs a visitor makes that the page should not read as a number --------------------------

def neat_digit(digit, centre_x, height, centre_y=BOX_PX / 2, variant=0):
    """A digit's strokes from its template, unperturbed, upright, every 6 px, centred at (centre_x, centre_y)."""
    strokes = []
    for stroke in TEMPLATES[digit][variant]:
        pieces = [catmull_rom(piece) for piece in stroke]
        curve = np.vstack([pieces[0]] + [piece[1:] for piece in pieces[1:]]) - [0.3, 0.5]
        placed = curve * height + [centre_x, centre_y]
        length = arc_length(placed)
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
    garbage that deserves "that doesn't look like digits" (a dot, a scribble, a full canvas, and
    a lone dash, which the model alone reads as a confident 7).
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
        "dash": ([np.array([[50 + 4 * i, 150 - i // 8] for i in range(46)], dtype=np.int16)], PAGE_PEN, None),
        "scribble": (zigzag(30, 250, 30, 250, 24) + zigzag(250, 30, 40, 240, 17), PAGE_PEN, None),
        "full canvas": (zigzag(15, 825, 15, 265, 40), PAGE_PEN, None),
    }


# ---- the set -----------------------------------------------------------------------------------

def cached_build():
    """build() of the whole shipped set, kept under .cache/ keyed by the strokes and the builder's code.

    The builder is _handwriting.py (the port) and this file; a change to either makes a new key."""
    code = Path(_handwriting.__file__).read_bytes() + Path(__file__).read_bytes()
    key = hashlib.sha256(STROKES_FILE.read_bytes() + code).hexdigest()
    cache = REPO_ROOT / ".cache" / "handwriting" / f"canvases-{key[:16]}.npz"
    if cache.exists():
        with np.load(cache, allow_pickle=False) as archive:
            return archive["canvases"], archive["labels"].tolist()
    canvases, labels = build(load_strokes())
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(cache, canvases=canvases, labels=np.array(labels, dtype="U3"))
    return canvases, labels


def as_model_inputs(canvases, labels):
    """(images (N, 1, 28, 84) float32 in [0, 1], tokens (N, 4)) in the live reader's token scheme."""
    tokens = np.full((len(labels), 4), PAD, dtype=np.int64)
    for row, label in enumerate(labels):
        tokens[row, :len(label)] = [int(c) for c in label]
        tokens[row, len(label)] = END
    return torch.from_numpy(canvases.astype(np.float32) / 255).unsqueeze(1), torch.from_numpy(tokens)


def exact_by_length(readings, tokens):
    """{1: share, 2: share, 3: share, "all": share} of canvases read exactly, by number of digits."""
    tokens = np.asarray(tokens)
    right = ((np.asarray(readings) == tokens) | (tokens == PAD)).all(axis=1)
    lengths = (tokens < 10).sum(axis=1)
    return {**{k: float(right[lengths == k].mean()) for k in (1, 2, 3)}, "all": float(right.mean())}


def score_onnx(folder):
    """Exact-sequence accuracy by length of the exported reader in `folder` on the whole set."""
    images, tokens = as_model_inputs(*cached_build())
    return exact_by_length(read_all(onnx_reader(folder), images, **served_reading(folder)), tokens)


def read_with_probabilities(folder, canvas):
    """(digits read, [probability of each token chosen]) for one canvas, greedily, as the page reads."""
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
    canvases, labels = build(load_strokes(), limit=args.limit) if args.limit else cached_build()
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
