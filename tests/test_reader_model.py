"""The live reader serves what the exporting post (the handwriting post) made and printed, and nothing else.

reader/model/ holds the post's encoder.onnx, decoder.onnx and card.json, each with the SHA-256
the post printed; every share on the card is a percentage the post printed; `make reader-model`
(tools/live/reader_model.py) refuses an export the post's stored outputs do not vouch for.
"""
import errno
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.factory import publishable, ran, save_post, stream
from tools.core import notebooks
from tools.live import publish_export, reader_model
from tools.core.notebooks import blog_metadata, read_notebook, write_notebook_atomically
from tools.live.reader_model import (
    EXPORTED, EXPORTING_SLUG, LENGTH_KEYS, MODEL_DIR, SHARE_KEYS, PublishError, as_percent, card_problems,
    exporting_post, file_sha256, graph_problems, publish, site_url,
)
from tools.core.printed import printed_digests, printed_text
from tools.live.onnx_reading import onnx_sessions


def the_post():
    """The notebook of the post that exports the served model (the handwriting post)."""
    return exporting_post()


def committed_card():
    return json.loads((MODEL_DIR / "card.json").read_text(encoding="utf-8"))


# ---- reader/model against the real post ----------------------------------------------------------

def test_served_files_are_the_ones_the_post_printed():
    post = the_post()
    printed = printed_digests(read_notebook(post))
    missing = [name for name in EXPORTED if name not in printed]
    assert not missing, (f"{post.parent.name}: its outputs print no `  <name>  sha256 <hex>` line for {missing}: "
                         f"re-execute the post ({reader_model.execute_command(post)}), then make reader-model")
    served = sorted(path.name for path in MODEL_DIR.iterdir())
    assert served == sorted(EXPORTED), f"reader/model holds {served}, not only {sorted(EXPORTED)}: make reader-model"
    for name in EXPORTED:
        assert file_sha256(MODEL_DIR / name) in printed[name], (
            f"reader/model/{name} is not the file {post.parent.name} printed the digest of: make reader-model "
            f"(after {reader_model.execute_command(post)} if the post's own export is stale too)")


def test_every_share_on_the_card_is_printed_by_the_post():
    post = the_post()
    printed = printed_text(read_notebook(post))
    card = committed_card()
    unprinted = [f"{key}[{length}] = {as_percent(card[key][length])}" for key in SHARE_KEYS for length in LENGTH_KEYS
                 if as_percent(card[key][length]) not in printed]
    assert not unprinted, f"card.json quotes shares {post.parent.name} does not print: {unprinted}"


def test_the_card_s_unsure_thresholds_are_the_ones_the_post_chose_per_length():
    post = the_post()
    printed = printed_text(read_notebook(post))
    thresholds = committed_card()["unsure_below"]
    assert isinstance(thresholds, dict), "one threshold per number of digits read"
    # the post's table of the chosen signal, a row per number of digits read: "  1       0.970    90.9 % of 11 …"
    unprinted = [f"{length}: {value}" for length, value in thresholds.items()
                 if not re.search(rf"^ +{length} +{value:.3f} ", printed, re.MULTILINE)]
    assert not unprinted, f"card.json's unsure_below holds thresholds {post.parent.name} did not print: {unprinted}"


def test_card_has_what_the_page_reads_and_links_to_the_post():
    folder = the_post().parent.name
    card = committed_card()
    assert card["post"]["url"].endswith(f"/{folder}/"), card["post"]
    assert card_problems(card, folder) == []


def test_served_graphs_have_the_pages_inputs_and_outputs():
    assert graph_problems(MODEL_DIR) == []


def test_decoder_length_stays_dynamic():
    _, decoder = onnx_sessions(MODEL_DIR)
    memory = np.zeros((1, 48, committed_card()["recipe"]["width"]), dtype=np.float32)
    for length in (1, 2, 3, 4):
        logits, attention = decoder.run(None, {"memory": memory, "tokens": np.full((1, length), 10, dtype=np.int64)})
        assert logits.shape == (1, length, 13) and attention.shape == (1, length, 48)


