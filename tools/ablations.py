"""What each part of post 4's cure contributes: train the reader with each part switched off, write a sealed report.

Post 4 (reading handwriting) trains part 2's reader twice: on MNIST as it comes, and on the cure's
canvases (the pen writer's digits mixed in with MNIST, distortions of every box, scribbles read as
nothing). One comparison changes everything at once; this command trains one reader per row below,
each with one part of the cure switched off, and otherwise the same canvases, seed and recipe:

    nothing                         MNIST as it comes (the baseline)
    everything                      the cure as the post trains it
    everything but <part>           one part off: the writer's digits, their pen-file redrawing,
                                    the distortions, and each kind of distortion (stroke width,
                                    geometry, elastic bending, flags on 1s)

Each run is scored on MNIST's held-out canvases, the synthetic set and the blind test's test half,
by length. The runs are smaller than the post's (fewer canvases, epochs and writer's digits, set
below): the report compares parts with each other, and says its own budget. It is written beside
the post as ablations.json: the rows, the settings, the SHA-256 of the code that trained them
(_cure.py, _reader.py, _handwriting.py, _pen.py), the machine, the date, and a seal over all of
it (`seal_of` in _cure.py). The post checks the seal and prints the report; `make check` refuses a
report made by other code than the helpers in the repository.

    python -m tools.ablations              # every row, two at a time
    python -m tools.ablations --jobs 1     # one at a time
"""
import argparse
import dataclasses
import hashlib
import json
import math
import multiprocessing
import platform
import re
import sys
import time
from datetime import datetime, timezone

from tools.notebooks import REPO_ROOT

RESULT_KEY = "reading-digits/result"  # as _results.py records a result
POST = "2026-07-09-reading-handwriting"
REPORT = REPO_ROOT / "posts" / POST / "ablations.json"
CODE = ("_cure.py", "_reader.py", "_handwriting.py", "_pen.py")
BUDGET = {"epochs": 3, "train_size": 30_000, "written_digits": 8_000, "scribbles": 750,
          "test_size": 2_000, "pen_per_length": 1_000}

# (key, name, changes to Cure, changes to Augmentation)
ROWS = [
    ("nothing", "nothing (MNIST as it comes)", {"written_digits": 0, "scribbles": 0, "distort": False}, {}),
    ("everything", "everything", {}, {}),
    ("no_writer", "everything but the writer's digits", {"written_digits": 0}, {}),
    ("no_pen_file", "… but the pen-file redrawing", {"pen_file_share": 0.0}, {}),
    ("no_distortions", "everything but the distortions", {"distort": False}, {}),
    ("no_stroke_width", "… but stroke width", {}, {"thicken": 0.0, "thin": 0.0}),
    ("no_geometry", "… but geometry", {}, {"scale": (1.0, 1.0), "aspect": 0.0, "rotation_degrees": 0.0,
                                           "shear": 0.0, "shift": 0.0, "edge_crossing_share": 0.0}),
    ("no_elastic", "… but elastic bending", {}, {"elastic": 0.0}),
    ("no_flags", "… but flags on 1s", {}, {"flag_ones": 0.0}),
]


def code_digests(root=REPO_ROOT):
    """{helper: SHA-256 of its text}: the code a report was made with."""
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in CODE}


def sets(budget):
    """The scoring sets: MNIST held out, the synthetic set, the pen test half; (images, tokens, lengths)."""
    import numpy as np
    import torch
    import _reader
    from tools import pen_set
    from tools.handwriting_set import as_model_inputs, cached_build
    from tools.standin_data import build, read_npz
    arrays = read_npz(build()["mnist/mnist-full.npz"])
    x_test, y_test = arrays["x_test"].astype(np.float32) / 255, arrays["y_test"].astype(np.int64)
    images, tokens, lengths = _reader.compose(x_test, y_test, budget["test_size"], np.random.default_rng(1))
    scored = {"mnist": (images, tokens, lengths)}
    for name, (canvases, labels) in (("synthetic", cached_build()),
                                     ("pen_test", pen_set.halves(budget["pen_per_length"])["test"])):
        images, tokens = as_model_inputs(canvases, labels)
        scored[name] = (images, tokens, torch.tensor([len(label) for label in labels]))
    return arrays, scored


