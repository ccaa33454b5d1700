"""The spread report: its runs cover what the issue asks, it is refused when it no longer describes the post,
the prose may state as fact only what all its runs show, and `make compare` classifies runs rightly."""
import copy
import json
import shutil
import tempfile
from decimal import Decimal
from pathlib import Path

import nbformat
import pytest

import _spread
from _spread import template_like
from tests.factory import md, publishable, ran, recorded, reseal, save_post, stream
from tools.numbers.bindings import RESULT_KEY
from tools.measure import compare_run
from tools.core import numerics
from tools.measure import spread, spread_report
from tools.measure.compare_run import AGREES, DISAGREES, NOT_COMPARABLE, report_on
from tools.core.notebooks import POSTS_DIR, REPO_ROOT, blog_metadata, find_posts, read_notebook, write_notebook_atomically
from tools.measure.spread_report import (
    SPREAD_REPORT, claim_problems, code_sha256, read_report, report_path, report_problems, results_of,
    shows_spread, spreads,
)
from tools.core.seal import seal_of, sealed
from tools.measure.spread_report import CODE_DIGEST, legacy_code_sha256, results_v2_sha256
from tools.author.inline_helpers import SECTION
from tools.core.notebooks import HELPER_TAG, SETUP_TAG, NotebookError

RERUNS = REPO_ROOT.parent / "shared" / "reruns"
POSTS = [path for path in sorted(POSTS_DIR.glob("*/index.ipynb")) if shows_spread(read_notebook(path))]


# ---- which runs ----------------------------------------------------------------------------------------

def test_three_runs_give_two_numeric_paths_and_three_seeds_with_the_page_s_run():
    runs = spread.planned_runs(3, page_seed=0)
    with_page = runs + [("pinned", 0)]
    assert {path for path, _ in with_page} == {"pinned", "native"}
    assert {seed for _, seed in with_page} == {0, 1, 2}
    assert ("pinned", 0) not in runs, "the page's own path and seed is the page"


def test_more_runs_fill_the_grid_without_repeating_one():
    runs = spread.planned_runs(9, page_seed=0)
    assert len(set(runs)) == 9 and ("pinned", 0) not in runs
    assert {seed for _, seed in runs} == {0, 1, 2, 3, 4}


def test_the_pins_open_the_setup_cell_of_every_post_that_shows_its_spread():
    for path in POSTS:
        nb = read_notebook(path)
        setup = nb.cells[1].source
        assert "_spread.py" in blog_metadata(nb)["helpers"]
        pins = setup.index("os.environ.setdefault")
        assert pins < setup.find("import torch") or "import torch" not in setup
        for name, value in numerics.PINNED.items():
            assert f"'{name}': '{value}'" in setup


@pytest.mark.parametrize("text, value, expected", [
    ("87.9%", 87.9, "87.9%"), ("2,000", 2000, "2,000"), ("0.7500", 0.75, "0.7500"), ("1.7e-05", 1.7e-5, "1.7e-05"),
    ("2.9x", 2.9, "2.9x"), ("15 min", 15, "15 min"), ("0.22 pt", 0.224, "0.22 pt"),
])
def test_a_range_is_written_as_the_page_writes_the_result(text, value, expected):
    assert template_like(text).format(value) == expected


def test_the_post_and_the_tools_seal_a_report_with_one_function():
    # one definition, _seal.py: the post's helper and the tools take the same function, not a copy of it
    assert _spread.seal_of is seal_of  # tests/test_cure.py holds _cure.py to the same
    report = {"runs": [a_run(87.9)], "page": {"results": {}}, "code_sha256": "0" * 64}
    assert seal_of(report) != seal_of({**report, "code_sha256": "1" * 64})
    assert _spread.SPREAD_REPORT == SPREAD_REPORT


# ---- a post with a report ------------------------------------------------------------------------------

def a_run(exact, path="native", seed=0):
    return {"label": f"{path} path, seed {seed}", "path": path, "seed": seed, "environment": {},
            "results": {"exact": {"text": f"{exact}%", "number": exact, "label": "read exactly"},
                        "parameters": {"text": "534,348", "number": 534348.0, "label": "parameters"}}}