@pytest.mark.slow
def test_served_files_score_what_the_card_says():
    """Read through onnxruntime here, the synthetic set and the pen test half give the card's shares back
    (the same canvases and files: only float rounding may differ); MNIST's held-out canvases are the post's
    to draw, so within a point."""
    measured = reader_model.score(MODEL_DIR)
    card = committed_card()
    print("\n" + "\n".join(reader_model.score_lines(measured, card)))
    for length in LENGTH_KEYS:
        assert abs(measured["handwriting_exact"][length] - card["handwriting_exact"][length]) <= 0.002, length
        assert abs(measured["pen_exact"][length] - card["pen_exact"][length]) <= 0.002, length
        assert abs(measured["mnist_exact"][length] - card["mnist_exact"][length]) <= 0.01, length


def test_read_together_is_a_loop_over_canvases_and_views_batched():
    """The tools' port of the page's reading of five views (one encoder run and one decoder run per step
    for every canvas and view) reads what a plain loop reads: each canvas on its own, each view on its own,
    their temperature-scaled probabilities averaged token by token. Without shifts it reads the canvas alone."""
    import torch
    from _reader import START, STEPS
    from tools.live.onnx_reading import canvases, onnx_reader, read_all, read_together, shifted
    reader = onnx_reader(MODEL_DIR)
    images, _ = canvases("test", 24)
    images = torch.as_tensor(images)
    shifts, temperature = [(1, 0), (0, -1), (2, 1)], 0.6
    batched = read_together(reader, images, shifts, temperature)
    for image, reading in zip(images, batched):
        memories = [reader.encode(shifted(image[None], dx, dy)) for dx, dy in [(0, 0), *shifts]]
        tokens = [START]
        for _ in range(STEPS):
            mean = sum((reader.decode(torch.tensor([tokens]), memory)[0, -1] / temperature).softmax(-1)
                       for memory in memories) / len(memories)
            tokens.append(int(mean.argmax()))
        assert reading.tolist() == tokens[1:]
    alone = read_all(reader, images)
    assert (read_all(reader, images, shifts=(), temperature=temperature) == alone).all()
    assert (read_all(reader, images, chunk=10, shifts=shifts, temperature=temperature) == batched.numpy()).all()


def test_flag_overlap_flags_as_the_page_does():
    """tools/live/flag_overlap.py flags a reading of no digit always (the page refuses it) and one of k
    digits under the card's threshold for k; a reading that never ends counts as three digits."""
    import torch
    from _reader import END, PAD
    from tools.live.flag_overlap import flagged
    readings = torch.tensor([[END, PAD, PAD, PAD], [4, END, PAD, PAD], [4, END, PAD, PAD],
                             [1, 2, 3, END], [1, 2, 3, 4]])
    steady = torch.tensor([0.99, 0.95, 0.97, 0.81, 0.79])
    below = {"1": 0.96, "2": 0.9, "3": 0.8}
    assert flagged(readings, steady, below).tolist() == [True, True, False, False, True]


# ---- the publish step, on a fixture post ---------------------------------------------------------

def fixture_card(folder):
    shares = {"1": 0.981, "2": 0.9523, "3": 0.9177, "all": 0.9504}
    return {
        "post": {"title": "A fixture post", "url": f"{site_url()}posts/{folder}/"},
        "parameters": 534541,
        "recipe": {"width": 96, "heads": 4, "encoder_blocks": 2, "decoder_blocks": 2, "label_smoothing": 0.1},
        "temperature": 0.9, "unsure_below": 0.5,
        "mnist_exact": shares, "handwriting_exact": dict(shares, all=0.9311), "pen_exact": dict(shares, all=0.811),
        "mnist_canvases": 10000, "handwriting_canvases": 3000, "pen_canvases": 3000,
        "handwriting_sha256": "0" * 64, "pen_sha256": "1" * 64,
        "tokens": {"start": 10, "end": 11, "pad": 12},
        "data": "the offline stand-in", "torch": "2.13.0+cpu",
    }


