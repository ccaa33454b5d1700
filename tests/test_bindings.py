"""Numbers bound to the run: every quoted result names its record; lies are refused, honest prose passes.

Each lie below passed the old word-matching check; each honest sentence was refused by it.
"""
import json
import re

import nbformat
import pytest

from tests.factory import FRONT_MATTER, md, never_ran, publishable, ran, recorded, save_post
from tools.author.bind_numbers import main as bind_main
from tools.numbers.bindings import proposals, rewrite_notebook, rewritten, recorded_results, with_markers
from tools.check.check_posts import check_notebook
from tools.run.execute_posts import execute_in_place
from tools.core.notebooks import REPO_ROOT, read_notebook, write_notebook_atomically
from tools.numbers.prose_numbers import numbers_in

PARAMETERS = "epochs = 8\nlearning_rate = 1e-3\nheld_out_share = 0.1\nbatch_size = 128"
RECORDS = [
    recorded("exact_first_epoch", "42.3%", 42.3), recorded("exact", "87.9%", 87.93),
    recorded("original_exact", "87.3%", 87.3, reference=True), recorded("misread", "241", 241),
    recorded("held_out", "2,000", 2000), recorded("training_images", "60,000", 60000),
    recorded("weight", "0.7500", 0.75), recorded("accuracy", "97.0%", 97.0),
    recorded("parameters", "534,348", 534348), recorded("saving", "2.9x", 2.93),
    recorded("loss_gap", "1.2e-05", 1.2e-05), recorded("bias", "-0.31", -0.31),
    recorded("gain", "2.1 pp", 2.1), recorded("budget", "10 min", 10),
]


def post(*cells, front=FRONT_MATTER, records=RECORDS):
    parameters = ran(PARAMETERS, tags=["parameters"])
    return publishable(parameters, ran("result(...)", *records), *cells, front=front)


def problems_of(nb, tmp_path):
    return [str(problem) for problem in check_notebook(save_post(nb, tmp_path / "posts"))]


def assert_refused(nb, tmp_path, *fragments):
    problems = problems_of(nb, tmp_path)
    assert problems, "the lie passed"
    for fragment in fragments:
        assert any(fragment in problem for problem in problems), (fragment, problems)


def figure(**options):
    lines = ["#| label: fig-x", '#| fig-cap: "A plot."', '#| fig-alt: "A line."']
    lines += [f"#| {key}: {json.dumps(value)}" for key, value in options.items()]
    return ran("\n".join(lines) + "\nplot()", nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}))


