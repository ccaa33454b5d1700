"""Numbers bound to the run: the prose names the result it quotes; the check is exact; re-runs rewrite it.

A cell records a result with the `result()` helper (_results.py): the output shows it and its
metadata keeps `{"name", "text", "number", "reference"}` under RESULT_KEY, inside the seal.
The prose follows each number it quotes with an invisible HTML comment, a *marker*:

    87.9 %<!--=exact-->      the run's result `exact`, exactly as recorded ("87.9%")
    88 %<!--~exact-->        the same, rounded to the places the prose writes
    87.3 %<!--ref=original-->, 87 %<!--ref~original-->   a reference value the run prints
    8<!--set=epochs-->       a setting, equal to the parameters cell's `epochs`
    48<!--text: patches per canvas-->   not a result, and what it is instead (a share cannot be marked so;
                             a bare <!--text--> is refused: it would excuse anything)

A marker binds the nearest number before it on its line, with no digit between them (its unit,
a closing `$` may be). Every other result-like number a reader reads (tools/numbers/prose_numbers.py)
is refused. Markers live only in markdown and raw cells, which `make execute` may rewrite;
front matter and cell-option captions cannot carry one, so they may not quote a result; they may
state a setting next to its name ("over 8 epochs" with `epochs = 8` in the parameters cell).
The values `{{< meta key >}}` and `{{< var key >}}` put on the page are read where they appear.
"""
import ast
import bisect
import difflib
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml

from tools.core.notebooks import (
    FRONT_MATTER, REPO_ROOT, CellOptionsError, cell_options, code_cells, describe_cell, front_matter, joined,
    parameters_cell,
)
from tools.numbers.prose_numbers import NUMBER, comment_spans, decimal_of, numbers_in, unit_of, without_comments

RESULT_KEY = "reading-digits/result"  # as _results.py writes it
MARKER = re.compile(r"<!--\s*(?:(?P<kind>=|~|ref=|ref~|set=)\s*(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|"
                    r"(?P<text>text)(?:\s*:\s*(?P<fact>[^<>\n]*?))?)\s*-->")
MARKER_LIKE = re.compile(r"<!--\s*(?:=|~|ref|set|text)")  # the start of a comment meant as a marker
MAX_GAP = 40  # characters between a number and its marker: its unit, a closing $, a word or two
FRONT_MATTER_READ = ("title", "subtitle", "description", "abstract", "image-alt", "categories", "keywords")
CAPTION_OPTIONS = ("fig-cap", "fig-alt", "fig-subcap", "tbl-cap", "tbl-subcap", "lst-cap", "cap")
HOW_TO_BIND = ("follow it with <!--=name--> naming the result() that prints it (`make bind POST=…` proposes "
               "names), or mark it <!--set=…-->, <!--ref=…--> or <!--text: what it is-->")
TEXT_HOW = "<!--text: what it is--> (say, <!--text: patches per canvas-->)"
VAGUE_FACTS = {"text", "number", "value", "fact", "result", "not", "none", "nothing", "constant", "misc", "other"}
SHORTCODE = re.compile(r"\{\{<\s*(meta|var|env)\s+([^\s>]+)\s*>\}\}")


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
    missing: bool = False     # an included file that cannot be read, a shortcode whose value cannot be known
    why: str = ""             # what to say of it then


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
            # A record shows nothing (its label travels in it); one made before that shows `label: text`.
            shown = joined(output.get("data", {}).get("text/plain")) if "label" not in record else None
            try:
                number_recorded = record["number"]
                label = record["label"] if shown is None else shown.rpartition(": ")[0] if isinstance(shown, str) else ""
                found = Record(str(record["name"]), str(record["text"]),
                               float("nan") if number_recorded is None else float(number_recorded),
                               bool(record.get("reference", False)), number, str(label))
            except (KeyError, TypeError, ValueError):
                problems.append(f"{describe_cell(number, cell)}: a result record is malformed ({record!r}); "
                                "run the post again with `make execute`")
                continue
            if shown is not None and (not isinstance(shown, str) or found.text not in shown):
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

def places(nb, post_dir=None, root=None):
    """Every text of the post a reader reads, in page order; included files and shortcode values too."""
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
    return found + shortcode_values(found, matter, post_dir, root)


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


