"""The CPU numeric path a post runs on, pinned where it costs next to nothing.

PyTorch picks its CPU kernels by what the processor offers: ATen's vectorised loops
(AVX-512 on this project's machines), MKL's code branch (which differs between AMD
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
PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
# The machine's own choice, asked for explicitly (so the setup cell's defaults do not apply).
NATIVE = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO", "ONEDNN_MAX_CPU_ISA": "ALL"}
PATHS = {"pinned": PINNED, "native": NATIVE}


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