# ---- lies ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("prose, fragment", [
    # two printed percentages swapped between the epochs they belong to
    ("After one epoch 87.9 %<!--=exact_first_epoch-->, at the end 42.3 %<!--=exact-->.", "shows as 42.3%"),
    ("The model still misreads 7 of 100 canvases.", "7 is not bound"),
    ("| run | exact |\n|---|---|\n| this | 100 %<!--=exact--> |", "shows as 87.9%"),
    ("| run | exact |\n|---|---|\n| this | 100 % |", "100 % is not bound"),
    ("It reads 0.29 of held-out numbers.", "0.29 is not bound"),
    ("The last line measures the gap: `3.4e-05`<!--=loss_gap-->.", "shows as 1.2e-05"),
    ("The last line measures the gap: `3.4e-05`.", "3.4e-05 is not bound"),
    ("The bias ends at −0.25<!--=bias-->.", "shows as -0.31"),
    ("A weight of -0.5 is learned.", "-0.5 is not bound"),
    ("It misreads seven of the canvases.", "seven is not bound"),
    ("Between 96-97 % are read right.", "96 is not bound"),
    ("It gets 97/100 right.", "97 is not bound"),
    ("The model misreads 12.", "12 is not bound"),
    ("Augmenting gains 2.1 percentage points.", "2.1 percentage points is not bound"),
    ("Augmenting gains 2.1 percentage points<!--=exact-->.", "another unit"),
    ("The gap is 3.4 × 10⁻⁵.", "is not bound"),
    ("The gap is 3.4 × 10⁻⁵<!--=loss_gap-->.", "shows as 1.2e-05"),
    ("$$\\text{exact} = 99.9\\%$$", "99.9\\% is not bound"),
    ("Exact: $99.9\\,\\%$.", "is not bound"),
    ("```console\n$ make check\nexact 99.9 %\n```", "99.9 % is not bound"),
    ("```\nexact 99.9 %\n```", "99.9 % is not bound"),
    ('<img src="a.png" alt="A line rising to 99.9 %">', "99.9 % is not bound"),
    ('![A plot.](a.png){fig-alt="A line rising to 99.9 %"}', "99.9 % is not bound"),
    ("It reads 87.9 %<!--=exactt-->.", "did you mean exact"),
    ("The original run reached 87.3 %<!--=original_exact-->.", "is a reference value"),
    ("This run reached 87.9 %<!--ref=exact-->.", "this run's own result"),
    ("Trained for 10<!--set=epochs--> epochs.", "sets to 8"),
    ("Trained for 8<!--set=steps--> epochs.", "does not set"),
    ("It reads 87.9 %<!--text--> right.", "is a share"),
    ("It reads 87.9 %<!--text: a score--> right.", "is a share"),
    ("A stray <!--=exact--> marker.", "follows no number"),
    ("It reads 87.9 %<!--=exact--><!--=exact-->.", "two markers"),
    ("It reads 87.9 %<!-- =exact, rounded -->.", "is not a marker"),
    ("It reads 88 %<!--~exact--> of them, or 87 %<!--~exact-->.", "rounds to 88"),
])
def test_a_lie_in_the_prose_is_refused(tmp_path, prose, fragment):
    assert_refused(post(md(prose)), tmp_path, fragment)


@pytest.mark.parametrize("options", [{"fig-subcap": ["Left at 99.9 %.", "Right."]}, {"tbl-cap": "Exact: 99.9 %."},
                                     {"fig-cap": "Exact reaches 99.9 %."}, {"fig-alt": "A line to 99.9 %."}])
def test_captions_cannot_quote_a_result(tmp_path, options):
    assert_refused(post(figure(**options)), tmp_path, "captions", "99.9 %")


def test_a_raw_cell_is_read_as_prose(tmp_path):
    raw = nbformat.v4.new_raw_cell("<p>Held-out accuracy 99.9 %</p>")
    assert_refused(post(raw), tmp_path, "cell 4 (raw)", "99.9 % is not bound")
    raw = nbformat.v4.new_raw_cell("<p>Held-out accuracy 87.9 %<!--=exact--></p>")
    assert problems_of(post(raw), tmp_path) == []


def test_front_matter_cannot_quote_a_result(tmp_path):
    front = FRONT_MATTER.replace('title: "An example post"', 'title: "An example post"\nsubtitle: "99.9 % exact"')
    assert_refused(post(front=front), tmp_path, "front matter", "99.9 %")


def test_an_included_file_is_read_and_a_missing_one_refused(tmp_path):
    nb = post(md("{{< include _results.md >}}"))
    path = save_post(nb, tmp_path / "posts")
    (path.parent / "_results.md").write_text("It reads 99.9 % of them.\n", encoding="utf-8")
    problems = [str(problem) for problem in check_notebook(path)]
    assert any("include _results.md" in problem and "99.9 %" in problem for problem in problems), problems
    (path.parent / "_results.md").unlink()
    problems = [str(problem) for problem in check_notebook(path)]
    assert any("included file cannot be read" in problem for problem in problems), problems


def test_a_record_that_disagrees_with_what_its_output_shows_is_refused(tmp_path):
    edited = recorded("exact", "87.9%", 87.93)
    edited.data["text/plain"] = "exact: 99.9%"
    assert_refused(post(records=[edited]), tmp_path, "the output shows")