def shortcode_values(found, matter, post_dir, root):
    """What `{{< meta key >}}` and `{{< var key >}}` put on the page, read where they stand; a value the
    check cannot know (a missing key, `{{< env >}}`) is refused."""
    values = []
    sources = {"meta": lambda: metadata_sources(matter, post_dir, root),
               "var": lambda: variables_source(root)}
    loaded = {}
    for place in found:
        for match in SHORTCODE.finditer(without_comments(place.text)):
            kind, key = match.group(1), match.group(2).strip("\"'")
            where = f"{place.where} {{{{< {kind} {key} >}}}}"
            if kind == "env":
                values.append(Place(where, "", bindable=False, missing=True,
                                    why="the value comes from the environment Quarto renders in, which the check "
                                        "cannot read; write the text itself"))
                continue
            if kind not in loaded:
                loaded[kind] = sources[kind]()
            value, why = looked_up(kind, key, loaded[kind])
            if why:
                values.append(Place(where, "", bindable=False, missing=True, why=why))
            elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
                values.append(Place(where, str(value), bindable=False))
            else:
                values.append(Place(where, yaml.safe_dump(value, allow_unicode=True, default_flow_style=True),
                                    bindable=False))
    return values


def metadata_sources(matter, post_dir, root):
    """[(name, mapping)] where Quarto finds a page's metadata: its front matter, then `_metadata.yml` in its
    folder and the folders above it, then the project's `_quarto.yml`."""
    sources = [("the front matter", matter)]
    root = Path(root or REPO_ROOT)
    folder = Path(post_dir) if post_dir else None
    for _ in range(3):
        if folder is None:
            break
        sources.append((f"{folder.name}/_metadata.yml", yaml_file(folder / "_metadata.yml")))
        if folder.resolve() == root.resolve():
            break
        folder = folder.parent
    sources.append(("_quarto.yml", yaml_file(root / "_quarto.yml")))
    return [(name, mapping) for name, mapping in sources if isinstance(mapping, dict)]


def variables_source(root):
    path = Path(root or REPO_ROOT) / "_variables.yml"
    if not path.exists():
        return None
    return yaml_file(path) if isinstance(yaml_file(path), dict) else "unreadable"


def yaml_file(path):
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError):
        return None


def looked_up(kind, key, source):
    """(value, None) of `key` ("a.b" looks inside a), or (None, why it cannot be read)."""
    if kind == "var":
        if source is None:
            return None, (f"there is no _variables.yml at the repository's root to give {key} a value (Quarto would "
                          f"print ?var:{key}); write the text itself")
        if source == "unreadable":
            return None, "_variables.yml at the repository's root is not a readable YAML mapping; fix it"
        sources = [("_variables.yml", source)]
    else:
        sources = source
    for _, mapping in sources:
        value, found = mapping, True
        for part in key.split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            else:
                found = False
                break
        if found:
            return value, None
    if kind == "var":
        return None, f"_variables.yml sets no {key} (Quarto would print ?var:{key}); add it or write the text itself"
    return None, (f"no key {key} in the front matter, a _metadata.yml or _quarto.yml (Quarto would print "
                  f"?meta:{key}); add it or write the text itself")


def repeated_keys(nb):
    """The keys the front matter gives twice, at any depth: YAML keeps the last without a word."""
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        return []
    head = FRONT_MATTER.match(joined(nb.cells[0].source))
    if not head:
        return []
    try:
        node = yaml.compose(head.group(1), Loader=yaml.SafeLoader)
    except (yaml.YAMLError, ValueError):
        return []  # the front matter check names it
    repeated, pending, visited = [], [(node, "")], set()
    while pending:
        node, path = pending.pop()
        if id(node) in visited:  # an alias: its keys were counted where its anchor stands (a: &x [*x] too)
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key, value in node.value:
                name = f"{path}{key.value}" if isinstance(key, yaml.ScalarNode) else None
                if name is not None and name in seen and name not in repeated:
                    repeated.append(name)
                if name is not None:
                    seen.add(name)
                pending.append((value, f"{name or path}."))
        elif isinstance(node, yaml.SequenceNode):
            pending += [(item, path) for item in node.value]
    return repeated


