"""Executing a post in place: outputs and provenance saved, the author's edits kept, failures safe."""
import errno
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.factory import md, never_ran, publishable, save_post
from tools.run import execute_posts
from tools.check.check_posts import check_notebook
from tools.run.execute_posts import ExecutionFailed, execute_in_place, with_parameters
from tools.core.notebooks import (
    INJECTED_TAG, NO_DOWNLOAD, REPO_ROOT, NotebookError, blog_metadata, post_name, read_notebook,
    write_notebook_atomically,
)


def post_with(tmp_path, *sources):
    return save_post(publishable(*(never_ran(source) for source in sources), provenance=None), tmp_path / "posts")


def quietly(line):
    pass


def test_executed_post_has_outputs_hashes_and_provenance(tmp_path):
    path = post_with(tmp_path, "import os\nprint(os.path.basename(os.getcwd()))", "device = 'cpu'\nprint(6 * 7)")
    execute_in_place(path, echo=quietly)
    nb = read_notebook(path)
    assert nb.cells[1].outputs[0].text == "2026-01-01-example\n", "runs from the post's own folder"
    assert nb.cells[2].outputs[0].text == "42\n"
    provenance = blog_metadata(nb)["provenance"]
    assert provenance["python"].count(".") == 2 and provenance["packages"]["nbclient"]
    assert provenance["device"] == "cpu" and provenance["machine"]["architecture"]
    assert provenance["parameters_overridden"] == {} and provenance["executed_at"].endswith("+00:00")
    assert check_notebook(path) == []


def test_progress_names_each_cell_and_echoes_prints(tmp_path):
    path = post_with(tmp_path, "x = 1", "for epoch in (1, 2):\n    print(f'epoch {epoch}')")
    lines = []
    execute_in_place(path, echo=lines.append)
    assert any("cell 2 (1/2 code cells)" in line for line in lines)
    assert any("cell 3 (2/2 code cells)" in line for line in lines)
    assert "    | epoch 1" in lines and "    | epoch 2" in lines


def test_prose_edited_during_run_is_kept(tmp_path):
    path = post_with(tmp_path, "print('first')", "print('second')")

    def author_edits_while_it_runs(line):
        if "cell 3" in line:  # the run is past cell 2; the author edits the file meanwhile
            nb = read_notebook(path)
            nb.cells.insert(2, md("A paragraph written during the run."))
            nb.cells[3].source = "print('second, edited')"
            write_notebook_atomically(nb, path)

    execute_in_place(path, echo=author_edits_while_it_runs)
    nb = read_notebook(path)
    assert nb.cells[2].source == "A paragraph written during the run."
    assert nb.cells[1].outputs[0].text == "first\n"
    assert nb.cells[3].source == "print('second, edited')" and nb.cells[3].outputs == []
    assert any("stale" in str(problem) or "never ran" in str(problem) for problem in check_notebook(path))


def test_raising_cell_is_reported_not_retried_and_nothing_written(tmp_path):
    counter = tmp_path / "runs"
    path = post_with(tmp_path, f"open({str(counter)!r}, 'a').write('x')", "raise ValueError('bad data')")
    before = path.read_bytes()
    with pytest.raises(ExecutionFailed, match=r"2026-01-01-example: cell 3 \(code\) raised ValueError: bad data"):
        execute_in_place(path, echo=quietly, kernel_retries=2)
    assert counter.read_text() == "x", "a raising cell must not be retried"
    assert path.read_bytes() == before


def test_lost_kernel_is_retried(tmp_path):
    marker = tmp_path / "died-once"
    path = post_with(tmp_path, f"import os, pathlib\nm = pathlib.Path({str(marker)!r})\n"
                               "if not m.exists():\n    m.touch()\n    os._exit(1)\nprint('survived')")
    lines = []
    execute_in_place(path, echo=lines.append, kernel_retries=1)
    assert any("kernel died" in line for line in lines)
    assert read_notebook(path).cells[1].outputs[0].text == "survived\n"


