"""Issue 36's real-strokes experiment (tools/live/real_strokes.py): people's digits are drawn as the blind test draws
them, only the 30 training writers' reach training, and a run without the writer's digits trains on people alone."""
import numpy as np
import pytest

import _cure
from tools.live import pen_set as pen_tool
from tools.live import real_strokes
from tools.live.pen_writers import writer_halves


@pytest.fixture(scope="module")
def pen():
    return pen_tool.pen_digits()


def test_people_s_tiles_carry_their_rows_digits_and_ink(pen):
    points, labels = pen
    rows = np.arange(40)
    tiles, digits = real_strokes.people_tiles(points, labels, rows, np.full(10, 0.7), np.random.default_rng(0))
    assert tiles.shape == (40, 28, 28) and tiles.dtype == np.uint8
    assert digits.tolist() == labels[rows].tolist()
    assert (tiles.reshape(40, -1).max(axis=1) > 128).all(), "every digit leaves ink"


def test_without_the_writer_the_mixed_canvases_hold_only_people_s_digits(pen):
    points, labels = pen
    training_writers, test_writers = writer_halves(labels)
    rows = training_writers[:30]
    people = real_strokes.people_tiles(points, labels, rows, np.full(10, 0.7), np.random.default_rng(0))
    mnist = np.zeros((10, 28, 28), np.float32)  # blank MNIST, so that any ink below is people's
    cure = _cure.Cure(written_digits=0, scribbles=0)
    canvases, tokens = real_strokes.training_set(mnist, np.arange(10), 40, cure, np.full(10, 0.7),
                                                 np.random.default_rng(0), people)
    mixed = canvases[20:, 0].numpy()  # written_share 0.5: the last 20 canvases are made of the pool
    known = {tile.astype(np.float32).tobytes(): digit for tile, digit in zip(people[0] / np.float32(255), people[1])}
    for canvas, row_tokens in zip(mixed, tokens[20:]):
        for box in range(3):
            tile = canvas[:, 28 * box:28 * box + 28]
            if tile.any():
                assert tile.astype(np.float32).tobytes() in known
                assert known[tile.astype(np.float32).tobytes()] == int(row_tokens[box])
    assert not set(rows) & set(test_writers)


def test_an_unknown_run_is_refused_by_name(capsys):
    assert real_strokes.main(["everything", "nope"]) == 2
    assert "unknown run(s) nope" in capsys.readouterr().err
