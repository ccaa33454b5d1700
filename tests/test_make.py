"""`make` renders with the Quarto on the PATH, else one assembled in .cache/quarto (as CI does); without
either it installs the pinned Quarto into the venv, and where that cannot work it says so once, installs
nothing, and stops."""
import os
import re
import subprocess
import venv

import pytest
import yaml

from tools.core.notebooks import REPO_ROOT


def run_make(*args, path=None, **env):
    # No assembled Quarto unless a test gives one: CI assembles one in .cache/quarto before the tests.
    environment = {**os.environ, "QUARTO_CACHE": "/nonexistent/quarto", **env}
    if path is not None:
        environment["PATH"] = path
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          env=environment)


def path_without_quarto():
    """This machine's PATH minus any folder holding a `quarto`, so the test sees a machine without one."""
    return os.pathsep.join(folder for folder in os.environ["PATH"].split(os.pathsep)
                           if not os.path.exists(os.path.join(folder, "quarto")))


def fake_quarto(folder):
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / "quarto"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {folder / "calls"}\n')
    fake.chmod(0o755)
    return fake


def makefile_quarto_version():
    return re.search(r"^QUARTO_VERSION := (\S+)$", (REPO_ROOT / "Makefile").read_text(), re.M).group(1)


def test_make_installs_the_quarto_the_publish_workflow_pins():
    workflow = yaml.safe_load((REPO_ROOT / ".github" / "workflows" / "publish.yml").read_text())
    setup = next(step for step in workflow["jobs"]["build"]["steps"]
                 if step.get("uses", "").startswith("quarto-dev/quarto-actions/setup"))
    assert str(setup["with"]["version"]) == makefile_quarto_version()


def test_quarto_on_the_path_is_used_and_nothing_is_installed(tmp_path):
    fake = fake_quarto(tmp_path / "bin")
    path = f"{fake.parent}{os.pathsep}{path_without_quarto()}"
    present = run_make("quarto-present", path=path)
    assert present.returncode == 0 and present.stdout == "", present.stdout + present.stderr
    plan = run_make("-n", "site", path=path).stdout.splitlines()
    assert plan[-1] == "quarto render --no-execute", "the site renders the stored outputs, last"
    assert any("tools.check.check_posts" in line for line in plan[:-1]), "the checks run before the render"
    subprocess.run(plan[-1], shell=True, cwd=tmp_path, env={**os.environ, "PATH": path}, check=True)
    assert (fake.parent / "calls").read_text() == "render --no-execute\n"


def test_a_quarto_installed_in_the_venv_is_used_when_none_is_on_the_path(tmp_path):
    """pip's quarto-cli puts Quarto in site-packages; make calls that binary (its wrapper loses the exit status)."""
    installed = fake_quarto(tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "quarto_cli" / "bin")
    plan = run_make("-n", "site", f"VENV={tmp_path / 'venv'}", path=path_without_quarto()).stdout.splitlines()
    assert plan[-1] == f"{installed} render --no-execute"
    (tmp_path / "venv" / ".installed-requirements.txt").touch()  # an up-to-date venv, as far as make can tell
    present = run_make("quarto-present", f"VENV={tmp_path / 'venv'}", path=path_without_quarto())
    assert present.returncode == 0 and "installing" not in present.stdout, present.stdout + present.stderr


def test_a_quarto_assembled_in_the_cache_is_used_when_none_is_on_the_path(tmp_path):
    """CI assembles Quarto with ../shared/quarto/install.sh into .cache/quarto; make renders with it."""
    assembled = fake_quarto(tmp_path / "quarto" / "bin")
    plan = run_make("-n", "site", path=path_without_quarto(), QUARTO_CACHE=str(tmp_path / "quarto")).stdout
    assert plan.splitlines()[-1] == f"{assembled} render --no-execute"


@pytest.mark.slow
def test_without_quarto_make_installs_it_or_says_why_it_cannot(tmp_path):
    """For real, in a light venv: here github.com is unreachable, so pip's build of quarto-cli fails;
    where it is reachable the pinned Quarto lands in the venv. Either way nothing half-installed is left."""
    light = tmp_path / "venv"
    venv.create(light, with_pip=True)
    (light / ".installed-requirements-site.txt").touch()  # stands in for the set-up: quarto-cli needs none of it
    args = ("quarto-present", f"VENV={light}", "REQUIREMENTS=requirements-site.txt")
    first = run_make(*args, path=path_without_quarto())
    installed = list(light.glob("lib/python*/site-packages/quarto_cli/bin/quarto"))
    if first.returncode == 0:
        version = subprocess.run([installed[0], "--version"], capture_output=True, text=True).stdout.strip()
        assert version == makefile_quarto_version()
        return
    print(f"\nmake without Quarto here: {first.stdout.splitlines()[-1]}")
    failure = [line for line in first.stdout.splitlines() if "could not be installed" in line]
    assert len(failure) == 1 and "github.com" in failure[0] and "https://quarto.org/docs/get-started/" in failure[0]
    assert "Error downloading Quarto" in (light / "quarto-install.log").read_text(), "the log says what failed"
    assert installed == [] and not list(light.glob("lib/python*/site-packages/quarto_cli*"))
    second = run_make(*args, path=path_without_quarto())
    assert second.returncode != 0 and "installing Quarto" in second.stdout, "a failed install must not count as Quarto"