def test_kernel_that_keeps_dying_gives_up(tmp_path):
    path = post_with(tmp_path, "import os\nos._exit(1)")
    with pytest.raises(ExecutionFailed, match="kernel died 2 times"):
        execute_in_place(path, echo=quietly, kernel_retries=1)


def test_ctrl_c_leaves_the_notebook_as_it_was(tmp_path, monkeypatch, capsys):
    path = post_with(tmp_path, "print(1)", "print(2)")
    before = path.read_bytes()

    def interrupt(line):
        if "cell 3" in line:
            raise KeyboardInterrupt

    monkeypatch.setattr(execute_posts, "find_posts", lambda substring=None, every_match=False: [path])
    monkeypatch.setattr("builtins.print", lambda *args, **kwargs: interrupt(" ".join(map(str, args))))
    assert execute_posts.main([]) == 130
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["index.ipynb"], "no temporary file left behind"


def test_failed_write_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = save_post(publishable(), tmp_path / "posts")
    before = path.read_bytes()

    def half_write(nb, stream):
        stream.write('{"cells": [')
        raise OSError("disk full")

    monkeypatch.setattr(nbformat, "write", half_write)
    with pytest.raises(OSError, match="disk full"):
        write_notebook_atomically(publishable(md("new")), path)
    assert path.read_bytes() == before and len(list(path.parent.iterdir())) == 1


def test_parameters_are_injected_after_the_parameters_cell():
    nb = publishable(never_ran("epochs = 8\ntrain_size = 20_000"), never_ran("print(epochs)"))
    nb.cells[1].metadata["tags"] = ["parameters"]
    injected = with_parameters(nb, {"epochs": 1})
    assert INJECTED_TAG in injected.cells[2].metadata["tags"] and "epochs = 1" in injected.cells[2].source
    assert len(nb.cells) == 3, "the original notebook is not changed"
    with pytest.raises(NotebookError, match=r"does not define \['epocs'\]"):
        with_parameters(nb, {"epocs": 1})


def test_outputs_land_on_the_right_cells_in_a_notebook_without_cell_ids(tmp_path):
    path = post_with(tmp_path, "print('first')", "print('second')")
    nb = read_notebook(path)
    nb.nbformat_minor = 4  # written by an older Jupyter: no cell ids
    for cell in nb.cells:
        cell.pop("id", None)
    path.write_text(nbformat.writes(nb, version=4))
    execute_in_place(path, echo=quietly)
    texts = [cell.outputs[0].text for cell in read_notebook(path).cells if cell.cell_type == "code"]
    assert texts == ["first\n", "second\n"]


def test_failing_cell_is_numbered_as_in_the_post_during_a_smoke_run(tmp_path):
    from tools.run.execute_posts import execute_copy
    nb = publishable(never_ran("epochs = 8"), never_ran("assert epochs > 3, 'too few epochs'"), provenance=None)
    nb.cells[1].metadata["tags"] = ["parameters"]
    with pytest.raises(ExecutionFailed, match=r"cell 3 \(code\) raised AssertionError: too few epochs"):
        execute_copy(nb, tmp_path, "post", overrides={"epochs": 1}, echo=quietly)


def test_execute_twice_then_check_passes(tmp_path):
    path = post_with(tmp_path, "import random\nrandom.seed(0)\nprint(random.random())", "print('done')")
    for _ in range(2):
        execute_in_place(path, echo=quietly)
        assert check_notebook(path) == []
    nb = read_notebook(path)
    seal = blog_metadata(nb)["seal"]
    assert [entry["id"] for entry in seal["cells"]] == [cell.id for cell in nb.cells if cell.cell_type == "code"]
    assert blog_metadata(nb)["provenance"]["data"] == NO_DOWNLOAD, "this post downloads nothing"


def test_post_that_downloads_records_the_data_it_read(tmp_path):
    download = ("def hf_hub_download(*args, **kwargs):\n    return 'nothing'\n"
                "fetch = hf_hub_download\nfetch('org/data', 'a.npz', revision='" + "a" * 40 + "')")
    path = post_with(tmp_path, download)
    execute_in_place(path, echo=quietly, offline=True)
    assert blog_metadata(read_notebook(path))["provenance"]["data"].startswith("stand-in")