def a_post(tmp_path, prose, exact="87.9", runs=("86.1", "88.0", "87.5"), shown=()):
    nb = publishable(md(prose), ran("print('training')", recorded("exact", f"{exact}%", float(exact), label="read exactly"),
                                    recorded("parameters", "534,348", 534348.0)), *shown)
    path = save_post(nb, tmp_path / "posts")
    report = sealed({"code_sha256": code_sha256(nb), "code_digest": CODE_DIGEST, "page": {"results": results_of(nb)},
                     "runs": [a_run(float(value), seed=seed) for seed, value in enumerate(runs)]})
    report_path(path.parent).write_text(json.dumps(report), encoding="utf-8")
    return nb, path


def claims(tmp_path, prose, **kwargs):
    nb, path = a_post(tmp_path, prose, **kwargs)
    return [problem for _, problem in claim_problems(nb, path.parent)]


def test_a_number_the_runs_move_cannot_be_stated_as_fact(tmp_path):
    [problem] = claims(tmp_path, "The reader reads 87.9 %<!--=exact--> of them exactly.")
    assert "87.9 %" in problem and "86.1% to 88.0%" in problem and "this run" in problem


def test_it_may_be_stated_as_this_run_s_or_with_its_range(tmp_path):
    assert claims(tmp_path, "In this run the reader reads 87.9 %<!--=exact--> of them exactly.") == []
    ranged = ("It reads 87.9 %<!--=exact--> exactly (re-runs: 86.1 %<!--ref=spread.exact.low--> to "
              "88.0 %<!--ref=spread.exact.high-->).")
    assert claims(tmp_path / "b", ranged) == []


def test_a_number_every_run_shows_alike_is_a_fact(tmp_path):
    assert claims(tmp_path, "The model has 534,348<!--=parameters--> parameters.") == []
    assert claims(tmp_path / "b", "About 88 %<!--~exact--> are read exactly.", runs=("87.6", "88.4", "87.9")) == []
    assert claims(tmp_path / "c", "About 88 %<!--~exact--> are read exactly.", runs=("86.1", "88.0")) != []


# ---- a claim about every run is weighed against the runs, whatever else its sentence says -------------------

def compared_post(tmp_path, prose, exact=(87.9, 88.4, 86.5), digits=(85.0, 85.2, 85.1)):
    """A post whose page and two re-runs record `exact` and `digits` (the page's first): both move at 0.1."""
    nb, path = a_post(tmp_path, prose, exact=str(exact[0]), runs=[str(value) for value in exact[1:]])
    nb.cells[-1].outputs.append(recorded("digits", f"{digits[0]}%", digits[0], label="digits read right"))
    reseal(nb)
    save_post(nb, tmp_path / "posts")
    report = json.loads(report_path(path.parent).read_text())
    report["code_sha256"], report["page"]["results"] = code_sha256(nb), results_of(nb)
    for run, value in zip(report["runs"], digits[1:]):
        run["results"]["digits"] = {"text": f"{value}%", "number": value, "label": "digits read right"}
    report_path(path.parent).write_text(json.dumps(sealed(report)))
    assert report_problems(nb, path.parent) == []
    return [problem for _, problem in claim_problems(nb, path.parent)]


def test_this_run_in_a_sentence_does_not_excuse_its_claim_about_every_run(tmp_path):
    [problem] = claims(tmp_path, "In this run, as in every run, the reader reads 87.9 %<!--=exact--> exactly.")
    assert "87.9 %" in problem and "every run" in problem and "86.1% to 88.0%" in problem
    [problem] = claims(tmp_path / "b", "In this run, as always, it reads 87.9 %<!--=exact--> exactly.")
    assert "always" in problem


def test_one_end_of_a_range_does_not_license_a_claim_about_every_run(tmp_path):
    [problem] = claims(tmp_path, "In every run it reads 87.9 %<!--=exact--> exactly (at least "
                                 "86.1 %<!--ref=spread.exact.low-->).")
    assert "87.9 %" in problem and "every run" in problem
    [problem] = claims(tmp_path / "b", "It reads 87.9 %<!--=exact--> exactly (the re-runs: from "
                                       "86.1 %<!--ref=spread.exact.low-->).")
    assert "quote its range" in problem
    whole = ("In every run it reads close to 87.9 %<!--=exact--> (86.1 %<!--ref=spread.exact.low--> to "
             "88.0 %<!--ref=spread.exact.high--> in the re-runs).")
    assert claims(tmp_path / "c", whole) == []


def test_never_and_always_are_weighed_against_the_runs(tmp_path):
    sentence = ("Whatever the seed, the digit score never passes the exact score: in this run 85.0 %<!--=digits--> "
                "against 87.9 %<!--=exact-->.")
    assert compared_post(tmp_path, sentence) == [], "below it in every run: the claim holds"
    said = compared_post(tmp_path / "b", sentence, digits=(85.0, 88.6, 85.1))
    assert said and all("88.6%" in problem and "88.4%" in problem for problem in said), said


