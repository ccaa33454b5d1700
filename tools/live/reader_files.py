"""The live reader's model as files: which post exports it, what it writes, where the page loads it.

Light on purpose (no torch, no onnxruntime): `make check` compares the published files with the
digests the exporting post printed; `make reader-model` (tools/live/reader_model.py) publishes them.
"""
from tools.core.notebooks import REPO_ROOT

EXPORT_FLAG = "exports_reader"   # notebook metadata blog.exports_reader: true marks the exporting post
EXPORT_FOLDER = "model"          # the post writes its export into <post folder>/model/ (git-ignored)
EXPORTED = ("encoder.onnx", "decoder.onnx", "card.json")
MODEL_DIR = REPO_ROOT / "reader" / "model"  # what the page loads, committed


def published_dir(root=REPO_ROOT):
    return root / MODEL_DIR.relative_to(REPO_ROOT)


class PublishError(Exception):
    """Why the post's export cannot be published or read; one line that names the file and the fix."""
