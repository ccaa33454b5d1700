"""What a notebook's stored outputs print, read the same way by every tool that checks them.

`make check` compares it with the provenance (the data's digest, the device) and with the live
reader's published files; `make reader-model` publishes only files whose digest it names.
"""
import ast
import re

from tools.core.notebooks import code_cells, download_calls, joined, parse_cell

# `  encoder.onnx  sha256 3eaf…`: how a post prints the digest of a file it wrote.
FILE_DIGEST = re.compile(r"^  (\S+)  sha256 ([0-9a-f]{64})$", re.MULTILINE)
SHA256 = re.compile(r"\bsha256\W+([0-9a-f]{64})\b", re.IGNORECASE)
# `device: cpu`, `device        cpu, 1 thread(s)`: a line that says where the run computed.
DEVICE = re.compile(r"^\s*device\b[:\s]+(cpu|cuda|mps|xpu)\b", re.IGNORECASE | re.MULTILINE)


def cell_text(cell):
    """What one code cell's stored outputs print as text: streams, plain-text results, and Markdown a cell
    displays (a table), which the page shows in place of its plain-text stand-in."""
    texts = []
    for output in cell.get("outputs", []):
        texts.append(joined(output.get("text", "")))
        data = output.get("data", {})
        texts.append(joined(data.get("text/markdown") or data.get("text/plain", "")))
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
    """The SHA-256s the run printed of the data it read: those the downloading cells print, and, in any cell, the
    first one printed on the line, or within the two lines, after the name of a file the downloads fetch (`mnist/mnist-small.npz @ f705fed08827` then
    `sha256 ec07…`: the posts print it at the end, with the build information)."""
    calls = download_calls(nb)
    cells = {id(cell): cell for _, cell, _, _ in calls}
    found = {digest.lower() for cell in cells.values() for digest in SHA256.findall(cell_text(cell))}
    files = downloaded_files(nb, [call for _, _, call, _ in calls])
    for _, cell in code_cells(nb) if files else []:
        text = cell_text(cell)
        for file in files:
            for mention in re.finditer(re.escape(file), text):
                near = "\n".join(text[mention.end():].split("\n")[:3])  # its line and the two after it
                digest = SHA256.search(near)
                if digest:
                    found.add(digest.group(1).lower())
    return found


def downloaded_files(nb, calls):
    """The file names the download calls ask for (`filename`, the second argument of hf_hub_download), as written
    or through a name the code assigns a string to (`DATA_FILE = "mnist/mnist-full.npz"`)."""
    strings = {}
    for _, cell in code_cells(nb):
        tree = parse_cell(cell.source)
        for node in ast.walk(tree) if tree else []:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        strings.setdefault(target.id, set()).add(node.value.value)
    files = set()
    for call in calls:
        argument = next((keyword.value for keyword in call.keywords if keyword.arg == "filename"),
                        call.args[1] if len(call.args) > 1 else None)
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            files.add(argument.value)
        elif isinstance(argument, ast.Name):
            files |= strings.get(argument.id, set())
    return {file for file in files if file.strip()}


def printed_devices(nb):
    """{device kind}: each `device: …` line the outputs print, by its kind (cpu, cuda, mps)."""
    return {kind.lower() for kind in DEVICE.findall(printed_text(nb))}
