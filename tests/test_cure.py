"""The handwriting post's cure, as exported to _cure.py: people's digits, the writer's, the scribbles and the training set are
what the post says they are; the ablation report is refused when edited or made by other code."""
import json

import numpy as np
import pytest

import _cure
import _seal
from _handwriting import TEMPLATES
from _reader import END, PAD
from tools.core.seal import seal_of
from _pen import writer_halves
from tools.live import ablation_report
from tools.live import pen_set as pen_tool

ASPECTS = np.full(10, 0.7)


def test_joined_strokes_are_one_stroke_through_the_jumps():
    seven_with_bar = TEMPLATES[7][1]
    assert len(seven_with_bar) == 2
    (pieces,) = _cure.joined(seven_with_bar)
    jump = [seven_with_bar[0][-1][-1], seven_with_bar[1][0][0]]
    assert jump in pieces and pieces[0] == seven_with_bar[0][0] and pieces[-1] == seven_with_bar[1][-1]


def test_the_pen_file_keeps_eight_points_stretched_to_the_unit_square():
    events = [np.array([[0, 0], [100, 0]]), np.array([[50, 20], [50, 220]])]
    kept = _cure.as_the_pen_file_keeps(events)
    assert kept.shape == (8, 2) and kept.min() == 0 and kept.max(axis=0).tolist() == [1, 1]
    assert kept[0].tolist() == [0, 0] and kept[-1] == pytest.approx([0.5, 1], abs=0.01), "in order, first to last"
    assert _cure.as_the_pen_file_keeps([np.array([[5, 5]])]) is None, "a dot keeps no path"


@pytest.fixture(scope="module")
def pen():
    return pen_tool.pen_digits()


def test_people_s_tiles_carry_their_digits_and_ink(pen):
    points, labels = pen
    tiles, digits = _cure.people_tiles(points[:40], labels[:40], ASPECTS, np.random.default_rng(0))
    assert tiles.shape == (40, 28, 28) and tiles.dtype == np.uint8
    assert digits.tolist() == labels[:40].tolist()
    assert (tiles.reshape(40, -1).max(axis=1) > 128).all(), "every digit leaves ink"


def test_without_the_writer_the_drawn_canvases_hold_only_the_training_writers_digits(pen):
    points, labels = pen
    training_writers, test_writers = writer_halves(labels)
    rows = training_writers[:30]
    people = (points[rows], labels[rows])
    tiles, digits = _cure.people_tiles(*people, ASPECTS, np.random.default_rng(_cure.Cure().seed))
    known = {tile.astype(np.float32).tobytes(): digit for tile, digit in zip(tiles / np.float32(255), digits)}
    blank = np.zeros((10, 28, 28), np.float32)  # blank MNIST, so that any ink below is people's
    cure = _cure.Cure(people_digits=30, scribbles=0)
    canvases, tokens = _cure.training_set(blank, np.arange(10), 40, cure, ASPECTS, np.random.default_rng(0), people)
    drawn = canvases[20:, 0].numpy()  # drawn_share 0.5: the last 20 canvases are made of drawn digits
    inked = 0
    for canvas, row_tokens in zip(drawn, tokens[20:]):
        for box in range(3):
            tile = canvas[:, 28 * box:28 * box + 28]
            if tile.any():
                inked += 1
                assert known[tile.astype(np.float32).tobytes()] == int(row_tokens[box])
    assert inked >= 20 and not canvases[:20].any(), "MNIST's blank canvases first, then people's digits"
    assert not set(rows.tolist()) & set(test_writers.tolist())


def test_a_cure_that_draws_more_people_s_digits_than_it_is_given_says_so():
    cure = _cure.Cure(people_digits=5, scribbles=0)
    with pytest.raises(ValueError, match="draws 5 of people's pen digits: pass people="):
        _cure.training_set(np.zeros((10, 28, 28), np.float32), np.arange(10), 12, cure, ASPECTS,
                           np.random.default_rng(0))


def test_the_training_set_holds_mnist_s_digits_the_writer_s_and_scribbles_read_as_nothing():
    images = np.zeros((20, 28, 28), np.float32)
    images[:, 5:20, 12:16] = 1
    labels = np.arange(20) % 10
    cure = _cure.Cure(people_digits=0, written_digits=30, drawn_share=0.25, scribbles=5)
    canvases, tokens = _cure.training_set(images, labels, 40, cure, ASPECTS, np.random.default_rng(0))
    assert canvases.shape == (40, 1, 28, 84) and tokens.shape == (40, 4)
    assert 0 <= float(canvases.min()) and float(canvases.max()) <= 1
    scribbled = tokens[-5:]
    assert (scribbled[:, 0] == END).all() and (scribbled[:, 1:] == PAD).all()
    assert canvases[-5:].amax(dim=(1, 2, 3)).min() > 0, "every scribble canvas has ink"
    again, _ = _cure.training_set(images, labels, 40, cure, ASPECTS, np.random.default_rng(0))
    assert (again == canvases).all(), "seeded: the same canvases every time"


