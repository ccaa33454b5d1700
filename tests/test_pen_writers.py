"""UCI's writer split of the pen digits (tools/live/pen_writers.py): the pinned file's blocks give each side
UCI's per-digit counts, rows UCI's own files hold land on the right side, and the check against UCI's
pendigits.tes accepts that file and refuses one with a row from the other writers."""
import numpy as np
import pytest

from _pen import PenDataError
from tools.live import pen_set
from tools.live.pen_writers import (
    UCI_DIGIT_COUNTS, check_against_uci, file_rows, main, rows_of_uci_file, blind_writer_rows, writer_halves,
)

# Rows as UCI's files print them: the first three lines of pendigits.tes (digit one-hot, as one copy
# writes it) and the first and last lines of pendigits.tra.
UCI_TEST_LINES = [
    "88,92,2,99,16,66,94,37,70,0,0,24,42,65,100,100,0000000010",
    "80,100,18,98,60,66,100,29,42,0,0,23,42,61,56,98,0000000010",
    "0,94,9,57,20,19,7,0,20,36,70,68,100,100,18,92,0000000010",
]
UCI_TRAINING_LINES = [
    "47,100,27,81,57,37,26,0,0,23,56,53,100,90,40,98,8",
    "0,78,29,100,94,86,70,48,42,11,32,0,25,36,100,40,7",
]


@pytest.fixture(scope="module")
def pen():
    return pen_set.pen_digits()


def uci_text(points, labels, rows):
    return "\n".join(",".join(map(str, file_rows(points)[row])) + f",{labels[row]}" for row in rows) + "\n"


def row_of(points, labels, line):
    coordinates, digits = rows_of_uci_file(line)
    matches = np.flatnonzero((file_rows(points) == coordinates[0]).all(axis=1) & (labels == digits[0]))
    assert len(matches) == 1, line
    return int(matches[0])


def test_each_side_holds_uci_s_writers_digit_for_digit(pen):
    points, labels = pen
    training, test = writer_halves(labels)
    assert len(training) + len(test) == len(labels) and not set(training) & set(test)
    assert tuple(np.bincount(labels[test], minlength=10)) == UCI_DIGIT_COUNTS["pendigits.tes"]
    assert tuple(np.bincount(labels[training], minlength=10)) == UCI_DIGIT_COUNTS["pendigits.tra"]
    for line in UCI_TEST_LINES:
        assert row_of(points, labels, line) in set(test)
    for line in UCI_TRAINING_LINES:
        assert row_of(points, labels, line) in set(training)


def test_labels_in_another_order_are_refused(pen):
    _, labels = pen
    shuffled = np.random.default_rng(0).permutation(labels)
    with pytest.raises(PenDataError, match="not the pinned file's order"):
        writer_halves(shuffled)
    with pytest.raises(PenDataError, match="10,992"):
        writer_halves(labels[:-1])


def test_the_uci_check_accepts_the_test_writers_and_refuses_another_row(pen):
    points, labels = pen
    test = blind_writer_rows()
    order = np.random.default_rng(1).permutation(test)  # UCI's own order interleaves the blocks
    assert check_against_uci(points, labels, uci_text(points, labels, order)) == []

    one_hot = uci_text(points, labels, order[:1]).replace(f",{labels[order[0]]}\n",
                                                           "," + "".join("1" if d == labels[order[0]] else "0"
                                                                         for d in range(10)) + "\n")
    assert rows_of_uci_file(one_hot)[1].tolist() == [labels[order[0]]]

    swapped = order.copy()
    swapped[5] = 0  # a training writer's row instead of one of the test writers'
    assert any("not the blocks" in problem for problem in check_against_uci(points, labels, uci_text(points, labels, swapped)))
    edited = uci_text(points, labels, order).splitlines()
    edited[2] = "101" + edited[2][edited[2].index(","):]
    problems = check_against_uci(points, labels, "\n".join(edited))
    assert problems == ["UCI line 3: no row of the pinned file has its coordinates and digit"]


def test_the_command_prints_both_sides_and_checks_a_uci_file(pen, tmp_path, capsys):
    points, labels = pen
    assert main([]) == 0
    assert "test writers (the other 14): 3,498 digits" in capsys.readouterr().out
    test = blind_writer_rows()
    good, bad = tmp_path / "good.tes", tmp_path / "bad.tes"
    good.write_text(uci_text(points, labels, test))
    bad.write_text(uci_text(points, labels, np.r_[test[:-1], 0]))
    assert main(["--check-uci", str(good)]) == 0
    assert "exactly the test writers' rows" in capsys.readouterr().out
    assert main(["--check-uci", str(bad)]) == 1
