"""The CPU numeric path a post runs on, pinned where it costs next to nothing.

PyTorch picks its CPU kernels by what the processor offers: ATen's vectorised loops
(AVX-512 or AVX2, by the chip), MKL's code branch (which differs between AMD
and Intel chips) and oneDNN's instruction set. The same code and seed then give
different last digits on different CPUs, and a trained model drifts further with
every step. The setup cell of every post that shows its spread (`_spread.py`) asks
each library for its AVX2 path, which any x86 processor of the last ten years has;
a machine without AVX2 (an Apple or ARM chip, an old x86) ignores the settings and
uses its own path.

They are set with `setdefault`, before PyTorch is imported, so an explicit
environment wins: `make spread` runs a post on the machine's native path that way.
Cost measured on one AMD EPYC thread (post 2's training step, README): about 3 %.
"""
import functools
import os
import subprocess
import sys

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
# What PyTorch calls ATen's paths (torch.backends.cpu.get_cpu_capability()), as ATEN_CPU_CAPABILITY takes them.
ATEN_PATHS = ("default", "avx2", "avx512", "zvector", "vsx", "sve256")


@functools.cache
def widest_aten_path():
    """ATen's widest vector path on this machine, as PyTorch detects it. Asked in a fresh process with no
    ATEN_CPU_CAPABILITY set, since that variable overrides the detection, and PyTorch does not check it: a
    process told `avx512` on a chip without AVX-512 dies of an illegal instruction."""
    env = {name: value for name, value in os.environ.items() if name != "ATEN_CPU_CAPABILITY"}
    answer = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                            env=env, capture_output=True, text=True, check=True).stdout.strip().lower()
    if answer not in ATEN_PATHS:
        raise RuntimeError(f"PyTorch names this machine's vector path {answer!r}, which ATEN_CPU_CAPABILITY "
                           f"does not take (it takes {', '.join(ATEN_PATHS)})")
    return answer


def native():
    """The machine's own choice, asked for explicitly (so the setup cell's defaults do not apply): ATen's
    widest path this chip has (AVX-512 where it has it), MKL's and oneDNN's automatic choice."""
    return {"ATEN_CPU_CAPABILITY": widest_aten_path(), "MKL_CBWR": "AUTO", "ONEDNN_MAX_CPU_ISA": "ALL"}


def paths():
    """{name: environment} of the two numeric paths `make spread` runs a post on."""
    return {"pinned": PINNED, "native": native()}


def setup_block():
    """The lines the generated setup cell opens with (tools/author/inline_helpers.py)."""
    return "\n".join([
        "# PyTorch, MKL and oneDNN pick their CPU kernels by the chip; ask each for its",
        "# AVX2 path, which AMD's and Intel's x86 chips both have, before torch is imported.",
        "# An explicit environment wins (make spread runs the machine's own path that way);",
        "# chips without AVX2 ignore these.",
        "import os",
        "for _name, _value in {",
        *(f"    {name!r}: {value!r}," for name, value in PINNED.items()),
        "}.items():",
        "    os.environ.setdefault(_name, _value)",
    ])