def run(row, budget=BUDGET, seed=0):
    """Train one row's reader and score it: {"key", "name", "mnist", "synthetic", "pen_test_1", ...}."""
    import numpy as np
    import torch
    torch.set_num_threads(1)
    import _cure
    import _reader
    from tools.pen_set import mnist_aspects
    key, name, cure_changes, augmentation_changes = row
    started = time.perf_counter()
    arrays, scored = sets(budget)
    cure = dataclasses.replace(_cure.Cure(written_digits=budget["written_digits"], scribbles=budget["scribbles"]),
                               **cure_changes)
    setting = dataclasses.replace(_cure.Augmentation(flag_ones=0.5), **augmentation_changes)
    images = arrays["x_train"].astype(np.float32) / 255
    canvases, tokens = _cure.training_set(images, arrays["y_train"].astype(np.int64), budget["train_size"],
                                          cure, mnist_aspects(), np.random.default_rng(0))
    recipe = _reader.Recipe(epochs=budget["epochs"])
    torch.manual_seed(seed)
    model = _reader.Reader(_reader.ReaderConfig())
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
        if set_name == "pen_test":
            out.update({f"pen_test_{k}": right[lengths == k].float().mean().item() for k in (1, 2, 3)})
        else:
            out[set_name] = right.float().mean().item()
    print(f"{key}: done in {(time.perf_counter() - started) / 60:.1f} min: pen test 1 digit "
          f"{100 * out['pen_test_1']:.1f} %, 3 digits {100 * out['pen_test_3']:.1f} %", flush=True)
    return out


