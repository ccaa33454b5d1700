"""Publishing checks: is every post fit to render as it is stored?

Quarto renders the outputs stored in each notebook and never runs code, so a
notebook can look finished while its outputs are stale, broken or from a toy run.
This tool refuses such a post, naming the post, the cell and what to do:

- a code cell that never ran, a figure cell with no image, an error output, or an
  empty code cell showing outputs (no run makes them, and the seal leaves it out);
- outputs that no longer match the seal `make execute` recorded: a stale cell (its
  code changed after it ran), outputs or images edited, provenance edited, a code
  cell added, deleted or moved after the run (tools/notebooks.py);
- a generated setup cell that differs from the helpers it inlines (`_style.py`, `_arch.py`, `_handwriting.py`);
- a sibling import (also through `importlib`, `__import__`, `runpy` or `%run`, or a
  repository file opened or run by name) or a `sys.path` edit (also through an alias
  or `getattr`); a cell that does not parse even after IPython's own transforms;
- front matter without title, description, date or categories, with an impossible
  date or a `draft` that is not a boolean, or without the generated Colab, GitHub
  and download links; a figure without a label, caption or alt text;
- a number quoted in the prose (raw cells and untagged fenced blocks too), a caption,
  alt text or the title/description that this run does not print in a matching
  context (see `check_prose_numbers`);
- a data download not pinned to a full 40-hex commit revision, however imported;
- a TODO placeholder left by `make new` in the prose, front matter or a caption;
- outputs from a smoke run (overridden parameters), with no provenance at all, or
  with provenance naming data the code never downloads;
- a post folder without `index.ipynb` (e.g. `Index.ipynb`), which every tool skips.

Exit status 0 when every post passes, 1 otherwise. A post whose front matter says
`draft: true` is left out of the site by Quarto: its problems are listed, marked
as a draft's, and do not fail the check until the draft mark is removed.
"""
import argparse
import ast
import datetime
import hashlib
import re
import shlex
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from tools.data_sources import HUB_DATA, STAND_IN_DATA, STAND_IN_SHA256
from tools.inline_helpers import setup_drift
from tools.post_links import links_drift, repository_url
from tools.printed import data_digests, printed_devices, printed_digests
from tools.reader_files import EXPORT_FLAG, EXPORTED, published_dir
from tools.notebooks import (
    INJECTED_TAG, NO_DOWNLOAD, POSTS_DIR, REPO_ROOT, CellOptionsError, NotebookError, blog_metadata, cell_key,
    cell_options, code_cells, compute_seal, describe_cell, download_calls, find_posts, folders_without_notebook,
    front_matter, has_tag, parse_cell, parse_problem, parsed_code_cells, post_name, prose_of, read_notebook,
    sealed_code_cells, sealed_metadata, unreadable_file,
)

PLACEHOLDER = "TODO"  # what `make new` leaves for the author to write
REQUIRED_FRONT_MATTER = ("title", "description", "date", "categories")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")
TEXT_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex")
FULL_REVISION = re.compile(r"[0-9a-f]{40}")
UNPINNED_URL = re.compile(r"huggingface\.co/[^\s\"']+/resolve/(?![0-9a-f]{40}/)[^\s/\"']+")


@dataclass
class Problem:
    post: str
    where: str
    what: str

    def __str__(self):
        return f"{self.post}: {self.where}: {self.what}"


def check_notebook(path, root=REPO_ROOT):
    """Every problem that keeps the notebook at `path` from being published."""
    return check_post(path, root)[1]


def check_post(path, root=REPO_ROOT):
    """Whether the post is a draft (Quarto leaves it out of the site), and its problems."""
    try:
        nb = read_notebook(path)
    except NotebookError as error:
        return False, [Problem(post_name(path), "notebook", str(error))]
    problems = []
    try:
        draft = (front_matter(nb) or {}).get("draft") is True  # `draft: "false"` is no draft mark: it is refused
    except NotebookError as error:  # YAML that does not parse, a date such as 2026-13-45: the other checks still run
        draft = False
        problems.append(Problem(post_name(path), "cell 1 (front matter)", str(error)))
    for check in (check_cell_options, check_front_matter, check_links, check_provenance, check_seal, check_execution,
                  check_outputs_against_provenance, check_published_reader, check_setup, check_imports,
                  check_figures, check_placeholders, check_revisions, check_prose_numbers):
        try:
            problems += [Problem(post_name(path), where, what) for where, what in check(nb, Path(path), root)]
        except CellOptionsError:
            continue  # check_cell_options named the cell; this check cannot run until it is fixed
        except NotebookError as error:
            if not any(problem.what == str(error) for problem in problems):  # the front matter's, said once
                problems.append(Problem(post_name(path), "notebook", str(error)))
        except (OSError, UnicodeDecodeError) as error:
            problems.append(Problem(post_name(path), "notebook", unreadable_file(error, nb)))
    return draft, problems


def check_cell_options(nb, path, root):
    for number, cell in code_cells(nb):
        try:
            cell_options(cell)
        except CellOptionsError as error:
            yield describe_cell(number, cell), str(error)


