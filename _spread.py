"""How far a re-run moves this page's results: the spread report beside the post.

`make spread` (tools/measure/spread.py) runs the post again several times, on
another numeric path and with other seeds, and writes what each run recorded
into spread.json beside the notebook, sealed. `show_spread(read_spread(), names)`
shows one table: each named result, this page's value, the lowest and highest
value of the page and its re-runs together, and how many runs gave one. This
page's value is the one this very run recorded (`RECORDED`), so the table is
right even when the report was measured before the run. The ends are recorded
as references (`spread.<name>.low`, `spread.<name>.high`) for the prose to quote.
"""
import json
import re
from pathlib import Path

from IPython.display import Markdown, display

from _results import RECORDED, result
from _seal import seal_of

SPREAD_REPORT = "spread.json"


def read_spread(path=SPREAD_REPORT):
    """The report at `path`, or None where there is none yet."""
    path = Path(path)
    if not path.exists():
        return None
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("seal") != seal_of(report):
        raise ValueError(f"{path}: its seal does not match its content "
                         "(edited by hand?); run `make spread` again")
    return report


def template_like(text):
    """A format that writes a number as `text` is written: "87.9%" -> "{:.1f}%"."""
    number = re.search(r"-?\d[\d,]*(?:\.(\d+))?(e[-+]?\d+)?", text)
    places = len(number.group(1) or "")
    kind = "e" if number.group(2) else "f"
    comma = "," if "," in number.group() else ""
    spec = "{:" + comma + f".{places}{kind}}}"
    return text[:number.start()] + spec + text[number.end():]


def spread_rows(report, names, this_run=None):
    """For each of `names`: (name, label, this page's text, lowest, highest, how many
    values), the lowest and highest over the page and the re-runs together, so the
    page always lies inside its range; lowest is None when no run recorded it. The
    page's value is this run's (`this_run`, {name: record}) where it recorded one,
    else the one the report measured."""
    rows = []
    for name in names:
        page = (this_run or {}).get(name) or report["page"]["results"].get(name)
        values = [page] + [run["results"].get(name) for run in report["runs"]]
        values = [value for value in values if value and value["number"] is not None]
        if not values:
            rows.append((name, name.replace("_", " "), "–", None, None, 0))
            continue
        low = min(values, key=lambda value: value["number"])
        high = max(values, key=lambda value: value["number"])
        label = values[0].get("label") or name.replace("_", " ")
        shown = page["text"] if page else "–"
        rows.append((name, label, shown, low, high, len(values)))
    return rows


def show_spread(report, names):
    """One table of what a re-run gives; its ends recorded for the prose."""
    if report is None:
        print("no spread report beside this post yet: `make spread` writes one")
        return
    lines = ["| result | this page | page and re-runs, low to high | runs |",
             "|:--|--:|--:|--:|"]
    for name, label, shown, low, high, count in spread_rows(report, names, RECORDED):
        if low is None:
            lines.append(f"| {label} | {shown} | no run recorded it | 0 |")
            continue
        template = template_like(low["text"])
        result(f"spread.{name}.low", low["number"], template, f"{label}, lowest",
               reference=True)
        result(f"spread.{name}.high", high["number"], template, f"{label}, highest",
               reference=True)
        ends = low["text"]
        if high["text"] != low["text"]:
            ends = f"{low['text']} to {high['text']}"
        lines.append(f"| {label} | {shown} | {ends} | {count} |")
    runs = report["runs"]
    caption = f"This page and {len(runs)} re-runs of it ({describe_runs(runs)})"
    display(Markdown(f"{caption}, from {SPREAD_REPORT}:\n\n" + "\n".join(lines)))


def describe_runs(runs):
    """"numeric paths native and pinned; seeds 0, 1, 2"."""
    paths = sorted({run["path"] for run in runs})
    seeds = sorted({run["seed"] for run in runs})
    return (f"numeric paths {' and '.join(paths)}; seeds "
            + ", ".join(str(seed) for seed in seeds))
