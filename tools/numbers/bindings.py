"""Numbers bound to the run: the prose names the result it quotes; the check is exact; re-runs rewrite it.

A cell records a result with the `result()` helper (_results.py): the output shows it and its
metadata keeps `{"name", "text", "number", "reference"}` under RESULT_KEY, inside the seal.
The prose follows each number it quotes with an invisible HTML comment, a *marker*:

    87.9 %<!--=exact-->      the run's result `exact`, exactly as recorded ("87.9%")
    88 %<!--~exact-->        the same, rounded to the places the prose writes
    87.3 %<!--ref=original-->, 87 %<!--ref~original-->   a reference value the run prints
    8<!--set=epochs-->       a setting, equal to the parameters cell's `epochs`
    10 minutes<!--text-->    not a result (a share cannot be marked so)

A marker binds the nearest number before it on its line, with no digit between them (its unit,
a closing `$` may be). Every other result-like number a reader reads (tools/numbers/prose_numbers.py)
is refused. Markers live only in markdown and raw cells, which `make execute` may rewrite;
front matter and cell-option captions cannot carry one, so they may not quote a result.
"""
import ast
import difflib
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from tools.core.notebooks import (
    FRONT_MATTER, CellOptionsError, cell_options, code_cells, describe_cell, front_matter, joined, parameters_cell,
)
from tools.numbers.prose_numbers import NUMBER, decimal_of, numbers_in, unit_of

RESULT_KEY = "reading-digits/result"  # as _results.py writes it
MARKER = re.compile(r"<!--\s*(?:(?P<kind>=|~|ref=|ref~|set=)\s*(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<text>text))\s*-->")
MARKER_LIKE = re.compile(r"<!--\s*(?:=|~|ref|set|text)[^>]*?-->")
MAX_GAP = 40  # characters between a number and its marker: its unit, a closing $, a word or two
FRONT_MATTER_READ = ("title", "subtitle", "description", "abstract", "image-alt", "categories", "keywords")
CAPTION_OPTIONS = ("fig-cap", "fig-alt", "fig-subcap", "tbl-cap", "tbl-subcap", "lst-cap", "cap")
HOW_TO_BIND = ("follow it with <!--=name--> naming the result() that prints it (`make bind POST=…` proposes "
               "names), or mark it <!--set=…-->, <!--ref=…--> or <!--text-->")


@dataclass
class Record:
    name: str
    text: str        # as the output shows it: "87.9%"
    number: float    # the value on the scale the text writes it (87.93…, not 0.8793)
    reference: bool
    cell: int
    label: str = ""  # what the output shows before the value: "held-out canvases read exactly"

    @property
    def numeral(self):
        match = NUMBER.search(self.text)
        return match.group() if match else ""


@dataclass
class Place:
    """One text a reader reads: a markdown or raw cell (which may carry markers), or a caption."""
    where: str
    text: str
    cell: object = None       # the notebook cell whose source `text` is, when markers may be written in it
    prefix: str = ""          # a markdown cell's front matter, kept out of `text`
    bindable: bool = True
    missing: bool = False     # an included file that cannot be read


@dataclass
class Bound:
    number: object
    kind: str                  # "=", "~", "ref=", "ref~", "set=", "text"
    name: str


# ---- what the run recorded, and the settings --------------------------------------------------------

def recorded_results(nb):
    """({name: Record}, [problems]) from every code cell's outputs."""
    records, problems = {}, []
    for number, cell in code_cells(nb):
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get(RESULT_KEY) if isinstance(output.get("metadata"), dict) else None
            if record is None:
                continue
            shown = joined(output.get("data", {}).get("text/plain", ""))
            try:
                number_recorded = record["number"]
                found = Record(str(record["name"]), str(record["text"]),
                               float("nan") if number_recorded is None else float(number_recorded),
                               bool(record.get("reference", False)), number,
                               shown.rpartition(": ")[0] if isinstance(shown, str) else "")
            except (KeyError, TypeError, ValueError):
                problems.append(f"{describe_cell(number, cell)}: a result record is malformed ({record!r}); "
                                "run the post again with `make execute`")
                continue
            if not isinstance(shown, str) or found.text not in shown:
                problems.append(f"{describe_cell(number, cell)}: result {found.name} records {found.text!r} but "
                                f"the output shows {shown!r}; run the post again with `make execute`")
            if found.name in records:
                problems.append(f"{describe_cell(number, cell)}: result {found.name} is recorded twice (also in "
                                f"cell {records[found.name].cell}); give each result its own name")
            records[found.name] = found
    return records, problems


