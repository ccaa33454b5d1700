"""The two numeric paths `make spread` runs a post on (tools/core/numerics.py).

The native path once asked ATen for AVX-512 by name. PyTorch takes ATEN_CPU_CAPABILITY at its word, so
on a chip without AVX-512 every native run died of an illegal instruction (seen on an AMD EPYC host
without it: `make spread` gave up after the kernel died twice). The native path now asks for the widest
path the chip has, as PyTorch itself detects it.
"""
import os
import subprocess
import sys

import pytest

from tools.core import numerics

# Vectorised ATen kernels: a softmax, an exp and a GELU each go through the dispatched CPU loops.
VECTOR_KERNELS = ("import torch, torch.nn.functional as F\n"
                  "x = torch.randn(256, 256)\n"
                  "print(float((x @ x).softmax(-1).sum() + x.exp().sum() + F.gelu(x).sum()),\n"
                  "      torch.backends.cpu.get_cpu_capability())\n")


def run_with(environment):
    env = {**os.environ, **environment}
    return subprocess.run([sys.executable, "-c", VECTOR_KERNELS], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("path", ["pinned", "native"])
def test_each_path_runs_on_this_machine(path):
    environment = numerics.paths()[path]
    ran = run_with(environment)
    assert ran.returncode == 0, (f"the {path} path {environment} does not run here (exit {ran.returncode}): "
                                 f"{ran.stderr[-500:]}")
    assert ran.stdout.split()[-1].lower() == environment["ATEN_CPU_CAPABILITY"], "ATen took the path asked for"


def test_the_native_path_is_the_widest_the_chip_has(monkeypatch):
    """What PyTorch detects with no ATEN_CPU_CAPABILITY set; one already in the environment (a pinned shell,
    a setup cell's) must not answer for the chip. That the detection is right, the test above shows: ATen
    runs the path it names."""
    try:
        monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
        numerics.widest_aten_path.cache_clear()
        detected = numerics.widest_aten_path()
        monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
        numerics.widest_aten_path.cache_clear()
        assert numerics.native()["ATEN_CPU_CAPABILITY"] == detected
    finally:
        numerics.widest_aten_path.cache_clear()
    assert numerics.native()["MKL_CBWR"] == "AUTO" and numerics.native()["ONEDNN_MAX_CPU_ISA"] == "ALL"


def test_a_path_pytorch_names_that_the_variable_does_not_take_is_refused(monkeypatch):
    class Answer:
        stdout = "NEON\n"
    monkeypatch.setattr(numerics.subprocess, "run", lambda *args, **kwargs: Answer)
    numerics.widest_aten_path.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="'neon', which ATEN_CPU_CAPABILITY does not take"):
            numerics.widest_aten_path()
    finally:
        numerics.widest_aten_path.cache_clear()