def test_a_cure_without_its_parts_is_mnist_as_it_comes():
    images, labels = np.ones((10, 28, 28), np.float32), np.arange(10)
    cure = _cure.Cure(people_digits=0, written_digits=0, scribbles=0)
    canvases, tokens = _cure.training_set(images, labels, 12, cure, ASPECTS, np.random.default_rng(0))
    assert len(canvases) == 12 and (tokens[:, 0] < 10).all()


def test_the_tool_seals_reports_as_the_post_reads_them(tmp_path):
    made = {"rows": [{"key": "nothing", "pen_test_1": 0.8}], "epochs": 3}
    assert _cure.seal_of is _seal.seal_of, "the handwriting post reads its report with the blog's one seal"
    made["seal"] = _cure.seal_of(made)
    path = tmp_path / "ablations.json"
    path.write_text(json.dumps(made))
    assert _cure.read_report(path)["rows"] == made["rows"]
    made["rows"][0]["pen_test_1"] = 0.99  # edited by hand
    path.write_text(json.dumps(made))
    with pytest.raises(ValueError, match="its seal does not match its content"):
        _cure.read_report(path)
    assert any("its seal does not match" in problem for problem in ablation_report.report_problems(path))


def test_a_report_made_by_other_code_is_refused(tmp_path):
    made = {"rows": [], **ablation_report.BUDGET, "made": "2026-12-01 17:48 UTC", "machine": "x86_64",
            "code": dict(ablation_report.code_digests(), **{"_cure.py": "0" * 64})}
    made["seal"] = seal_of(made)
    path = tmp_path / "ablations.json"
    path.write_text(json.dumps(made))
    assert ablation_report.report_problems(path) == [
        "ablations.json was made by other code than this repository's _cure.py; run `make ablations` again, "
        "then `make execute` for the post that prints it"]
    made["code"] = ablation_report.code_digests()
    made["seal"] = seal_of(made)
    path.write_text(json.dumps(made))
    assert ablation_report.report_problems(path) == []


def scored(key, value, made=None):
    """A report row with every score at `value`."""
    return {"key": key, "name": key, **{score: value for score in ablation_report.SCORES},
            **({"made": made} if made else {})}


def test_rows_made_again_join_a_current_report_in_the_tools_order(tmp_path):
    made = {"rows": [scored("nothing", 0.5), scored("everything", 0.9)], **ablation_report.BUDGET,
            "made": "2026-12-01 17:48 UTC", "machine": "x86_64, here", "torch": "2.13.0+cpu",
            "code": ablation_report.code_digests()}
    made["seal"] = seal_of(made)
    path = tmp_path / "ablations.json"
    path.write_text(json.dumps(made))
    order = ["nothing", "everything", "wider"]
    joined = ablation_report.merged(path, [scored("wider", 0.95, "2026-12-06 14:00 UTC"),
                                           scored("nothing", 0.6, "2026-12-06 14:00 UTC")],
                                    order, "x86_64, here", "2.13.0+cpu")
    assert [(row["key"], row["mnist"], row["made"]) for row in joined["rows"]] == [
        ("nothing", 0.6, "2026-12-06 14:00 UTC"), ("everything", 0.9, "2026-12-01 17:48 UTC"),
        ("wider", 0.95, "2026-12-06 14:00 UTC")], "a row made again replaces its old self; each row keeps its date"
    assert joined["made"] == "2026-12-01 17:48 UTC to 2026-12-06 14:00 UTC"
    assert seal_of(joined) == joined["seal"] and ablation_report.shape_problem(joined) is None
    path.write_text(json.dumps(joined))
    assert ablation_report.report_problems(path) == [], "what it writes is a report make check takes"