@pytest.mark.parametrize("phrase", ["more than doubles it", "is more than twice it"])
def test_more_than_twice_is_weighed_against_every_run(tmp_path, phrase):
    sentence = f"In this run the exact score, 87.9 %<!--=exact-->, {phrase}: 40.0 %<!--=digits-->."
    assert compared_post(tmp_path, sentence, digits=(40.0, 41.0, 39.0)) == []
    [problem] = compared_post(tmp_path / "b", sentence, digits=(40.0, 44.5, 39.0))
    assert "more than" in problem and "44.5%" in problem and "88.4%" in problem and "1.99" in problem, problem


def test_each_item_of_a_list_is_a_claim_of_its_own(tmp_path):
    listed = ("- In this run it reads 87.9 %<!--=exact--> exactly\n"
              "- and the model has 534,348<!--=parameters--> parameters in every run.")
    assert claims(tmp_path, listed) == []


def test_a_report_edited_by_hand_is_refused(tmp_path):
    nb, path = a_post(tmp_path, "Text.")
    report = json.loads(report_path(path.parent).read_text())
    report["runs"][0]["results"]["exact"]["text"] = "87.9%"
    report_path(path.parent).write_text(json.dumps(report))
    [problem] = report_problems(nb, path.parent)
    assert "seal" in problem


def test_a_report_of_other_code_or_around_other_page_results_is_refused(tmp_path):
    nb, path = a_post(tmp_path, "Text.")
    assert report_problems(nb, path.parent) == []
    edited = copy.deepcopy(nb)
    edited.cells[-1].source = "print('training longer')"
    assert "other code" in report_problems(edited, path.parent)[0]
    rerun = copy.deepcopy(nb)
    rerun.cells[-1].outputs[0].metadata["reading-digits/result"]["number"] = 88.1
    assert "page's results differ" in report_problems(rerun, path.parent)[0]


# ---- the range the page prints is the report's ---------------------------------------------------------

def printed_range(low="86.1%", high="88.0%", count=3):
    """The output of the page's show_spread cell, as _spread.py prints it."""
    number = lambda text: float(text.rstrip("%"))
    return ran("show_spread(read_spread(), ['exact'])",
               stream(f"{count} re-runs of this notebook (numeric paths native; seeds 0, 1, 2), from spread.json:\n"),
               recorded("spread.exact.low", low, number(low), reference=True, label="read exactly, lowest"),
               recorded("spread.exact.high", high, number(high), reference=True, label="read exactly, highest"))


def spread_problems(tmp_path, shown):
    from tools.check.check_posts import check_notebook
    _, path = a_post(tmp_path, "Text.", shown=[shown])
    return [str(problem) for problem in check_notebook(path)]


def test_the_range_the_page_prints_is_the_report_s(tmp_path):
    assert spread_problems(tmp_path, printed_range()) == []


@pytest.mark.parametrize("shown, said", [
    (printed_range(low="86.0%"), "prints spread.exact.low as 86.0%, but the re-runs of spread.json give 86.1%"),
    (printed_range(high="88.1%"), "prints spread.exact.high as 88.1%, but the re-runs of spread.json give 88.0%"),
    (printed_range(count=5), "prints 5 re-runs, but spread.json holds 3"),
], ids=["low", "high", "count"])
def test_a_range_the_page_prints_unlike_the_report_is_refused(tmp_path, shown, said):
    [problem] = spread_problems(tmp_path, shown)
    assert said in problem and "cell 4 (code)" in problem and "make execute" in problem, problem


# ---- make compare --------------------------------------------------------------------------------------

def a_rerun(nb, tmp_path, name, exact=None, seal=True, overrides=None):
    """The page's notebook as another run left it: its value of `exact`, resealed as a run would (or not)."""
    run = copy.deepcopy(nb)
    if exact is not None:
        output = run.cells[-1].outputs[0]
        output.metadata["reading-digits/result"].update(text=f"{exact}%", number=float(exact))
        output.data["text/plain"] = f"read exactly: {exact}%"
    if overrides:
        blog_metadata(run)["provenance"]["parameters_overridden"] = overrides
    if seal:
        reseal(run)
    path = tmp_path / f"{name}.ipynb"
    write_notebook_atomically(run, path)
    return path


