"""The models the site's pages load, as files: which post exports each, what it writes, where the page
loads it (the live reader, reader/model/; the decoding lab, reader/aloud/model/).

Light on purpose (no torch, no onnxruntime): `make check` compares the published files with the
digests the exporting post printed; `make reader-model` (tools/live/reader_model.py) and
`make aloud-model` (tools/live/aloud_model.py) publish them.
"""
from tools.core.notebooks import REPO_ROOT

EXPORT_FLAG = "exports_reader"   # notebook metadata blog.exports_reader: true marks the exporting post
EXPORT_FOLDER = "model"          # the post writes its export into <post folder>/model/ (git-ignored)
EXPORTED = ("encoder.onnx", "decoder.onnx", "card.json")
MODEL_DIR = REPO_ROOT / "reader" / "model"  # what the page loads, committed
ALOUD_SLUG = "2026-07-02-reading-numbers-aloud"  # the post whose model the decoding lab runs
LAB_MODEL_DIR = REPO_ROOT / "reader" / "aloud" / "model"  # what the lab loads, committed like reader/model/


def published_dir(root=REPO_ROOT):
    return root / MODEL_DIR.relative_to(REPO_ROOT)


def published_copies(metadata, post_folder, root=REPO_ROOT):
    """[(folder a page loads, the make command that publishes it)] of the post with this notebook metadata
    (`blog`) and folder name: where copies of its export must be the files its stored run made."""
    copies = []
    if metadata.get(EXPORT_FLAG) is True:
        copies.append((published_dir(root), "make reader-model"))
    if post_folder == ALOUD_SLUG:
        copies.append((root / LAB_MODEL_DIR.relative_to(REPO_ROOT), "make aloud-model"))
    return copies


class PublishError(Exception):
    """Why the post's export cannot be published or read; one line that names the file and the fix."""
