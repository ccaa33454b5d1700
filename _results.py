"""The results a post quotes, each recorded under a name; shown where they belong.

`result("exact", accuracy, "{:.1%}", "held-out canvases read exactly")` records
the name, the text `87.9%`, the value and the label in its output's metadata,
which the notebook's seal covers, and prints nothing: the number is shown once,
by the table, figure or sentence it belongs to (`make execute` lists every
record for the author). The prose binds to the name with an invisible marker
right after the number, `87.9 %<!--=exact-->`; `make check` holds the number to
the recorded text, and `make execute` rewrites it from each new run.
"""
import math
import re

from IPython.display import publish_display_data

RESULT_KEY = "reading-digits/result"  # tools/bindings.py reads records under this key
RESULT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
ONE_NUMBER = re.compile(r"[-\u2212]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
# This run's own results so far, {name: {"text", "number", "label"}}, references
# left out: a table of what a re-run gives shows them beside the re-runs'
# (_spread.py).
RECORDED = {}


def result(name, value, template="{}", label=None, reference=False):
    """Record `value`, formatted by `template`, under `name` (and `label`).

    reference=True marks a value from elsewhere (the original run, a paper),
    which the prose may quote only as a reference. The template must write one
    number; a value that is not one (NaN from an empty share) is recorded as
    such. Returns None, so a result on a cell's last line shows nothing.
    """
    if not RESULT_NAME.fullmatch(name):
        raise ValueError(f"result name {name!r}: use letters, digits, _ and .")
    number = float(value)
    text = template.format(value)
    if not math.isfinite(number):  # a short run may have nothing to measure
        text, number = str(number), None
    elif len(ONE_NUMBER.findall(text)) != 1:
        raise ValueError(f"result {name}: {template!r} writes {text!r}, "
                         "which is not exactly one number")
    if number is not None and re.search(r":[^{}]*%\}", template):
        number *= 100  # "{:.1%}" writes 0.879 as 87.9: the record keeps 87.9
    record = {"name": name, "text": text, "number": number,
              "reference": bool(reference),
              "label": label or name.replace("_", " ")}
    if not reference:
        RECORDED[name] = {"text": text, "number": number, "label": record["label"]}
    # Empty Markdown: Jupyter and the page show nothing, the record rides along.
    # (Not HTML: any text/html output makes Quarto load require.js from a CDN.)
    publish_display_data({"text/markdown": ""}, metadata={RESULT_KEY: record})
