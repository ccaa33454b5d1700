"""A notebook that leaves the repository still runs: in a bare Python holding only what Colab
preinstalls (torch, numpy, matplotlib, huggingface_hub and a Jupyter kernel), each post's smoke
configuration runs clean, because the generated setup cell installs the missing pinned packages.

The posts are run with the setup cell `make inline` writes now, on a temporary copy: the committed
notebooks are never touched."""
import shutil
import subprocess
import venv

import nbformat
import pytest

from tools.author.inline_helpers import inline, normalised, pinned_versions
from tools.core.notebooks import blog_metadata, find_posts, post_name, read_notebook
from tools.run.smoke_run import smoke_run

pytestmark = pytest.mark.slow

COLAB_PREINSTALLS = ["torch", "numpy", "matplotlib", "huggingface_hub", "ipykernel"]


@pytest.fixture(scope="module")
def colab_like_kernel(tmp_path_factory):
    """A fresh venv with Colab's preinstalls at the project's pins, registered as the `python3` kernel."""
    root = tmp_path_factory.mktemp("colab")
    venv.create(root / "venv", with_pip=True)
    python = root / "venv" / "bin" / "python"
    pins = pinned_versions()
    specs = ["{}=={}".format(*pins[normalised(name)]) for name in COLAB_PREINSTALLS]
    # --no-compile: byte-compiling every file of torch took 38 s of the install's 64 s here; the runs
    # import a fraction of them
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile", *specs],
                   check=True)
    subprocess.run([python, "-m", "ipykernel", "install", "--prefix", root / "prefix", "--name", "python3"],
                   check=True, capture_output=True)
    before = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
    assert "visualtorch" not in before.lower()
    return root / "prefix" / "share" / "jupyter", python


@pytest.mark.parametrize("post", find_posts(), ids=lambda path: path.parent.name)
def test_post_runs_where_only_colab_preinstalls_are(post, colab_like_kernel, tmp_path, monkeypatch):
    jupyter_path, python = colab_like_kernel
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))  # nbclient's `python3` is now the bare venv
    copy = tmp_path / post.parent.name
    shutil.copytree(post.parent, copy)
    nb = read_notebook(post)
    inline(nb)
    nbformat.write(nb, copy / "index.ipynb")
    executed = smoke_run(copy / "index.ipynb", echo=lambda line: None)
    errors = [output for cell in executed.cells if cell.cell_type == "code" for output in cell.outputs
              if output.output_type == "error"]
    assert not errors, f"{post_name(post)}: {errors}"
    ran_with = blog_metadata(executed)["provenance"]["packages"]
    pins = pinned_versions()
    for name in ("visualtorch",) if "_arch.py" in blog_metadata(nb).get("helpers", []) else ():
        assert ran_with[name] == pins[normalised(name)][1], f"{name} was not installed at its pin: {ran_with}"
    installed = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True).stdout
    print(f"\n{post_name(post)} ran in a Colab-like venv; installed there now: "
          + ", ".join(line for line in installed.splitlines() if line.split("==")[0].lower() == "visualtorch"))
