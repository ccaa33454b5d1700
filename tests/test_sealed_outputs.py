"""The seal `make execute` records: hand edits to outputs, provenance, or the set and order of code cells are refused."""
import json
import warnings

import pytest

from tests.factory import image, md, publishable, ran, reseal, save_post, stream
from tools.check.check_posts import check_notebook
from tools.core.notebooks import SEAL_VERSION, blog_metadata, compute_seal, without_presentation_options
from tools.core.seal import upgrade_seal

FIGURE = '#| label: fig-x\n#| fig-cap: "A plot."\n#| fig-alt: "A line."\nshow()'


def three_cells():
    return publishable(ran("x = 41", stream("set x\n")), ran("x += 1\nprint(x)", stream("42\n")),
                       ran("print(x * 2)", stream("84\n")), ran(FIGURE, image()))


def problems_of(nb, tmp_path):
    return [str(problem) for problem in check_notebook(save_post(nb, tmp_path / "posts"))]


def assert_refused(nb, tmp_path, *fragments):
    problems = problems_of(nb, tmp_path)
    assert len(problems) == 1, problems
    for fragment in (*fragments, "make execute"):
        assert fragment in problems[0], problems[0]


def test_sealed_notebook_passes_and_prose_stays_free(tmp_path):
    nb = three_cells()
    nb.cells.insert(2, md("A paragraph written after the run."))
    nb.cells[0].source = nb.cells[0].source.replace("An example post", "A retitled post")
    assert problems_of(nb, tmp_path) == []


def test_edited_output_is_refused(tmp_path):
    nb = three_cells()
    nb.cells[2].outputs[0].text = "43\n"
    assert_refused(nb, tmp_path, "cell 3 (code)", "outputs edited")


def test_swapped_image_is_refused(tmp_path):
    nb = three_cells()
    nb.cells[4].outputs[0].data["image/png"] = "iVBORw0KGgoAAAA="
    assert_refused(nb, tmp_path, "cell 5 (code)", "outputs edited")


@pytest.mark.parametrize("key, value", [("device", "cuda"), ("data", "Hugging Face Hub (pinned revisions)"),
                                        ("parameters_overridden", {})])
def test_edited_provenance_is_refused(tmp_path, key, value):
    nb = three_cells()
    if key == "parameters_overridden":  # a smoke run's record, emptied so that it passes as the real run
        blog_metadata(nb)["provenance"][key] = {"epochs": 1}
        reseal(nb)
    blog_metadata(nb)["provenance"][key] = value
    problems = problems_of(nb, tmp_path)  # edited data also contradicts the code, which reads nothing
    assert any("notebook: provenance edited after the run" in problem for problem in problems), problems
    assert all("make execute" in problem for problem in problems), problems


def test_deleted_code_cell_is_refused(tmp_path):
    nb = three_cells()
    del nb.cells[2]
    assert_refused(nb, tmp_path, "notebook", "deleted", "after cell 2")


def test_added_code_cell_is_refused(tmp_path):
    nb = three_cells()
    nb.cells.insert(3, ran("x = 0", stream("")))
    assert_refused(nb, tmp_path, "cell 4 (code)", "added after the run")


def test_reordered_code_cells_are_refused(tmp_path):
    nb = three_cells()
    nb.cells[2], nb.cells[3] = nb.cells[3], nb.cells[2]
    assert_refused(nb, tmp_path, "cell 4 (code)", "moved", "it ran right after cell 2")


def test_moved_cell_is_the_one_named(tmp_path):
    """The last code cell put first: that cell moved, not the three that kept their order."""
    nb = three_cells()
    nb.cells.insert(1, nb.cells.pop())
    assert_refused(nb, tmp_path, "cell 2 (code)", "moved", "it ran right after cell 5")


def test_changed_cell_id_is_named_as_such(tmp_path):
    nb = three_cells()
    sealed_id, nb.cells[2].id = nb.cells[2].id, "renamed1"
    assert_refused(nb, tmp_path, "cell 3 (code)", f"its id changed after the run (it ran as {sealed_id})")


def test_duplicated_code_cell_is_refused_without_a_library_warning(tmp_path):
    path = save_post(three_cells(), tmp_path / "posts")
    raw = json.loads(path.read_text())
    raw["cells"].insert(3, raw["cells"][2])  # same id twice: nbformat renames the copy and warns
    path.write_text(json.dumps(raw))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        problems = [str(problem) for problem in check_notebook(path)]
    assert len(problems) == 1 and "cell 4 (code): added after the run" in problems[0], problems
    assert not [warning for warning in caught if "cell id" in str(warning.message)], caught


def test_edited_seal_is_refused(tmp_path):
    nb = three_cells()
    blog_metadata(nb)["seal"]["cells"][0]["sha256"] = "0" * 64
    problems = problems_of(nb, tmp_path)
    assert problems and all("make execute" in problem for problem in problems), problems