def compared(nb_path, post_path):
    said = []
    return report_on(nb_path, post_path, echo=said.append), "\n".join(said)


def test_compare_tells_a_run_inside_the_spread_from_one_outside(tmp_path):
    nb, post = a_post(tmp_path, "Text.")
    assert compared(post, post)[0] == AGREES, "the page agrees with itself"
    status, said = compared(a_rerun(nb, tmp_path, "inside", exact="86.1"), post)
    assert status == AGREES and "agrees" in said
    status, said = compared(a_rerun(nb, tmp_path, "outside", exact="86.0"), post)
    assert status == DISAGREES and "OUTSIDE" in said and "exact" in said
    status, _ = compared(a_rerun(nb, tmp_path, "seed", exact="87.0", overrides={"seed": 3}), post)
    assert status == AGREES, "another seed is still this post's run"


def test_compare_will_not_judge_an_edited_notebook_another_post_s_code_or_a_smoke_run(tmp_path):
    nb, post = a_post(tmp_path, "Text.")
    status, said = compared(a_rerun(nb, tmp_path, "tampered", exact="87.0", seal=False), post)
    assert status == NOT_COMPARABLE and "seal" in said
    status, said = compared(a_rerun(nb, tmp_path, "smoke", overrides={"epochs": 1}), post)
    assert status == NOT_COMPARABLE and "parameters" in said
    other = copy.deepcopy(nb)
    other.cells[-1].source = "print('training longer')"
    path = tmp_path / "other.ipynb"
    write_notebook_atomically(reseal(other), path)
    status, said = compared(path, post)
    assert status == NOT_COMPARABLE and "other code" in said and "cell 3" in said


def shown(text):
    return Decimal(text.rstrip("%x").split()[0].replace(",", ""))


def expected_verdict(nb, report):
    """What `make compare` should say, worked out here from the texts alone."""
    mine = results_of(nb)
    for name, spread_ in spreads(report).items():
        values = [shown(text) for text in spread_.texts if text != "nan"]
        if name not in mine or not min(values) <= shown(mine[name]["text"]) <= max(values):
            return DISAGREES
    return AGREES


@pytest.mark.skipif(not RERUNS.is_dir(), reason="../shared/reruns is not beside this clone")
@pytest.mark.parametrize("rerun", sorted(RERUNS.glob("*.ipynb")) if RERUNS.is_dir() else [], ids=lambda path: path.stem)
def test_compare_classifies_the_shared_reruns(rerun):
    post = compare_run.post_for(rerun)
    report = read_report(report_path(post.parent))
    nb = read_notebook(rerun)
    status, said = compared(rerun, post)
    if report is None:
        assert status == NOT_COMPARABLE and "no spread report" in said
    elif code_sha256(nb) != report["code_sha256"]:
        assert status == NOT_COMPARABLE and "other code" in said, "a re-run of an earlier version of the post"
    else:
        assert status == expected_verdict(nb, report), said


@pytest.mark.parametrize("path", POSTS, ids=lambda path: path.parent.name)
def test_every_post_has_a_report_of_its_own_code_and_agrees_with_it(path):
    nb = read_notebook(path)
    assert report_problems(nb, path.parent) == []
    report = read_report(report_path(path.parent))
    assert len(report["runs"]) >= 3 and {run["path"] for run in report["runs"]} == {"pinned", "native"}
    assert compared(path, path)[0] == AGREES


@pytest.mark.slow
def test_a_real_run_with_another_seed_is_classified_as_its_values_say(tmp_path):
    """Numbers aloud (a minute) run for real with a seed no run of the report used, then compared."""
    from tools.run import standin_data
    from tools.run.execute_posts import execute_copy
    [post] = find_posts("numbers-aloud")
    report = read_report(report_path(post.parent))
    seed = 1 + max(run["seed"] for run in report["runs"])
    copy_dir = tmp_path / post.parent.name
    shutil.copytree(post.parent, copy_dir, ignore=shutil.ignore_patterns("spread.json"))
    executed = execute_copy(read_notebook(post), copy_dir, "compare test", overrides={"seed": seed},
                            env=standin_data.offline_environment(), echo=lambda line: None)
    numerics_used = blog_metadata(executed)["provenance"]["numerics"]
    assert {name: numerics_used[name] for name in numerics.PINNED} == numerics.PINNED, "the setup cell pins them"
    path = tmp_path / "mine.ipynb"
    nbformat.write(executed, path)
    status, said = compared(path, post)
    assert status == expected_verdict(executed, report), said