def report(rows, budget=BUDGET):
    """The report of finished rows, sealed."""
    import torch
    import _cure
    made = {"rows": rows, **budget, "code": code_digests(), "torch": torch.__version__,
            "machine": f"{platform.machine()}, {platform.system()} {platform.release()}, one CPU thread per run",
            "made": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC", "command": "make ablations"}
    made["seal"] = _cure.seal_of(made)
    return made


def seal(report):
    """The seal of a report as _cure.seal_of writes it, without importing torch (make check runs without it)."""
    content = {key: value for key, value in report.items() if key != "seal"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


SCORES = ("mnist", "synthetic", "pen_test_1", "pen_test_2", "pen_test_3")


def shape_problem(made):
    """Why a report's content is not shaped as `run` and `report` write it (what the post and make check read)."""
    def number(value):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if not isinstance(made.get("rows"), list):
        return "its rows are missing or not a list"
    for index, row in enumerate(made["rows"]):
        if not isinstance(row, dict):
            return f"its rows[{index}] is not an object"
        for key in ("key", "name"):
            if not isinstance(row.get(key), str):
                return f"its rows[{index}].{key} is missing or not text"
        for key in SCORES:
            if not number(row.get(key)):
                return f"its rows[{index}].{key} is missing or not a number"
    for key in BUDGET:
        if not isinstance(made.get(key), int) or isinstance(made.get(key), bool):
            return f"its {key} is missing or not a whole number"
    if not isinstance(made.get("code"), dict) or not all(isinstance(value, str) for value in made["code"].values()):
        return "its code is missing or not an object of digests"
    for key in ("made", "machine"):
        if not isinstance(made.get(key), str):
            return f"its {key} is missing or not text"
    return None


def report_problems(path=REPORT, root=REPO_ROOT):
    """Why a report beside a post cannot be shown as this repository's code's: [] when it can."""
    if not path.exists():
        return []
    try:
        made = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return [f"{path.name} is not JSON ({error}); run `make ablations` again"]
    if not isinstance(made, dict):
        return [f"{path.name} is not a JSON object, so not what `make ablations` writes; run `make ablations` again"]
    if made.get("seal") != seal(made):
        return [f"{path.name}: its seal does not match its content (edited by hand?); run `make ablations` again"]
    shape = shape_problem(made)
    if shape:  # sealed, yet not what the tool writes: sealed again by hand, or by another version of the tool
        return [f"{path.name}: {shape}, so not what `make ablations` writes; run `make ablations` again"]
    stale = [name for name, digest in code_digests(root).items() if made.get("code", {}).get(name) != digest]
    if stale:
        return [f"{path.name} was made by other code than this repository's {', '.join(stale)}; "
                "run `make ablations` again, then `make execute` for the post that prints it"]
    return []


# What post 4 prints of the report (its cell that reads ablations.json): the header, a table with a column per
# score and a row per run, and a result per row and pen column (`ablation_<key>_pen_test_1`).
PRINTED_HEADER = re.compile(r"^ablations\.json: (?P<rows>\d+) runs of (?P<epochs>\d+) epoch\(s\) on "
                            r"(?P<train_size>[\d,]+) canvases, made (?P<made>.+?) on (?P<machine>.+?); seal checked$",
                            re.MULTILINE)
PRINTED_COLUMNS = {"MNIST": "mnist", "synthetic": "synthetic", "pen 1": "pen_test_1", "pen 2": "pen_test_2",
                   "pen 3": "pen_test_3"}
PRINTED_ROW = re.compile(r"^(?P<name>\S.*?)\s+(?P<values>(?:-?\d+(?:\.\d+)?\s?%\s*)+)$")
ROW_RESULT = re.compile(r"ablation_(?P<key>.+)_(?P<column>mnist|synthetic|pen_test_\d)")
NOT_PRINTED = "no ablations.json beside this notebook"


def printed_problems(nb, path=REPORT):
    """[(where, problem)]: what the post printed of the report beside it (header, table, results) that the report
    does not hold: a report made again after the post ran, or a table edited and sealed again by hand."""
    from tools.notebooks import code_cells, describe_cell
    from tools.printed import cell_text
    if not path.exists():
        return []
    made = json.loads(path.read_text(encoding="utf-8"))  # report_problems has read it, seal and shape
    rows = {row["key"]: row for row in made["rows"]}
    again = f"{path.name} changed after the post ran; run `make execute` for the post"
    found = []
    for number, cell in code_cells(nb):
        where, text = describe_cell(number, cell), cell_text(cell)
        if NOT_PRINTED in text:
            found.append((where, f"prints that there is no {path.name}, but there is one beside the post: {again}"))
        for header in PRINTED_HEADER.finditer(text):
            found += [(where, problem) for problem in table_problems(text[header.start():], header, made, path.name)]
        for output in cell.get("outputs", []):
            record = (output.get("metadata") or {}).get(RESULT_KEY)
            named = ROW_RESULT.fullmatch(str(record.get("name", ""))) if isinstance(record, dict) else None
            if named is None:
                continue
            row = rows.get(named["key"])
            expected = None if row is None else 100 * float(row[named["column"]])
            if expected is None or not math.isclose(record.get("number") or 0.0, expected, rel_tol=1e-9):
                holds = "no such row" if row is None else f"{expected:.1f} %"
                found.append((where, f"result {record['name']} is {record.get('text')}, but {path.name} holds "
                                     f"{holds}: {again}"))
    return found


def table_problems(text, header, made, name):
    """The header's counts and each printed row of the table under it, against the report."""
    again = f"{name} changed after the post ran; run `make execute` for the post"
    said = []
    printed = {"rows": int(header["rows"]), "epochs": int(header["epochs"]),
               "train_size": int(header["train_size"].replace(",", "")), "made": header["made"],
               "machine": header["machine"]}
    for key, value in printed.items():
        held = len(made["rows"]) if key == "rows" else made.get(key)
        if value != held:
            what = {"rows": "runs", "epochs": "epoch(s)", "train_size": "canvases"}.get(key, key)
            said.append(f"prints {value} {what} in its header, but {held} in {name}: {again}")
    lines = text.split("\n")[1:]
    columns = [PRINTED_COLUMNS.get(label) for label in re.split(r"\s{2,}", lines[0].strip())[1:]] if lines else []
    table = []
    for line in lines[1:]:
        row = PRINTED_ROW.match(line.rstrip())
        if row is None:
            break
        table.append((row["name"], [float(value) for value in re.findall(r"-?\d+(?:\.\d+)?", row["values"])]))
    if len(table) != len(made["rows"]):
        said.append(f"its table has {len(table)} rows, but {name} {len(made['rows'])}: {again}")
    for (shown_name, values), row in zip(table, made["rows"]):
        expected = [100 * float(row[column]) if column in row else None for column in columns]
        off = [(value, held) for value, held in zip(values, expected)
               if held is None or abs(value - held) > 0.05 + 1e-9]
        if shown_name != row["name"] or off or len(values) != len(expected):
            shown = "  ".join(f"{value:.1f} %" for value in values)
            held = "  ".join("?" if value is None else f"{value:.1f} %" for value in expected)
            said.append(f"its table prints {shown_name!r} {shown}, but {name} holds {row['name']!r} {held}: "
                        f"{again}")
    return said


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time, one CPU thread each (default 2)")
    args = parser.parse_args(argv)
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