def test_a_name_recorded_twice_is_refused(tmp_path):
    assert_refused(post(records=[recorded("exact", "87.9%", 87.9), recorded("exact", "42.3%", 42.3)]), tmp_path,
                   "recorded twice")


# ---- honest writing ----------------------------------------------------------------------------

HONEST = [
    "This is post 3 of 4; see §3.2, Figure 2, the 1990s, the 2017 paper, TensorFlow 2.15 and PyTorch 2.13.0.",
    "MNIST's 60,000<!--=training_images--> training images.",
    "The weight is 0.75<!--~weight-->, where the run prints 0.7500<!--=weight-->.",
    "It reads 97 %<!--~accuracy--> of them, 97.0 %<!--=accuracy--> as printed.",
    "The post takes about 10 minutes<!--text: reading time--> to read.",
    "A learning rate of 0.001<!--set=learning_rate-->, a batch of 128<!--set=batch_size-->, 8<!--set=epochs--> epochs.",
    "We hold out 10 %<!--set=held_out_share--> of the data.",
    "The model has 0.53 million<!--~parameters--> parameters, 534,348<!--=parameters--> exactly.",
    "It does 2.9<!--=saving--> times fewer multiply-adds (2.9x<!--=saving-->).",
    "After one epoch 42.3 %<!--=exact_first_epoch-->, at the end 87.9 %<!--=exact-->; the original run reached "
    "87.3 %<!--ref=original_exact--> (about 87 %<!--ref~original_exact-->).",
    "It misreads 241<!--=misread--> of 2,000<!--=held_out--> canvases and trains within the 10 min<!--=budget--> "
    "budget; the gap is `1.2e-05`<!--=loss_gap--> or $1.2 \\times 10^{-5}$<!--=loss_gap-->, 1.2 × 10⁻⁵<!--=loss_gap-->.",
    "A 28×84 canvas of 7×7 patches, a 4 by 4 grid, digit 1 and digits 2 and 3, a 7 with a bar, the flagged 1, "
    "SHA-256, $q = [\\sqrt{2}\\,\\ln 3, 0]$ and $1 - \\varepsilon$, `d_model = 64`, [v2.5](https://example.org/1.5) "
    "[@vaswani2017].",
    "1. a numbered list\n2. of steps\n\n## 3. A numbered heading",
    "Reading three digits, one at a time, with two heads.",
]


@pytest.mark.parametrize("prose", HONEST)
def test_honest_prose_passes(tmp_path, prose):
    assert problems_of(post(md(prose)), tmp_path) == []


# ---- what counts as a number ---------------------------------------------------------------------

def test_numbers_are_read_with_their_value_unit_and_precision():
    found = {number.numeral: number for number in numbers_in(
        "Reads 87.9 % and 2,000 canvases, −0.25, 2.9x, 0.53 million, 1.2×10⁻⁵, 25 s, 2.1 percentage points.")}
    assert (found["87.9"].unit, found["87.9"].places) == ("%", 1)
    assert str(found["2,000"].value) == "2000" and str(found["−0.25"].value) == "-0.25"
    assert found["2.9"].unit == "x" and found["0.53"].value == 530000 and found["0.53"].scale == 6
    assert float(found["1.2×10⁻⁵"].value) == 1.2e-05
    assert found["25"].unit == "s" and found["2.1"].unit == "pp"
    assert all(number.result_like for number in found.values())


# ---- the prose follows the run -------------------------------------------------------------------