def test_a_post_that_shows_no_spread_keeps_the_machine_s_own_kernels():
    from tools.author.inline_helpers import setup_source
    assert "os.environ.setdefault" not in setup_source(["_results.py", "_style.py"])
    assert "os.environ.setdefault" in setup_source(["_results.py", "_spread.py"])


def test_make_spread_says_what_it_will_cost_before_it_starts(capsys):
    """The estimate: waves of runs, stretched when more jobs than cores, then the page alone."""
    assert spread.expected_cost_s(600, 3, 2, 2) == 2 * 600 + 600
    assert spread.expected_cost_s(600, 3, 3, 2) == 600 * 1.5 + 600
    for name in ("three-digits", "handwriting"):
        assert spread.main([f"--post={name}", "--estimate"]) == 0
        line = capsys.readouterr().out
        assert "expected cost: about" in line and "budget of a post's spread" in line, line
    nb = read_notebook(find_posts("handwriting")[0])
    recorded = blog_metadata(nb)["provenance"]["duration_s"]
    said = spread.cost_line(nb, 3, 2, cores=2)
    assert f"about {spread.expected_cost_s(recorded, 3, 2, 2) / 60:.0f} min" in said
    assert ("OVER" in said) == (spread.expected_cost_s(recorded, 3, 2, 2) > spread.BUDGET_S)
    # Runs an interrupted spread finished by this very code are read back, so they cost nothing.
    resumed = spread.cost_line(nb, 3, 2, cores=2, kept=2)
    assert "2 kept from an earlier run of this code" in resumed, resumed
    assert f"about {spread.expected_cost_s(recorded, 1, 2, 2) / 60:.0f} min (1 runs" in resumed, resumed


def test_a_report_of_this_code_lends_its_runs_and_one_of_other_code_does_not(tmp_path, monkeypatch):
    """After an edit that keeps the code digest (a presentation helper), only the page need run again:
    the report's runs measured this very code. Edited code, or FRESH=1, keeps none of them."""
    monkeypatch.setattr(spread, "REPO_ROOT", tmp_path)  # no run saved by an interrupted spread
    path = save_post(publishable(md("Text."), ran("print('training')", recorded("exact", "87.9%", 87.9))),
                     tmp_path / "posts")
    nb = read_notebook(path)
    amd = {**a_run(86.5, path="pinned", seed=1), "cpu": "AMD EPYC"}
    report_path(path.parent).write_text(json.dumps(sealed({
        "code_sha256": code_sha256(nb), "code_digest": CODE_DIGEST, "page": {"results": results_of(nb)},
        "runs": [a_run(86.0, seed=0), amd]})), encoding="utf-8")
    assert spread.saved_run(path, nb, "pinned", 1) == amd, "kept with its own machine"
    assert spread.saved_run(path, nb, "native", 2) is None, "a run the report does not hold is made"
    plan = [("native", 0), ("pinned", 1), ("native", 2)]
    assert spread.kept_runs(path, nb, plan) == 2 and spread.kept_runs(path, nb, plan, fresh=True) == 0
    edited = copy.deepcopy(nb)
    edited.cells[-1].source = "print('training for longer')"
    assert spread.saved_run(path, edited, "pinned", 1) is None, "a report of other code lends nothing"


def test_the_estimate_counts_the_runs_already_made_by_this_code(tmp_path, monkeypatch):
    """Saved runs of this code are kept; one of other code is not (it measured something else)."""
    monkeypatch.setattr(spread, "REPO_ROOT", tmp_path)
    path = save_post(publishable(md("Text."), ran("print('training')", recorded("exact", "87.9%", 87.9))),
                     tmp_path / "posts")  # no report beside it: only saved runs count
    nb = read_notebook(path)
    plan = [("native", 0), ("pinned", 1), ("native", 2)]
    assert spread.kept_runs(path, nb, plan) == 0
    for (numeric_path, seed), digest in zip(plan, [code_sha256(nb), "not this code"]):
        saved = spread.saved_run_path(path, numeric_path, seed)
        saved.parent.mkdir(parents=True, exist_ok=True)
        spread.write_report({"code_sha256": digest, "run": {"path": numeric_path, "seed": seed}}, saved)
    assert spread.kept_runs(path, nb, plan) == 1


# ---- what the spread covers: what produces results --------------------------------------------------

