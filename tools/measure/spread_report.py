"""The spread report beside a post (spread.json): reading it, and what it says about a run.

`make spread` (tools/measure/spread.py) writes it: the results each re-run of the post recorded,
on which numeric path and seed, and the page's own results, under a seal. This module
needs no PyTorch: `make check` and `make compare` read reports with it.

A result's *spread* is the set of values the page and the re-runs gave it. It *moves*
at a precision when those values, written at that precision, are not all the same: the
prose may then state it only with its range, or as this run's (`claim_problems`).
"""
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from tools.author.inline_helpers import result_producing_setup
from tools.core.seal import seal_of as spread_seal
from tools.numbers.bindings import MARKER, bindings_in, places, recorded_results, sentence_around, sentence_span
from tools.core.notebooks import INJECTED_TAG, SETUP_TAG, canonical_json, code_cells, has_tag

SPREAD_REPORT = "spread.json"  # as _spread.py reads it beside the notebook
THIS_RUN = re.compile(r"\b(?:this|the page's|this page's) run\b", re.IGNORECASE)


class ReportError(Exception):
    """A report that cannot be used; the message says why and what to run."""


def report_path(post_dir):
    return Path(post_dir) / SPREAD_REPORT


def read_report(path):
    """The report at `path`, or None where there is none; ReportError when it is unreadable or edited."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ReportError(f"{path.name} is not JSON ({error}); run `make spread` again") from None
    if not isinstance(report, dict) or report.get("seal") != spread_seal(report):
        raise ReportError(f"{path.name}: its seal does not match its content (edited by hand?); "
                          "run `make spread` again")
    return report




# How code_sha256 reads the code. A report without this key was made before it (legacy_code_sha256).
CODE_DIGEST = "results-v2"
OPTION_LINE = re.compile(r"^#\|.*$\n?", re.MULTILINE)


def code_sha256(nb):
    """SHA-256 over what produces the post's results, cell by cell: its code cells as they run, without
    their `#|` options (a caption, a label or a fold moves no result), and of the generated setup cell only
    the numeric path it pins and the helpers that compute (tools/author/inline_helpers.py); a cell of
    injected parameters is not the post's. A change to prose, a caption or a chart's style keeps the spread."""
    parts = []
    for _, cell in code_cells(nb):
        if has_tag(cell, INJECTED_TAG):
            continue
        parts.append(result_producing_setup(cell.source) if has_tag(cell, SETUP_TAG)
                     else OPTION_LINE.sub("", cell.source))
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def legacy_code_sha256(nb):
    """The digest reports made before CODE_DIGEST held: every code cell's whole source."""
    sources = [cell.source for _, cell in code_cells(nb) if not has_tag(cell, INJECTED_TAG)]
    return hashlib.sha256(canonical_json(sources).encode()).hexdigest()


def measured_this_code(report, nb):
    """Did the report measure this notebook's code, read the way the report was made?"""
    digest = code_sha256 if report.get("code_digest") == CODE_DIGEST else legacy_code_sha256
    return report.get("code_sha256") == digest(nb)


def shows_spread(nb):
    """Does a cell of the post's own (not the generated setup) call show_spread?"""
    return any("show_spread(" in cell.source for _, cell in code_cells(nb) if not has_tag(cell, SETUP_TAG))


def results_of(nb):
    """{name: {"text", "number"}} of the run's own results (references are not the run's)."""
    records, _ = recorded_results(nb)
    return {name: {"text": record.text, "number": None if math.isnan(record.number) else record.number,
                   "label": record.label}
            for name, record in records.items() if not record.reference}


@dataclass
class Spread:
    name: str
    texts: list      # as each run (the page first) shows it
    numbers: list

    @property
    def low(self):
        return min(self.finite, default=None)

    @property
    def high(self):
        return max(self.finite, default=None)

    @property
    def finite(self):
        return [number for number in self.numbers if number is not None]

    def moves_at(self, places, scale=0):
        """Do the values, rounded to `places` decimals (of 10**scale), differ?"""
        if len(self.finite) != len(self.numbers):
            return len(set(self.texts)) > 1
        return len({round(number / 10 ** scale, places) for number in self.numbers}) > 1

    def moves(self):
        """Do the runs show it differently?"""
        return len(set(self.texts)) > 1


def spreads(report):
    """{name: Spread} over the page and every run, for each result the page records."""
    found = {}
    for name, page in report["page"]["results"].items():
        values = [page] + [run["results"][name] for run in report["runs"] if name in run["results"]]
        found[name] = Spread(name, [value["text"] for value in values], [value["number"] for value in values])
    return found


def report_problems(nb, post_dir):
    """Why the report beside the post does not describe it: [] when it does (or when there is none)."""
    try:
        report = read_report(report_path(post_dir))
    except ReportError as error:
        return [str(error)]
    if report is None:
        return []
    if not measured_this_code(report, nb):
        return [f"{SPREAD_REPORT} measured other code than this notebook's (a code cell changed since "
                "`make spread`); run `make spread` again"]
    mine = results_of(nb)
    differ = sorted(name for name, value in report["page"]["results"].items() if mine.get(name) != value)
    differ += sorted(set(mine) - set(report["page"]["results"]))
    if differ:
        return [f"the page's results differ from the ones {SPREAD_REPORT} measured the spread around "
                f"({', '.join(differ[:5])}{' …' if len(differ) > 5 else ''}): the post was run again since; "
                "run `make spread` again"]
    return []


def claim_problems(nb, post_dir):
    """[(where, problem)]: a bound number stated as fact though the report's runs show it otherwise.

    A number bound to a result (`<!--=name-->` or `<!--~name-->`) whose runs differ at the
    places the prose writes must share its sentence with that result's range
    (`spread.name.low`/`.high`) or with the words "this run".
    """
    try:
        report = read_report(report_path(post_dir))
    except ReportError:
        return []  # report_problems says so
    if report is None:
        return []
    measured = spreads(report)
    found = []
    for place in places(nb, post_dir):
        if place.cell is None:
            continue
        listed, _ = bindings_in(place.text)
        for bound in listed:
            spread = measured.get(bound.name) if bound.kind in ("=", "~") else None
            if spread is None or not spread.moves_at(bound.number.places, bound.number.scale):
                continue
            sentence = sentence_around(place.text, bound.number)
            if THIS_RUN.search(sentence) or quotes_range(place.text, bound.number, bound.name):
                continue
            quoted = place.text[bound.number.start:bound.number.unit_end].strip()
            found.append((place.where, f"{quoted} ({bound.name}) is stated as fact, but the runs of "
                          f"{SPREAD_REPORT} give {range_text(spread)}: quote its range "
                          f"(<!--ref=spread.{bound.name}.low--> … <!--ref=spread.{bound.name}.high-->) or say "
                          "it is this run's"))
    return found


def quotes_range(text, number, name):
    """Does the sentence around `number` also quote the range of `name` (a spread.name.* reference)?"""
    start, end = sentence_span(text, number)
    return any(marker.group("name") in (f"spread.{name}.low", f"spread.{name}.high")
               for marker in MARKER.finditer(text[start:end]))


def range_text(spread):
    """"86.1% to 88.0%", as the runs show the ends; one text when every run shows the same."""
    if spread.low is None:
        return "nan"
    low = spread.texts[spread.numbers.index(spread.low)]
    high = spread.texts[spread.numbers.index(spread.high)]
    return low if low == high else f"{low} to {high}"