def check_front_matter(nb, path, root):
    matter = front_matter(nb)
    if matter is None:
        yield "cell 1", "no front matter: the first cell must be markdown starting with a --- YAML block"
        return
    missing = [key for key in REQUIRED_FRONT_MATTER if not matter.get(key)]
    if missing:
        yield "cell 1 (front matter)", f"missing {', '.join(missing)}"
    if "draft" in matter and not isinstance(matter["draft"], bool):
        yield "cell 1 (front matter)", (f"draft is {matter['draft']!r}, not a boolean: write draft: true or "
                                        "draft: false, unquoted (Quarto reads a quoted 'false' as a draft mark)")
    day = matter.get("date")
    if isinstance(day, str):
        try:
            datetime.date.fromisoformat(day)
        except ValueError:
            yield "cell 1 (front matter)", f"date {day!r} is not a real date; write it as YYYY-MM-DD"


def check_links(nb, path, root):
    if front_matter(nb) is not None:
        drift = links_drift(nb, path.parent, repository_url(root))  # the folder, so its thumbnail is compared too
        if drift:
            yield "cell 1 (front matter)", f"{drift}; run `make inline`"


def check_provenance(nb, path, root):
    provenance = blog_metadata(nb).get("provenance")
    if not provenance:
        yield "notebook", "no provenance: its outputs were not made by `make execute`; run it"
    elif provenance.get("parameters_overridden"):
        yield "notebook", (f"outputs are from a smoke run (parameters overridden: {provenance['parameters_overridden']}); "
                           "run `make execute` with the post's own parameters")
    else:
        data = provenance.get("data")
        downloads = download_calls(nb)
        if not downloads and data != NO_DOWNLOAD:
            yield "notebook", (f"provenance says the run read {data!r}, but no cell downloads anything; "
                               "run `make execute` (it records what the code reads)")
        elif downloads and data == NO_DOWNLOAD:
            yield "notebook", "provenance says nothing was downloaded, but the code downloads data; run `make execute`"
    for number, cell in code_cells(nb):
        if has_tag(cell, INJECTED_TAG):
            yield describe_cell(number, cell), "injected parameters cell from a smoke run; delete it and re-execute"


def check_outputs_against_provenance(nb, path, root):
    """What the provenance says of the run must be what its outputs print: the data it read (the
    digest its data cell printed) and the device it ran on (each `device: …` line)."""
    provenance = blog_metadata(nb).get("provenance")
    if not provenance or provenance.get("parameters_overridden"):
        return  # check_provenance says so
    data, digests = provenance.get("data"), data_digests(nb)
    stand_in = set(STAND_IN_SHA256.values())
    if data == STAND_IN_DATA and digests and not digests & stand_in:
        yield "notebook", (f"provenance says the run read the offline stand-in, but its data cell prints sha256 "
                           f"{min(digests)[:12]}…, which is not the stand-in's; run `make execute`")
    elif data == HUB_DATA and digests & stand_in:
        yield "notebook", ("provenance says the run read the Hugging Face Hub, but its data cell prints the offline "
                           f"stand-in's sha256 {min(digests & stand_in)[:12]}…; run `make execute`")
    recorded = str(provenance.get("device", "")).split(":")[0].split(",")[0].strip().lower()
    other = sorted(kind for kind in printed_devices(nb) if kind != recorded)
    if recorded and other:
        yield "notebook", (f"provenance says the run computed on {recorded}, but its outputs print device "
                           f"{', '.join(other)}; run `make execute`")


def check_published_reader(nb, path, root):
    """The post that exports the live reader's model: the files the page serves (reader/model/) must be
    the ones its stored run printed the digests of."""
    if blog_metadata(nb).get(EXPORT_FLAG) is not True:
        return
    printed, folder = printed_digests(nb), published_dir(root)
    for name in EXPORTED:
        published = folder / name
        shown = published.relative_to(root).as_posix() if published.is_relative_to(root) else str(published)
        if not published.is_file():
            yield "notebook", f"{shown} is missing: the live reader serves this post's model; run `make reader-model`"
            continue
        digest = hashlib.sha256(published.read_bytes()).hexdigest()
        if digest not in printed.get(name, set()):
            said = "prints no digest for it" if name not in printed else "prints another digest for it"
            yield "notebook", (f"{shown} (sha256 {digest[:12]}…) is not the file this post's stored run made (its "
                               f"outputs' `  {name}  sha256 …` line {said}); run `make reader-model`, or "
                               "`make execute` first if the post changed")