def with_setup(nb, computing="def read(x):\n    return x", showing="def result(*a):\n    print(*a)"):
    """The notebook with a generated setup cell of one computing and one presentation helper."""
    source = "\n".join(["#| code-fold: true", "", SECTION.format("_results.py"), showing, "",
                         SECTION.format("_reader.py"), computing])
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [SETUP_TAG]})
    nb = copy.deepcopy(nb)
    nb.cells.insert(1, cell)
    return nb


def test_a_caption_or_a_presentation_helper_keeps_the_spread_and_code_that_computes_does_not():
    nb = publishable(md("Text."), ran("#| label: fig-a\n#| fig-cap: \"Old words.\"\nplot(x)"))
    base = with_setup(nb)
    digest = code_sha256(base)
    recaptioned = copy.deepcopy(base)
    recaptioned.cells[-1].source = recaptioned.cells[-1].source.replace("Old words.", "New, better words.")
    assert code_sha256(recaptioned) == digest, "a caption produces no result"
    assert code_sha256(with_setup(nb, showing="def result(*a):\n    pass")) == digest, "nor does how a result shows"
    assert code_sha256(with_setup(nb, computing="def read(x):\n    return -x")) != digest, "the reader does"
    changed = copy.deepcopy(base)
    changed.cells[-1].source = changed.cells[-1].source.replace("plot(x)", "plot(2 * x)")
    assert code_sha256(changed) != digest
    assert legacy_code_sha256(recaptioned) != legacy_code_sha256(base), "the old digest read every character"


def test_comments_and_cell_cuts_keep_the_spread_and_a_reused_helper_may_move_to_a_cell_of_its_own():
    nb = publishable(md("Text."), ran("x = load()\nmodel = fit(x)\nprint(score(model))"))
    base = with_setup(nb)
    digest = code_sha256(base)

    def edited(change):
        copied = copy.deepcopy(base)
        change(copied)
        return copied

    commented = edited(lambda nb: setattr(nb.cells[-1], "source", "x = load()  # (N, 28, 28)\n\n# fit it\n"
                                                                   "model = fit(x)\nprint(score(model))"))
    assert code_sha256(commented) == digest, "a shape comment or a blank line runs nothing"
    assert results_v2_sha256(commented) != results_v2_sha256(base), "the previous reading counted them"

    def cut(nb):
        nb.cells[-1].source = "x = load()\nmodel = fit(x)"
        nb.cells.append(md("Then the score:"))
        nb.cells.append(ran("print(score(model))"))
    assert code_sha256(edited(cut)) == digest, "one program cut in two cells with prose between"

    def reordered(nb):
        nb.cells[-1].source = "model = fit(x)\nx = load()\nprint(score(model))"
    assert code_sha256(edited(reordered)) != digest, "the order of what runs counts"

    def shown_apart(nb):  # the computing helper leaves the setup cell for a generated cell after the post's code
        nb.cells[1].source = nb.cells[1].source.split(SECTION.format("_reader.py"))[0].rstrip("\n")
        nb.cells.append(nbformat.v4.new_code_cell(
            "#| code-fold: true\n# Generated from _reader.py\n" + SECTION.format("_reader.py") +
            "\ndef read(x):\n    return x", metadata={"tags": [HELPER_TAG]}))
    assert code_sha256(edited(shown_apart)) == digest, "the helper is the same program wherever it is shown"
    assert code_sha256(with_setup(nb, computing="def read(x):\n    return x + 1")) != digest


def test_an_old_report_is_re_keyed_only_when_it_measured_this_very_notebook(tmp_path):
    nb, path = a_post(tmp_path, "Text.")
    old = json.loads(report_path(path.parent).read_text())
    del old["code_digest"]
    old["code_sha256"] = legacy_code_sha256(nb)
    report_path(path.parent).write_text(json.dumps(sealed({k: v for k, v in old.items() if k != "seal"})))
    assert report_problems(nb, path.parent) == [], "an old report is read the old way"
    assert "re-keyed" in spread.migrate_digest(path)
    made = json.loads(report_path(path.parent).read_text())
    assert made["code_digest"] == CODE_DIGEST and made["code_sha256"] == code_sha256(nb)
    assert made["seal"] == seal_of(made) and made["runs"] == old["runs"]
    assert report_problems(nb, path.parent) == []
    assert "already" in spread.migrate_digest(path)

    nb, path = a_post(tmp_path / "v2", "Text.")
    old = json.loads(report_path(path.parent).read_text())
    old.update(code_digest="results-v2", code_sha256=results_v2_sha256(nb))
    report_path(path.parent).write_text(json.dumps(sealed({k: v for k, v in old.items() if k != "seal"})))
    assert report_problems(nb, path.parent) == [], "a results-v2 report is read the v2 way"
    assert "re-keyed" in spread.migrate_digest(path)
    assert json.loads(report_path(path.parent).read_text())["code_digest"] == CODE_DIGEST

    nb, path = a_post(tmp_path / "b", "Text.")
    stale = json.loads(report_path(path.parent).read_text())
    del stale["code_digest"]
    stale["code_sha256"] = "0" * 64
    report_path(path.parent).write_text(json.dumps(sealed({k: v for k, v in stale.items() if k != "seal"})))
    with pytest.raises(Exception, match="cannot be re-keyed"):
        spread.migrate_digest(path)