def settings(nb):
    """{name: value} of the parameters cell's plain numeric assignments."""
    cell = parameters_cell(nb)
    values = {}
    if cell is None:
        return values
    try:
        tree = ast.parse(joined(cell.source))
    except SyntaxError:
        return values
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values[node.targets[0].id] = value
    return values


# ---- where the reader reads -------------------------------------------------------------------------

def places(nb, post_dir=None):
    """Every text of the post a reader reads, in page order; included files too."""
    found = []
    matter = front_matter(nb) or {}
    for key in FRONT_MATTER_READ:
        values = matter.get(key)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                found.append(Place(f"cell 1 (front matter) {key}", str(value), bindable=False))
    for number, cell in enumerate(nb.cells, start=1):
        where = describe_cell(number, cell)
        if cell.cell_type in ("markdown", "raw"):
            source = joined(cell.source)
            prefix = ""
            if number == 1 and cell.cell_type == "markdown":
                head = FRONT_MATTER.match(source)
                prefix = head.group() if head else ""
            found.append(Place(where, source[len(prefix):], cell, prefix))
            found += included(source, where, post_dir)
        elif cell.cell_type == "code":
            try:
                options = cell_options(cell)
            except CellOptionsError:  # the cell-option check reports it
                options = {}
            for option in CAPTION_OPTIONS:
                values = options.get(option)
                for value in values if isinstance(values, list) else [values]:
                    if value is not None:
                        found.append(Place(f"{where} {option}", str(value), bindable=False))
    return found


def included(source, where, post_dir):
    """The files `{{< include >}}` pulls into the page: read like the cell, never rewritten."""
    found = []
    for match in re.finditer(r"\{\{<\s*include\s+([^\s>]+)\s*>\}\}", source):
        name = match.group(1).strip("\"'")
        path = Path(post_dir or ".") / name
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            found.append(Place(f"{where} include {name}", "", bindable=False, missing=True))
            continue
        found.append(Place(f"{where} include {name}", text, bindable=False))
    return found


# ---- markers ----------------------------------------------------------------------------------------

def bindings_in(text):
    """([Bound] for every result-like or marked number in `text`, [problems with the markers])."""
    numbers = numbers_in(text)
    problems, bound = [], {}
    for marker in MARKER.finditer(text):
        before = [number for number in numbers if number.end <= marker.start()]
        target = before[-1] if before else None
        gap = text[target.end:marker.start()] if target else ""
        if target is None or re.search(r"\d", MARKER.sub("", gap)) or "\n" in gap or len(gap) > MAX_GAP:
            problems.append(f"the marker {marker.group()} follows no number on its line (it must come right "
                            "after the number it binds)")
            continue
        if id(target) in bound:
            problems.append(f"{target.numeral} carries two markers ({marker.group()} and another); keep one")
            continue
        kind = "text" if marker.group("text") else marker.group("kind")
        bound[id(target)] = Bound(target, kind, marker.group("name") or "")
    for stray in MARKER_LIKE.finditer(text):
        if not MARKER.fullmatch(stray.group()):
            problems.append(f"{stray.group()} is not a marker; write <!--=name-->, <!--~name-->, <!--ref=name-->, "
                            "<!--ref~name-->, <!--set=name--> or <!--text-->")
    listed = [bound.get(id(number)) or Bound(number, "", "") for number in numbers
              if id(number) in bound or number.result_like]
    return listed, problems


# ---- the check --------------------------------------------------------------------------------------

def shown(number, text):
    """The number as the reader sees it, with its unit: "87.9 %"."""
    return text[number.start:number.unit_end].strip()


def problems_of(nb, post_dir=None):
    """[(where, problem)] for every number a reader reads that is not bound, or bound wrongly."""
    records, found = recorded_results(nb)
    problems = [("outputs", problem) for problem in found]
    values = settings(nb)
    for place in places(nb, post_dir):
        if place.missing:
            problems.append((place.where, "the included file cannot be read; its text would be on the page unchecked"))
            continue
        listed, marker_problems = bindings_in(place.text)
        problems += [(place.where, problem) for problem in marker_problems]
        for bound in listed:
            problem = binding_problem(bound, place, records, values)
            if problem:
                problems.append((place.where, problem))
    return problems