def check_seal(nb, path, root):
    """Do the outputs, their order and the provenance still match what `make execute` sealed?"""
    if not blog_metadata(nb).get("provenance"):
        return  # check_provenance says so
    seal = blog_metadata(nb).get("seal")
    if not isinstance(seal, dict) or not isinstance(seal.get("cells"), list):
        yield "notebook", "no seal over its outputs: they were not made by this project's `make execute`; run it"
        return
    recorded = {entry.get("id"): (position, entry) for position, entry in enumerate(seal["cells"])
                if isinstance(entry, dict)}
    if recorded and not any("metadata_sha256" in entry for _, entry in recorded.values()):
        yield "notebook", ("sealed by an older `make execute`, which left the cells' metadata (tags, options Quarto "
                           "reads) out of the seal; run `make execute`")
        return
    now = compute_seal(nb)
    current = [(cell_key(position, cell), number, cell, entry) for position, ((number, cell), entry)
               in enumerate(zip(sealed_code_cells(nb), now["cells"]))]
    renamed = renamed_cells(current, recorded)
    found = [(describe_cell(number, cell), f"its id changed after the run (it ran as {renamed[key]}); run `make execute`")
             for key, number, cell, _ in current if key in renamed]
    current = [(renamed.get(key, key), *rest) for key, *rest in current]
    found += sealed_cell_problems(current, recorded)
    found += deleted_cells(current, seal["cells"])
    found += moved_cells(current, recorded)
    if now["provenance_sha256"] != seal.get("provenance_sha256"):
        found.append(("notebook", "provenance edited after the run (device, data, parameters, versions or times "
                                  "differ from what was sealed); run `make execute`"))
    if not found and now["sha256"] != seal.get("sha256"):
        found.append(("notebook", "the seal itself was edited; run `make execute`"))
    yield from found


def sealed_cell_problems(current, recorded):
    for key, number, cell, entry in current:
        where = describe_cell(number, cell)
        if cell.execution_count is None:
            continue  # check_execution: it never ran
        if key not in recorded:
            yield where, "added after the run: the seal has no such code cell; run `make execute`"
        elif recorded[key][1].get("source_sha256") != entry["source_sha256"]:
            yield where, "stale: its code changed after it ran; run `make execute`"
        elif recorded[key][1].get("sha256") != entry["sha256"]:
            yield where, "outputs edited after the run: its text or images differ from what ran; run `make execute`"
        elif recorded[key][1].get("metadata_sha256") != entry["metadata_sha256"]:
            changed = ", ".join(sorted(sealed_metadata(cell))) or "all of it removed"
            yield where, (f"metadata edited after the run (now: {changed}): Quarto reads tags such as remove-cell "
                          "and options such as output from it, so it could hide or change what ran; "
                          "undo the edit, or run `make execute`")


def deleted_cells(current, sealed):
    present = {key: number for key, number, _, _ in current}
    last_seen = None
    for entry in sealed:
        key = entry.get("id") if isinstance(entry, dict) else None
        if key in present:
            last_seen = present[key]
            continue
        place = f"after cell {last_seen}" if last_seen else "before the first code cell"
        yield "notebook", (f"a code cell that ran ({place}, id {key}) was deleted after the run; "
                           "later cells' outputs may depend on it: run `make execute`")


def renamed_cells(current, recorded):
    """{id now: id it ran as} for cells whose id alone changed: same source and outputs as a sealed cell now missing."""
    present = {key for key, *_ in current}
    missing = {entry.get("sha256"): key for key, (_, entry) in recorded.items() if key not in present}
    return {key: missing[entry["sha256"]] for key, _, _, entry in current
            if key not in recorded and entry["sha256"] in missing}


def moved_cells(current, recorded):
    """The fewest cells whose moves explain the new order: those off the longest run still in sealed order."""
    kept = [(recorded[key][0], key, number, cell) for key, number, cell, _ in current if key in recorded]
    in_order = longest_increasing(kept)
    number_of = {key: number for _, key, number, _ in kept}
    sealed_order = sorted(recorded, key=lambda key: recorded[key][0])
    for position, key, number, cell in kept:
        if key in in_order:
            continue
        before = next((sealed_order[earlier] for earlier in range(position - 1, -1, -1)
                       if sealed_order[earlier] in number_of), None)
        ran = f"right after cell {number_of[before]}" if before else "before every other code cell"
        yield describe_cell(number, cell), f"moved after the run: it ran {ran}; run `make execute`"


def longest_increasing(kept):
    """The keys of a longest subsequence of `kept` whose sealed positions increase (n is small: quadratic is fine)."""
    best = []
    for index, (position, key, *_) in enumerate(kept):
        longest = max((chain for chain in best[:index] if kept[chain[-1]][0] < position), key=len, default=[])
        best.append(longest + [index])
    return {kept[index][1] for index in max(best, key=len, default=[])}


def check_execution(nb, path, root):
    for number, cell in code_cells(nb):
        where = describe_cell(number, cell)
        if not cell.source.strip():
            if cell.outputs:  # no run prints from an empty cell, and the seal leaves empty cells out
                yield where, "an empty code cell shows outputs, which no run makes; clear them, then `make execute`"
            continue
        if cell.execution_count is None:
            yield where, "has no outputs: it never ran; run `make execute`"
            continue
        for output in cell.outputs:
            if output.output_type == "error":
                yield where, f"error output {output.ename}: {output.evalue}"
            elif output.output_type == "stream" and output.name == "stderr" and "Traceback" in output.text:
                yield where, "a traceback was printed to stderr"