def exporting_fixture(posts_dir, folder=EXPORTING_SLUG, card=None, printed=EXPORTED, flagged=False):
    """A post under `posts_dir` whose model/ holds the served graphs and a card, printing the digests of `printed`."""
    export = posts_dir / folder / "model"
    export.mkdir(parents=True)
    for name in ("encoder.onnx", "decoder.onnx"):
        shutil.copyfile(MODEL_DIR / name, export / name)
    (export / "card.json").write_text(json.dumps(card or fixture_card(folder), indent=2), encoding="utf-8")
    lines = "".join(f"  {name}  sha256 {file_sha256(export / name)}\n" for name in printed)
    nb = publishable(ran("export_for_the_live_reader()", stream(lines)))
    if flagged:
        blog_metadata(nb)["exports_reader"] = True
    return save_post(nb, posts_dir, folder=folder, links=False)


@pytest.fixture
def served(tmp_path):
    """A model folder as it is before publishing: old files, and the retired reader.pt."""
    folder = tmp_path / "served"
    folder.mkdir()
    for name in EXPORTED + ("reader.pt",):
        (folder / name).write_bytes(b"old " + name.encode())
    return folder


def test_publish_copies_the_printed_export_and_nothing_else(tmp_path, served):
    post = exporting_fixture(tmp_path / "posts")
    lines = []
    card = publish(post, served, echo=lines.append)
    assert sorted(path.name for path in served.iterdir()) == sorted(EXPORTED)
    for name in EXPORTED:
        assert (served / name).read_bytes() == (post.parent / "model" / name).read_bytes(), name
    assert card == fixture_card(EXPORTING_SLUG)
    assert any("removed reader.pt" in line for line in lines), lines


@pytest.mark.parametrize("changed", EXPORTED)
def test_publish_refuses_a_file_whose_digest_is_not_printed(tmp_path, served, changed):
    post = exporting_fixture(tmp_path / "posts")
    with open(post.parent / "model" / changed, "ab") as file:
        file.write(b" ")  # the file is no longer the one the stored run printed
    with pytest.raises(PublishError) as refused:
        publish(post, served)
    message = str(refused.value)
    assert "\n" not in message and f"model/{changed}" in message and "make execute POST=reading-handwriting" in message
    assert (served / "reader.pt").exists() and (served / changed).read_bytes() == b"old " + changed.encode(), \
        "a refused export changed the served folder"


def test_publish_refuses_an_export_the_post_prints_no_line_for(tmp_path, served):
    post = exporting_fixture(tmp_path / "posts", printed=("encoder.onnx", "decoder.onnx"))
    with pytest.raises(PublishError, match=r"model/card\.json .*prints no digest"):
        publish(post, served)


def test_publish_refuses_a_card_the_page_cannot_read(tmp_path, served):
    card = fixture_card(EXPORTING_SLUG)
    del card["handwriting_exact"]["3"]
    card["post"]["url"] = f"{site_url()}posts/another-post/"
    post = exporting_fixture(tmp_path / "posts", card=card)
    with pytest.raises(PublishError) as refused:
        publish(post, served)
    assert "\"handwriting_exact\" needs shares" in str(refused.value)
    assert f"not {site_url()}posts/{EXPORTING_SLUG}/" in str(refused.value)


def test_the_flagged_post_exports_wherever_it_lives(tmp_path):
    posts = tmp_path / "posts"
    save_post(publishable(), posts, folder="2026-01-01-earlier", links=False)
    flagged = exporting_fixture(posts, folder="2026-08-01-renamed", flagged=True)
    assert exporting_post(posts) == flagged
    unflagged = read_notebook(flagged)
    blog_metadata(unflagged)["exports_reader"] = False
    write_notebook_atomically(unflagged, flagged)
    with pytest.raises(PublishError, match="no post exports"):
        exporting_post(posts)


def test_make_reader_model_says_what_to_run_in_one_line(tmp_path, monkeypatch, capsys, served):
    post = exporting_fixture(tmp_path / "posts")
    (post.parent / "model" / "decoder.onnx").write_bytes(b"retrained, never printed")
    monkeypatch.setattr(reader_model, "POSTS_DIR", tmp_path / "posts")
    monkeypatch.setattr(reader_model, "MODEL_DIR", served)
    assert reader_model.main([]) == 1
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "decoder.onnx" in said and "make execute POST=reading-handwriting" in said, said