def test_rewriting_follows_new_records_and_keeps_the_prose_s_form():
    records, _ = recorded_results(post(records=[recorded("exact", "91.4%", 91.42), recorded("total", "12,345", 12345),
                                                recorded("original", "87.3%", 87.3, reference=True)]))
    text = ("It reads 87.9 %<!--=exact--> (about 88 %<!--~exact-->) of 2,000<!--~total--> canvases, "
            "after 8<!--set=epochs--> epochs, in 10 minutes<!--text: reading time-->; the original "
            "87.3 %<!--ref=original-->.")
    new, changed = rewritten(text, records)
    assert new == ("It reads 91.4 %<!--=exact--> (about 91 %<!--~exact-->) of 12,345<!--~total--> canvases, "
                   "after 8<!--set=epochs--> epochs, in 10 minutes<!--text: reading time-->; the original "
                   "87.3 %<!--ref=original-->.")
    assert changed and "91.4 %" in changed[0][1] and "<!--" not in changed[0][1]
    assert rewritten(new, records) == (new, [])


def test_a_record_with_nothing_to_quote_is_never_written_into_the_prose(tmp_path):
    records, _ = recorded_results(post(records=[recorded("share", "nan", None)]))
    text = "Right 87.3 %<!--=share--> of the time, about 87 %<!--~share-->."
    assert rewritten(text, records) == (text, [])
    assert_refused(post(md(text), records=[recorded("share", "nan", None)]), tmp_path, "shows as nan")


def test_execute_rewrites_the_prose_and_lists_what_changed(tmp_path):
    nb = publishable(never_ran("share = 0.873"), never_ran("result('share', share, '{:.1%}', 'exact')"),
                     md("The reader is right 87.3 %<!--=share--> of the time."), helpers=["_results.py"],
                     provenance=None)
    path = save_post(nb, tmp_path / "posts")
    execute_in_place(path, echo=lambda line: None)
    assert check_notebook(path) == []
    nb = read_notebook(path)
    # A result shows nothing on the page (the number belongs to a table, a figure or the prose): its one output
    # is empty Markdown carrying the record, with its label (no HTML, which would make Quarto load require.js
    # from a CDN); no echo of its value after it either.
    [output] = nb.cells[3].outputs
    assert output.output_type == "display_data" and output.data == {"text/markdown": ""}
    [record] = recorded_results(nb)[0].values()
    assert (record.name, record.text, record.label) == ("share", "87.3%", "exact")
    nb.cells[2].source = "share = 0.9051"
    write_notebook_atomically(nb, path)
    lines = []
    execute_in_place(path, echo=lines.append)
    assert read_notebook(path).cells[4].source == "The reader is right 90.5 %<!--=share--> of the time."
    assert any("changed 1 sentence" in line for line in lines), lines
    assert any("was: The reader is right 87.3 % of the time." in line for line in lines), lines
    assert check_notebook(path) == []


# ---- proposing markers ---------------------------------------------------------------------------

def test_proposals_bind_by_value_and_words_and_leave_the_undecidable():
    nb = post(md("It misreads 241 canvases and reads 87.9 % exactly. The model has 534,348 parameters. "
                 "It trains for 8 epochs. Something is 5."))
    found = {proposal.number.numeral: proposal for proposal in proposals(nb)}
    assert found["241"].decided and found["241"].markers[0] == "<!--=misread-->"
    assert found["87.9"].markers[0] == "<!--=exact-->" and found["534,348"].decided
    assert found["8"].markers[0] == "<!--set=epochs-->"
    assert not found["5"].decided and found["5"].markers == []
    written = with_markers(list(found.values()))
    assert written == 4
    assert "241<!--=misread--> canvases" in nb.cells[-1].source and "Something is 5." in nb.cells[-1].source


def test_the_published_posts_leave_nothing_to_bind(capsys):
    assert bind_main([]) == 0, capsys.readouterr().out
    assert "0 unbound number(s)" in capsys.readouterr().out


