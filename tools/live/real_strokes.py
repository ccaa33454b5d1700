"""Issue 36's first experiment: does the cure read people better when people's strokes reach training?

The handwriting post's cure trains on MNIST, the project's own pen writer (templates) and scribbles. This
trains the same reader at the ablation budget (tools/live/ablation_report.BUDGET: 3 epochs, 30,000
canvases), seed 0, one thread per run, in up to three ways that change one thing each:

    everything        the cure as the ablations train it
    plus_real         the same, with UCI's 30 training writers' pen digits (7,494, each drawn once as the
                      page draws the blind test's) added to the writer's digits that make up half the canvases
    real_not_writer   those people's digits instead of the writer's

and scores each on MNIST held out and on numbers made only of the other 14 writers' digits
(tools/live/pen_writers.py): a test blind to the writer, which no run trains on. It prints a JSON line per run:
exact by length, and single digits read right per digit. Nothing is written into the post.

    python -m tools.live.real_strokes                      # all three, two at a time (about 40 min on 2 cores)
    python -m tools.live.real_strokes everything plus_real
"""
import json
import math
import multiprocessing
import sys
import time

import numpy as np
import torch

import _cure
import _encoder_decoder
import _reader
from _handwriting import BOX_PX, PAGE_PEN, box_as_digit, drawing_canvas
from _pen import drag_digit, ink_aspects, pen_set
from tools.live import pen_set as pen_tool
from tools.live.ablation_report import BUDGET
from tools.live.handwriting_set import as_model_inputs
from tools.live.pen_writers import writer_halves
from tools.run.standin_data import build, read_npz

# (key, people's digits in training, the writer's digits)
RUNS = {"everything": (False, BUDGET["written_digits"]),
        "plus_real": (True, BUDGET["written_digits"]),
        "real_not_writer": (True, 0)}
STROKES_SEED = 11       # how each person's digit is sized and drawn
PEN_PER_LENGTH = 1_000  # blind numbers of each length


def people_tiles(points, labels, rows, aspects, rng):
    """(tiles uint8 (N, 28, 28), digits): each row's pen digit drawn once, as the blind test draws one."""
    tiles, digits = [], []
    for row in rows:
        digit = int(labels[row])
        height = rng.uniform(0.45, 0.9) * BOX_PX
        events = [drag_digit(points[row], 0, height, aspects[digit] * rng.uniform(0.85, 1.15), rng)]
        tile = box_as_digit(drawing_canvas(events, PAGE_PEN), 0)
        tiles.append(np.zeros((28, 28), np.uint8) if tile is None else tile)
        digits.append(digit)
    return np.stack(tiles), np.array(digits)


def training_set(images, labels, count, cure, aspects, rng, people=None):
    """_cure.training_set, with `people` (tiles, digits) joining the writer's digits' pool when given."""
    written = np.random.default_rng(cure.seed)
    from_writer = round(cure.written_share * count)
    canvases, tokens, _ = _reader.compose(images, labels, count - from_writer - cure.scribbles, rng)
    pools = []
    if cure.written_digits:
        digits = written.integers(0, 10, size=cure.written_digits)
        pools.append((np.stack([_cure.written_tile(int(d), written, cure, aspects) for d in digits]), digits))
    if people is not None:
        pools.append(people)
    tiles, digits = np.concatenate([t for t, _ in pools]), np.concatenate([d for _, d in pools])
    mixed, mixed_tokens, _ = _reader.compose(tiles.astype(np.float32) / 255, digits, from_writer, rng)
    parts = [(canvases, tokens), (mixed, mixed_tokens)]
    if cure.scribbles:
        parts.append(_cure.scribble_canvases(cure.scribbles, written))
    return torch.cat([c for c, _ in parts]), torch.cat([t for _, t in parts])


def run(key):
    """Train one run's reader and score it; the scores as a dict."""
    torch.set_num_threads(1)
    started = time.perf_counter()
    with_people, writer_digits = RUNS[key]
    arrays = read_npz(build()["mnist/mnist-full.npz"])
    aspects = ink_aspects(arrays["x_train"], arrays["y_train"])  # pen_set.mnist_aspects(), from the arrays at hand
    points, labels = pen_tool.pen_digits()
    training_writers, test_writers = writer_halves(labels)
    people = (people_tiles(points, labels, training_writers, aspects, np.random.default_rng(STROKES_SEED))
              if with_people else None)
    cure = _cure.Cure(written_digits=writer_digits, scribbles=BUDGET["scribbles"])
    canvases, tokens = training_set(arrays["x_train"].astype(np.float32) / 255, arrays["y_train"].astype(np.int64),
                                    BUDGET["train_size"], cure, aspects, np.random.default_rng(0), people)
    recipe = _reader.Recipe(epochs=BUDGET["epochs"])
    torch.manual_seed(0)
    model = _encoder_decoder.Reader(_encoder_decoder.ReaderConfig(_reader.VOCAB))
    optimiser, scheduler = _reader.optimiser_and_schedule(model, recipe, math.ceil(len(canvases) / recipe.batch_size))
    setting, distortions = _cure.Augmentation(flag_ones=0.5), torch.Generator().manual_seed(1)
    order = torch.Generator().manual_seed(0)
    for epoch in range(1, recipe.epochs + 1):
        loss = _reader.train_one_epoch(model, optimiser, scheduler, (canvases, tokens), recipe, order,
                                       lambda batch, batch_tokens: _cure.augment(batch, batch_tokens, distortions, setting))
        print(f"  {key}: epoch {epoch}/{recipe.epochs}, loss {loss:.4f}", flush=True)
    scores = {"key": key, "minutes": round((time.perf_counter() - started) / 60, 1)}
    x_test, y_test = arrays["x_test"].astype(np.float32) / 255, arrays["y_test"].astype(np.int64)
    images, mnist_tokens, _ = _reader.compose(x_test, y_test, BUDGET["test_size"], np.random.default_rng(1))
    scores["mnist"] = _reader.read_right(_reader.read_all(model, images)[0], mnist_tokens).float().mean().item()
    blind, blind_labels = pen_set(points, labels, test_writers, aspects, PEN_PER_LENGTH)
    images, blind_tokens = as_model_inputs(blind, blind_labels)
    lengths = torch.tensor([len(label) for label in blind_labels])
    readings = _reader.read_all(model, images)[0]
    right = _reader.read_right(readings, blind_tokens)
    scores.update({f"blind_writers_{k}": right[lengths == k].float().mean().item() for k in (1, 2, 3)})
    truth, said = blind_tokens[lengths == 1, 0], readings[lengths == 1, 0]
    scores["blind_single_per_digit"] = {d: (said[truth == d] == d).float().mean().item() for d in range(10)}
    print(json.dumps(scores), flush=True)
    return scores


def main(argv=None):
    keys = (argv if argv is not None else sys.argv[1:]) or list(RUNS)
    unknown = [key for key in keys if key not in RUNS]
    if unknown:
        print(f"unknown run(s) {', '.join(unknown)}; choose from {', '.join(RUNS)}", file=sys.stderr)
        return 2
    print(f"{len(keys)} run(s) of {BUDGET['epochs']} epochs on {BUDGET['train_size']:,} canvases, two at a time", flush=True)
    with multiprocessing.get_context("spawn").Pool(min(2, len(keys))) as pool:
        pool.map(run, keys, chunksize=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