def check_setup(nb, path, root):
    for name in blog_metadata(nb).get("helpers", []):
        helper = Path(root) / str(name)
        try:
            helper.read_text(encoding="utf-8")
        except FileNotFoundError:
            yield "setup cell", f"helper {name} is missing from {root}; restore it (`git checkout -- {name}`)"
            return
        except UnicodeDecodeError as error:
            yield "setup cell", f"helper {name} is not UTF-8 text (byte {error.start}: {error.reason}); save it as UTF-8"
            return
    drift = setup_drift(nb, root)
    if drift:
        yield "setup cell", f"{drift}; run `make inline`, then `make execute`"


IMPORT_FUNCTIONS = {"importlib.import_module", "__import__", "importlib.__import__", "runpy.run_module"}
SIBLING_FILE = re.compile(r"(?:[\w.-]*/)*(\w+)\.py")  # "_style.py", "../../_style.py": a repository file
PATH_EDITORS = {"site.addsitedir"}
SIBLING_MAGICS = {"run", "load"}  # `%run x.py` executes a file beside the post; `%load` pastes one in


def check_imports(nb, path, root):
    siblings = sibling_modules(path.parent, root)
    parsed, names = parsed_code_cells(nb)
    for number, cell, tree in parsed:
        where = describe_cell(number, cell)
        if tree is None:
            yield where, parse_problem(cell.source)
            continue
        for node in ast.walk(tree):
            yield from ((where, what) for what in import_problems(node, names, siblings))


