"""What each part of post 4's cure contributes: train the reader with each part switched off, write a sealed report.

Post 4 (reading handwriting) trains part 2's reader twice: on MNIST as it comes, and on the cure's
canvases (people's pen digits mixed in with MNIST, distortions of every box, scribbles read as
nothing). One comparison changes everything at once; this command trains one reader per row below,
each changing one thing, with otherwise the same canvases, seed and recipe:

    nothing                         MNIST as it comes (the baseline)
    everything                      the cure as the post trains it
    everything but <part>           one part off: people's digits, the distortions, and each kind
                                    of distortion (stroke width, geometry, elastic bending, flags on 1s)
    the writer's digits instead     the project's template writer in place of people's digits (the
                                    cure before people's strokes), and both together

People's digits are UCI's 30 training writers' (`_pen.writer_halves`); the blind test's halves hold
only the 14 others', so every row's pen-test score is blind to the writer.

Each run is scored on MNIST's held-out canvases, the synthetic set and both halves of the blind
test, by length: the tuning half is the one to choose by, the test half is only reported. The runs are smaller than the post's (fewer canvases, epochs and writer's digits, set
below): the report compares parts with each other, and says its own budget. It is written beside
the post as ablations.json: the rows, the settings, the SHA-256 of the code that trained them
(_cure.py, _encoder_decoder.py, _reader.py, _handwriting.py, _pen.py), the machine, the date, and a seal over all of
it (`seal_of` in _seal.py, which the post inlines). The post checks the seal and prints the report; `make check` refuses a
report made by other code than the helpers in the repository.

    python -m tools.live.ablations              # every row, two at a time
    python -m tools.live.ablations --jobs 1     # one at a time
"""
import argparse
import dataclasses
import json
import math
import multiprocessing
import platform
import sys
import time
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
from tools.live.ablation_report import BUDGET, REPORT, code_digests, rekey
from tools.live.handwriting_set import as_model_inputs, cached_build
from tools.run.standin_data import build, read_npz

# (key, name, changes to Cure, changes to Augmentation)
WRITER = {"written_digits": BUDGET["written_digits"]}
ROWS = [
    ("nothing", "nothing (MNIST as it comes)", {"people_digits": 0, "scribbles": 0, "distort": False}, {}),
    ("everything", "everything", {}, {}),
    ("no_people", "everything but people's digits", {"people_digits": 0}, {}),
    ("writer_instead", "the writer's digits instead", {"people_digits": 0, **WRITER}, {}),
    ("writer_too", "people's and the writer's digits", WRITER, {}),
    ("no_distortions", "everything but the distortions", {"distort": False}, {}),
    ("no_stroke_width", "… but stroke width", {}, {"thicken": 0.0, "thin": 0.0}),
    ("no_geometry", "… but geometry", {}, {"scale": (1.0, 1.0), "aspect": 0.0, "rotation_degrees": 0.0,
                                           "shear": 0.0, "shift": 0.0, "edge_crossing_share": 0.0}),
    ("no_elastic", "… but elastic bending", {}, {"elastic": 0.0}),
    ("no_flags", "… but flags on 1s", {}, {"flag_ones": 0.0}),
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


def run(row, budget=BUDGET, seed=0):
    """Train one row's reader and score it: {"key", "name", "mnist", "synthetic", "pen_test_1", ...}."""
    torch.set_num_threads(1)
    key, name, cure_changes, augmentation_changes = row
    started = time.perf_counter()
    arrays, scored = sets(budget)
    cure = dataclasses.replace(_cure.Cure(scribbles=budget["scribbles"]), **cure_changes)
    points, labels = pen_set.pen_digits()
    people = writer_halves(labels)[0]
    setting = dataclasses.replace(_cure.Augmentation(flag_ones=0.5), **augmentation_changes)
    images = arrays["x_train"].astype(np.float32) / 255
    canvases, tokens = _cure.training_set(images, arrays["y_train"].astype(np.int64), budget["train_size"],
                                          cure, pen_set.mnist_aspects(), np.random.default_rng(0),
                                          people=(points[people], labels[people]))
    recipe = _reader.Recipe(epochs=budget["epochs"])
    torch.manual_seed(seed)
    model = _encoder_decoder.Reader(_encoder_decoder.ReaderConfig(_reader.VOCAB))
    optimiser, scheduler = _reader.optimiser_and_schedule(model, recipe, math.ceil(len(canvases) / recipe.batch_size))
    distortions = torch.Generator().manual_seed(seed + 1)
    distort = (lambda batch, batch_tokens: _cure.augment(batch, batch_tokens, distortions, setting)) \
        if cure.distort else None
    order = torch.Generator().manual_seed(seed)
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


def report(rows, budget=BUDGET):
    """The report of finished rows, sealed."""
    made = {"rows": rows, **budget, "code": code_digests(), "torch": torch.__version__,
            "machine": f"{platform.machine()}, {platform.system()} {platform.release()}, one CPU thread per run",
            "made": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC", "command": "make ablations"}
    return sealed(made)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time, one CPU thread each (default 2)")
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
    print(f"{len(ROWS)} runs of {BUDGET['epochs']} epochs on {BUDGET['train_size']:,} canvases, "
          f"{args.jobs} at a time", flush=True)
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        rows = pool.map(run, ROWS, chunksize=1)
    made = report(rows)
    partial = REPORT.with_name(REPORT.name + ".partial")
    partial.write_text(json.dumps(made, indent=1) + "\n", encoding="utf-8")
    partial.replace(REPORT)  # never a half-written report
    print(f"wrote {REPORT.relative_to(REPO_ROOT)} (seal {made['seal'][:16]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