# ---- all or nothing: every check first, then one swap; any failure leaves reader/model as it was ---------

def served_state(served):
    """The served folder's files and bytes, and everything beside it: what "as it was" is compared with."""
    return ({path.name: path.read_bytes() for path in served.iterdir()}, sorted(p.name for p in served.parent.iterdir()))


def test_publish_refuses_a_graph_that_is_not_onnx_even_when_its_digest_is_printed(tmp_path, served):
    posts = tmp_path / "posts"
    post = exporting_fixture(posts)
    (post.parent / "model" / "encoder.onnx").write_bytes(b"PK\x03\x04 a zip, not a graph")
    lines = "".join(f"  {name}  sha256 {file_sha256(post.parent / 'model' / name)}\n" for name in EXPORTED)
    save_post(publishable(ran("export_for_the_live_reader()", stream(lines))), posts, EXPORTING_SLUG, links=False)
    before = served_state(served)
    with pytest.raises(PublishError) as refused:
        publish(post, served)
    message = str(refused.value)
    assert "encoder.onnx is not an ONNX graph onnxruntime can load (InvalidProtobuf" in message and "\n" not in message
    assert served_state(served) == before


WRONG_TYPES = {
    "parameters as text": (lambda card: card.update(parameters="534541"), '"parameters" is "534541", not a whole'),
    "a fractional width": (lambda card: card["recipe"].update(width=9.5), '"recipe" needs whole numbers above 0 for width'),
    "smoothing as text": (lambda card: card["recipe"].update(label_smoothing="0.1"), '"label_smoothing" must be a number'),
    "a numeric title": (lambda card: card["post"].update(title=5), '"post" needs a "title" (text)'),
    "post as text": (lambda card: card.update(post="a post"), '"post" needs a "title"'),
    "shares as a list": (lambda card: card.update(mnist_exact=[0.9, 0.9, 0.9, 0.9]), '"mnist_exact" needs shares'),
    "a share as text": (lambda card: card["handwriting_exact"].update(all="95 %"), '"handwriting_exact" needs shares'),
    "a share as true": (lambda card: card["handwriting_exact"].update(all=True), '"handwriting_exact" needs shares'),
    "canvases negative": (lambda card: card.update(mnist_canvases=-1), '"mnist_canvases" is -1, not a whole number'),
    "no data": (lambda card: card.update(data=None), '"data" is null, not text'),
    "a short digest": (lambda card: card.update(handwriting_sha256="abc"), '"handwriting_sha256" must be 64'),
    "unsure as true": (lambda card: card.update(unsure_below=True), '"unsure_below" must be a probability'),
    "unsure per length, one missing": (lambda card: card.update(unsure_below={"1": 0.6, "2": 0.5}),
                                       '"unsure_below" must be a probability'),
    "unsure per length, one above 1": (lambda card: card.update(unsure_below={"1": 0.6, "2": 0.5, "3": 1.2}),
                                       '"unsure_below" must be a probability'),
    "shifts as pairs of text": (lambda card: card.update(unsure_shifts=[["1", "0"]]), '"unsure_shifts" must be a list'),
    "a shift of half a pixel": (lambda card: card.update(unsure_shifts=[[0.5, 0]]), '"unsure_shifts" must be a list'),
    "a shift past the box": (lambda card: card.update(unsure_shifts=[[9, 0]]), '"unsure_shifts" must be a list'),
    "shifts as one pair": (lambda card: card.update(unsure_shifts=[1, 0]), '"unsure_shifts" must be a list'),
    "reading shifts past the box": (lambda card: card.update(read_with_shifts=[[0, 4]]),
                                    '"read_with_shifts" must be a list'),
    "reading shifts as text": (lambda card: card.update(read_with_shifts="together"),
                               '"read_with_shifts" must be a list'),
    "a zero temperature": (lambda card: card.update(temperature=0), '"temperature" must be a number above 0'),
    "a pen share above 1": (lambda card: card["pen_exact"].update({"3": 1.5}), '"pen_exact" needs shares'),
    "a short pen digest": (lambda card: card.update(pen_sha256="abc"), '"pen_sha256" must be 64'),
    "tokens as a list": (lambda card: card.update(tokens=[10, 11, 12]), '"tokens" is [10, 11, 12]'),
}


