"""The spread report beside a post (spread.json): reading it, and what it says about a run.

`make spread` (tools/measure/spread.py) writes it: the results each re-run of the post recorded,
on which numeric path and seed, and the page's own results, under a seal. This module
needs no PyTorch: `make check` and `make compare` read reports with it.

A result's *spread* is the set of values the page and the re-runs gave it. It *moves*
at a precision when those values, written at that precision, are not all the same: the
prose may then state it only with its range, or as this run's (`claim_problems`).
"""
import ast
import hashlib
import io
import json
import math
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from tools.author.inline_helpers import HELPERS, NUMERIC_PATH, result_producing_setup
from tools.core.notebooks import HELPER_TAG, INJECTED_TAG, SETUP_TAG, canonical_json, code_cells, describe_cell, has_tag
from tools.core.printed import cell_text
from tools.core.seal import seal_of
from tools.numbers.bindings import MARKER, RESULT_KEY, bindings_in, places, recorded_results, sentence_span

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
    if not isinstance(report, dict):
        raise ReportError(f"{path.name} is not a JSON object, so not what `make spread` writes; run `make spread` again")
    if report.get("seal") != seal_of(report):
        raise ReportError(f"{path.name}: its seal does not match its content (edited by hand?); "
                          "run `make spread` again")
    shape = shape_problem(report)
    if shape:  # sealed, yet not what the tool writes: sealed again by hand, or by another version of the tool
        raise ReportError(f"{path.name}: {shape}, so not what `make spread` writes; run `make spread` again")
    return report


def shape_problem(report):
    """Why a report's content is not shaped as `make spread` writes it (what every reader of it relies on), or None."""
    if not isinstance(report.get("code_sha256"), str):
        return "its code_sha256 is missing or not text"
    if not isinstance(report.get("page"), dict):
        return "its page is missing or not an object"
    problem = results_shape(report["page"].get("results"), "page.results")
    if problem:
        return problem
    if not isinstance(report.get("runs"), list):
        return "its runs are missing or not a list"
    for number, run in enumerate(report["runs"]):
        if not isinstance(run, dict):
            return f"its runs[{number}] is not an object"
        if not isinstance(run.get("label", ""), str):
            return f"its runs[{number}].label is not text"
        problem = results_shape(run.get("results"), f"runs[{number}].results")
        if problem:
            return problem
    return None


def results_shape(results, where):
    if not isinstance(results, dict):
        return f"its {where} is missing or not an object"
    for name, value in results.items():
        number = value.get("number") if isinstance(value, dict) else None
        if not isinstance(value, dict) or not isinstance(value.get("text"), str) or "number" not in value or \
                not (number is None or isinstance(number, (int, float)) and not isinstance(number, bool)) or \
                not isinstance(value.get("label", ""), (str, type(None))):
            return f'its {where}.{name} is not a result ({{"text": "…", "number": a number or null}})'
    return None




# How code_sha256 reads the code. A report keyed otherwise was made by an earlier reading (DIGESTS).
CODE_DIGEST = "results-v3"
OPTION_LINE = re.compile(r"^#\|.*$\n?", re.MULTILINE)
LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


def program_tokens(source):
    """The Python tokens of `source` without its layout: no comment (a `#|` option or a shape comment), no blank
    line, no indentation width, no cell boundary. Text that does not tokenize (a magic's odd line) counts whole."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [["text", OPTION_LINE.sub("", source)]]
    return [[tokenize.tok_name[token.type], "" if token.type in (tokenize.NEWLINE, tokenize.INDENT,
                                                                 tokenize.DEDENT) else token.string]
            for token in tokens if token.type not in LAYOUT]


def code_sha256(nb):
    """SHA-256 over the program that produces the post's results, read as Python tokens (program_tokens): the
    numeric path the setup cell pins, the helpers that compute in their fixed order, wherever the notebook
    shows them (in the setup cell or in a cell of their own, HELPER_TAG), then the post's other code cells
    in order as one stream. Not the packages installed when missing, the presentation helpers, a cell of
    injected parameters, comments, options or where one cell ends and the next begins: a change to prose, a
    caption, a chart's style or a comment, or a cell cut in two, keeps the spread."""
    helpers, program = {}, []
    for _, cell in code_cells(nb):
        if has_tag(cell, INJECTED_TAG):
            continue
        if has_tag(cell, SETUP_TAG) or has_tag(cell, HELPER_TAG):
            helpers.update(result_producing_setup(cell.source))
        else:
            program += program_tokens(cell.source)
    shown = [token for name in (NUMERIC_PATH, *HELPERS) if name in helpers for token in program_tokens(helpers[name])]
    return hashlib.sha256(canonical_json(shown + program).encode()).hexdigest()


