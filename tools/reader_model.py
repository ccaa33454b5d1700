"""Publish and score the model behind the live reader (reader/).

The live reader lets a visitor draw a number and watch it being read one digit at a
time, in the browser, on a static site. Its model is trained, measured and exported by
a post, not by this tool: post 4 (posts/2026-07-09-reading-handwriting, the notebook
whose metadata says `"blog": {"exports_reader": true}`) trains post 2's compact design
with augmentation, exports it with `torch.onnx.export` as two graphs (an encoder:
canvas -> patch memory; a one-step decoder: memory and the tokens so far -> next-token
scores and the last block's cross-attention), writes them and card.json into its own
model/ folder, and prints each file's SHA-256. So the post is the one definition of
the model, and every number on the page's card is one the post printed.

Publishing copies those three files into reader/model/, after checking that they are
the ones the post's stored run made (their digests are in its outputs), that card.json
has what the page reads, and that the graphs have the inputs and outputs the page feeds
and reads.

    python -m tools.reader_model            # publish the post's export into reader/model (make reader-model)
    python -m tools.reader_model --score    # score reader/model's ONNX files, by number of digits
    python -m tools.reader_model --examples # rewrite reader/examples.png and .json (held-out canvases)
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import torch

from tools import standin_data
from tools.notebooks import POSTS_DIR, REPO_ROOT, NotebookError, blog_metadata, code_cells, find_posts, joined, \
    post_name, read_notebook
from tools.post_links import website_setting

READER_DIR = REPO_ROOT / "reader"
MODEL_DIR = READER_DIR / "model"
START, END, PAD = 10, 11, 12
VOCAB = 13
EXAMPLES = 32  # held-out canvases shipped with the page as a sprite
HELD_OUT = 10_000  # MNIST test canvases --score reads

# The post that exports the model: found by its metadata flag, else by this folder name.
EXPORTING_SLUG = "2026-07-09-reading-handwriting"
EXPORT_FLAG = "exports_reader"
EXPORT_FOLDER = "model"
EXPORTED = ("encoder.onnx", "decoder.onnx", "card.json")
# What the post prints for each exported file: two spaces, the name, two spaces, "sha256", the digest.
PRINTED_DIGEST = re.compile(r"^  (\S+)  sha256 ([0-9a-f]{64})$", re.MULTILINE)

CARD_KEYS = ("post", "parameters", "recipe", "unsure_below", "mnist_exact", "handwriting_exact", "mnist_canvases",
             "handwriting_canvases", "handwriting_sha256", "tokens", "data", "torch")
SHARE_KEYS = ("mnist_exact", "handwriting_exact")
LENGTH_KEYS = ("1", "2", "3", "all")
RECIPE_KEYS = ("width", "heads", "encoder_blocks", "decoder_blocks", "label_smoothing")
# The graphs' inputs and outputs, by name, as reader/reader.js feeds and reads them.
GRAPH_SIGNATURES = {"encoder.onnx": (["image"], ["memory"]),
                    "decoder.onnx": (["memory", "tokens"], ["logits", "cross_attention"])}


class PublishError(Exception):
    """Why the post's export cannot be published; one line that names the file and the fix."""


# ---- data: post 2's canvases -------------------------------------------------------------------

def compose(images, labels, count, rng):
    """`count` canvases of 1..3 digits from the left, their tokens `d1 .. dk <end> <pad> ..` and lengths."""
    lengths = rng.integers(1, 4, size=count)
    picks = rng.integers(0, len(images), size=(count, 3))
    present = np.arange(3)[None, :] < lengths[:, None]
    tiles = images[picks] * present[:, :, None, None]
    canvases = np.concatenate([tiles[:, k] for k in range(3)], axis=2)  # (count, 28, 84)
    tokens = np.full((count, 4), PAD)
    tokens[:, :3] = np.where(present, labels[picks], PAD)
    tokens[np.arange(count), lengths] = END
    return torch.from_numpy(canvases).unsqueeze(1), torch.from_numpy(tokens)