def test_the_projects_own_kernel_runs_whatever_python3_kernelspec_the_user_has(tmp_path, monkeypatch):
    user_kernels = tmp_path / "jupyter" / "kernels" / "python3"
    user_kernels.mkdir(parents=True)
    (user_kernels / "kernel.json").write_text(json.dumps({
        "argv": ["/nonexistent/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "A user's other Python", "language": "python"}))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    path = post_with(tmp_path, "import sys\nprint(sys.executable)")
    execute_in_place(path, echo=quietly)
    assert read_notebook(path).cells[1].outputs[0].text == f"{sys.executable}\n"


def test_smoke_progress_numbers_cells_as_the_author_does(tmp_path):
    from tools.run.execute_posts import execute_copy
    nb = publishable(never_ran("epochs = 8"), md("Prose."), never_ran("print(epochs)"), provenance=None)
    nb.cells[1].metadata["tags"] = ["parameters"]
    lines = []
    execute_copy(nb, tmp_path, "post", overrides={"epochs": 1}, echo=lines.append)
    announced = [line for line in lines if line.startswith("[post]")]
    assert announced == ["[post] cell 2 (1/3 code cells)", "[post] the injected parameters cell (2/3 code cells)",
                         "[post] cell 4 (3/3 code cells)"]


def test_real_ctrl_c_leaves_the_notebook_and_says_so(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group: the tool and its kernel."""
    path = post_with(tmp_path, "print('started', flush=True)\nimport time\ntime.sleep(60)")
    before = path.read_bytes()
    run = subprocess.Popen([sys.executable, "-m", "tools.run.execute_posts", str(path)], cwd=REPO_ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    for line in run.stdout:
        if "| started" in line:
            break
    os.killpg(run.pid, signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert "interrupted: the notebook on disk is as it was" in err and "Traceback" not in out + err, err
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["index.ipynb"], "no temporary file left behind"


# ---- a cell that takes the notebook's output away; a folder that cannot be written -----------------------

def test_a_cell_that_replaces_stdout_keeps_the_run_and_is_named(tmp_path):
    """sys.stdout = open(os.devnull, "w") once threw the whole run away at the end (a JSONDecodeError)."""
    path = post_with(tmp_path, "print('before')", "import os, sys as s\ns.stdout = open(os.devnull, 'w')",
                     "print('after')")
    lines = []
    execute_in_place(path, echo=lines.append)
    nb = read_notebook(path)
    assert nb.cells[1].outputs[0].text == "before\n" and nb.cells[3].outputs == []
    assert blog_metadata(nb)["provenance"]["python"] and check_notebook(path) == []
    warned = [line for line in lines if "warning" in line]
    assert len(warned) == 1 and "cell 3 (code) replaced sys.stdout (now <_io.TextIOWrapper name='/dev/null'" in \
        warned[0] and "contextlib.redirect_stdout" in warned[0], lines


def test_streams_assigned_under_any_name_are_found():
    from tools.run.execute_posts import stream_assigning_cells
    nb = publishable(never_ran("import sys\nsys.stderr = None"), never_ran("from sys import stdout"),
                     never_ran("import sys as system\nsetattr(system, 'stdout', None)"), never_ran("x = 1"),
                     provenance=None)
    assert stream_assigning_cells(nb) == ["cell 2 (code)", "cell 4 (code)"]


def test_a_cell_that_silences_display_is_reported_and_nothing_written(tmp_path):
    path = post_with(tmp_path, "import IPython.display\nIPython.display.display = lambda *args, **kwargs: None")
    before = path.read_bytes()
    with pytest.raises(ExecutionFailed, match=r"2026-01-01-example: every cell ran, but the kernel's report .* did "
                                              r"not arrive.*\(nothing was written\)"):
        execute_in_place(path, echo=quietly)
    assert path.read_bytes() == before


def unwritable(monkeypatch, folder, error):
    """Temporary files in `folder` cannot be made (a read-only folder: chmod does not stop root, this does)."""
    import tempfile
    real = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        if Path(kwargs.get("dir") or "") == folder:
            raise error
        return real(*args, **kwargs)
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


@pytest.mark.parametrize("error, said", [
    (PermissionError(errno.EACCES, "Permission denied"), "is not writable: make it writable (`chmod u+w"),
    (OSError(errno.EROFS, "Read-only file system"), "is on a read-only file system"),
    (OSError(errno.ENOSPC, "No space left on device"), "the disk is full: free some space"),
])
def test_an_unwritable_post_folder_is_found_before_the_run(tmp_path, monkeypatch, capsys, error, said):
    ran = tmp_path / "ran"
    path = post_with(tmp_path, f"open({str(ran)!r}, 'w').write('x')")
    before = path.read_bytes()
    unwritable(monkeypatch, path.parent, error)
    assert execute_posts.main([str(path)]) == 1
    message = capsys.readouterr().err
    assert said in message and "index.ipynb" in message and message.rstrip().endswith("nothing was run"), message
    assert "Traceback" not in message and message.count("\n") == 1
    assert not ran.exists(), "the post must not run when its outputs could not be saved"
    assert path.read_bytes() == before and [p.name for p in path.parent.iterdir()] == ["index.ipynb"]


@pytest.mark.parametrize("error, said", [
    (OSError(errno.ENOSPC, "No space left on device"), "the disk is full: free some space and run it again"),
    (OSError(errno.EIO, "Input/output error"), "Input/output error"),
])
def test_a_disk_that_fills_up_during_the_run_leaves_the_notebook_as_it_was(tmp_path, monkeypatch, capsys,
                                                                          error, said):
    path = post_with(tmp_path, "print('ran')")
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(error))  # the notebook's write, at the end
    assert execute_posts.main([str(path)]) == 1
    message = capsys.readouterr().err
    assert "2026-01-01-example: the run finished, but its outputs could not be saved: cannot write " in message
    assert said in message and "the notebook on disk is as it was before this run" in message, message
    assert "Traceback" not in message and message.count("\n") == 1
    assert path.read_bytes() == before and [p.name for p in path.parent.iterdir()] == ["index.ipynb"]


# ---- limits: a cell's time, an output's size; an edit during a first run ----------------------------------------

def test_a_cell_past_its_time_limit_is_named_and_nothing_written(tmp_path):
    path = post_with(tmp_path, "x = 1", "import time\ntime.sleep(60)")
    before = path.read_bytes()
    with pytest.raises(ExecutionFailed, match=r"cell 3 \(code\) ran past the time limit of 2 s for one cell") as failed:
        execute_in_place(path, echo=quietly, cell_timeout=2)
    assert "--cell-timeout" in str(failed.value) and "nothing was written" in str(failed.value)
    assert path.read_bytes() == before


def test_the_cell_time_limit_has_a_default_and_an_environment_setting(monkeypatch):
    monkeypatch.delenv("CELL_TIMEOUT", raising=False)
    assert execute_posts.cell_timeout_s() == 30 * 60
    monkeypatch.setenv("CELL_TIMEOUT", "90")
    assert execute_posts.cell_timeout_s() == 90
    assert execute_posts.cell_timeout_s(5) == 5, "the command line wins"


def test_an_output_over_the_size_limit_is_named_with_its_size_and_nothing_written(tmp_path):
    path = post_with(tmp_path, "print('small')", "print(('x' * 99 + '\\n') * 30_000, end='')")
    before = path.read_bytes()
    with pytest.raises(ExecutionFailed, match=r"cell 3 \(code\) shows an output of 3\.0 MB.* the limit of 2\.0 MB"):
        execute_in_place(path, echo=quietly)
    assert path.read_bytes() == before
    execute_in_place(path, echo=quietly, max_output_mb=4)
    assert len(read_notebook(path).cells[2].outputs[0].text) == 3_000_000


def test_a_runaway_output_is_stopped_as_it_grows(tmp_path):
    path = post_with(tmp_path, "import sys\nfor _ in range(10 ** 9):\n    sys.stdout.write('x' * 99 + '\\n')")
    said = r"cell 2 \(code\) shows an output of [\d.]+ MB so far, past the limit of 0\.1 MB: stopped"
    with pytest.raises(ExecutionFailed, match=said):
        execute_in_place(path, echo=quietly, max_output_mb=0.1, cell_timeout=120)


def test_an_edit_during_a_first_run_is_reported_as_that(tmp_path):
    path = post_with(tmp_path, "print('first')", "print('second')")

    def author_edits_while_it_runs(line):
        if "cell 3" in line:
            nb = read_notebook(path)
            nb.cells[2].source = "print('second, edited')"
            write_notebook_atomically(nb, path)

    execute_in_place(path, echo=author_edits_while_it_runs)
    problems = [str(problem) for problem in check_notebook(path)]
    assert any("cell 3 (code)" in problem and "edited while `make execute` ran" in problem for problem in problems), \
        problems
    assert not any("the seal itself was edited" in problem for problem in problems), problems
# ---- a stale setup cell is refused before anything runs; the results the run recorded are shown ------------

def stale_post(tmp_path, folder="2026-01-01-example"):
    """A post whose author added a cell importing a pinned package after `make inline`: its setup cell no longer
    installs what the post needs. Its first cell leaves a mark if it ever runs."""
    nb = publishable(never_ran(f"open({str(tmp_path / 'ran')!r}, 'a').write('x')"), helpers=["_results.py"],
                     provenance=None)
    nb.cells.append(never_ran("import yaml\nprint(yaml.safe_dump({'a': 1}))"))
    return save_post(nb, tmp_path / "posts", folder)


def test_a_stale_setup_cell_is_refused_before_anything_runs_naming_the_import(tmp_path, capsys):
    path = stale_post(tmp_path)
    before = path.read_bytes()
    with pytest.raises(ExecutionFailed) as refused:
        execute_in_place(path, echo=quietly)
    said = str(refused.value)
    assert re.search(r"posts/2026-01-01-example: setup cell does not install PyYAML==[\d.]+ \(cell 4 \(code\) imports "
                     r"yaml\); run `make inline` \(it rewrites the setup cell\), then run this again; nothing was run$",
                     said), said
    good = save_post(publishable(never_ran(f"open({str(tmp_path / 'ran')!r}, 'a').write('x')"), provenance=None),
                     tmp_path / "posts", "2026-01-02-fine")
    assert execute_posts.main([str(good), str(path)]) == 1, "the fine post first: it must not run either"
    assert "setup cell does not install PyYAML" in capsys.readouterr().err
    assert not (tmp_path / "ran").exists() and path.read_bytes() == before


def test_the_results_a_run_recorded_are_shown_at_its_end(tmp_path):
    nb = publishable(never_ran("result('accuracy', 0.873, '{:.1%}', 'read exactly')\nresult('epochs_run', 3)"),
                     helpers=["_results.py"], provenance=None)
    lines, path = [], save_post(nb, tmp_path / "posts")
    execute_in_place(path, echo=lines.append)
    shown = lines[lines.index(next(line for line in lines if "result(s) recorded" in line)):]
    assert shown == [f"[{post_name(path)}] 2 result(s) recorded (bind them in the prose: `make bind`):",
                     "  accuracy = 87.3%", "  epochs_run = 3"], lines


def test_a_smoke_run_refuses_a_stale_setup_cell_before_the_stand_in_is_built(tmp_path, monkeypatch, capsys):
    from tools.run import smoke_run, standin_data
    monkeypatch.setattr(standin_data, "build", lambda: pytest.fail("the stand-in was built for a stale post"))
    path = stale_post(tmp_path)
    with pytest.raises(ExecutionFailed, match=r"setup cell does not install PyYAML==[\d.]+ \(cell 4 \(code\) "
                                              r"imports yaml\); run `make inline`"):
        smoke_run.smoke_run(path, echo=quietly)
    monkeypatch.setattr(smoke_run, "find_posts", lambda substring=None, every_match=False: [path])
    assert smoke_run.main([]) == 1 and "run `make inline`" in capsys.readouterr().err
    assert not (tmp_path / "ran").exists()