def results_v2_sha256(nb):
    """The digest reports keyed "results-v2" were made with: cell by cell, each without its `#|` options, and of
    the setup cell the numeric path and the computing helpers."""
    parts = []
    for _, cell in code_cells(nb):
        if has_tag(cell, INJECTED_TAG):
            continue
        parts.append(result_producing_setup(cell.source) if has_tag(cell, SETUP_TAG)
                     else OPTION_LINE.sub("", cell.source))
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def legacy_code_sha256(nb):
    """The digest reports made before any code_digest key held: every code cell's whole source."""
    sources = [cell.source for _, cell in code_cells(nb) if not has_tag(cell, INJECTED_TAG)]
    return hashlib.sha256(canonical_json(sources).encode()).hexdigest()


# Each reading of the code a report may be keyed with (its code_digest; none: the first), newest first.
DIGESTS = {CODE_DIGEST: code_sha256, "results-v2": results_v2_sha256, None: legacy_code_sha256}


def measured_this_code(report, nb):
    """Did the report measure this notebook's code, read the way the report was made?"""
    digest = DIGESTS.get(report.get("code_digest"))
    return digest is not None and report.get("code_sha256") == digest(nb)


def spread_table_cells(nb):
    """[(number, cell)] of the post's own code cells (not the generated setup) that call show_spread."""
    return [(number, cell) for number, cell in code_cells(nb)
            if "show_spread(" in cell.source and not has_tag(cell, SETUP_TAG)]


def shows_spread(nb):
    """Does a cell of the post's own call show_spread?"""
    return bool(spread_table_cells(nb))


def taken_from_the_run(nb):
    """The names of the run's results its spread table shows as this run recorded them: those recorded in a
    cell before the first that calls show_spread (_spread.py reads them from _results.RECORDED). A result
    recorded after it is shown as the report measured it."""
    tables = [number for number, _ in spread_table_cells(nb)]
    records, _ = recorded_results(nb)
    return {name for name, record in records.items()
            if not record.reference and tables and record.cell < tables[0]}