def import_problems(node, names, siblings):
    """What this syntax node does that a lifted-out notebook could not: import a sibling, edit sys.path."""
    if isinstance(node, ast.ImportFrom) and node.level:
        yield "relative import: a post must not import from beside itself"
    imported = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
        [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
    if isinstance(node, ast.Call):
        called = names.qualified(node.func)
        if called in IMPORT_FUNCTIONS:
            argument = node.args[0] if node.args else None
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                imported.append(argument.value)
            else:
                yield f"{called}(…) with a computed module name: no check can see what it imports; import by name"
        elif called in PATH_EDITORS:
            yield f"calls {called}: a lifted-out notebook must run without the repository"
        yield from magic_problems(node, siblings)
        yield from sibling_file_problems(node, siblings)
    for name in imported:
        if name.split(".")[0] in siblings:
            yield f"imports sibling module {name!r}: declare it in blog.helpers and `make inline`"
    if is_sys_path(node, names):
        yield "edits sys.path: a lifted-out notebook must run without the repository"


def magic_problems(call, siblings):
    """`%run sibling.py` and friends, as IPython's transformer writes them: get_ipython().run_line_magic(…)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "run_line_magic" and len(call.args) >= 2):
        return
    magic, line = (arg.value if isinstance(arg, ast.Constant) else None for arg in call.args[:2])
    if magic in SIBLING_MAGICS:
        target = magic_target(line or "")
        yield (f"%{magic} {target or '…'}: runs another file, which a lifted-out notebook lacks; "
               "inline what it needs instead (blog.helpers and `make inline`)")


def sibling_file_problems(call, siblings):
    """`exec(open("_style.py").read())`, `runpy.run_path("../../_arch.py")`: a sibling run by its file name."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "run_line_magic":
        return  # magic_problems names it
    shell = isinstance(call.func, ast.Attribute) and call.func.attr in ("system", "getoutput")  # `!python x.py`
    for argument in call.args:
        text = argument.value if isinstance(argument, ast.Constant) and isinstance(argument.value, str) else ""
        named = [SIBLING_FILE.fullmatch(word) for word in (text.split() if shell else [text])]
        if any(match and match.group(1) in siblings for match in named):
            yield (f"runs or opens {argument.value!r}, a file of the repository that a lifted-out notebook lacks; "
                   "inline what it needs instead (blog.helpers and `make inline`)")


def magic_target(line):
    """The file (or `-m` module) a `%run` line names: its first argument that is not an option."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    takes_value = {"-N", "-p", "-G", "-t"}
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "-m":
            continue
        elif word in takes_value:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


def sibling_modules(post_dir, root):
    """Module names a notebook must not import: anything living in the repository or beside the post."""
    return {file.stem for folder in (root, post_dir) for file in folder.glob("*.py")} | {
        folder.name for folder in root.iterdir() if (folder / "__init__.py").exists()}


def is_sys_path(node, names):
    """True for `sys.path.append(...)`, `sys.path += ...`, `sys.path = ...`, `sys.path[0:0] = ...`, under any alias."""
    def names_sys_path(target):
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Call) and names.qualified(target.func) == "getattr" and len(target.args) >= 2:
            owner, attribute = target.args[:2]  # getattr(sys, "path")
            return names.qualified(owner) == "sys" and isinstance(attribute, ast.Constant) and attribute.value == "path"
        return names.qualified(target) == "sys.path"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return names_sys_path(node.func.value)
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(names_sys_path(target) for target in targets)
    return False


def check_figures(nb, path, root):
    for number, cell in code_cells(nb):
        where = describe_cell(number, cell)
        options = cell_options(cell)
        has_image = any(kind in output.get("data", {}) for output in cell.outputs for kind in IMAGE_TYPES)
        is_figure = str(options.get("label", "")).startswith("fig-")
        if has_image:
            missing = [name for name, ok in (("a `#| label: fig-…`", is_figure), ("fig-cap", options.get("fig-cap")),
                                             ("fig-alt", options.get("fig-alt"))) if not ok]
            if missing:
                yield where, f"figure without {', '.join(missing)}"
        elif is_figure and cell.execution_count is not None:
            yield where, f"figure cell {options['label']} shows no image"
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "markdown" and re.search(r"!\[\s*\]\(", cell.source):
            yield describe_cell(number, cell), "image without alt text: write it inside ![…]"


def check_placeholders(nb, path, root):
    """Text that `make new` left for the author to write: in prose, front matter and figure captions."""
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "markdown" and PLACEHOLDER in cell.source:
            yield describe_cell(number, cell), f"placeholder {PLACEHOLDER} left in the text; write it"
        elif cell.cell_type == "code":
            unwritten = [name for name, value in cell_options(cell).items() if PLACEHOLDER in str(value)]
            if unwritten:
                yield describe_cell(number, cell), f"placeholder {PLACEHOLDER} left in {', '.join(unwritten)}; write it"


def check_revisions(nb, path, root):
    literals = string_assignments(cell for _, cell in code_cells(nb))
    for number, cell in code_cells(nb):
        for url in UNPINNED_URL.findall(cell.source):
            yield describe_cell(number, cell), f"download URL not pinned to a 40-hex commit: {url}"
    for number, cell, call, name in download_calls(nb):
        reason = unpinned_reason(call, literals)
        if reason:
            yield describe_cell(number, cell), f"{name}(…) {reason}"


def string_assignments(cells):
    """{name: [string values]} for `NAME = "…"` anywhere in the notebook's code."""
    values = {}
    for cell in cells:
        tree = parse_cell(cell.source)
        for node in ast.walk(tree) if tree else []:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        value = node.value.value if isinstance(node.value, ast.Constant) else None
                        values.setdefault(target.id, []).append(value)
    return values


def unpinned_reason(call, literals):
    """Why this download call is not pinned, or None when it is."""
    revision = next((keyword.value for keyword in call.keywords if keyword.arg == "revision"), None)
    if revision is None:
        return "has no revision=: pin it to a full 40-hex commit"
    if isinstance(revision, ast.Constant):
        values = [revision.value]
    elif isinstance(revision, ast.Name) and revision.id in literals:
        values = literals[revision.id]
    else:
        return "revision= must be a 40-hex string, or a name assigned one"
    bad = [value for value in values if not (isinstance(value, str) and FULL_REVISION.fullmatch(value))]
    return f"revision {bad[0]!r} is not a full 40-hex commit" if bad else None


# ---- Prose numbers in context ---------------------------------------------------------------
#
# A number the prose states as a result (a percentage, a decimal, a count written with
# thousands separators, a count such as "241 of 2,000", a ratio such as "2.9x", a time
# such as "25 seconds") must be printed by this run:
#   1. in the same form: a percentage as a percentage, a time with the same unit, a plain
#      number as a plain number; one the prose marks as rounded ("about 97 %") may be a
#      printed one rounded to the digits it shows;
#   2. in a matching context: at least one content word of the sentence that quotes it (or
#      of the sentence before, in the same paragraph) names the printed number: it is in the
#      number's own label on its line (`label_words`), in a title line above it in the same
#      output, or in a table header over its column (`words_above`);
#   3. as this run's own figure: an occurrence labelled as a reference value (after
#      "original", "paper", "reference" or "published" on its line, or in a table column
#      headed so) counts only when the prose says so too, in the same clause;
#   4. a time only as a budget: wall-clock times change on every run, so prose quotes a
#      time only where the notebook prints it as a budget ("within the 10 min budget").
# Small plain integers (settings, counts of layers, list numbers), years, dates, versions
# (2.13.0, "PyTorch 2.0"), "section 3.2", "Figure 2", sizes such as 7×7 or 28×84, fractions
# such as 1/255, and anything in code, links, citations or LaTeX math are not results.

TIME_UNITS = {"ms": "ms", "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
              "min": "min", "mins": "min", "minute": "min", "minutes": "min",
              "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h"}
NUMBER = re.compile(r"(?<![\w.,/^×$\\\u2212-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d,]\d|\.\d|[×/^:]\d|-\d|_)")
PERCENT_WORDS = ("per cent", "percent")
SUFFIX = re.compile(r"[ \u00a0\u202f-]?(%|[x×](?![\w]|\s*\d)|(?:" + "|".join(
    sorted([*TIME_UNITS, *PERCENT_WORDS], key=len, reverse=True)) + r")\b)")
COUNT = re.compile(r"[ \u00a0]of[ \u00a0](\d{1,3}(?:,\d{3})+|\d+)\b")
NOT_RESULTS_AFTER = {
    "section", "sections", "sec", "figure", "figures", "fig", "table", "tables", "chapter", "chapters", "part",
    "step", "steps", "equation", "eq", "version", "versions", "release", "python", "pytorch", "torch", "numpy",
    "matplotlib", "quarto", "cuda", "cudnn", "jupyter", "ipython", "node", "nbformat", "onnx", "opset", "post",
    "ipykernel", "nbclient", "huggingface_hub", "visualtorch", "transformers", "onnxruntime", "onnxruntime-web",
    "posts", "page", "pages", "line", "lines", "cell", "cells", "chrome", "chromium", "ubuntu", "debian", "macos",
}
REFERENCE_WORDS = {"original", "paper", "reference", "published"}
BUDGET_WORDS = r"(?:budget|limit)"
STOPWORDS = set("""
a an the and or but nor of in on at to for from by with without into onto over under than then that this these
those there here it its is are was were be been being has have had do does did not no yes so as if when while
after before about above below each every all any some most more less one two three four five six seven eight
nine ten our we you your they their them he she his her what which who whom whose how why where up down out off
only also just very much many such same own can could would should may might must will shall per via run runs
ran get gets got makes made see seen shows show""".split())


@dataclass
class Quoted:
    """A number as the prose or an output writes it: its value, its form, and where it stands."""
    value: str       # without thousands separators: "2000", "87.9"
    form: str        # "plain", "%", "x", or a time unit ("s", "min", …)
    text: str        # as written: "2,000", "87.9 %"
    start: int
    end: int


def numbers_in(text, results_only):
    """The numbers in `text` with their forms; with `results_only`, just those prose states as results."""
    found = []
    for match in NUMBER.finditer(text):
        whole, fraction = match.group(1), match.group(2) or ""
        suffix = SUFFIX.match(text, match.end())
        if text[match.end():match.end() + 1].isalpha() and not suffix:
            continue  # part of a name or a code: 3rd, 2D, 10k, v2
        unit = suffix.group(1) if suffix else ""
        form = "%" if unit in ("%", *PERCENT_WORDS) else "x" if unit in ("x", "×") else TIME_UNITS.get(unit, "plain")
        end = suffix.end() if suffix else match.end()
        number = Quoted(whole.replace(",", "") + fraction, form, text[match.start():end], match.start(), end)
        if not results_only or states_result(text, number, whole, fraction):
            found.append(number)
    return found


def states_result(text, number, whole, fraction):
    before = re.findall(r"[A-Za-z][\w.-]*", text[max(0, number.start - 30):number.start])
    if before and before[-1].lower().rstrip(".") in NOT_RESULTS_AFTER:
        return False
    if number.form != "plain" or fraction or "," in whole:
        return True
    counted = COUNT.match(text, number.end)  # "241 of 2,000": both sides are results
    counting = re.search(r"\d[ \u00a0]of[ \u00a0]$", text[:number.start])
    return bool(counted or counting)


def quoted_numbers(text):
    """The result-like numbers in prose, normalised (no thousands separators)."""
    return [number.value for number in numbers_in(readable_prose(text), results_only=True)]


# Fenced blocks a reader sees as text, not code: untagged ones look like an output, raw HTML is page text.
SHOWN_FENCES = {"", "text", "txt", "output", "{=html}"}


def readable_prose(markdown):
    """Markdown with what is not prose blanked out: code, math, raw HTML tags, link targets, URLs, citations."""
    markdown = re.sub(r"```[ \t]*([^\n`]*)\n(.*?)```", lambda fence: fence.group(2) if fence.group(1).strip().lower()
                      in SHOWN_FENCES else " ", markdown, flags=re.DOTALL)
    for pattern in (r"```.*?```", r"\$\$.*?\$\$", r"<!--.*?-->"):
        markdown = re.sub(pattern, " ", markdown, flags=re.DOTALL)
    markdown = re.sub(r"\{[^}\n]*\}", lambda attributes: " ".join(  # Quarto attributes: only fig-cap/alt are read
        re.findall(r'(?:fig-cap|fig-alt|alt|title)="([^"]*)"', attributes.group())) or " ", markdown)
    markdown = re.sub(r"`[^`]*`", " ", markdown)
    markdown = re.sub(r"(?<!\\)\$[^$\n]+\$", lambda math: " ".join(  # math is not prose, but "$99.9\\%$" is a result
        f"{value} %" for value in re.findall(r"(\d[\d.,]*)\s*\\%", math.group())) or " ", markdown)
    for pattern in (r"<[^>]+>", r"https?://\S+"):
        markdown = re.sub(pattern, " ", markdown)
    markdown = re.sub(r"\]\([^)]*\)", "]", markdown)
    return re.sub(r"\[@[^\]]*\]|@[\w:-]+", " ", markdown)


def word_keys(text):
    """Content words, reduced so that 'trained', 'training' and 'trains' meet: a crude stem, five letters."""
    keys = set()
    for word in re.findall(r"[a-z]+", text.lower()):
        if len(word) < 3 or word in STOPWORDS:
            continue
        for suffix in ("ing", "ed", "s"):
            if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        keys.add(word[:5])
    return keys


@dataclass
class Printed:
    """One printed occurrence of a number, with what a reader sees around it."""
    number: Quoted
    line: str
    context: set
    reference: bool
    budget: bool


def printed_occurrences(nb):
    """Every number every output prints, with its line, its context words and whether it is a reference value."""
    found = []
    for _, cell in code_cells(nb):
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")] + [output.get("data", {}).get(kind, "") for kind in TEXT_TYPES]
            for text in texts:
                found += occurrences_in("".join(text) if isinstance(text, list) else str(text))
    return found


def occurrences_in(text):
    found, headers, reference_columns, bracketed = [], [], [], False
    for line in text.splitlines():
        numbers = numbers_in(line, results_only=False)
        labels = [label_words(line, numbers, index) for index in range(len(numbers))]
        for index, number in enumerate(numbers):
            context = counted_label(line, numbers, labels, index) | words_above(headers, number)
            reference = labelled_reference(line, number, reference_columns, bracketed)
            found.append(Printed(number, line, context, reference, is_budget(line, number)))
        reference_columns += header_reference_columns(line)
        bracketed = bracketed or bool(re.search(r"\b(original|paper|reference)\b.*\b(bracket|parenthes)", line, re.I))
        if not line.strip():
            headers = []  # a blank line ends a table, and its header with it
        elif len(headers) < MAX_HEADER_LINES and all(number.value.isdigit() for number in numbers):
            headers.append(header_words(line))  # no measured value on it: a title or a header ("epoch 10  epoch 20")
    return found


def label_words(line, numbers, index):
    """The words that name one printed number: those since the number before it ("loss 0.41"), and those
    right after it up to a column gap or a comma ("534,348 parameters"); the whole line when both are empty.

    `loss 0.412  held-out accuracy 88.2 %`: 0.412 is named by "loss" only, so prose calling it an
    accuracy finds no printed label that says so.
    """
    number = numbers[index]
    since = line[numbers[index - 1].end if index else 0:number.start]
    until = numbers[index + 1].start if index + 1 < len(numbers) else len(line)
    after = re.split(r"\s{2,}|[,;:(|]", line[number.end:until], maxsplit=1)[0]
    return word_keys(since + " " + after) or word_keys(line)


def counted_label(line, numbers, labels, index):
    """"241 of 2,000 canvases" is one phrase: both numbers share its words."""
    label = set(labels[index])
    if index + 1 < len(numbers) and COUNT.match(line, numbers[index].end):
        label |= labels[index + 1]
    if index and COUNT.match(line, numbers[index - 1].end):
        label |= labels[index - 1]
    return label


MAX_HEADER_LINES = 8  # titles and headers come first; a long log of plain integers adds no more


def header_words(line):
    """A line above others that holds no measured value: a title (no column gaps) as (None, its words),
    or a table header as its labels, each with the columns it spans: [(start, end, words), …]."""
    if not re.search(r"\S\s{2,}\S", line.strip()):
        return None, word_keys(line)
    return [(match.start(), match.end(), word_keys(match.group())) for match in re.finditer(r"\S+", line)], set()


def words_above(headers, number):
    """Context from the title and header lines above it in the same block of an output: a title names
    everything under it; a table header names only the column it stands over."""
    words = set()
    for labels, title in headers:
        words |= title
        words = words.union(*(keys for start, end, keys in labels or [] if start <= number.end and number.start <= end))
    return words


def labelled_reference(line, number, reference_columns, bracketed):
    """Is this printed number a reference value rather than this run's own?"""
    before = line[:number.start]
    marker = None
    for match in re.finditer(r"\b(" + "|".join(REFERENCE_WORDS) + r")\b", before, re.I):
        marker = match
    if marker:
        opened = before.rfind("(", 0, marker.start())
        closed = before.rfind(")", marker.end())
        inside_finished_brackets = opened != -1 and before.find(")", marker.end()) != -1 and closed != -1
        if not inside_finished_brackets:
            return True
    if any(start < number.end and number.start < end for start, end in reference_columns):
        return True
    return bracketed and before.count("(") > before.count(")")


def header_reference_columns(line):
    """Column spans of a table header whose label names a reference ('original run'), if the line is a header."""
    if numbers_in(line, results_only=False) and not re.search(r"\s{2,}", line):
        return []
    columns = []
    for match in re.finditer(r"\S+(?: \S+)*", line):
        if word_keys(match.group()) & {word[:5] for word in REFERENCE_WORDS} or \
                re.search(r"\b(" + "|".join(REFERENCE_WORDS) + r")\b", match.group(), re.I):
            columns.append((match.start(), match.end()))
    return columns


def is_budget(line, number):
    """Is this printed time the budget itself ("the 10 min budget", "budget: 10 min"), not a time beside one?

    "took 7.5 min (budget 10 min)": only 10 is the budget; 7.5 was measured.
    """
    before, after = line[:number.start].lower(), line[number.end:].lower()
    return bool(re.search(BUDGET_WORDS + r"\W*(?:of\W*)?$", before) or
                re.match(r"[ \t-]*(?:[a-z]+[ \t-]+)?" + BUDGET_WORDS, after))


def prose_sentences(text):
    """(sentence, the sentence before it in its paragraph) for each sentence of readable prose."""
    pairs = []
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.|\|)\s)", text):
        sentences = re.split(r"(?<=[.!?])\s+(?=[^a-z\s])", " ".join(paragraph.split()))
        pairs += list(zip(sentences, [""] + sentences[:-1]))
    return pairs