@pytest.mark.parametrize("case", WRONG_TYPES)
def test_make_reader_model_refuses_a_card_with_wrong_types_and_changes_nothing(tmp_path, monkeypatch, capsys,
                                                                               served, case):
    change, said = WRONG_TYPES[case]
    card = fixture_card(EXPORTING_SLUG)
    change(card)
    exporting_fixture(tmp_path / "posts", card=card)
    before = served_state(served)
    monkeypatch.setattr(reader_model, "POSTS_DIR", tmp_path / "posts")
    monkeypatch.setattr(reader_model, "MODEL_DIR", served)
    assert reader_model.main([]) == 1
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert served_state(served) == before


@pytest.mark.parametrize("text, said", [
    ("[1, 2]", "card.json holds list, not a JSON object"),
    ('{"parameters": NaN}', "NaN is not JSON"),
    ('{"post": ', "model/card.json is not JSON"),
    (b"\xff\xfe{}", "model/card.json is not JSON"),
])
def test_publish_refuses_a_card_that_is_not_a_json_object(tmp_path, served, text, said):
    post = exporting_fixture(tmp_path / "posts", printed=("encoder.onnx", "decoder.onnx"))
    card = post.parent / "model" / "card.json"
    card.write_bytes(text if isinstance(text, bytes) else text.encode())
    lines = "".join(f"  {name}  sha256 {file_sha256(post.parent / 'model' / name)}\n" for name in EXPORTED)
    save_post(publishable(ran("export_for_the_live_reader()", stream(lines))), tmp_path / "posts", EXPORTING_SLUG,
              links=False)
    before = served_state(served)
    with pytest.raises(PublishError, match=re.escape(said)):
        publish(post, served)
    assert served_state(served) == before


def fails(error):
    return lambda *args, **kwargs: (_ for _ in ()).throw(error)


FULL = OSError(errno.ENOSPC, "No space left on device")
READ_ONLY = PermissionError(errno.EACCES, "Permission denied")


@pytest.mark.parametrize("where, patch, said", [
    ("the new folder", lambda m: m.setattr(publish_export.tempfile, "mkdtemp", fails(READ_ONLY)), "is not writable"),
    ("a file's temporary", lambda m: m.setattr(notebooks.tempfile, "mkstemp", fails(READ_ONLY)), "is not writable"),
    ("writing a file", lambda m: m.setattr(notebooks.os, "fsync", fails(FULL)), "the disk is full: free some space"),
    ("the third file", None, "the disk is full"),
    ("renaming a file", lambda m: m.setattr(notebooks.os, "replace", fails(FULL)), "the disk is full"),
    ("the swap", lambda m: m.setattr(publish_export, "exchange_paths", fails(OSError(errno.EIO, "I/O error"))),
     "I/O error"),
])
def test_a_failed_publish_leaves_the_served_model_and_nothing_else(tmp_path, monkeypatch, capsys, served, where,
                                                                  patch, said):
    exporting_fixture(tmp_path / "posts")
    (served / ".encoder.onnx.publishing").write_bytes(b"left by the old publish step")
    before = served_state(served)
    if patch is None:  # the disk fills up on the last of the three files
        real, calls = os.fsync, []
        monkeypatch.setattr(notebooks.os, "fsync", lambda fd: calls.append(fd) or (
            (_ for _ in ()).throw(FULL) if len(calls) == 3 else real(fd)))
    else:
        patch(monkeypatch)
    monkeypatch.setattr(reader_model, "POSTS_DIR", tmp_path / "posts")
    monkeypatch.setattr(reader_model, "MODEL_DIR", served)
    assert reader_model.main([]) == 1
    err = capsys.readouterr().err
    assert said in err and "is as it was, and nothing was left behind" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and ".publishing-" not in err, err
    assert served_state(served) == before


