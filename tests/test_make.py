"""`make` renders with Quarto when it is there, and says how to install it when it is not."""
import os
import subprocess

from tools.notebooks import REPO_ROOT


def run_make(*args, **env):
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          env={**os.environ, **env})


def test_missing_quarto_gives_install_hint_and_fails():
    result = run_make("quarto-present", QUARTO="quarto-not-installed-here")
    assert result.returncode != 0
    assert "Quarto is not installed" in result.stdout and "https://quarto.org/docs/get-started/" in result.stdout
    assert "pip install quarto-cli" in result.stdout


def test_site_is_rendered_by_quarto_without_executing(tmp_path):
    fake = tmp_path / "quarto"
    log = tmp_path / "calls"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n")
    fake.chmod(0o755)
    result = run_make("site", QUARTO=str(fake))
    assert result.returncode == 0, result.stdout + result.stderr
    assert log.read_text() == "render --no-execute\n"
