"""The live reader serves what the exporting post (post 4) made and printed, and nothing else.

reader/model/ holds the post's encoder.onnx, decoder.onnx and card.json, each with the SHA-256
the post printed; every share on the card is a percentage the post printed; `make reader-model`
(tools/reader_model.py) refuses an export the post's stored outputs do not vouch for.
"""
import json
import shutil

import numpy as np
import pytest

from tests.factory import publishable, ran, save_post, stream
from tools import reader_model
from tools.notebooks import blog_metadata, read_notebook, write_notebook_atomically
from tools.reader_model import (
    EXPORTED, EXPORTING_SLUG, LENGTH_KEYS, MODEL_DIR, SHARE_KEYS, PublishError, as_percent, card_problems,
    exporting_post, file_sha256, graph_problems, onnx_sessions, printed_digests, printed_text, publish, site_url,
)


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
    """Read through onnxruntime here, the set gives the card's shares back (the same canvases and files:
    only float rounding may differ); MNIST's held-out canvases are the post's to draw, so within a point."""
    measured = reader_model.score(MODEL_DIR)
    card = committed_card()
    print("\n" + "\n".join(reader_model.score_lines(measured, card)))
    for length in LENGTH_KEYS:
        assert abs(measured["handwriting_exact"][length] - card["handwriting_exact"][length]) <= 0.002, length
        assert abs(measured["mnist_exact"][length] - card["mnist_exact"][length]) <= 0.01, length


# ---- the publish step, on a fixture post ---------------------------------------------------------

def fixture_card(folder):
    shares = {"1": 0.981, "2": 0.9523, "3": 0.9177, "all": 0.9504}
    return {
        "post": {"title": "A fixture post", "url": f"{site_url()}posts/{folder}/"},
        "parameters": 534541,
        "recipe": {"width": 96, "heads": 4, "encoder_blocks": 2, "decoder_blocks": 2, "label_smoothing": 0.1},
        "unsure_below": 0.7,
        "mnist_exact": shares, "handwriting_exact": dict(shares, all=0.9311),
        "mnist_canvases": 10000, "handwriting_canvases": 3000, "handwriting_sha256": "0" * 64,
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