def table_names(nb):
    """The results the spread table lists: the string names in the list its first show_spread call is given, or
    None where that list is not written out as one (then any result may be in the table)."""
    tables = spread_table_cells(nb)
    if not tables:
        return None
    try:
        tree = ast.parse(tables[0][1].source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_spread" and len(node.args) > 1:
            listed = node.args[1]
            if isinstance(listed, (ast.List, ast.Tuple)) and all(
                    isinstance(item, ast.Constant) and isinstance(item.value, str) for item in listed.elts):
                return {item.value for item in listed.elts}
    return None


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


# How _spread.show_spread says how many re-runs it shows: its table's caption (and, before the table, its first line).
PRINTED_COUNT = re.compile(r"^(?:This page and )?(\d+) re-runs of (?:it|this notebook)\b", re.MULTILINE)
WITH_THE_PAGE = "This page and "  # the table's ranges take in the page's own value
RANGE_END = re.compile(r"spread\.(?P<name>.+)\.(?P<end>low|high)")


def printed_problems(nb, post_dir):
    """[(where, problem)]: what the page's spread cell printed (its re-runs' count, each range's ends, recorded as
    references `spread.<name>.low`/`.high`) that is not what the sealed report beside it holds."""
    try:
        report = read_report(report_path(post_dir))
    except ReportError:
        return []  # report_problems says so
    if report is None:
        return []
    runs = report["runs"]
    found = []
    for number, cell in code_cells(nb):
        where = describe_cell(number, cell)
        shown = cell_text(cell)
        for count in PRINTED_COUNT.findall(shown):
            if int(count) != len(runs):
                found.append((where, f"prints {count} re-runs, but {SPREAD_REPORT} holds {len(runs)}: the report "
                                     "changed after the page ran; run `make execute`"))
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get(RESULT_KEY) if isinstance(output.get("metadata"), dict) else None
            end = RANGE_END.fullmatch(str(record.get("name", ""))) if isinstance(record, dict) else None
            if end is None:
                continue
            values = [run["results"][end["name"]] for run in runs if end["name"] in run["results"]]
            if WITH_THE_PAGE in shown:
                values.append(report["page"]["results"].get(end["name"]))
            values = [value for value in values if value and value["number"] is not None]
            if not values:
                found.append((where, f"prints {record['name']}, but no re-run of {SPREAD_REPORT} recorded "
                                     f"{end['name']}: run `make execute`"))
                continue
            pick = min if end["end"] == "low" else max
            expected = pick(values, key=lambda value: value["number"])
            if record.get("text") != expected["text"] or record.get("number") != expected["number"]:
                found.append((where, f"prints {record['name']} as {record.get('text')}, but the re-runs of "
                                     f"{SPREAD_REPORT} give {expected['text']}: the report changed after the page "
                                     "ran; run `make execute`"))
    return found


def claim_problems(nb, post_dir):
    """[(where, problem)]: a bound number stated as fact though the report's runs show it otherwise.

    A number bound to a result (`<!--=name-->` or `<!--~name-->`) whose runs differ at the
    places the prose writes must share its sentence with that result's whole range
    (`spread.name.low` and `.high`) or with the words "this run". A sentence that claims
    something of every run ("in every run", "every re-run", "whatever the seed", "never",
    "always", "more than twice") is weighed against the runs whatever else it says: "this
    run" excuses nothing there, and a number the runs move stands in it only with its whole
    range, or in a comparison with another bound number that holds in each run ("higher",
    "against", "the same"). A multiple it claims ("more than doubles") must hold in each run.
    """
    try:
        report = read_report(report_path(post_dir))
    except ReportError:
        return []  # report_problems says so
    if report is None:
        return []
    measured, runs = spreads(report), run_results(report)
    found = []
    for place in places(nb, post_dir):
        if place.cell is None:
            continue
        listed, _ = bindings_in(place.text)
        bound_results = [bound for bound in listed if bound.kind in ("=", "~") and bound.name in measured]
        weighed = set()
        for bound in bound_results:
            span = claim_span(place.text, bound.number)
            peers = [other for other in bound_results
                     if other is not bound and span[0] <= other.number.start < span[1]]
            problem = claim_problem(place.text, span, bound, peers, measured[bound.name], runs)
            if problem:
                found.append((place.where, problem))
            if span not in weighed:
                weighed.add(span)
                found += [(place.where, problem)
                          for problem in multiple_problems(place.text, span, [bound, *peers], runs)]
    return found


# A sentence that says something of every run. "This run" in it excuses nothing.
EVERY_RUN = re.compile(r"\b(?:every|each|all(?:\s+the)?|any)\s+(?:of\s+the\s+|other\s+)?(?:re-?)?runs?\b|"
                       r"\b(?:every|each|any)\s+seed\b|\bwhatever\s+the\s+seed\b|\bnever\b|\balways\b|"
                       r"\bmore\s+than\s+(?:doubles?|doubled|twice|triples?|tripled|three\s+times)\b", re.IGNORECASE)
# Words that compare two numbers of a sentence: the comparison is a claim that holds, or not, in each run.
COMPARES = re.compile(r"\b(?:higher|lower|above|below|more|less|fewer|greater|smaller|larger|better|worse|"
                      r"up\s+from|down\s+from|short\s+of|against|than|rises?|rose|falls?|fell|beats?|exceeds?|passes|"
                      r"same|equal|agree|agrees|alike|match(?:es)?|differs?|differed|versus|vs|twice|doubles?)\b",
                      re.IGNORECASE)
MULTIPLE = re.compile(r"\bmore\s+than\s+(?P<two>doubles?|doubled|twice)\b|"
                      r"\bmore\s+than\s+(?P<three>triples?|tripled|three\s+times)\b", re.IGNORECASE)


def claim_problem(text, span, bound, peers, spread, runs):
    """Why this bound number cannot stand in its sentence as written, or None."""
    if not spread.moves_at(bound.number.places, bound.number.scale):
        return None  # every run shows it as written: a fact
    sentence = MARKER.sub("", text[span[0]:span[1]])
    quoted = text[bound.number.start:bound.number.unit_end].strip()
    if quotes_range(text, bound.number, bound.name):
        return None
    every = EVERY_RUN.search(sentence)
    if every is None:
        if THIS_RUN.search(sentence):
            return None
        return (f"{quoted} ({bound.name}) is stated as fact, but the runs of {SPREAD_REPORT} give "
                f"{range_text(spread)}: quote its range (<!--ref=spread.{bound.name}.low--> … "
                f"<!--ref=spread.{bound.name}.high-->) or say it is this run's")
    compared = [peer for peer in peers if peer.number.unit == bound.number.unit] if COMPARES.search(sentence) else []
    breaks = [(peer, order_break(bound, peer, runs)) for peer in compared]
    if any(broken is None for _, broken in breaks):
        return None  # it stands in a comparison that holds in each run
    said = (f"{quoted} ({bound.name}) stands in a claim about every run (\"{every.group()}\"), but the runs of "
            f"{SPREAD_REPORT} give {range_text(spread)}")
    if breaks:
        peer, (label, results) = breaks[0]
        shown = lambda name: (results.get(name) or {}).get("text", "nan")
        said += (f", and its comparison with {peer.name} does not hold in each: in {label} they are "
                 f"{shown(bound.name)} and {shown(peer.name)}")
    return (said + ": in such a sentence \"this run\" excuses nothing; say there only what holds in every run "
            f"(a comparison that holds in each, or its range <!--ref=spread.{bound.name}.low--> … "
            f"<!--ref=spread.{bound.name}.high-->), and give this run's number in a sentence of its own")


LIST_ITEM = re.compile(r"\n[ \t]*(?:[-*+]|\d+[.)])[ \t]")


def claim_span(text, number):
    """(start, end) of the sentence around `number`, within its list item: a list's items are claims of their own."""
    start, end = sentence_span(text, number)
    starts = [item.start() for item in LIST_ITEM.finditer(text, start, end)]
    start = max([start] + [at for at in starts if at < number.start])
    end = min([end] + [at for at in starts if at >= number.unit_end])
    return start, end


def run_results(report):
    """[(label, {name: {"text", "number"}})] for the page's run and each re-run of the report."""
    found = [("the page's run", report["page"]["results"])]
    for number, run in enumerate(report["runs"], start=1):
        found.append((run.get("label") or f"re-run {number}", run["results"]))
    return found


def written(value, number):
    """A run's value of a result as the prose writes the bound `number`: at its places and scale."""
    if value is None or value.get("number") is None:
        return None
    return round(value["number"] / 10 ** number.scale, number.places)


def order_break(bound, peer, runs):
    """The first (label, results) of a run in which the two bound numbers, as written, stand in another order
    than in the page's run (or one is missing); None when the order, or their equality, holds in each run."""
    orders = []
    for label, results in runs:
        mine, theirs = written(results.get(bound.name), bound.number), written(results.get(peer.name), peer.number)
        order = None if mine is None or theirs is None else (mine > theirs) - (mine < theirs)
        if order is None or orders and order != orders[0]:
            return label, results
        orders.append(order)
    return None


def multiple_problems(text, span, bounds, runs):
    """A multiple the sentence claims ("more than doubles", "more than twice") between two of its bound numbers
    of one unit, where the page's run shows it, must hold in each run."""
    sentence = MARKER.sub("", text[span[0]:span[1]])
    claimed = MULTIPLE.search(sentence)
    if claimed is None:
        return []
    factor = 2 if claimed.group("two") else 3
    by_start = sorted(bounds, key=lambda bound: bound.number.start)
    found = []
    for index, first in enumerate(by_start):
        for second in by_start[index + 1:]:
            if first.number.unit != second.number.unit or first.name == second.name:
                continue
            page = runs[0][1]
            if not any(times(page, large, small) > factor for large, small in ((first, second), (second, first))):
                continue
            large, small = (first, second) if times(page, first, second) > factor else (second, first)
            for label, results in runs:
                ratio = times(results, large, small)
                if not ratio > factor:
                    shown = lambda bound: (results.get(bound.name) or {}).get("text", "nan")
                    found.append(f"the sentence says \"{claimed.group()}\" of {large.name} and {small.name}, but in "
                                 f"{label} of {SPREAD_REPORT} they are {shown(large)} and {shown(small)}, "
                                 f"{ratio:.2f} times: say what holds in every run, or that it is this run's in a "
                                 "sentence that claims nothing of every run")
                    break
    return found


def times(results, large, small):
    """How many times the run's value of `small` its value of `large` is (0 when either is missing)."""
    top, bottom = (results.get(bound.name, {}).get("number") for bound in (large, small))
    if top is None or bottom is None or bottom == 0:
        return 0.0
    return top / bottom


def quotes_range(text, number, name):
    """Does the sentence around `number` also quote the whole range of `name` (spread.name.low and .high)?"""
    start, end = claim_span(text, number)
    quoted = {marker.group("name") for marker in MARKER.finditer(text[start:end])}
    return {f"spread.{name}.low", f"spread.{name}.high"} <= quoted


def range_text(spread):
    """"86.1% to 88.0%", as the runs show the ends; one text when every run shows the same."""
    if spread.low is None:
        return "nan"
    low = spread.texts[spread.numbers.index(spread.low)]
    high = spread.texts[spread.numbers.index(spread.high)]
    return low if low == high else f"{low} to {high}"
