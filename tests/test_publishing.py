"""The publishing comforts: the deploy workflow is valid and light, checks need no torch,
`make lab` and `make kernel` are wired up, and notebook diffs are readable."""
import json
import os
import re
import shutil
import subprocess
import sys
import venv

import nbformat
import pytest
import yaml

from tests.factory import image, publishable, ran, stream
from tools.core.notebooks import REPO_ROOT

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "publish.yml"


def test_workflow_is_valid_github_actions():
    checked = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                              str(WORKFLOW)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_workflow_builds_light_checks_renders_and_deploys_only_from_main():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML reads the key `on` as True
    assert triggers["push"]["branches"] == ["main"] and "pull_request" in triggers
    build = workflow["jobs"]["build"]["steps"]
    runs = [step.get("run", "") for step in build]
    uses = [step.get("uses", "") for step in build]
    quarto = next(step for step in build if step.get("uses", "").startswith("quarto-dev/quarto-actions/setup"))
    assert tuple(map(int, str(quarto["with"]["version"]).split(".")[:2])) >= (1, 7)
    check, render = runs.index("make check REQUIREMENTS=requirements-site.txt"), runs.index("quarto render --no-execute")
    assert check < runs.index("make reader") < render < uses.index("actions/upload-pages-artifact@v3")
    assert not any("torch" in run or "requirements.txt" in run.split() for run in runs)
    deploy = workflow["jobs"]["deploy"]
    assert deploy["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert deploy["needs"] == "build" and deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")


def test_site_requirements_leave_out_torch_and_match_the_full_pins():
    pins = lambda name: dict(line.split("==") for line in (REPO_ROOT / name).read_text().splitlines()
                             if "==" in line and not line.startswith("#"))
    light, full = pins("requirements-site.txt"), pins("requirements.txt")
    assert "torch" not in light and "nbclient" not in light
    assert {name: version for name, version in light.items() if full.get(name) != version} == {}


def test_checks_run_with_torch_unimportable():
    blocker = ("import sys; sys.modules.update(torch=None, nbclient=None, numpy=None, matplotlib=None);"
               "from tools.check import check_posts; sys.exit(check_posts.main())")
    result = subprocess.run([sys.executable, "-c", blocker], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ready to publish" in result.stdout


@pytest.mark.slow
def test_checks_pass_in_the_light_environment(tmp_path):
    """What the publish workflow does: a fresh venv from requirements-site.txt only, then the checks."""
    venv.create(tmp_path / "light", with_pip=True)
    python = tmp_path / "light" / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r",
                    REPO_ROOT / "requirements-site.txt"], check=True)
    assert subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0
    result = subprocess.run([python, "-m", "tools.check.check_posts"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_lab_installs_pinned_jupyterlab_and_opens_on_posts():
    dry_run = subprocess.run(["make", "-n", "-B", "lab"], cwd=REPO_ROOT, capture_output=True, text=True).stdout
    assert "-r requirements-lab.txt" in dry_run and "jupyter lab --notebook-dir=posts" in dry_run
    assert re.fullmatch(r"jupyterlab==[\d.]+", (REPO_ROOT / "requirements-lab.txt").read_text().splitlines()[-1])


def test_kernel_is_registered_under_a_clear_name(tmp_path):
    result = subprocess.run(["make", "--no-print-directory", "kernel", f"KERNEL_PREFIX=--prefix={tmp_path}"],
                            cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    spec = json.loads((tmp_path / "share" / "jupyter" / "kernels" / "reading-digits" / "kernel.json").read_text())
    assert spec["display_name"] == "Python (reading-digits blog)"
    assert os.path.realpath(spec["argv"][0]) == os.path.realpath(REPO_ROOT / ".venv" / "bin" / "python")


def readme_diff_config_command():
    """The one-time `git config` line the README gives for readable notebook diffs."""
    readme = (REPO_ROOT / "README.md").read_text()
    return next(line.strip() for line in readme.splitlines() if line.strip().startswith("git config diff.ipynb"))


def test_notebook_diff_shows_code_not_base64(tmp_path):
    git = lambda *args: subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True)
    git("init", "-q")
    git("config", "user.email", "test@example.com")
    git("config", "user.name", "test")
    shutil.copy(REPO_ROOT / ".gitattributes", tmp_path)
    (tmp_path / ".venv").symlink_to(REPO_ROOT / ".venv")  # the README's command names the project's venv
    subprocess.run(readme_diff_config_command(), shell=True, cwd=tmp_path, check=True)
    nb = publishable(ran("plot(losses)", image(), stream("loss 0.5\n")))
    nb.cells[1].outputs[0].data["image/png"] = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    nbformat.write(nb, tmp_path / "index.ipynb")
    git("add", ".")
    git("commit", "-qm", "first")
    nb.cells[1].source = "plot(smoothed(losses))"
    nb.cells[1].outputs[0].data["image/png"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    nbformat.write(nb, tmp_path / "index.ipynb")
    diff = git("diff").stdout
    assert "+    \"plot(smoothed(losses))\"" in diff or "+plot(smoothed(losses))" in diff, diff
    assert "iVBORw0KGgo" not in diff and "AAAAAAAAAAAA" not in diff and "image/png" not in diff, diff
    assert "image/png" in (tmp_path / "index.ipynb").read_text(), "the file itself keeps its outputs"
