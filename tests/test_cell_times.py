"""`make times`: each cell's seconds from the times nbclient kept, longest first, against the budget."""
import nbformat

from tools.measure.cell_times import BLOG_BUDGET_S, POST_BUDGET_S, blog_line, cell_times, report, seconds_of


def timed(source, start, end):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["execution"] = {"iopub.execute_input": start, "shell.execute_reply": end}
    return cell


def notebook(duration=None):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A post"),
                timed("#| code-fold: true\nimport torch", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:02.500Z"),
                timed("train(model)", "2026-01-01T00:00:03Z", "2026-01-01T00:10:03Z"),
                nbformat.v4.new_code_cell("never_ran()")]
    if duration is not None:
        nb.metadata["blog"] = {"provenance": {"duration_s": duration}}
    return nb


def test_cells_are_timed_longest_first_and_a_cell_that_never_ran_is_left_out():
    nb = notebook()
    assert seconds_of(nb.cells[1]) == 2.5 and seconds_of(nb.cells[3]) is None
    assert cell_times(nb) == [(600.0, 3, "train(model)"), (2.5, 2, "import torch")]


def test_the_report_gives_shares_the_rest_and_the_budget():
    lines = report(notebook(duration=POST_BUDGET_S + 5), top=1)
    assert lines[0].split() == ["600.0", "s", "100%", "cell", "3", "train(model)"]
    assert lines[1].split()[:4] == ["2.5", "s", "0%", "the"]
    assert lines[-1] == f"cells 602 s in all; recorded run {POST_BUDGET_S + 5} s, OVER the 10 min budget of a post"
    assert report(notebook(duration=300), top=5)[-1].endswith("within the 10 min budget of a post")


def test_a_notebook_without_times_says_so():
    nb = notebook()
    for cell in nb.cells[1:3]:
        del cell.metadata["execution"]
    assert report(nb, top=3) == ["no cell times: the notebook was not run by `make execute` (or its cells' "
                                 "metadata was cleared)"]


def test_the_blog_line_adds_the_recorded_runs_up_against_the_blog_s_budget():
    assert BLOG_BUDGET_S == 25 * 60
    assert blog_line([300, 600, 60]) == "the blog: 3 recorded run(s), 16.0 min in all, within the 25 min budget"
    assert blog_line([900, 700, None]) == ("the blog: 2 recorded run(s), 26.7 min in all, OVER the 25 min budget "
                                           "(1 post(s) with no recorded run)")
