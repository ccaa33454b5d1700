"""The GPU run script works on a machine that has only python3, torch, numpy, matplotlib and
huggingface_hub (like the GPU machine), from the carried wheels, with no project environment."""
import os
import subprocess
import sys
import venv

import pytest

from tools.core.notebooks import REPO_ROOT, find_posts

pytestmark = pytest.mark.slow
BARE = ["torch==2.13.0", "numpy==2.4.6", "matplotlib==3.11.2", "huggingface_hub==2.4.0"]


def test_smoke_run_through_the_gpu_script_in_a_bare_python(tmp_path):
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=True)
    # --no-compile: byte-compiling every file of torch took 38 s of the install's 64 s here; the run
    # imports a fraction of them
    subprocess.run([bare / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-compile", *BARE], check=True)
    python_version = f"{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run(["make", "--no-print-directory", "-s", "gpu-bundle", f"GPU_PYTHON={python_version}"],
                   cwd=REPO_ROOT, check=True)
    post = next(path for path in find_posts() if "aloud" in path.parent.name)
    env = {**os.environ, "PATH": f"{bare / 'bin'}:{os.environ['PATH']}", "OUT": str(tmp_path / "out"),
           "BLOG_SITE": str(tmp_path / "site-packages"), "SMOKE_DEVICE": "cpu"}
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(["bash", "tools/run/gpu_run.sh", "--smoke", post.parent.name], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "out" / f"{post.parent.name}.ipynb").exists()
    assert "passed in" in (tmp_path / "out" / "run.log").read_text()