# ---- markers ----------------------------------------------------------------------------------------

def bindings_in(text):
    """([Bound] for every result-like or marked number in `text`, [problems with the markers])."""
    numbers = numbers_in(text)
    starts, ends = [number.start for number in numbers], [number.end for number in numbers]
    problems, bound, split = [], {}, set()
    for marker in MARKER.finditer(text):
        last = bisect.bisect_left(starts, marker.start()) - 1  # the last number that starts before it
        if last >= 0 and numbers[last].end > marker.start():
            problems.append(f"the marker {marker.group()} stands inside {numbers[last].read}, which is read whole; "
                            "put the marker after the number and its unit")
            split.add(id(numbers[last]))  # said once: not also "not bound"
            continue
        before = bisect.bisect_right(ends, marker.start())
        target = numbers[before - 1] if before else None
        gap = text[target.end:marker.start()] if target else ""
        if target is None or re.search(r"\d", MARKER.sub("", gap)) or "\n" in gap or len(gap) > MAX_GAP:
            problems.append(f"the marker {marker.group()} follows no number on its line (it must come right "
                            "after the number it binds)")
            continue
        if id(target) in bound:
            problems.append(f"{target.numeral} carries two markers ({marker.group()} and another); keep one")
            continue
        if marker.group("text"):
            bound[id(target)] = Bound(target, "text", " ".join((marker.group("fact") or "").split()))
        else:
            bound[id(target)] = Bound(target, marker.group("kind"), marker.group("name"))
    for start, end in comment_spans(text):
        stray = text[start:end]
        if MARKER_LIKE.match(stray) and not MARKER.fullmatch(stray):
            problems.append(f"{stray} is not a marker; write <!--=name-->, <!--~name-->, <!--ref=name-->, "
                            f"<!--ref~name-->, <!--set=name--> or {TEXT_HOW}")
    listed = [bound.get(id(number)) or Bound(number, "", "") for number in numbers
              if id(number) in bound or number.result_like and id(number) not in split]
    return listed, problems


# ---- the check --------------------------------------------------------------------------------------

def shown(number, text):
    """The number as the reader sees it, with its unit: "87.9 %"; and as written where that differs
    ("97.2 % (written &#57;7.2 %)")."""
    written = " ".join(without_comments(text[number.start:number.unit_end]).split())
    read = number.read or written
    if written == read or written.replace("\\", "") == read:  # a markdown or LaTeX escape: 99.9\%
        return written
    return f"{read} (written {written})"


def problems_of(nb, post_dir=None, root=None):
    """[(where, problem)] for every number a reader reads that is not bound, or bound wrongly."""
    records, found = recorded_results(nb)
    problems = [("outputs", problem) for problem in found]
    problems += [("cell 1 (front matter)", f"{key} is given twice; YAML keeps the last without a word, so the page "
                  "and the check could read different values: keep one") for key in repeated_keys(nb)]
    values = settings(nb)
    for place in places(nb, post_dir, root):
        if place.missing:
            problems.append((place.where, place.why or "the included file cannot be read; its text would be on the "
                             "page unchecked"))
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
                    "an included file, a shortcode's value); quote the result in the post's prose instead")
        if named_setting(number, place.text, values):
            return None
        return (f"{quoted} reads as a result, but the front matter, captions, included files and shortcode values "
                "cannot bind one; say it in the post's prose, where a marker can follow it (a setting may stand "
                "there next to its name: \"over 8 epochs\" for epochs = 8)")
    if not bound.kind:
        return f"{quoted} is not bound to the run: {HOW_TO_BIND}"
    if bound.kind == "text":
        return text_problem(bound, quoted, records, values)
    if bound.kind == "set=":
        return setting_problem(bound, quoted, values)
    record = records.get(bound.name)
    if record is None:
        close = difflib.get_close_matches(bound.name, list(records), n=3)
        return (f"{quoted} is bound to {bound.name}, which no result() of this run records"
                + (f" (did you mean {', '.join(close)}?)" if close else f" ({len(records)} results are recorded)"))
    return record_problem(bound, quoted, record)


