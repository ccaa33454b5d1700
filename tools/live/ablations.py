"""What each part of the handwriting post's cure contributes: train the reader with each part switched off, write a sealed report.

The handwriting post (part 3) trains part 2's reader twice: on MNIST as it comes, and on the cure's
canvases (people's pen digits mixed in with MNIST, distortions of every box, scribbles read as
nothing). One comparison changes everything at once; this command trains one reader per row below,
each changing one thing, with otherwise the same canvases, seed and recipe:

    nothing                         MNIST as it comes (the baseline)
    everything                      the cure as the post trains it
    everything but <part>           one part off: people's digits, the distortions, and each kind
                                    of distortion (stroke width, geometry, elastic bending, flags on 1s)
    the writer's digits instead     the project's template writer in place of people's digits (the
                                    cure before people's strokes), and both together
    a wider / deeper model          the whole cure, with a width of 128 instead of 96, or three blocks
                                    in each stack instead of two
    longer training                 the whole cure, 5 epochs instead of the report's 3
    other seeds                     the whole cure with seeds 1 and 2: how far the seed alone moves a row

People's digits are UCI's 30 training writers' (`_pen.writer_halves`); the blind test's halves hold
only the 14 others', so every row's pen-test score is blind to the writer.

Each run is scored on MNIST's held-out canvases, the synthetic set and both halves of the blind
test, by length: the tuning half is the one to choose by, the test half is only reported. The runs are smaller than the post's (fewer canvases, epochs and writer's digits, set
below): the report compares parts with each other, and says its own budget. It is written beside
the post as ablations.json: the rows, the settings, the SHA-256 of the code that trained them
(_cure.py, _encoder_decoder.py, _reader.py, _handwriting.py, _pen.py), the machine, the date, and a seal over all of
it (`seal_of` in _seal.py, which the post inlines). The post checks the seal and prints the report; `make check` refuses a
report made by other code than the helpers in the repository.

    python -m tools.live.ablations                      # every row, two at a time
    python -m tools.live.ablations --jobs 1             # one at a time
    python -m tools.live.ablations --rows wider deeper  # these rows again (or new ones); the others
                                                        # are kept from the report, if it is current
"""
import argparse
import dataclasses
import json
import math
import multiprocessing
import platform
import sys
import time
import typing
from datetime import datetime, timezone

import numpy as np
import torch

import _cure
import _encoder_decoder
import _reader
from _pen import writer_halves
from tools.core.notebooks import REPO_ROOT
from tools.core.seal import sealed
from tools.live import pen_set
from tools.live.ablation_report import BUDGET, REPORT, code_digests, merged, rekey
from tools.live.handwriting_set import as_model_inputs, cached_build
from tools.run.standin_data import build, read_npz


class Row(typing.NamedTuple):
    """One run of the report: what it changes from the whole cure at the report's budget."""
    key: str
    name: str
    cure: dict = {}          # fields of _cure.Cure
    augmentation: dict = {}  # fields of _cure.Augmentation
    model: dict = {}         # fields of _encoder_decoder.ReaderConfig
    recipe: dict = {}        # fields of _reader.Recipe
    seed: int = 0            # the model's initialisation, the batches' order and the distortions


WRITER = {"written_digits": BUDGET["written_digits"]}
ROWS = [
    Row("nothing", "nothing (MNIST as it comes)", {"people_digits": 0, "scribbles": 0, "distort": False}),
    Row("everything", "everything"),
    Row("no_people", "everything but people's digits", {"people_digits": 0}),
    Row("writer_instead", "the writer's digits instead", {"people_digits": 0, **WRITER}),
    Row("writer_too", "people's and the writer's digits", WRITER),
    Row("no_distortions", "everything but the distortions", {"distort": False}),
    Row("no_stroke_width", "… but stroke width", augmentation={"thicken": 0.0, "thin": 0.0}),
    Row("no_geometry", "… but geometry", augmentation={
        "scale": (1.0, 1.0), "aspect": 0.0, "rotation_degrees": 0.0, "shear": 0.0, "shift": 0.0,
        "edge_crossing_share": 0.0}),
    Row("no_elastic", "… but elastic bending", augmentation={"elastic": 0.0}),
    Row("no_flags", "… but flags on 1s", augmentation={"flag_ones": 0.0}),
    # The model and the training, one change each, with the whole cure.
    Row("wider", "everything, width 128", model={"width": 128}),
    Row("deeper", "everything, 3 blocks a stack", model={"encoder_blocks": 3, "decoder_blocks": 3}),
    Row("longer", "everything, 5 epochs", recipe={"epochs": 5}),
    # The whole cure again with other seeds: how far the seed alone moves a row at this budget.
    Row("seed_1", "everything, seed 1", seed=1),
    Row("seed_2", "everything, seed 2", seed=2),
]


def sets(budget):
    """The scoring sets: MNIST held out, the synthetic set, the pen halves; (images, tokens, lengths)."""
    arrays = read_npz(build()["mnist/mnist-full.npz"])
    x_test, y_test = arrays["x_test"].astype(np.float32) / 255, arrays["y_test"].astype(np.int64)
    images, tokens, lengths = _reader.compose(x_test, y_test, budget["test_size"], np.random.default_rng(1))
    scored = {"mnist": (images, tokens, lengths)}
    halves = pen_set.halves(budget["pen_per_length"])
    for name, (canvases, labels) in (("synthetic", cached_build()), ("pen_tuning", halves["tuning"]),
                                     ("pen_test", halves["test"])):
        images, tokens = as_model_inputs(canvases, labels)
        scored[name] = (images, tokens, torch.tensor([len(label) for label in labels]))
    return arrays, scored