def canvases(split, count):
    """`count` canvases from the stand-in's full MNIST `split`, as post 2 makes them (train: seed 0, test: seed 1)."""
    arrays = standin_data.read_npz(standin_data.build()["mnist/mnist-full.npz"])
    images = arrays[f"x_{split}"].astype(np.float32) / 255
    return compose(images, arrays[f"y_{split}"].astype(np.int64), count,
                   np.random.default_rng({"train": 0, "test": 1}[split]))


# ---- reading -----------------------------------------------------------------------------------

@torch.no_grad()
def read_greedily(encode, decode, images, steps=4):
    """Greedy readings of a batch, given `encode(images) -> memory` and `decode(memory, tokens) -> logits`."""
    memory = encode(images)
    tokens = np.full((len(images), 1), START, dtype=np.int64)
    for _ in range(steps):
        next_token = np.asarray(decode(memory, tokens))[:, -1].argmax(-1)
        tokens = np.concatenate([tokens, next_token[:, None]], axis=1)
    return tokens[:, 1:]


def exact_share(readings, tokens):
    """Share of canvases read exactly: every digit and <end> right; nothing after <end> scored."""
    tokens = np.asarray(tokens)
    return float(((readings == tokens) | (tokens == PAD)).all(axis=1).mean())


def read_all(reader, images, chunk=1000):
    """Greedy readings of many canvases, `chunk` at a time, with a reader's (encode, decode) pair."""
    encode, decode = reader
    return np.concatenate([read_greedily(encode, decode, images[i:i + chunk]) for i in range(0, len(images), chunk)])


def onnx_sessions(folder):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return [onnxruntime.InferenceSession(str(Path(folder) / name), options, providers=["CPUExecutionProvider"])
            for name in ("encoder.onnx", "decoder.onnx")]


def onnx_reader(folder):
    """(encode, decode) for read_greedily, from the exported graphs in `folder`."""
    encoder, decoder = onnx_sessions(folder)
    return (lambda images: encoder.run(None, {"image": images.numpy()})[0],
            lambda memory, tokens: decoder.run(None, {"memory": memory, "tokens": tokens})[0])


# ---- the exporting post and what it printed ----------------------------------------------------

def exporting_post(posts_dir=POSTS_DIR):
    """The notebook that exports the reader's model: the one flagged `exports_reader`, else EXPORTING_SLUG's."""
    try:
        flagged = [path for path in find_posts(posts_dir=posts_dir)
                   if blog_metadata(read_notebook(path)).get(EXPORT_FLAG) is True]
    except NotebookError as error:
        raise PublishError(str(error)) from None
    if len(flagged) > 1:
        raise PublishError(f"{len(flagged)} posts say \"{EXPORT_FLAG}\": true ("
                           + ", ".join(path.parent.name for path in flagged)
                           + "): the live reader serves one model; keep the flag on one post")
    if flagged:
        return flagged[0]
    by_name = posts_dir / EXPORTING_SLUG / "index.ipynb"
    if by_name.exists():
        return by_name
    raise PublishError(f"no post exports the live reader's model: none under {posts_dir} has "
                       f"\"blog\": {{\"{EXPORT_FLAG}\": true}} in its metadata, and {EXPORTING_SLUG}/ does not exist")


def execute_command(post):
    """How a message tells the author to re-run the post: make execute POST=<folder name without its date>."""
    return f"make execute POST={re.sub(r'^[0-9]{4}-[0-9]{2}-[0-9]{2}-', '', Path(post).parent.name)}"


def printed_text(nb):
    """Everything the notebook's stored outputs print as text: streams and plain-text results."""
    texts = []
    for _, cell in code_cells(nb):
        for output in cell.get("outputs", []):
            texts.append(joined(output.get("text", "")))
            texts.append(joined(output.get("data", {}).get("text/plain", "")))
    return "\n".join(text for text in texts if isinstance(text, str) and text)


def printed_digests(nb):
    """{file name: {digests}} from the outputs' `  <name>  sha256 <hex>` lines."""
    found = {}
    for name, digest in PRINTED_DIGEST.findall(printed_text(nb)):
        found.setdefault(name, set()).add(digest)
    return found


def file_sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def as_percent(share):
    """A share as the post prints it: `97.2 %`."""
    return f"{100 * share:.1f} %"


# ---- checks before publishing -------------------------------------------------------------------