def test_the_spread_table_puts_the_page_inside_every_range():
    """The page's own value is one end when it lies outside the re-runs (part 1 once printed 220-273 beside 275)."""
    report = {"page": {"results": {"exact": {"text": "89.5%", "number": 89.5, "label": "read exactly"},
                                   "parameters": {"text": "534,348", "number": 534348.0, "label": "parameters"}}},
              "runs": [a_run(86.1), a_run(88.0, seed=1), a_run(87.5, "pinned", 2)]}
    rows = {row[0]: row for row in _spread.spread_rows(report, ["exact", "parameters", "missing"])}
    _, label, shown, low, high, count = rows["exact"]
    assert (label, shown, low["text"], high["text"], count) == ("read exactly", "89.5%", "86.1%", "89.5%", 4)
    assert rows["parameters"][3]["text"] == rows["parameters"][4]["text"] == "534,348"
    assert rows["missing"][3] is None and rows["missing"][5] == 0


# ---- make spread when the code moved the page's own results -----------------------------------------------

class InProcessPool:
    """multiprocessing's context and Pool, run in this process (the runs are faked)."""

    def Pool(self, jobs):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False

    def map(self, function, items, chunksize=1):
        return [function(item) for item in items]


def test_the_spread_table_shows_this_run_s_own_values_where_it_recorded_them():
    """The page runs before the report holds its results (make spread writes the runs first): the table takes
    the page's column, and its share of the range, from what this run recorded."""
    report = {"page": {"results": {"exact": {"text": "87.9%", "number": 87.9, "label": "read exactly"}}},
              "runs": [a_run(86.1), a_run(88.0, seed=1)]}
    this_run = {"exact": {"text": "89.7%", "number": 89.7, "label": "read exactly"}}
    [(_, _, shown, low, high, count)] = _spread.spread_rows(report, ["exact"], this_run)
    assert (shown, low["text"], high["text"], count) == ("89.7%", "86.1%", "89.7%", 3)
    [(_, _, shown, _, high, _)] = _spread.spread_rows(report, ["exact"], {})
    assert (shown, high["text"]) == ("87.9%", "88.0%"), "a result this run has not recorded: the report's"


TABLE = "show_spread(read_spread(), ['exact'])"