def text_problem(bound, quoted, records, values):
    """A `text` mark excuses a number only by saying what it is, and never a share or a recorded result."""
    number, fact = bound.number, bound.name
    if number.unit in ("%", "pp"):
        return (f"{quoted} is a share, which is a result, a setting or a reference: bind it to the "
                "result() that prints it, or mark it set= or ref=")
    if not fact:
        if not number.result_like:
            return f"{quoted} does not read as a result and needs no marker: remove <!--text-->"
        return (f"{quoted} is marked <!--text--> without saying what it is: write {TEXT_HOW}, or bind it "
                "(<!--=name-->, <!--set=name-->)")
    named = fact.replace(" ", "_")
    if named in records:
        marker = ("ref" if records[named].reference else "") + "="
        return (f"{quoted} is marked <!--text: {fact}-->, but {named} is a result() this run records: bind it with "
                f"<!--{marker}{named}--> (or {marker.replace('=', '~')} to round)")
    if named in values and is_setting(values[named], number):
        return f"{quoted} is marked <!--text: {fact}-->, but it is the setting {named}: mark it <!--set={named}-->"
    words = [word for word in re.findall(r"[A-Za-z]{3,}", fact) if word.lower() not in VAGUE_FACTS]
    if not words:
        return f"{quoted} is marked <!--text: {fact}-->, which says nothing of what it is; write {TEXT_HOW}"
    return None


def named_setting(number, text, values):
    """The setting a number outside the prose states next to its name ("over 8 epochs", "batch size 128"):
    its value equal to the parameters cell's, a word of its name within three words of it."""
    if number.word:
        return None
    before = re.split(r"[\d.;:!?()]", without_comments(text[:number.start]))[-1].split()[-3:]
    after = re.split(r"[\d.;:!?()]", without_comments(text[number.unit_end:]))[0].split()[:3]
    near = word_stems(" ".join(before + after))
    for name, value in values.items():
        if near & word_stems(name) and is_setting(value, number):
            return name
    return None


def record_problem(bound, quoted, record):
    reference = bound.kind.startswith("ref")
    if record.reference != reference:
        return (f"{quoted} is marked {bound.kind}{bound.name}, but {record.name} is "
                + ("a reference value: mark it ref=" if record.reference else "this run's own result: mark it =")
                + " (or ~ to round)")
    if not same_unit(bound.number.unit, unit_of(record.text)):
        return (f"{quoted} is bound to {record.name}, which the run shows as {record.text}: "
                "the prose writes another unit")
    if too_precise(record, bound.number):
        return (f"{quoted} is bound to {record.name}, which the run shows as {record.text}: the prose writes more "
                "decimals than the run shows; quote it as shown, or fewer places with ~")
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


def too_precise(record, number):
    """Does the prose write more decimals than the run shows (97.23 for a record shown as 97.2%)?"""
    written = decimal_of(record.numeral)
    return written is not None and number.value.as_tuple().exponent < written.as_tuple().exponent


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
    except (ArithmeticError, ValueError):  # decimal's Overflow and InvalidOperation too
        return None


def format_rounded(record, number, commas=False):
    text = f"{record.number / 10 ** number.scale:{',' if commas else ''}.{number.places}f}"
    sign = number.numeral[:1]
    return text.replace("-", sign) if sign in ("\u2212", "\u2013") else text


def setting_problem(bound, quoted, values):
    if bound.name not in values:
        return (f"{quoted} is marked as the setting {bound.name}, which the parameters cell does not set to a number"
                + (f" (it sets {', '.join(sorted(values))})" if values else " (there is no parameters cell)"))
    if not is_setting(values[bound.name], bound.number):
        return f"{quoted} is marked as the setting {bound.name}, which the parameters cell sets to {values[bound.name]}"
    return None


def is_setting(value, number):
    """Does the prose write this setting's value: as it is (0.001, 128) or, as a share, ×100 (10 % for 0.1)?"""
    try:
        setting = Decimal(repr(value))
        return setting == number.value or number.unit == "%" and setting == number.value / 100
    except ArithmeticError:  # a value beyond any setting: 1e999999999
        return False


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
        elif rounded(record, number) == number.value and not too_precise(record, number):
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
