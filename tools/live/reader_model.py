"""Publish and score the model behind the live reader (reader/).

The live reader lets a visitor draw a number and watch it being read one digit at a
time, in the browser, on a static site. Its model is trained, measured and exported by
a post, not by this tool: the handwriting post (posts/2026-07-09-reading-handwriting, the notebook
whose metadata says `"blog": {"exports_reader": true}`) trains post 2's compact design
with augmentation, exports it with `torch.onnx.export` as two graphs (an encoder:
canvas -> patch memory; a one-step decoder: memory and the tokens so far -> next-token
scores and the last block's cross-attention), writes them and card.json into its own
model/ folder, and prints each file's SHA-256. So the post is the one definition of
the model, and every number on the page's card is one the post printed.

Publishing copies those three files into reader/model/, after checking that they are
the ones the post's stored run made (their digests are in its outputs), that card.json
has what the page reads, with the types it reads them as, and that the graphs load
and have the inputs and outputs the page feeds and reads. It is all or nothing: every
check runs first, the new folder is written in full beside reader/model/ under a
temporary name (where a full disk stops it, and it is removed), and only then swapped
with reader/model/ in one rename; a failure at any point leaves reader/model/ as it was
and nothing else behind. Those steps are shared with the decoding lab's publish step
(tools/live/publish_export.py); this tool says what the live reader takes.

    python -m tools.live.reader_model            # publish the post's export into reader/model (make reader-model)
    python -m tools.live.reader_model --score    # score reader/model's ONNX files, by number of digits
    python -m tools.live.reader_model --examples # rewrite reader/examples.png and .json (held-out canvases)
"""
import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

from tools.run import standin_data
from tools.core.notebooks import (
    POSTS_DIR, REPO_ROOT, NotebookError, blog_metadata, cannot_write, find_posts, post_name, read_notebook, shown,
    write_files_atomically,
)
from tools.live import handwriting_set, pen_set
from tools.live import publish_export
from tools.live.onnx_reading import canvases, onnx_reader, read_all, served_reading
from tools.live.publish_export import (  # noqa: F401  (the shared steps, under the names this tool always had)
    Export, exchange_paths, execute_command, file_sha256, is_count, is_number, is_text, site_url, strict_json,
)
from tools.live.reader_files import EXPORT_FLAG, EXPORT_FOLDER, EXPORTED, MODEL_DIR, PublishError
from _reader import END, PAD, START

READER_DIR = REPO_ROOT / "reader"
EXAMPLES = 32  # held-out canvases shipped with the page as a sprite
HELD_OUT = 10_000  # MNIST test canvases --score reads

# The post that exports the model: found by its metadata flag, else by this folder name.
EXPORTING_SLUG = "2026-07-09-reading-handwriting"

CARD_KEYS = ("post", "parameters", "recipe", "temperature", "unsure_below", "mnist_exact", "handwriting_exact",
             "pen_exact", "mnist_canvases", "handwriting_canvases", "pen_canvases", "handwriting_sha256", "pen_sha256",
             "tokens", "data", "torch")
SHARE_KEYS = ("mnist_exact", "handwriting_exact", "pen_exact")
LENGTH_KEYS = ("1", "2", "3", "all")
RECIPE_KEYS = ("width", "heads", "encoder_blocks", "decoder_blocks", "label_smoothing")
# The graphs' inputs and outputs, by name, as reader/reader.js feeds and reads them.
GRAPH_SIGNATURES = {"encoder.onnx": (["image"], ["memory"]),
                    "decoder.onnx": (["memory", "tokens"], ["logits", "cross_attention"])}


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


def as_percent(share):
    """A share as the post prints it: `97.2 %`."""
    return f"{100 * share:.1f} %"


# ---- checks before publishing -------------------------------------------------------------------

def is_share(value):
    return is_number(value) and 0 <= value <= 1