def site_url(root=REPO_ROOT):
    """_quarto.yml's website.site-url, ending in /."""
    return website_setting("site-url", root).rstrip("/") + "/"


def is_share(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


def card_problems(card, post_folder):
    """What is missing or wrong in a card the page is to read; [] when nothing is."""
    if not isinstance(card, dict):
        return ["card.json is not a JSON object"]
    problems = [f"no \"{key}\"" for key in CARD_KEYS if key not in card]
    post = card.get("post")
    if "post" in card:
        url = post.get("url", "") if isinstance(post, dict) else ""
        if not isinstance(post, dict) or not post.get("title"):
            problems.append("\"post\" has no \"title\"")
        expected = f"{site_url()}posts/{post_folder}/"
        if url != expected:
            problems.append(f"\"post\".\"url\" is {url!r}, not {expected}")
    for key in SHARE_KEYS:
        shares = card.get(key)
        if key in card and not (isinstance(shares, dict) and all(
                is_share(shares.get(length)) for length in LENGTH_KEYS)):
            problems.append(f"\"{key}\" needs shares in [0, 1] for \"1\", \"2\", \"3\" and \"all\"")
    recipe = card.get("recipe")
    if "recipe" in card and not (isinstance(recipe, dict) and all(key in recipe for key in RECIPE_KEYS)):
        problems.append("\"recipe\" needs " + ", ".join(RECIPE_KEYS))
    if "tokens" in card and card["tokens"] != {"start": START, "end": END, "pad": PAD}:
        problems.append(f"\"tokens\" is {card['tokens']}, but the page reads start {START}, end {END}, pad {PAD}")
    if "unsure_below" in card and not (isinstance(card["unsure_below"], (int, float)) and 0 < card["unsure_below"] < 1):
        problems.append("\"unsure_below\" must be a probability between 0 and 1")
    return problems


def graph_problems(folder):
    """Graphs whose inputs or outputs are not the ones reader/reader.js feeds and reads."""
    problems = []
    for name, session in zip(("encoder.onnx", "decoder.onnx"), onnx_sessions(folder)):
        found = ([node.name for node in session.get_inputs()], [node.name for node in session.get_outputs()])
        if found != GRAPH_SIGNATURES[name]:
            problems.append(f"{name} takes {found[0]} and gives {found[1]}; the page feeds {GRAPH_SIGNATURES[name][0]} "
                            f"and reads {GRAPH_SIGNATURES[name][1]}")
    return problems


def checked_export(post):
    """The post's export folder once every check passes; else PublishError naming the file and the fix."""
    post = Path(post)
    where, rerun = post_name(post), execute_command(post)
    folder = post.parent / EXPORT_FOLDER
    try:
        printed = printed_digests(read_notebook(post))
    except NotebookError as error:
        raise PublishError(str(error)) from None
    for name in EXPORTED:
        path = folder / name
        if not path.exists():
            raise PublishError(f"{where}: {EXPORT_FOLDER}/{name} does not exist: the post writes it when it runs; "
                               f"re-execute the post: {rerun}")
        digest = file_sha256(path)
        if digest not in printed.get(name, set()):
            said = "prints no digest for it" if name not in printed else "prints another digest for it"
            raise PublishError(f"{where}: {EXPORT_FOLDER}/{name} (sha256 {digest[:12]}…) is not the file the post's "
                               f"stored run made (its outputs' `  {name}  sha256 …` line {said}); "
                               f"re-execute the post: {rerun}")
    try:
        card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    except ValueError as error:
        raise PublishError(f"{where}: {EXPORT_FOLDER}/card.json is not JSON ({error}); fix the cell that writes "
                           f"it, then re-execute the post: {rerun}") from None
    problems = card_problems(card, post.parent.name) + graph_problems(folder)
    if problems:
        raise PublishError(f"{where}: {EXPORT_FOLDER}/ is not what the live reader loads: " + "; ".join(problems)
                           + f". Fix the cell that exports it, then re-execute the post: {rerun}")
    return folder


def publish(post, model_dir=MODEL_DIR, echo=print):
    """Copy the post's checked export into `model_dir`, each file under a temporary name first and then
    renamed, so the page never loads half a file; other files there (the old reader.pt) are removed."""
    folder = checked_export(post)
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    staged = []
    for name in EXPORTED:
        temporary = model_dir / f".{name}.publishing"
        shutil.copyfile(folder / name, temporary)
        staged.append((temporary, model_dir / name))
    for temporary, target in staged:
        os.replace(temporary, target)
        echo(f"  {target.name}  sha256 {file_sha256(target)}")
    for stale in sorted(model_dir.iterdir()):
        if stale.is_file() and stale.name not in EXPORTED:
            stale.unlink()
            echo(f"  removed {stale.name}: the page loads only {', '.join(EXPORTED)}")
    return json.loads((model_dir / "card.json").read_text(encoding="utf-8"))


# ---- scoring -----------------------------------------------------------------------------------

def score(folder=MODEL_DIR):
    """{"mnist_exact": ..., "handwriting_exact": ...}: exact-sequence shares by length ("1", "2", "3", "all")
    of the ONNX files in `folder`, on MNIST's held-out canvases and on the non-MNIST handwriting set."""
    from tools import handwriting_set
    images, tokens = canvases("test", HELD_OUT)
    by_length = {"mnist_exact": handwriting_set.exact_by_length(read_all(onnx_reader(folder), images), tokens),
                 "handwriting_exact": handwriting_set.score_onnx(folder)}
    return {key: {str(length): share for length, share in shares.items()} for key, shares in by_length.items()}


def score_lines(scores, card=None):
    """The table --score prints: one row per set, the card's figure beside each measured one."""
    names = {"mnist_exact": f"MNIST held-out ({HELD_OUT:,})", "handwriting_exact": "non-MNIST handwriting (3,000)"}
    lines = ["exact-sequence accuracy through ONNX, by digits " + " | ".join(LENGTH_KEYS)
             + ("   [card.json in brackets]" if card else "")]
    for key, shares in scores.items():
        carded = (card or {}).get(key) or {}
        cells = [as_percent(shares[length]) + (f" [{as_percent(carded[length])}]" if length in carded else "")
                 for length in LENGTH_KEYS]
        lines.append(f"  {names[key]:<30} " + " | ".join(cells))
    return lines


def write_examples(test_set, folder):
    """The first held-out canvases as one PNG sprite (stacked vertically) and their labels."""
    from PIL import Image
    images, tokens = test_set
    sprite = (images[:EXAMPLES, 0].reshape(EXAMPLES * 28, 84).numpy() * 255).round().astype(np.uint8)
    Image.fromarray(sprite, mode="L").save(folder / "examples.png", optimize=True)
    labels = ["".join(str(t) for t in row if t < 10) for row in tokens[:EXAMPLES].tolist()]
    (folder / "examples.json").write_text(json.dumps({"rows": EXAMPLES, "height": 28, "width": 84, "labels": labels}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--score", action="store_true",
                        help="score reader/model's ONNX files on MNIST held-out canvases and the non-MNIST set")
    parser.add_argument("--examples", action="store_true",
                        help="rewrite reader/examples.png and examples.json from the held-out canvases")
    args = parser.parse_args(argv)
    if args.examples:
        write_examples(canvases("test", HELD_OUT), READER_DIR)  # the count sets the draws: keep post 2's
        print(f"wrote {READER_DIR.name}/examples.png and examples.json ({EXAMPLES} held-out canvases)")
    if args.score:
        card_path = MODEL_DIR / "card.json"
        card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.exists() else None
        print("\n".join(score_lines(score(MODEL_DIR), card)))
    if args.examples or args.score:
        return 0
    try:
        post = exporting_post(POSTS_DIR)
        print(f"publishing {post_name(post)}/{EXPORT_FOLDER} into {os.path.relpath(MODEL_DIR, REPO_ROOT)}:")
        card = publish(post, MODEL_DIR)
    except PublishError as error:
        print(error, file=sys.stderr)
        return 1
    shares = {key: as_percent(card[key]["all"]) for key in SHARE_KEYS}
    print(f"the live reader now serves {card['post']['title']!r}: {card['parameters']:,} parameters; exact on "
          f"MNIST held-out {shares['mnist_exact']}, non-MNIST {shares['handwriting_exact']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
