"""Does reading the five views together let more misreads through the unsure flag?

Reads the pen test half through a folder's exported graphs twice, the drawing alone and the five
views together, and flags each reading as the page does (the card's temperature, unsure_shifts and
unsure_below: the steady confidence, the mean over the views of each view's product for the
reading). Prints, for each way, the misreads, how many are flagged and how many are not, and the
right readings flagged; then the readings that change between the two ways.

    .venv/bin/python -m tools.live.flag_overlap [FOLDER]   (default: the handwriting post's model/)
"""
import argparse
import json
from pathlib import Path

import torch

import _reader
from _cure import reading_confidence
from tools.core.notebooks import POSTS_DIR
from tools.live import pen_set
from tools.live.onnx_reading import onnx_reader, read_all, read_together, shifted

DEFAULT_FOLDER = POSTS_DIR / "2026-07-09-reading-handwriting" / "model"


def view_products(reader, images, readings, shifts, temperature):
    """(N, views): each view's temperature-scaled product for the reading, up to its first <end> (the
    post's reading_confidence, exported to _cure.py)."""
    fed = torch.cat([torch.full((len(readings), 1), _reader.START), readings[:, :-1]], dim=1)

    def product(view):
        return reading_confidence(readings, (reader.decode(fed, reader.encode(view)) / temperature).softmax(-1))
    return torch.stack([product(shifted(images, dx, dy)) for dx, dy in ((0, 0), *shifts)], dim=1)


def flagged(readings, steady, below):
    """The page's flag: a reading of no digit is refused; one of k digits is flagged under below[k]."""
    digits = torch.cumprod((readings < 10).long(), dim=1).sum(dim=1).clamp(max=3)
    return steady < torch.tensor([float("inf")] + [below[str(k)] for k in (1, 2, 3)])[digits]


def measure(folder, chunk=500):
    card = json.loads((Path(folder) / "card.json").read_text(encoding="utf-8"))
    shifts, temperature = [tuple(s) for s in card["unsure_shifts"]], card["temperature"]
    reader = onnx_reader(folder)
    images, tokens = pen_set.as_model_inputs(*pen_set.halves()["test"])
    images, tokens = torch.as_tensor(images), torch.as_tensor(tokens)
    ways = {}
    for way in ("alone", "together"):
        readings = torch.as_tensor(read_all(reader, images, chunk, shifts if way == "together" else (), temperature))
        steady = torch.cat([view_products(reader, images[i:i + chunk], readings[i:i + chunk], shifts, temperature)
                            for i in range(0, len(images), chunk)]).mean(dim=1)
        ways[way] = (_reader.read_right(readings, tokens), flagged(readings, steady, card["unsure_below"]))
    return ways


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    ways = measure(parser.parse_args(argv).folder)
    for way, (right, flags) in ways.items():
        print(f"read {way:<8}: {int((~right).sum())} misreads, {int((flags & ~right).sum())} flagged, "
              f"{int((~flags & ~right).sum())} not; right readings flagged {int((flags & right).sum())} "
              f"of {int(right.sum()):,}")
    (alone, alone_flags), (together, together_flags) = ways["alone"], ways["together"]
    mended, broken = ~alone & together, alone & ~together
    print(f"misread alone, right together: {int(mended.sum())} ({int((mended & alone_flags).sum())} flagged alone); "
          f"right alone, misread together: {int(broken.sum())} ({int((broken & together_flags).sum())} flagged "
          "together)")


if __name__ == "__main__":
    main()