def card_problems(card, post_folder):
    """What is missing or wrong in a card the page is to read, types included; [] when nothing is.

    Every key the page or this tool's summary reads is checked for the type it is read as,
    so nothing can fail once reader/model/ has been replaced.
    """
    if not isinstance(card, dict):
        return [f"card.json holds {type(card).__name__}, not a JSON object"]
    problems = [f"no \"{key}\"" for key in CARD_KEYS if key not in card]
    problems += publish_export.post_problems(card, post_folder)
    for key in SHARE_KEYS:
        shares = card.get(key)
        if key in card and not (isinstance(shares, dict) and all(
                is_share(shares.get(length)) for length in LENGTH_KEYS)):
            problems.append(f"\"{key}\" needs shares in [0, 1] for \"1\", \"2\", \"3\" and \"all\"")
    recipe = card.get("recipe")
    if "recipe" in card:
        if not (isinstance(recipe, dict) and all(key in recipe for key in RECIPE_KEYS)):
            problems.append("\"recipe\" needs " + ", ".join(RECIPE_KEYS))
        else:
            wrong = [key for key in RECIPE_KEYS[:-1] if not is_count(recipe[key])]
            if wrong:
                problems.append(f"\"recipe\" needs whole numbers above 0 for {', '.join(wrong)}")
            if not (is_number(recipe["label_smoothing"]) and 0 <= recipe["label_smoothing"] < 1):
                problems.append("\"recipe\".\"label_smoothing\" must be a number from 0 up to 1")
    for key in ("parameters", "mnist_canvases", "handwriting_canvases", "pen_canvases"):
        if key in card and not is_count(card[key]):
            problems.append(f"\"{key}\" is {json.dumps(card[key])[:40]}, not a whole number above 0")
    for key in ("handwriting_sha256", "pen_sha256"):
        if key in card and not (isinstance(card[key], str) and re.fullmatch(r"[0-9a-f]{64}", card[key])):
            problems.append(f"\"{key}\" must be 64 lower-case hex digits")
    if "temperature" in card and not (is_number(card["temperature"]) and 0 < card["temperature"] <= 100):
        problems.append("\"temperature\" must be a number above 0 (the page divides the logits by it)")
    for key in ("data", "torch"):
        if key in card and not is_text(card[key]):
            problems.append(f"\"{key}\" is {json.dumps(card[key])[:40]}, not text")
    if "tokens" in card and card["tokens"] != {"start": START, "end": END, "pad": PAD}:
        problems.append(f"\"tokens\" is {card['tokens']}, but the page reads start {START}, end {END}, pad {PAD}")
    if "unsure_below" in card and not unsure_thresholds_valid(card["unsure_below"]):
        problems.append("\"unsure_below\" must be a probability between 0 and 1, or one for each number of "
                        "digits read (\"1\", \"2\", \"3\")")
    for key, use in (("unsure_shifts", "averages its confidence over them"),
                     ("read_with_shifts", "reads the canvas together with them")):
        if key in card and not shifts_valid(card[key]):
            problems.append(f"\"{key}\" must be a list of [dx, dy] moves of at most {MOST_SHIFT} pixels each way "
                            f"(the page moves a copy of the canvas by each and {use})")
    return problems


MOST_SHIFT = 3  # pixels: a larger move is no longer the same drawing a little off


def shifts_valid(value):
    """Moves the page can read copies of the canvas by: [[dx, dy], …], whole pixels."""
    return isinstance(value, list) and all(
        isinstance(shift, list) and len(shift) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) and abs(x) <= MOST_SHIFT for x in shift)
        for shift in value)


def unsure_thresholds_valid(value):
    """A threshold the page can flag readings by: one probability, or one per number of digits read."""
    def probability(x):
        return is_number(x) and 0 < x < 1
    if isinstance(value, dict):
        return set(value) == {"1", "2", "3"} and all(probability(x) for x in value.values())
    return probability(value)


# What `make reader-model` publishes, for tools/live/publish_export.py.
READER_EXPORT = Export(page="the live reader", command="make reader-model", names=EXPORTED,
                       graphs=GRAPH_SIGNATURES, card_problems=card_problems)


def served_summary(card):
    """The line `make reader-model` ends with; only for a card with no card_problems."""
    shares = {key: as_percent(card[key]["all"]) for key in SHARE_KEYS}
    return (f"the live reader now serves {card['post']['title']!r}: {card['parameters']:,} parameters; exact on "
            f"MNIST held-out {shares['mnist_exact']}, the pen test half {shares['pen_exact']}, "
            f"synthetic {shares['handwriting_exact']}")


def graph_problems(folder):
    """Graphs that do not load, or whose inputs or outputs are not the ones reader/reader.js feeds and reads."""
    return publish_export.graph_problems(folder, GRAPH_SIGNATURES)


def checked_export(post):
    """The post's export folder once every check passes; else PublishError naming the file and the fix."""
    return checked_files(post)[0]


def checked_files(post):
    """(export folder, {file name: sha256 it was checked with}) once every check passes; else PublishError."""
    return publish_export.checked_files(post, READER_EXPORT)


def publish(post, model_dir=MODEL_DIR, echo=print):
    """Replace `model_dir` with the post's checked export, all or nothing; returns the card
    (tools/live/publish_export.py: every check first, then one swap; the retired reader.pt goes with the
    old folder)."""
    return publish_export.publish(post, model_dir, READER_EXPORT, echo=echo)


# ---- scoring -----------------------------------------------------------------------------------

def score(folder=MODEL_DIR):
    """{"mnist_exact": ..., "handwriting_exact": ..., "pen_exact": ...}: exact-sequence shares by length
    ("1", "2", "3", "all") of the ONNX files in `folder`, on MNIST's held-out canvases, the synthetic
    handwriting set and the blind test's pen test half."""
    images, tokens = canvases("test", HELD_OUT)
    served = served_reading(folder)  # as the page reads: the canvas alone, or with its moved copies
    by_length = {"mnist_exact": handwriting_set.exact_by_length(read_all(onnx_reader(folder), images, **served),
                                                                tokens),
                 "handwriting_exact": handwriting_set.score_onnx(folder),
                 "pen_exact": pen_set.score(folder, {"test": pen_set.halves()["test"]})["test"]}
    return {key: {str(length): share for length, share in shares.items()} for key, shares in by_length.items()}