def test_the_readme_s_marker_examples_pass(tmp_path):
    """The README's table of markers is the rule; each of its examples passes against records like its own."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**Numbers in prose.**"):readme.index("## Writing a new post")]
    examples = re.findall(r"^\| `([^`]*<!--[^`]*-->)`", section, re.MULTILINE)
    assert len(examples) == 5, examples
    records = [recorded("exact", "87.9%", 87.93), recorded("original", "87.3%", 87.3, reference=True)]
    assert problems_of(post(md(", ".join(examples) + "."), records=records), tmp_path) == []


# ---- however a number is written, it is read as the reader reads it --------------------------------
# The lies below passed `make check`: their numbers were hidden from the prose reader, not from the
# page's reader (the U+202F and U+00A0 ones, the abbr title and two honest forms guard what already
# held); the honest sentences after them were refused.

def assert_one_problem(nb, tmp_path, *fragments, where="cell 4 (markdown)"):
    problems = problems_of(nb, tmp_path)
    assert len(problems) == 1, problems
    assert "2026-01-01-example" in problems[0] and where in problems[0], problems[0]
    for fragment in fragments:
        assert fragment in problems[0], (fragment, problems[0])


@pytest.mark.parametrize("prose, fragments", [
    ("It reads .99 of them.", [".99 is not bound"]),
    ("It reads 99<!--text: a score-->.9 % of them.", ["stands inside 99.9 %"]),
    ("It reads _97.2_ % of them.", ["97.2 %", "is not bound"]),
    ("It reads __97.2__ % of them.", ["97.2 %", "is not bound"]),
    ("It misreads **241** %<!--=misread--> of them.", ["another unit"]),
    ("It reads &#57;7.2 % of them.", ["97.2 %", "&#57;7.2 %", "is not bound"]),
    ("It misreads 241 &percnt;<!--=misread--> of them.", ["another unit"]),
    ("It reads ٩٧.٢ % of them.", ["97.2 %", "is not bound"]),
    ("It reads ９７.２ % of them.", ["97.2 %", "is not bound"]),
    ("It misreads 241％<!--=misread--> of them.", ["another unit"]),
    ("It misreads 241\u2009%<!--=misread--> of them.", ["another unit"]),
    ("It misreads 241\u202f%<!--=misread--> of them.", ["another unit"]),
    ("It misreads 241\u00a0%<!--=misread--> of them.", ["another unit"]),
    ("It misreads 241<!--=misread--> % of them.", ["another unit"]),
    ("It misreads 2\u200b41 canvases.", ["241", "is not bound"]),
    ("It reads 9<span>7</span>.2 % of them.", ["97.2 %", "is not bound"]),
    ("It reads 9[7]{.mark}.2 % of them.", ["97.2 %", "is not bound"]),
    ('It reads <abbr title="97.2 %">most</abbr> of them.', ["97.2 %", "is not bound"]),
    ("Augmenting gains –2.1 pp<!--=gain-->.", ["shows as 2.1 pp"]),
    ("The bias is –0.3 at the end.", ["–0.3 is not bound"]),
    ("Nine in ten canvases are read right.", ["Nine is not bound"]),
    ("Seven canvases are misread.", ["Seven is not bound"]),
    ("It misreads seven<!--text--> of them.", ["<!--text: "]),
    ("Two thirds of the canvases are misread.", ["Two is not bound"]),
    ("Only the 3 canvases it misreads are hard.", ["3 is not bound"]),
    ("It gets the 3 canvases wrong.", ["3 is not bound"]),
    ('![A plot.](a.png "Exact: 99.9 %")', ["99.9 % is not bound"]),
    ('See [the run](https://example.org "it reads 99.9 %").', ["99.9 % is not bound"]),
    ("It reads 48<!--text--> patches.", ["<!--text: "]),
    ("It misreads 241<!--text: exact--> canvases.", ["<!--=exact-->"]),
    ("Trained for 8<!--text: epochs--> epochs.", ["<!--set=epochs-->"]),
])
def test_a_number_hidden_from_the_check_but_not_from_the_reader_is_refused(tmp_path, prose, fragments):
    assert_one_problem(post(md(prose)), tmp_path, *fragments)


def test_the_prose_cannot_be_more_precise_than_the_run_prints(tmp_path):
    records = [recorded("accuracy", "97.2%", 97.234)]
    assert_one_problem(post(md("It reads 97.23 %<!--~accuracy--> of them."), records=records), tmp_path,
                       "97.23 %", "97.2%", "more decimals")
    assert problems_of(post(md("It reads 97 %<!--~accuracy--> of them."), records=records), tmp_path) == []


HONEST_FORMS = [
    "As shown at NeurIPS 2017 and ICLR 2021, and by Vaswani et al. 2017.",
    "Work from 2017–2019 and in 2017-2019 moved fast; the years 2017–2019 matter.",
    "The post went up on 2026-07-02.",
    "Frequencies fall as $10000^{2i/d}$ grows.",
    "It reads 87.9\u2009%<!--=exact--> of them, 87.9&thinsp;%<!--=exact--> and 87.9\u202f%<!--=exact--> too.",
    "## Reading 3-digit numbers",
    "It reads 48<!--text: patches per canvas--> patches, one at a time, with three heads.",
    "The original trained for 15<!--text: epochs--> epochs, this run for 8<!--set=epochs-->.",
    "The 7 on the left reads like a 1, and the 2 beside it is clear.",
    "It reads ８７.９ %<!--=exact--> of them, and 2,000<!--=held_out--> canvases in all.",
]


@pytest.mark.parametrize("prose", HONEST_FORMS)
def test_honest_forms_pass(tmp_path, prose):
    assert problems_of(post(md(prose)), tmp_path) == []


def test_a_bare_text_marker_on_a_word_says_it_is_not_needed(tmp_path):
    assert_one_problem(post(md("Reading one<!--text--> digit at a time.")), tmp_path, "needs no marker")


# ---- every place the page shows text is read ------------------------------------------------------

def with_front(*lines):
    """The factory's front matter with `lines` added at its top; a title among them replaces the factory's."""
    front = FRONT_MATTER
    if any(line.startswith("title:") for line in lines):
        front = front.replace('title: "An example post"\n', "")
    return front.replace("---\n", "---\n" + "".join(line + "\n" for line in lines), 1)


@pytest.mark.parametrize("front", [
    with_front('title: "It reads 99.9 % of them"'),
    with_front('subtitle: "99.9 % exact"'),
    FRONT_MATTER.replace("A post built by the test factory.", "It reads 99.9 % of them."),
])
def test_titles_and_descriptions_are_read(tmp_path, front):
    assert_one_problem(post(front=front), tmp_path, "99.9 %", where="front matter")


def test_a_setting_in_the_title_or_a_caption_is_honest_and_a_wrong_one_is_not(tmp_path):
    front = with_front('title: "Reading 3-digit numbers"')
    assert problems_of(post(figure(**{"fig-cap": "Loss over 8 epochs."}), front=front), tmp_path) == []
    assert_one_problem(post(figure(**{"fig-cap": "Loss over 9 epochs."})), tmp_path, "9", where="fig-cap")


@pytest.mark.parametrize("prose", [
    '::: {.callout-note title="Exact: 99.9 %"}\nA note.\n:::',
    "::: {.callout-tip}\n## Exact\nIt reads 99.9 % of them.\n:::",
    "A claim.[^1]\n\n[^1]: It reads 99.9 % of them.",
    "A claim.^[It reads 99.9 % of them.]",
    "| run | exact |\n|---|---|\n| this | 99.9 % |",
])
def test_callouts_footnotes_and_tables_are_read(tmp_path, prose):
    assert_one_problem(post(md(prose)), tmp_path, "99.9 % is not bound")


def test_a_key_given_twice_in_the_front_matter_is_refused(tmp_path):
    path = save_post(post(), tmp_path / "posts")
    nb = read_notebook(path)
    nb.cells[0].source = nb.cells[0].source.replace("---\n", '---\ntitle: "A title the page never shows"\n', 1)
    write_notebook_atomically(nb, path)
    problems = [str(problem) for problem in check_notebook(path)]
    assert len(problems) == 1 and "front matter" in problems[0] and "title is given twice" in problems[0], problems
    from tools.numbers.bindings import repeated_keys
    nb.cells[0].source = '---\ntitle: "A post"\nloop: &x [*x]\nsection: {key: 1, key: 2}\n---'
    assert repeated_keys(nb) == ["section.key"]  # an alias that holds itself is walked once


def test_a_meta_shortcode_is_read_as_its_value(tmp_path):
    front = with_front('exact: "99.9 %"')
    assert_one_problem(post(md("It reads {{< meta exact >}} of them."), front=front), tmp_path,
                       "{{< meta exact >}}", "99.9 %")
    assert_one_problem(post(md("It reads {{< meta missing >}} of them.")), tmp_path, "{{< meta missing >}}",
                       "no key")
    assert problems_of(post(md("This is {{< meta title >}}.")), tmp_path) == []


def test_a_var_shortcode_is_read_from_the_repository_s_variables(tmp_path):
    from tools.numbers.bindings import problems_of as prose_problems
    root = tmp_path / "repo"
    post_dir = root / "posts" / "2026-01-01-example"
    post_dir.mkdir(parents=True)
    nb = post(md("It reads {{< var exact >}} of them, over {{< var runs.count >}} runs."))
    assert any("_variables.yml" in problem for _, problem in prose_problems(nb, post_dir, root))
    (root / "_variables.yml").write_text('exact: "99.9 %"\nruns:\n  count: three\n', encoding="utf-8")
    problems = prose_problems(nb, post_dir, root)
    assert len(problems) == 1 and "{{< var exact >}}" in problems[0][0] and "99.9 %" in problems[0][1], problems
    (root / "_variables.yml").write_text('runs:\n  count: three\n', encoding="utf-8")
    problems = prose_problems(nb, post_dir, root)
    assert len(problems) == 1 and "exact" in problems[0][1] and "_variables.yml" in problems[0][1], problems


# ---- no input breaks the reader --------------------------------------------------------------------

def test_odd_unicode_never_raises():
    import random
    from tools.numbers.bindings import bindings_in, problems_of as prose_problems
    pieces = ["9", "٩", "９", "۷", "०", "¹", "⁻", "½", "①", ".", ",", "%", "％", "٪", "\u2009", "\u202f", "\u00a0",
              "\u200b", "\u00ad", "–", "−", "-", "_", "*", "$", "$$", "\\", "^", "{", "}", "`", "<!--", "-->",
              "<!--=exact-->", "<!--text", ": ", "&#", "&#x", ";", "&percnt;", "{{<", ">}}", " meta ", " var ",
              "e", "x", "×", "10", "seven", "in ten", " ", "\n", "|", "[", "](", ")", '"', "\u0301", "\ufeff",
              "ﬁ", "𝟗", "\U0001d7d7", "e999999999", "1e-999999", "∞"]
    rng = random.Random(32)
    nb = post(md(""))
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        numbers_in(text)
        bindings_in(text)
        nb.cells[-1].source = text
        prose_prob = prose_problems(nb)
        assert all(isinstance(what, str) and "\n" not in where for where, what in prose_prob)


@pytest.mark.parametrize("text", ["[a](" * 30000, "<!--=" * 30000, "{{< meta " * 30000, " " * 100000 + "---x",
                                  "<!-- x -->9 " * 20000])
def test_a_pathological_cell_is_read_in_linear_time(text):
    """Each of these took minutes (a regex retrying from every unclosed opening); `make check` must not hang."""
    import time
    from tools.numbers.bindings import bindings_in
    began = time.monotonic()
    bindings_in(text)
    assert time.monotonic() - began < 10