def quote_problem(number, sentence, previous, printed):
    """Why this quoted number is not backed by a printed one in matching context, or None."""
    same_value = [occurrence for occurrence in printed if occurrence.number.value == number.value or
                  hedged(sentence, number) and rounds_to(occurrence.number.value, number.value)]
    if not same_value:
        return f"prose quotes {number.text}, which no output prints"
    same_form = [occurrence for occurrence in same_value if occurrence.number.form == number.form]
    if not same_form:
        forms = ", ".join(sorted({occurrence.number.text for occurrence in same_value}))
        return f"prose quotes {number.text}, which outputs print only in another form ({forms}); quote it as printed"
    if number.form in TIME_UNITS.values():
        if not any(occurrence.budget for occurrence in same_form):
            return (f"prose quotes the time {number.text}: wall-clock times change on every run, so prose may quote "
                    "only a budget the notebook prints on a stable line (e.g. 'within the 10 min budget')")
        return None
    clause = next((part for part in sentence.split(";") if number.text in part), sentence)
    says_reference = bool(word_keys(clause) & {word[:5] for word in REFERENCE_WORDS})
    eligible = same_form if says_reference else [occurrence for occurrence in same_form if not occurrence.reference]
    if not eligible:
        return (f"prose quotes {number.text}, which outputs print only as a reference value (original run, paper): "
                "say so in the same sentence, or quote this run's own figure")
    words = word_keys(sentence) | word_keys(previous)
    if not any(occurrence.context & words for occurrence in eligible):
        return (f"prose quotes {number.text}, but no printed label of it shares a word with the sentence "
                f"around it (printed: {eligible[0].line.strip()[:60]!r}); quote it where the output says what it is")
    return None