def binding_problem(bound, place, records, values):
    number, quoted = bound.number, shown(bound.number, place.text)
    if not place.bindable:
        if bound.kind:
            return (f"{quoted} carries a marker where none can be rewritten or hidden (front matter, a caption, "
                    "an included file); quote the result in the post's prose instead")
        return (f"{quoted} reads as a result, but the front matter, captions and included files cannot bind one; "
                "say it in the post's prose, where a marker can follow it")
    if not bound.kind:
        return f"{quoted} is not bound to the run: {HOW_TO_BIND}"
    if bound.kind == "text":
        if number.unit in ("%", "pp"):
            return (f"{quoted} is a share, which is a result, a setting or a reference: bind it to the "
                    "result() that prints it, or mark it set= or ref=")
        return None
    if bound.kind == "set=":
        return setting_problem(bound, quoted, values)
    record = records.get(bound.name)
    if record is None:
        close = difflib.get_close_matches(bound.name, list(records), n=3)
        return (f"{quoted} is bound to {bound.name}, which no result() of this run records"
                + (f" (did you mean {', '.join(close)}?)" if close else f" ({len(records)} results are recorded)"))
    return record_problem(bound, quoted, record)


def record_problem(bound, quoted, record):
    reference = bound.kind.startswith("ref")
    if record.reference != reference:
        return (f"{quoted} is marked {bound.kind}{bound.name}, but {record.name} is "
                + ("a reference value: mark it ref=" if record.reference else "this run's own result: mark it =")
                + " (or ~ to round)")
    if not same_unit(bound.number.unit, unit_of(record.text)):
        return (f"{quoted} is bound to {record.name}, which the run shows as {record.text}: "
                "the prose writes another unit")
    if bound.kind.endswith("="):
        if not shows_exactly(record, bound.number):
            rounding = bound.kind.replace("=", "~")
            return (f"{quoted} is bound to {record.name}, which the run shows as {record.text}; write it as shown, "
                    f"or round it with <!--{rounding}{record.name}-->")
        return None
    if rounded(record, bound.number) != bound.number.value:
        return (f"{quoted} is bound to {record.name} rounded, but the run shows {record.text}, which rounds to "
                f"{format_rounded(record, bound.number)} at the places written")
    return None


def shows_exactly(record, number):
    """Does the prose write the record's number as the run shows it: its value and its places
    ("97.0" for 97.0%, not "97"; "1.2 × 10⁻⁵" for 1.2e-05)?"""
    written = decimal_of(record.numeral)
    return written is not None and written == number.value and \
        written.as_tuple().exponent == number.value.as_tuple().exponent


def same_unit(quoted, recorded):
    """A share must be quoted as a share and a time in its unit; a plain ratio ("top / bottom 2.20") may be
    quoted as a multiple ("2.20 times"), and a multiple ("2.9x") as a plain ratio."""
    return quoted == recorded or {quoted, recorded} == {"", "x"}


def rounded(record, number):
    """The record's value rounded as the prose writes the number: its places, its scale word."""
    try:
        text = f"{record.number / 10 ** number.scale:.{number.places}f}"
        return Decimal(text).scaleb(number.scale)
    except (InvalidOperation, OverflowError, ValueError):
        return None


def format_rounded(record, number, commas=False):
    text = f"{record.number / 10 ** number.scale:{',' if commas else ''}.{number.places}f}"
    return text.replace("-", "\u2212") if number.numeral.startswith("\u2212") else text


def setting_problem(bound, quoted, values):
    if bound.name not in values:
        return (f"{quoted} is marked as the setting {bound.name}, which the parameters cell does not set to a number"
                + (f" (it sets {', '.join(sorted(values))})" if values else " (there is no parameters cell)"))
    if not is_setting(values[bound.name], bound.number):
        return f"{quoted} is marked as the setting {bound.name}, which the parameters cell sets to {values[bound.name]}"
    return None


def is_setting(value, number):
    """Does the prose write this setting's value: as it is (0.001, 128) or, as a share, ×100 (10 % for 0.1)?"""
    setting = Decimal(repr(value))
    return setting == number.value or number.unit == "%" and setting == number.value / 100


# ---- rewriting after a run --------------------------------------------------------------------------

def rewritten(text, records):
    """`text` with every bound result and reference replaced from `records`; and [(old, new)] sentences."""
    listed, _ = bindings_in(text)
    edits = []
    for bound in listed:
        record = records.get(bound.name) if bound.kind and bound.kind not in ("text", "set=") else None
        if record is None or record.reference != bound.kind.startswith("ref") or not record.numeral \
                or not math.isfinite(record.number):
            continue  # nothing to write from: make check names the binding
        new = record.numeral if bound.kind.endswith("=") else format_rounded(
            record, bound.number, commas="," in bound.number.numeral)
        if new != bound.number.numeral:
            edits.append((bound.number.start, bound.number.end, new))
    if not edits:
        return text, []
    changed = text
    for start, end, new in sorted(edits, reverse=True):
        changed = changed[:start] + new + changed[end:]
    return changed, changed_sentences(text, changed)


