"""Publish the model behind the decoding lab (reader/aloud/): the numbers-aloud post's export.

The lab lets a visitor type a number from 0 to 999 and watch the numbers-aloud post's
encoder–decoder read it aloud one word at a time, greedily or by beam search, in the browser.
Its model is trained and exported by the post (posts/2026-07-02-reading-numbers-aloud): a cell
after the greedy/beam section exports it with `torch.onnx.export` as two graphs (an encoder:
source token ids -> memory; a one-step decoder: memory, source ids and the words so far ->
next-word scores and the last block's cross-attention, mean over heads), writes them and a
card.json (the two vocabularies, the special ids, the model's sizes, the post's greedy reading of
every held-out number) into its own model/ folder, reads the held-out numbers again through
onnxruntime, and prints each file's SHA-256.

Publishing copies those three files into reader/aloud/model/ with the live reader's publish
steps (tools/live/publish_export.py): only files whose digests the post's sealed outputs print,
a card with what the page reads, graphs with the inputs and outputs the page feeds and reads;
every check first, then one swap, so a failure leaves the lab's folder as it was.

    python -m tools.live.aloud_model   # make aloud-model
"""
import argparse
import re
import sys

from tools.core.notebooks import POSTS_DIR, REPO_ROOT, NotebookError, post_name, shown
from tools.live import publish_export
from tools.live.publish_export import Export, is_count, is_text, site_url
from tools.live.reader_files import ALOUD_SLUG, EXPORT_FOLDER, EXPORTED, LAB_MODEL_DIR, PublishError

LAB_DIR = LAB_MODEL_DIR.parent
MODEL_DIR = LAB_MODEL_DIR  # what the lab loads

CARD_KEYS = ("post", "parameters", "sizes", "beam_width", "source_tokens", "words", "tokens", "greedy_readings",
             "torch")
SIZE_KEYS = ("width", "heads", "blocks", "ff_width", "source_length", "target_length")
SPECIALS = {"start": "<start>", "end": "<end>", "pad": "<pad>"}
# The graphs' inputs and outputs, by name, as reader/aloud/aloud.js feeds and reads them.
GRAPH_SIGNATURES = {"encoder.onnx": (["source"], ["memory"]),
                    "decoder.onnx": (["memory", "source", "words"], ["logits", "cross_attention"])}


def aloud_post(posts_dir=POSTS_DIR):
    """The numbers-aloud post's notebook; PublishError when it is not there."""
    path = posts_dir / ALOUD_SLUG / "index.ipynb"
    if not path.exists():
        raise PublishError(f"{shown(path)} does not exist: the decoding lab's model comes from that post")
    return path


def vocabulary_problems(card):
    """What is wrong with the card's two vocabularies and its special ids."""
    problems = []
    for key in ("source_tokens", "words"):
        if key in card and not (isinstance(card[key], list) and card[key] and all(is_text(t) for t in card[key])
                                and len(set(card[key])) == len(card[key])):
            problems.append(f"\"{key}\" must be a list of distinct, non-empty tokens")
    tokens = card.get("tokens")
    if "tokens" in card:
        if not (isinstance(tokens, dict) and set(tokens) == set(SPECIALS) and all(
                isinstance(i, int) and not isinstance(i, bool) for i in tokens.values())):
            problems.append(f"\"tokens\" is {tokens}, not the ids of start, end and pad")
        else:
            for key in ("source_tokens", "words"):
                listed = card.get(key) if isinstance(card.get(key), list) else []
                wrong = [name for name, i in tokens.items() if not (0 <= i < len(listed) and listed[i] == SPECIALS[name])]
                if listed and wrong:
                    problems.append(f"\"{key}\" does not hold {', '.join(SPECIALS[name] for name in wrong)} "
                                    "at the ids \"tokens\" gives")
    if isinstance(card.get("source_tokens"), list) and card["source_tokens"][:10] != list("0123456789"):
        problems.append("\"source_tokens\" must start with the ten digits, each at its own value")
    return problems


def readings_problems(card):
    """What is wrong with the card's greedy readings: {"123": "one hundred twenty three", …}."""
    readings = card.get("greedy_readings")
    if "greedy_readings" not in card:
        return []
    if not (isinstance(readings, dict) and readings):
        return ["\"greedy_readings\" must map numbers to the words the post read them as"]
    problems = []
    numbers = [key for key in readings if not (re.fullmatch(r"0|[1-9][0-9]{0,2}", key))]
    if numbers:
        problems.append(f"\"greedy_readings\" has keys that are not numbers from 0 to 999: {numbers[:3]}")
    words = set(card.get("words") or []) - set(SPECIALS.values()) if isinstance(card.get("words"), list) else set()
    unknown = sorted({word for text in readings.values() if isinstance(text, str) for word in text.split()} - words)
    if any(not isinstance(text, str) for text in readings.values()):
        problems.append("\"greedy_readings\" must give each number's reading as text")
    elif words and unknown:
        problems.append(f"\"greedy_readings\" uses words not in \"words\": {unknown[:3]}")
    return problems


def card_problems(card, post_folder):
    """What is missing or wrong in a card the lab is to read, types included; [] when nothing is."""
    if not isinstance(card, dict):
        return [f"card.json holds {type(card).__name__}, not a JSON object"]
    problems = [f"no \"{key}\"" for key in CARD_KEYS if key not in card]
    problems += publish_export.post_problems(card, post_folder)
    sizes = card.get("sizes")
    if "sizes" in card and not (isinstance(sizes, dict) and all(is_count(sizes.get(key)) for key in SIZE_KEYS)):
        problems.append("\"sizes\" needs whole numbers above 0 for " + ", ".join(SIZE_KEYS))
    for key in ("parameters", "beam_width"):
        if key in card and not is_count(card[key]):
            problems.append(f"\"{key}\" is {str(card[key])[:40]}, not a whole number above 0")
    if "torch" in card and not is_text(card["torch"]):
        problems.append("\"torch\" must be text")
    return problems + vocabulary_problems(card) + readings_problems(card)


# What `make aloud-model` publishes, for tools/live/publish_export.py.
LAB_EXPORT = Export(page="the decoding lab", command="make aloud-model", names=EXPORTED, graphs=GRAPH_SIGNATURES,
                    card_problems=card_problems)


def graph_problems(folder):
    """Graphs that do not load, or whose inputs or outputs are not the ones reader/aloud/aloud.js feeds and reads."""
    return publish_export.graph_problems(folder, GRAPH_SIGNATURES)


def publish(post, model_dir=MODEL_DIR, echo=print):
    """Replace `model_dir` with the post's checked export, all or nothing; returns the card."""
    return publish_export.publish(post, model_dir, LAB_EXPORT, echo=echo)


def served_summary(card):
    """The line `make aloud-model` ends with; only for a card with no card_problems."""
    return (f"the decoding lab now serves {card['post']['title']!r}: {card['parameters']:,} parameters, "
            f"beam width {card['beam_width']}, the post's greedy readings of {len(card['greedy_readings'])} "
            "held-out numbers")


def main(argv=None):
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    try:
        site_url(REPO_ROOT)  # a missing or malformed _quarto.yml is said here, before anything is read or written
        post = aloud_post(POSTS_DIR)
        print(f"publishing {post_name(post)}/{EXPORT_FOLDER} into {shown(MODEL_DIR)}:")
        card = publish(post, MODEL_DIR)
    except (PublishError, NotebookError) as error:
        print(error, file=sys.stderr)
        return 1
    print(served_summary(card))
    return 0


if __name__ == "__main__":
    sys.exit(main())