def run(row, budget=BUDGET):
    """Train one row's reader and score it: {"key", "name", "mnist", "synthetic", "pen_test_1", ...}."""
    torch.set_num_threads(1)
    key, name = row.key, row.name
    started = time.perf_counter()
    arrays, scored = sets(budget)
    cure = dataclasses.replace(_cure.Cure(scribbles=budget["scribbles"]), **row.cure)
    points, labels = pen_set.pen_digits()
    people = writer_halves(labels)[0]
    setting = dataclasses.replace(_cure.Augmentation(flag_ones=0.5), **row.augmentation)
    images = arrays["x_train"].astype(np.float32) / 255
    canvases, tokens = _cure.training_set(images, arrays["y_train"].astype(np.int64), budget["train_size"],
                                          cure, pen_set.mnist_aspects(), np.random.default_rng(0),
                                          people=(points[people], labels[people]))
    recipe = _reader.Recipe(**{"epochs": budget["epochs"], **row.recipe})
    torch.manual_seed(row.seed)
    model = _encoder_decoder.Reader(_encoder_decoder.ReaderConfig(_reader.VOCAB, **row.model))
    optimiser, scheduler = _reader.optimiser_and_schedule(model, recipe, math.ceil(len(canvases) / recipe.batch_size))
    distortions = torch.Generator().manual_seed(row.seed + 1)
    distort = (lambda batch, batch_tokens: _cure.augment(batch, batch_tokens, distortions, setting)) \
        if cure.distort else None
    order = torch.Generator().manual_seed(row.seed)
    for epoch in range(1, recipe.epochs + 1):
        loss = _reader.train_one_epoch(model, optimiser, scheduler, (canvases, tokens), recipe, order, distort)
        print(f"  {key}: epoch {epoch}/{recipe.epochs}, loss {loss:.4f}", flush=True)
    out = {"key": key, "name": name}
    for set_name, (set_images, set_tokens, lengths) in scored.items():
        right = _reader.read_right(_reader.read_all(model, set_images)[0], set_tokens)
        if set_name.startswith("pen_"):
            out.update({f"{set_name}_{k}": right[lengths == k].float().mean().item() for k in (1, 2, 3)})
        else:
            out[set_name] = right.float().mean().item()
    print(f"{key}: done in {(time.perf_counter() - started) / 60:.1f} min: pen tuning half 1 digit "
          f"{100 * out['pen_tuning_1']:.1f} %, 3 digits {100 * out['pen_tuning_3']:.1f} %", flush=True)
    return out


MACHINE = f"{platform.machine()}, {platform.system()} {platform.release()}, one CPU thread per run"


def report(rows, budget=BUDGET):
    """The report of finished rows, sealed."""
    now = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
    made = {"rows": [{**row, "made": now} for row in rows], **budget, "code": code_digests(),
            "torch": torch.__version__, "machine": MACHINE, "made": now, "command": "make ablations"}
    return sealed(made)


def chosen_rows(keys):
    """The rows named by `keys` (every row when none is named); SystemExit naming an unknown key."""
    if not keys:
        return ROWS
    known = {row.key for row in ROWS}
    unknown = [key for key in keys if key not in known]
    if unknown:
        raise SystemExit(f"no ablation row {', '.join(unknown)}; the rows are {', '.join(sorted(known))}")
    return [row for row in ROWS if row.key in keys]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time, one CPU thread each (default 2)")
    parser.add_argument("--rows", nargs="+", metavar="KEY",
                        help="train only these rows, keeping the others from the report beside the post (which "
                             "must be current: same code, budget and machine)")
    parser.add_argument("--rekey", metavar="REF",
                        help="train nothing: re-key a report keyed by its helpers' bytes at git ref REF to "
                             "behaviour digests, if REF's helpers do what these do (comments, docstrings and "
                             "wrapping aside)")
    args = parser.parse_args(argv)
    if args.rekey:
        try:
            print(rekey(args.rekey))
        except ValueError as error:
            print(f"ablations.json: {error}", file=sys.stderr)
            return 1
        return 0
    rows = chosen_rows(args.rows)
    if args.rows:  # refuse a report the new rows cannot join before training anything
        try:
            merged(REPORT, [], [row.key for row in ROWS], MACHINE, torch.__version__)
        except ValueError as error:
            print(f"ablations.json: {error}", file=sys.stderr)
            return 1
    print(f"{len(rows)} runs of {BUDGET['epochs']} epochs on {BUDGET['train_size']:,} canvases, "
          f"{args.jobs} at a time", flush=True)
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        trained = pool.map(run, rows, chunksize=1)
    made = report(trained)
    if args.rows:
        made = merged(REPORT, made["rows"], [row.key for row in ROWS], MACHINE, torch.__version__)
    partial = REPORT.with_name(REPORT.name + ".partial")
    partial.write_text(json.dumps(made, indent=1) + "\n", encoding="utf-8")
    partial.replace(REPORT)  # never a half-written report
    print(f"wrote {REPORT.relative_to(REPO_ROOT)} (seal {made['seal'][:16]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