def sentences(text):
    visible = MARKER.sub("", text)
    return [" ".join(part.split()) for part in re.split(r"(?<=[.!?:])\s+|\n\s*\n", visible) if part.strip()]


def changed_sentences(old, new):
    before, after = sentences(old), sentences(new)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    pairs = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag != "equal":
            pairs.append((" ".join(before[a0:a1]), " ".join(after[b0:b1])))
    return pairs


def rewrite_notebook(nb):
    """Rewrite every bound number in the markdown and raw cells from the notebook's own records.

    Returns [(where, old sentence, new sentence)]; `nb` is changed in place."""
    records, _ = recorded_results(nb)
    changes = []
    for place in places(nb):
        if place.cell is None:
            continue
        text, pairs = rewritten(place.text, records)
        if pairs:
            place.cell.source = place.prefix + text
            changes += [(place.where, old, new) for old, new in pairs]
    return changes


# ---- proposing markers ------------------------------------------------------------------------------

@dataclass
class Proposal:
    where: str
    place: Place
    number: object
    fits: list  # (words shared with the sentence, marker) for each marker whose value fits, best first

    @property
    def markers(self):
        return [marker for _, marker in self.fits]

    @property
    def decided(self):
        """The best fit shares words with its sentence, and more of them than any other fit."""
        return bool(self.fits) and self.fits[0][0] > 0 and (len(self.fits) == 1 or self.fits[0][0] > self.fits[1][0])

    def context(self):
        text = self.place.text
        start, end = max(0, self.number.start - 40), min(len(text), self.number.unit_end + 25)
        return " ".join(MARKER.sub("", text[start:end]).split())


def proposals(nb):
    """A Proposal for each unbound result-like number in the markdown and raw cells."""
    records, _ = recorded_results(nb)
    values = settings(nb)
    found = []
    for place in places(nb):
        if place.cell is None:
            continue
        listed, _ = bindings_in(place.text)
        for bound in listed:
            if not bound.kind:
                sentence = sentence_around(place.text, bound.number)
                found.append(Proposal(place.where, place, bound.number,
                                      fitting_markers(bound.number, sentence, records, values)))
    return found


def sentence_span(text, number):
    """(start, end) of the sentence around `number` in `text`, markers included."""
    start = max(text.rfind(". ", 0, number.start), text.rfind("\n\n", 0, number.start), 0)
    ends = [end for end in (text.find(". ", number.unit_end), text.find("\n\n", number.unit_end)) if end != -1]
    return start, min(ends) if ends else len(text)


def sentence_around(text, number):
    start, end = sentence_span(text, number)
    return MARKER.sub("", text[start:end])


STOP_WORDS = set("a an the of in on at to for by and or is are was its it this that as with from than each "
                 "after before here run".split())


def word_stems(text):
    """Content words cut to five letters ("exactly" and "exact" meet): enough to see that a sentence and
    a record's name or label speak of the same thing."""
    return {word.lower()[:5] for word in re.findall(r"[A-Za-z]+", text.replace("_", " "))
            if word.lower() not in STOP_WORDS and len(word) > 2}


def fitting_markers(number, sentence, records, values):
    """The markers that fit the number, best first: equal value (exactly as shown, else a setting, else
    rounded), then most words shared between the sentence and the record's name and label."""
    exact, near = [], []
    words = word_stems(sentence)
    for record in records.values():
        prefix = "ref" if record.reference else ""
        if not same_unit(number.unit, unit_of(record.text)):
            continue
        shared = len(words & word_stems(f"{record.name} {record.label}"))
        if shows_exactly(record, number):
            exact.append((shared, f"<!--{prefix}={record.name}-->"))
        elif rounded(record, number) == number.value:
            near.append((shared, f"<!--{prefix}~{record.name}-->"))
    fitting_settings = [(len(words & word_stems(name)), f"<!--set={name}-->") for name, value in values.items()
                        if is_setting(value, number)]
    return sorted(exact or fitting_settings or near, key=lambda fit: -fit[0])


def with_markers(proposed):
    """Write the marker of each decided proposal; returns how many were written."""
    by_place = {}
    for proposal in proposed:
        if proposal.decided:
            by_place.setdefault(id(proposal.place), (proposal.place, []))[1].append(proposal)
    written = 0
    for place, items in by_place.values():
        text = place.text
        for proposal in sorted(items, key=lambda item: item.number.start, reverse=True):
            at = proposal.number.math_end if proposal.number.in_math else proposal.number.unit_end
            text = text[:at] + proposal.markers[0] + text[at:]
            written += 1
        place.cell.source = place.prefix + text
    return written