HEDGES = r"\b(?:about|around|roughly|nearly|almost|approximately|some)\b|[~≈]"


def hedged(sentence, number):
    """Does the prose say the number is rounded ("about 97 %", "between about 92 and 97 %")?"""
    start = sentence.find(number.text)
    return start != -1 and bool(re.search(HEDGES, " ".join(sentence[:start].split()[-4:]), re.I))


def rounds_to(printed, quoted):
    """Is the printed value the quoted one rounded to the quoted precision (96.6 -> 97, 0.6508 -> 0.65)?"""
    places = len(quoted.partition(".")[2])
    try:
        rounded = Decimal(printed).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except ArithmeticError:
        return False
    return rounded == Decimal(quoted)


def prose_texts(nb):
    """(where, text) for everything a reader reads as prose: title, description, markdown, captions, alt text."""
    matter = front_matter(nb) or {}
    texts = [("cell 1 (front matter)", f"{matter.get(key)}.") for key in ("title", "description") if matter.get(key)]
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "markdown":
            texts.append((describe_cell(number, cell), prose_of(cell)))
        elif cell.cell_type == "raw":  # Quarto passes a raw cell's text into the page as it is
            texts.append((describe_cell(number, cell), cell.source))
        elif cell.cell_type == "code":
            for option in ("fig-cap", "fig-alt"):
                value = cell_options(cell).get(option)
                if value:
                    value = " ".join(map(str, value)) if isinstance(value, list) else str(value)
                    texts.append((f"{describe_cell(number, cell)} {option}", value))
    return texts