@pytest.mark.parametrize("page_moves, table, runs_of_the_page", [
    (True, None, 2), (True, "after", 1), (True, "before", 2), (True, "before, listing another", 1), (False, None, 1),
], ids=["moved-no-table", "moved-table-after", "moved-table-before", "moved-not-in-the-table", "page-as-before"])
def test_make_spread_runs_the_page_again_only_when_its_table_showed_a_moved_result_as_measured(
        tmp_path, monkeypatch, page_moves, table, runs_of_the_page):
    recording = ran("print('training')", recorded("exact", "87.9%", 87.9, label="read exactly"),
                    recorded("parameters", "534,348", 534348.0))
    shown = ran(TABLE, stream("This page and 3 re-runs of it\n"))
    other = ran(TABLE.replace("'exact'", "'parameters'"), stream("This page and 3 re-runs of it\n"))
    cells = {None: [recording], "after": [recording, shown], "before": [shown, recording],
             "before, listing another": [other, recording]}[table]
    path = save_post(publishable(md("Text."), *cells), tmp_path / "posts")
    nb = read_notebook(path)
    report_path(path.parent).write_text(json.dumps(sealed({
        "code_sha256": code_sha256(nb), "code_digest": CODE_DIGEST, "page": {"results": results_of(nb)},
        "runs": [a_run(86.0 + seed, seed=seed) for seed in range(3)]})), encoding="utf-8")
    new_exact = 89.7 if page_moves else 87.9
    tables = []  # the page's result in the report each page run saw

    def run_once(arguments):
        _, (numeric_path, seed), label, fresh = arguments
        return a_run(86.0 + seed, path=numeric_path, seed=seed)

    def execute(target, offline, echo):
        report = json.loads(report_path(target.parent).read_text())
        tables.append(report["page"]["results"]["exact"]["number"])
        executed = read_notebook(target)
        [output] = [output for cell in executed.cells if "training" in cell.source for output in cell.outputs
                    if RESULT_KEY in output.get("metadata", {}) and output.metadata[RESULT_KEY]["name"] == "exact"]
        output.metadata[RESULT_KEY]["number"] = new_exact
        output.metadata[RESULT_KEY]["text"] = f"{new_exact}%"
        write_notebook_atomically(reseal(executed), target)

    monkeypatch.setattr(spread, "run_once", run_once)
    monkeypatch.setattr(spread, "execute_in_place", execute)
    monkeypatch.setattr(spread.multiprocessing, "get_context", lambda kind: InProcessPool())
    monkeypatch.setattr(spread.standin_data, "build", lambda: None)
    monkeypatch.setattr(spread, "page_seed", lambda nb: 0)
    spread.spread(path, 3, 1)
    made = read_report(report_path(path.parent))
    assert made["page"]["results"]["exact"]["number"] == new_exact
    assert tables == [87.9, 89.7][:runs_of_the_page], \
        "a second page run only where the table showed a moved result as the report held it before"


def test_the_names_a_spread_table_lists_are_read_from_its_call():
    nb = publishable(md("Text."), ran("print(1)"), ran("show_spread(read_spread(), ['exact', 'loss'])"))
    assert spread_report.table_names(nb) == {"exact", "loss"}
    assert spread_report.table_names(publishable(md("Text."), ran("show_spread(read_spread(), NAMES)"))) is None
    assert spread_report.table_names(publishable(md("Text."), ran("print(1)"))) is None


def carry_case():
    """An earlier report whose page ran on another chip, and this spread's runs, as far as carried_page reads them."""
    def run(path, seed, value, cpu="AMD EPYC"):
        return {"label": f"{path} {seed}", "path": path, "seed": seed, "cpu": cpu,
                "results": {"exact": {"text": f"{value}%", "number": float(value)}}}
    runs = [run("native", 0, 88), run("pinned", 1, 87), run("native", 2, 89), run("pinned", 2, 86),
            run("pinned", 3, 88.5)]
    earlier = {"made_at": "2026-12-04T00:00:00+00:00", "code_sha256": "0" * 64, "machine": {"cpu": "Intel Xeon"},
               "paths": {"pinned": {"MKL_CBWR": "AVX2"}, "native": {"MKL_CBWR": "AUTO"}},
               "page": {"path": "pinned", "seed": 0, "numerics": None,
                        "results": {"exact": {"text": "85%", "number": 85.0}}},
               "runs": copy.deepcopy(runs)}
    return earlier, runs


def test_a_page_of_another_chip_is_carried_only_where_the_change_moved_no_result():
    earlier, runs = carry_case()
    carried = spread.carried_page(earlier, runs)
    assert carried["cpu"] == "Intel Xeon" and carried["results"] == earlier["page"]["results"]
    assert (carried["path"], carried["seed"]) == ("pinned", 0) and "carried" in carried["label"]
    assert carried["environment"] == {"MKL_CBWR": "AVX2"} and carried["carried_from"]["code_sha256"] == "0" * 64

    other_host = copy.deepcopy(earlier)
    other_host["runs"][0]["results"]["exact"]["number"] = 88.25  # a native run made on another host of the type
    assert spread.carried_page(other_host, runs)["cpu"] == "Intel Xeon", "the native path is the machine's own"
    moved = copy.deepcopy(earlier)
    moved["runs"][1]["results"]["exact"]["number"] = 87.5  # the change moved a result on the pinned path
    with pytest.raises(NotebookError, match="1 of them with other results"):
        spread.carried_page(moved, runs)
    too_few = {**earlier, "runs": earlier["runs"][:4]}
    with pytest.raises(NotebookError, match="2 pinned-path runs in common"):
        spread.carried_page(too_few, runs)
    same_chip = {**earlier, "machine": {"cpu": "AMD EPYC"}}
    with pytest.raises(NotebookError, match="only a page of another chip"):
        spread.carried_page(same_chip, runs)
