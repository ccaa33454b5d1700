"""What a notebook's stored outputs print, read the same way by every tool that checks them.

`make check` compares it with the provenance (the data's digest, the device) and with the live
reader's published files; `make reader-model` publishes only files whose digest it names.
"""
import re

from tools.core.notebooks import code_cells, download_calls, joined

# `  encoder.onnx  sha256 3eaf…`: how a post prints the digest of a file it wrote.
FILE_DIGEST = re.compile(r"^  (\S+)  sha256 ([0-9a-f]{64})$", re.MULTILINE)
SHA256 = re.compile(r"\bsha256\W+([0-9a-f]{64})\b", re.IGNORECASE)
# `device: cpu`, `device        cpu, 1 thread(s)`: a line that says where the run computed.
DEVICE = re.compile(r"^\s*device\b[:\s]+(cpu|cuda|mps|xpu)\b", re.IGNORECASE | re.MULTILINE)


def cell_text(cell):
    """What one code cell's stored outputs print as text: streams and plain-text results."""
    texts = []
    for output in cell.get("outputs", []):
        texts.append(joined(output.get("text", "")))
        texts.append(joined(output.get("data", {}).get("text/plain", "")))
    return "\n".join(text for text in texts if isinstance(text, str) and text)


def printed_text(nb):
    """Everything the notebook's stored outputs print as text."""
    return "\n".join(text for text in (cell_text(cell) for _, cell in code_cells(nb)) if text)


def printed_digests(nb):
    """{file name: {digests}} from the outputs' `  <name>  sha256 <hex>` lines."""
    found = {}
    for name, digest in FILE_DIGEST.findall(printed_text(nb)):
        found.setdefault(name, set()).add(digest)
    return found


def data_digests(nb):
    """The SHA-256s printed by the cells that download data: the digest of what the run read."""
    cells = {id(cell): cell for _, cell, _, _ in download_calls(nb)}
    return {digest.lower() for cell in cells.values() for digest in SHA256.findall(cell_text(cell))}


def printed_devices(nb):
    """{device kind}: each `device: …` line the outputs print, by its kind (cpu, cuda, mps)."""
    return {kind.lower() for kind in DEVICE.findall(printed_text(nb))}