def check_prose_numbers(nb, path, root):
    printed = printed_occurrences(nb)
    for where, text in prose_texts(nb):
        reported = set()
        for sentence, previous in prose_sentences(readable_prose(text)):
            for number in numbers_in(sentence, results_only=True):
                problem = quote_problem(number, sentence, previous, printed)
                if problem and problem not in reported:
                    reported.add(problem)
                    yield where, problem


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="only the post whose folder name is this, or the one that contains it")
    parser.add_argument("--all", action="store_true", help="with --post: every post that matches (make: ALL=1)")
    parser.add_argument("notebooks", nargs="*", type=Path, help="check these notebooks instead of the posts")
    args = parser.parse_args(argv)
    try:
        paths = args.notebooks or find_posts(args.post, every_match=args.all)
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2
    drafts, problems, draft_problems = 0, [], []
    if not args.notebooks:
        problems += [Problem(post_name(folder / "index.ipynb"), "folder", why)
                     for folder, why in folders_without_notebook(POSTS_DIR)]
    for path in paths:
        draft, found = check_post(path)
        drafts += draft
        (draft_problems if draft else problems).extend(found)
    for problem in problems:
        print(problem)
    for problem in draft_problems:
        print(f"(draft, not published) {problem}")
    verdict = "ready to publish" if not problems else f"{len(problems)} problem(s)"
    if drafts:
        verdict += f"; {drafts} draft(s) left out of the site, with {len(draft_problems)} problem(s)"
    print(f"checked {len(paths)} post(s): {verdict}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