def test_stale_code_keeps_its_own_message(tmp_path):
    nb = three_cells()
    nb.cells[3].source = "print(x * 3)"
    assert_refused(nb, tmp_path, "cell 4 (code)", "stale: its code changed after it ran")


@pytest.mark.parametrize("edit", [
    lambda cell: cell.metadata.setdefault("tags", []).append("remove-cell"),
    lambda cell: cell.metadata.setdefault("tags", []).append("hide-output"),
    lambda cell: cell.metadata.update(output=False),
    lambda cell: cell.metadata.update(include=False),
    lambda cell: cell.metadata.update({"fig-cap": "Another caption."}),
], ids=["remove-cell-tag", "hide-output-tag", "output-false", "include-false", "fig-cap"])
def test_metadata_that_quarto_renders_from_is_sealed(tmp_path, edit):
    """A tag or an option in a cell's metadata can hide or change what ran on the page: it is sealed."""
    nb = three_cells()
    edit(nb.cells[2])
    assert_refused(nb, tmp_path, "cell 3 (code)", "metadata edited after the run", "Quarto reads")


def test_what_only_jupyter_keeps_in_a_cells_metadata_stays_free(tmp_path):
    nb = three_cells()
    nb.cells[2].metadata.update(execution={"iopub.status.idle": "2027-01-01T00:00:00Z"}, collapsed=True,
                                scrolled=True, jupyter={"source_hidden": True})
    assert problems_of(nb, tmp_path) == []


def test_a_seal_from_before_metadata_was_sealed_is_named_once(tmp_path):
    nb = three_cells()
    for entry in blog_metadata(nb)["seal"]["cells"]:
        del entry["metadata_sha256"]
    assert_refused(nb, tmp_path, "notebook", "sealed by an older `make execute`")


def test_folding_a_cell_or_naming_its_fold_keeps_the_seal(tmp_path):
    """Seal version 2 leaves out the options that only fold code or label the fold: no re-run for a fold."""
    nb = three_cells()
    nb.cells[2].source = '#| code-fold: true\n#| code-summary: "How x grows"\n' + nb.cells[2].source
    nb.cells[4].source = nb.cells[4].source.replace("#| label: fig-x\n", "#| label: fig-x\n#| code-fold: true\n#| code-summary: \"The code that draws x\"\n")
    assert problems_of(nb, tmp_path) == []


@pytest.mark.parametrize("option", ['#| echo: false\n', '#| output: false\n', '#| code-line-numbers: true\n'])
def test_every_other_option_stays_sealed(tmp_path, option):
    nb = three_cells()
    nb.cells[2].source = option + nb.cells[2].source
    assert_refused(nb, tmp_path, "cell 3 (code)", "stale: its code changed after it ran")


def test_a_fold_does_not_hide_a_code_edit(tmp_path):
    nb = three_cells()
    nb.cells[2].source = '#| code-fold: true\n#| code-summary: "How x grows"\nx += 2\nprint(x)'
    assert_refused(nb, tmp_path, "cell 3 (code)", "stale: its code changed after it ran")


def test_a_fold_summary_continued_over_lines_is_left_out_whole():
    source = '#| label: fig-x\n#| code-summary: >\n#|   How x\n#|   grows\n#| fig-cap: "A plot."\nshow()'
    assert without_presentation_options(source) == '#| label: fig-x\n#| fig-cap: "A plot."\nshow()'
    assert without_presentation_options("x = 1\n#| code-fold: true\n") == "x = 1\n#| code-fold: true\n", \
        "only the leading options are Quarto's: a line further down is code"


def version_one(nb):
    """`nb` sealed as `make execute` sealed before version 2: source digested whole, no version key."""
    blog_metadata(nb)["seal"] = compute_seal(nb, version=1)
    return nb


def test_a_version_one_seal_still_holds_and_still_seals_its_folds(tmp_path):
    nb = version_one(three_cells())
    assert problems_of(nb, tmp_path) == []
    nb.cells[2].source = '#| code-fold: true\n#| code-summary: "How x grows"\n' + nb.cells[2].source
    assert_refused(nb, tmp_path, "cell 3 (code)", "stale: its code changed after it ran")


def test_upgrade_reseals_only_a_seal_that_holds(tmp_path):
    nb = version_one(three_cells())
    assert upgrade_seal(nb, tmp_path / "index.ipynb", tmp_path) == []
    assert blog_metadata(nb)["seal"]["version"] == SEAL_VERSION
    edited = version_one(three_cells())
    edited.cells[2].outputs[0].text = "43\n"
    before = json.dumps(blog_metadata(edited)["seal"])
    problems = upgrade_seal(edited, tmp_path / "index.ipynb", tmp_path)
    assert problems and "outputs edited" in problems[0]
    assert json.dumps(blog_metadata(edited)["seal"]) == before, "an edit is never sealed by an upgrade"


def test_an_unknown_seal_version_is_named(tmp_path):
    nb = three_cells()
    blog_metadata(nb)["seal"]["version"] = 99
    assert_refused(nb, tmp_path, "notebook", "version 99")