def test_without_an_atomic_exchange_the_swap_still_puts_the_old_folder_back_on_failure(tmp_path, monkeypatch, served):
    post = exporting_fixture(tmp_path / "posts")
    before = served_state(served)
    monkeypatch.setattr(publish_export, "exchange_paths", lambda first, second: False)
    real_rename = os.rename

    def rename(source, target):
        if Path(target) == served and ".publishing-" in Path(source).name and Path(source).suffix != ".old":
            raise OSError(errno.EIO, "Input/output error", str(target))
        return real_rename(source, target)
    with monkeypatch.context() as patched:
        patched.setattr(publish_export.os, "rename", rename)
        with pytest.raises(PublishError, match="Input/output error"):
            publish(post, served)
    assert served_state(served) == before
    publish(post, served)  # and without the failure, the two-rename swap publishes
    assert sorted(path.name for path in served.iterdir()) == sorted(EXPORTED)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["posts", "served"]


def test_publish_clears_what_a_killed_publish_left(tmp_path, served):
    post = exporting_fixture(tmp_path / "posts")
    (served / ".decoder.onnx.publishing").write_bytes(b"half")
    (tmp_path / ".served.publishing-abc123").mkdir()
    served.chmod(0o751)
    publish(post, served)
    assert sorted(path.name for path in served.iterdir()) == sorted(EXPORTED)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["posts", "served"]
    assert served.stat().st_mode & 0o777 == 0o751, "the served folder keeps its mode (mkdtemp's is 0700)"


def test_folders_are_exchanged_in_one_step_where_the_system_can(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "name").write_text(folder.name)
    if not reader_model.exchange_paths(first, second):
        pytest.skip("this system has no atomic exchange (renameat2); the two-rename swap is tested above")
    assert (first / "name").read_text() == "second" and (second / "name").read_text() == "first"


@pytest.mark.parametrize("present, said", [
    ((), "encoder.onnx does not exist; decoder.onnx does not exist"),
    (("encoder.onnx",), "decoder.onnx does not exist"),
    (("encoder.onnx", "not-onnx:decoder.onnx"), "decoder.onnx is not an ONNX graph onnxruntime can load"),
])
def test_score_says_what_is_missing_in_one_line(tmp_path, monkeypatch, capsys, present, said):
    folder = tmp_path / "model"
    folder.mkdir()
    for name in present:
        if name.startswith("not-onnx:"):
            (folder / name.split(":")[1]).write_text("not a graph")
        else:
            shutil.copyfile(MODEL_DIR / name, folder / name)
    monkeypatch.setattr(reader_model, "MODEL_DIR", folder)
    assert reader_model.main(["--score"]) == 1
    err = capsys.readouterr().err
    assert said in err and "make reader-model" in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_make_reader_model_names_a_broken_site_config(tmp_path, monkeypatch, capsys, served):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "_quarto.yml").write_text("website:\n  site-url: [\n")
    exporting_fixture(tmp_path / "posts")
    before = served_state(served)
    monkeypatch.setattr(reader_model, "REPO_ROOT", root)
    monkeypatch.setattr(reader_model, "POSTS_DIR", tmp_path / "posts")
    monkeypatch.setattr(reader_model, "MODEL_DIR", served)
    assert reader_model.main([]) == 1
    err = capsys.readouterr().err
    assert "_quarto.yml is not valid YAML (line" in err and "Traceback" not in err and err.count("\n") == 1, err
    assert served_state(served) == before


def test_publish_trusts_no_digest_from_outputs_edited_after_the_run(tmp_path, served):
    """A printed digest proves the file only while the outputs are sealed: one typed in by hand does not."""
    from tools.core.notebooks import read_notebook, write_notebook_atomically
    post = exporting_fixture(tmp_path / "posts")
    card = post.parent / "model" / "card.json"
    card.write_text(card.read_text().replace("A fixture post", "A post edited by hand"))
    nb = read_notebook(post)
    output = nb.cells[-1].outputs[0]
    output.text = re.sub(r"(card\.json  sha256 )[0-9a-f]{64}", lambda m: m.group(1) + file_sha256(card), output.text)
    write_notebook_atomically(nb, post)  # the digest now matches, but the seal no longer does
    with pytest.raises(PublishError, match=r"not the ones its run made and sealed.*make execute POST=reading-handw"):
        publish(post, served)
    assert (served / "card.json").read_bytes() == b"old card.json", "a refused export changed the served folder"