@pytest.mark.parametrize("change, why", [
    ({"machine": "x86_64, elsewhere"}, "made with machine x86_64, elsewhere"),
    ({"torch": "2.12.0+cpu"}, "made with torch 2.12.0+cpu"),
    ({"epochs": 5}, "its budget is not the one this tool trains with"),
    ({"rows": [scored("gone", 0.5)]}, "its rows gone are no longer the tool's"),
    ({"code": {"_cure.py": "0" * 64}}, "made by other code"),
])
def test_rows_do_not_join_a_report_made_apart(tmp_path, change, why):
    made = {"rows": [scored("nothing", 0.5)], **ablation_report.BUDGET, "made": "2026-12-01 17:48 UTC",
            "machine": "x86_64, here", "torch": "2.13.0+cpu", "code": ablation_report.code_digests(), **change}
    made["seal"] = seal_of(made)
    path = tmp_path / "ablations.json"
    path.write_text(json.dumps(made))
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace("+", r"\+")):
        ablation_report.merged(path, [scored("wider", 0.9, "now")], ["nothing", "wider"], "x86_64, here",
                               "2.13.0+cpu")
    with pytest.raises(ValueError, match="there is none"):
        ablation_report.merged(tmp_path / "none.json", [], ["nothing"], "x86_64, here", "2.13.0+cpu")


# ---- the table the post prints is the report's -------------------------------------------------------------

COLUMNS = (("MNIST", "mnist"), ("tuning 1", "pen_tuning_1"), ("tuning 3", "pen_tuning_3"), ("test 1", "pen_test_1"),
           ("test 3", "pen_test_3"))


def a_report(**changes):
    rows = [{"key": "nothing", "name": "nothing (MNIST as it comes)", "mnist": 0.9565, "synthetic": 0.825,
             "pen_tuning_1": 0.761, "pen_tuning_2": 0.59, "pen_tuning_3": 0.47,
             "pen_test_1": 0.758, "pen_test_2": 0.58, "pen_test_3": 0.463},
            {"key": "everything", "name": "everything", "mnist": 0.9571, "synthetic": 0.9712,
             "pen_tuning_1": 0.92, "pen_tuning_2": 0.85, "pen_tuning_3": 0.79,
             "pen_test_1": 0.813, "pen_test_2": 0.65, "pen_test_3": 0.535}]
    made = {"rows": rows, **ablation_report.BUDGET, "code": ablation_report.code_digests(), "torch": "2.13.0+cpu",
            "machine": "x86_64, Linux, one CPU thread per run", "made": "2026-12-01 17:48 UTC",
            "command": "make ablations", **changes}
    made["seal"] = seal_of(made)
    return made


def printed_report(made, reference=True):
    """The cell of the handwriting post that prints the report: its header, its table and a result per row and pen column."""
    from tests.factory import ran, recorded, stream
    lines = [f"ablations.json: {len(made['rows'])} runs of {made['epochs']} epoch(s) on {made['train_size']:,} "
             f"canvases, made {made['made']} on {made['machine']}; checked unedited",
             f"{'trained with':<34}" + "".join(f"{label:>10}" for label, _ in COLUMNS)]
    lines += [f"{row['name']:<34}" + "".join(f"{100 * row[key]:.1f} %".rjust(10) for _, key in COLUMNS)
              for row in made["rows"]]
    records = [recorded(f"ablation_{row['key']}_{key}", f"{100 * row[key]:.1f}%", 100 * row[key], reference=reference)
               for row in made["rows"] for key in ("pen_tuning_1", "pen_test_1", "pen_test_3")]
    return ran("print_the_ablation_report()", stream("\n".join(lines) + "\n"), *records)


def reports_problems(tmp_path, printed, beside, reference=True):
    from tests.factory import publishable, save_post
    from tools.check.check_posts import check_reports
    from tools.core.notebooks import REPO_ROOT
    nb = publishable(printed_report(printed, reference))
    path = save_post(nb, tmp_path / "posts")
    (path.parent / "ablations.json").write_text(json.dumps(beside))
    return [f"{where}: {what}" for where, what in check_reports(nb, path, REPO_ROOT)]


def test_the_table_the_post_prints_is_the_report_s(tmp_path):
    assert reports_problems(tmp_path, a_report(), a_report()) == []


def test_the_report_s_numbers_are_recorded_as_references_not_as_the_run_s(tmp_path):
    # Every re-run reads the same committed report: its numbers have no spread of their own, and a spread made
    # while the report was rewritten would range over two reports.
    said = reports_problems(tmp_path, a_report(), a_report(), reference=False)
    assert len(said) == 6 and all("reference=True" in problem and "ablations.json" in problem for problem in said), said


