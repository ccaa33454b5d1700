"""What one part saves for another: part 2 saves the reader it trained, and the handwriting post starts
from it when the note beside it says it was made as that post would make it (tools/run/execute_posts.copy_post
lets a copy of a post find it). The committed files, the two notebooks' sealed outputs and the loading
rule are checked here; the rule itself runs from the notebook's own cell."""
import ast
import hashlib
import json
import re
from pathlib import Path

from tools.core.notebooks import POSTS_DIR, code_cells, read_notebook
from tools.core.printed import cell_text
from tools.run.execute_posts import copy_post

PART_2 = POSTS_DIR / "2026-06-25-reading-when-to-stop"
HANDWRITING = POSTS_DIR / "2026-07-09-reading-handwriting"


def printed(nb):
    """Everything the notebook's code cells printed, as one text."""
    return "\n".join(cell_text(cell) for _, cell in code_cells(nb))


def loading_rule(folder):
    """The handwriting post's `part_2_weights`, defined from its own cell, looking in `folder`."""
    cell = next(cell for cell in read_notebook(HANDWRITING / "index.ipynb").cells
                if cell.cell_type == "code" and "def part_2_weights(" in cell.source)
    tree = ast.parse(cell.source)
    definitions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    namespace = {"json": json, "hashlib": hashlib, "Path": Path, "PART_2": Path(folder)}
    exec(compile(ast.Module(definitions, type_ignores=[]), "part_2_weights", "exec"), namespace)
    return namespace["part_2_weights"]


WANTED = {"config": {"vocab": 13, "width": 96}, "recipe": {"epochs": 4}, "train_size": 60_000, "data_sha256": "ab"}


def saved(folder, weights=b"weights", **note):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reader.pt").write_bytes(weights)
    made_with = {**WANTED, "seed": 0, "sha256": hashlib.sha256(weights).hexdigest(), **note}
    (folder / "reader.json").write_text(json.dumps(made_with), encoding="utf-8")
    return folder


def test_the_saved_reader_is_loaded_only_when_its_note_matches_and_the_file_is_the_noted_one(tmp_path):
    part_2_weights = loading_rule(tmp_path / "missing")
    assert part_2_weights(WANTED) == (None, f"{tmp_path / 'missing'} holds no saved reader")

    folder = saved(tmp_path / "match")
    assert loading_rule(folder)(WANTED) == (folder / "reader.pt", hashlib.sha256(b"weights").hexdigest())
    # the seed is noted but not asked for: every run of the handwriting post starts from part 2's one reader
    other_seed = saved(tmp_path / "other seed", seed=1)
    assert loading_rule(other_seed)(WANTED)[0] == other_seed / "reader.pt"

    other = saved(tmp_path / "other", recipe={"epochs": 6}, train_size=30_000)
    weights, why = loading_rule(other)(WANTED)
    assert weights is None and why == "part 2's saved reader was made with other recipe, train_size"

    tampered = saved(tmp_path / "tampered")
    (tampered / "reader.pt").write_bytes(b"weights, edited")
    weights, why = loading_rule(tampered)(WANTED)
    assert weights is None and "is not the file part 2 noted" in why


def test_a_copy_of_a_post_finds_its_neighbours_and_writes_only_into_its_own_folder(tmp_path):
    posts = tmp_path / "posts"
    saved(posts / "2026-01-01-first")
    (posts / "2026-01-02-second").mkdir()
    (posts / "2026-01-02-second" / "index.ipynb").write_text("{}", encoding="utf-8")
    (posts / "_metadata.yml").write_text("x: 1\n", encoding="utf-8")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    copy = copy_post(posts / "2026-01-02-second", scratch)
    assert copy == scratch / "2026-01-02-second" and not copy.is_symlink()
    assert (copy / "index.ipynb").read_text(encoding="utf-8") == "{}"
    neighbour = copy.parent / "2026-01-01-first"
    assert neighbour.is_symlink() and (neighbour / "reader.pt").read_bytes() == b"weights"
    assert not (scratch / "_metadata.yml").exists()  # folders only
    (copy / "index.ipynb").write_text("changed", encoding="utf-8")
    assert (posts / "2026-01-02-second" / "index.ipynb").read_text(encoding="utf-8") == "{}"


def test_the_handwriting_page_starts_from_the_reader_part_2_saved_and_printed():
    weights, note = PART_2 / "reader.pt", PART_2 / "reader.json"
    assert weights.exists() and note.exists(), \
        "part 2's run saves reader.pt and reader.json beside it: `make execute POST=when-to-stop`"
    made_with = json.loads(note.read_text(encoding="utf-8"))
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert made_with["sha256"] == digest, "reader.pt is not the file reader.json notes"
    part_2_printed = printed(read_notebook(PART_2 / "index.ipynb"))
    assert re.search(rf"wrote reader\.pt: [\d.]+ MB, sha256 {digest}\n", part_2_printed), \
        "part 2's page did not print the digest of the committed reader.pt: it is not the file that run saved"
    handwriting_printed = printed(read_notebook(HANDWRITING / "index.ipynb"))
    loaded = re.search(r"part 2's reader, the file part 2 noted, loaded from\n  (\S+)\n", handwriting_printed)
    assert loaded, "the handwriting page trained its own MNIST-only reader instead of loading part 2's"
    # the appendix's build cell prints the digest of the reader it loaded
    noted = re.search(r"part 2's reader\n  sha256 ([0-9a-f]{64})\n", handwriting_printed)
    assert noted and (Path(loaded[1]).name, noted[1]) == ("reader.pt", digest), \
        "the handwriting page loaded another reader than the one part 2 saved"