def score_lines(scores, card=None):
    """The table --score prints: one row per set, the card's figure beside each measured one."""
    names = {"mnist_exact": f"MNIST held-out ({HELD_OUT:,})", "handwriting_exact": "synthetic handwriting (3,000)",
             "pen_exact": "pen test half (3,000)"}
    lines = ["exact-sequence accuracy through ONNX, by digits " + " | ".join(LENGTH_KEYS)
             + ("   [card.json in brackets]" if card else "")]
    for key, shares in scores.items():
        carded = (card or {}).get(key) or {}
        cells = [as_percent(shares[length]) + (f" [{as_percent(carded[length])}]" if length in carded else "")
                 for length in LENGTH_KEYS]
        lines.append(f"  {names[key]:<30} " + " | ".join(cells))
    return lines


def write_examples(test_set, folder):
    """The first held-out canvases as one PNG sprite (stacked vertically) and their labels, both or neither."""
    import io
    from PIL import Image
    images, tokens = test_set
    sprite = (images[:EXAMPLES, 0].reshape(EXAMPLES * 28, 84).numpy() * 255).round().astype(np.uint8)
    png = io.BytesIO()
    Image.fromarray(sprite, mode="L").save(png, format="PNG", optimize=True)
    labels = ["".join(str(t) for t in row if t < 10) for row in tokens[:EXAMPLES].tolist()]
    write_files_atomically([
        (Path(folder) / "examples.png", png.getvalue()),
        (Path(folder) / "examples.json", json.dumps({"rows": EXAMPLES, "height": 28, "width": 84, "labels": labels})),
    ])


def scoring_card(path):
    """The card to print beside the scores, or (None, why not) when it is missing or unreadable."""
    if not path.exists():
        return None, None
    try:
        card = strict_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return None, f"{shown(path)} is not readable JSON ({error}); the scores are shown without it"
    usable = isinstance(card, dict) and all(isinstance(card.get(key), dict) and all(
        is_share(card[key].get(length)) for length in LENGTH_KEYS) for key in SHARE_KEYS)
    return (card, None) if usable else (None, f"{shown(path)} holds no shares to compare; the scores are shown "
                                              "without it")


def score_command(folder):
    """--score: the table, or one line saying why the model in `folder` cannot be scored; the exit status."""
    folder = Path(folder)
    problems = graph_problems(folder)
    if problems:
        print(f"cannot score {shown(folder)}: " + "; ".join(problems)
              + ". Publish the post's model first: make reader-model", file=sys.stderr)
        return 1
    card, note = scoring_card(folder / "card.json")
    if note:
        print(note, file=sys.stderr)
    try:
        scores = score(folder)
    except (standin_data.DataError, PublishError) as error:
        print(error, file=sys.stderr)
        return 1
    except Exception as error:  # onnxruntime's own classes: graphs that load but do not run on the page's inputs
        print(f"cannot score {shown(folder)}: reading through its graphs failed ({type(error).__name__}: "
              f"{' '.join(str(error).split())[:200]}); publish the post's model again: make reader-model",
              file=sys.stderr)
        return 1
    print("\n".join(score_lines(scores, card)))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--score", action="store_true",
                        help="score reader/model's ONNX files on MNIST held-out canvases, the synthetic set and the pen test half")
    parser.add_argument("--examples", action="store_true",
                        help="rewrite reader/examples.png and examples.json from the held-out canvases")
    args = parser.parse_args(argv)
    if args.examples:
        try:
            write_examples(canvases("test", HELD_OUT), READER_DIR)  # the count sets the draws: keep post 2's
        except standin_data.DataError as error:
            print(error, file=sys.stderr)
            return 1
        except OSError as error:
            print(f"{cannot_write(error, READER_DIR / 'examples.png')}; the examples are as they were", file=sys.stderr)
            return 1
        print(f"wrote {READER_DIR.name}/examples.png and examples.json ({EXAMPLES} held-out canvases)")
    if args.score:
        return score_command(MODEL_DIR)
    if args.examples:
        return 0
    try:
        site_url(REPO_ROOT)  # a missing or malformed _quarto.yml is said here, before anything is read or written
        post = exporting_post(POSTS_DIR)
        print(f"publishing {post_name(post)}/{EXPORT_FOLDER} into {shown(MODEL_DIR)}:")
        card = publish(post, MODEL_DIR)
    except (PublishError, NotebookError) as error:
        print(error, file=sys.stderr)
        return 1
    print(served_summary(card))
    return 0


if __name__ == "__main__":
    sys.exit(main())