def test_a_report_made_again_after_the_post_ran_is_refused(tmp_path):
    again = a_report()
    again["rows"][1]["pen_test_3"] = 0.541  # `make ablations` ran again; the post was not executed since
    again["seal"] = seal_of(again)
    said = reports_problems(tmp_path, a_report(), again)
    assert said and all("cell 2 (code)" in problem and "make execute" in problem for problem in said), said
    assert any("everything" in problem and "53.5 %" in problem and "54.1 %" in problem for problem in said), said
    assert any("ablation_everything_pen_test_3" in problem for problem in said), said


def test_a_report_with_other_rows_or_budget_than_the_table_is_refused(tmp_path):
    fewer = a_report(epochs=5)
    fewer["rows"] = fewer["rows"][:1]
    fewer["seal"] = seal_of(fewer)
    said = " | ".join(reports_problems(tmp_path, a_report(), fewer))
    assert "2 runs" in said and "1 in ablations.json" in said and "3 epoch(s) in its header, but 5" in said, said


# ---- the code a report was made with: what it does, not how it is laid out ----------------------------------

def test_the_behaviour_digest_ignores_layout_but_not_code():
    digest = ablation_report.behaviour_digest
    code = 'def f(x):\n    """Twice x."""\n    return 2 * x  # doubled\n'
    assert digest(code) == digest('def f(x):\n    """Twice x, wrapped\n    over two lines."""\n    return (2 *\n            x)\n')
    assert digest(code) != digest('def f(x):\n    """Twice x."""\n    return 3 * x\n')
    assert digest(code) != digest('def f(x):\n    """Twice x."""\n    return 2 * x\nLIMIT = "a"\n')


def a_repository_with_a_byte_keyed_report(tmp_path):
    """A git repository holding the helpers, and a report keyed by their bytes, as reports were before."""
    import hashlib
    import subprocess
    root = tmp_path / "repo"
    root.mkdir()
    for name in ablation_report.CODE:
        (root / name).write_text(f'"""{name}."""\nVALUE = {len(name)}\n', encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "x", "--allow-empty"],
                   cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "helpers"], cwd=root,
                   check=True)
    made = a_report(code={name: hashlib.sha256((root / name).read_bytes()).hexdigest()
                          for name in ablation_report.CODE})
    path = tmp_path / "ablations.json"
    path.write_text(json.dumps(made))
    return root, path


def test_a_byte_keyed_report_is_re_keyed_when_the_helpers_only_moved_their_lines(tmp_path):
    root, path = a_repository_with_a_byte_keyed_report(tmp_path)
    assert ablation_report.report_problems(path, root), "a byte-keyed report is stale under behaviour digests"
    (root / "_pen.py").write_text('"""_pen.py, its docstring rewrapped\nover two lines."""\nVALUE = (7)\n')
    said = ablation_report.rekey("HEAD", path, root)
    assert "re-keyed from the helpers at HEAD" in said
    made = json.loads(path.read_text())
    assert made["rekeyed_from"] == "HEAD" and made["rows"] == a_report()["rows"]
    assert ablation_report.report_problems(path, root) == []


def test_a_report_is_not_re_keyed_to_helpers_that_do_other_things_or_were_not_its_own(tmp_path):
    root, path = a_repository_with_a_byte_keyed_report(tmp_path)
    before = path.read_text()
    (root / "_pen.py").write_text('"""_pen.py."""\nVALUE = 8\n')
    with pytest.raises(ValueError, match="HEAD's _pen.py does other things than this repository's"):
        ablation_report.rekey("HEAD", path, root)
    made = json.loads(before)
    made["code"]["_cure.py"] = "0" * 64
    made["seal"] = seal_of(made)
    path.write_text(json.dumps(made))
    with pytest.raises(ValueError, match="was not made by HEAD's _cure.py"):
        ablation_report.rekey("HEAD", path, root)
    assert json.loads(path.read_text()) == made, "nothing is written when it cannot re-key"


def test_every_ablation_row_changes_fields_that_exist():
    """A misspelt field fails here, not forty minutes into `make ablations`."""
    import dataclasses

    import _encoder_decoder
    import _reader
    from tools.live import ablations
    for row in ablations.ROWS:
        dataclasses.replace(_cure.Cure(), **row.cure)
        dataclasses.replace(_cure.Augmentation(), **row.augmentation)
        dataclasses.replace(_encoder_decoder.ReaderConfig(_reader.VOCAB), **row.model)
        dataclasses.replace(_reader.Recipe(), **row.recipe)
    assert len({row.key for row in ablations.ROWS}) == len(ablations.ROWS), "keys name one row each"
    assert [row.key for row in ablations.chosen_rows(["longer", "wider"])] == ["wider", "longer"]
    with pytest.raises(SystemExit, match="no ablation row widest"):
        ablations.chosen_rows(["widest"])
