"""Publishing checks: is every post fit to render as it is stored?

Quarto renders the outputs stored in each notebook and never runs code, so a
notebook can look finished while its outputs are stale, broken or from a toy run.
This tool refuses such a post, naming the post, the cell and what to do:

- a code cell that never ran, a figure cell with no image, an error output, or an
  empty code cell showing outputs (no run makes them, and the seal leaves it out);
- outputs that no longer match the seal `make execute` recorded: a stale cell (its
  code changed after it ran), outputs or images edited, provenance edited, a code
  cell added, deleted or moved after the run (tools/core/notebooks.py);
- a generated setup cell that differs from the helpers it inlines (tools/author/inline_helpers.py's HELPERS),
  or a `_reader.py` out of step with the part 2 cells marked `#| export: true`;
- a sibling import (also through `importlib`, `__import__`, `runpy` or `%run`, or a
  repository file opened or run by name) or a `sys.path` edit (also through an alias
  or `getattr`); a cell that does not parse even after IPython's own transforms;
- front matter without title, description, date or categories, with an impossible
  date or a `draft` that is not a boolean, or without the generated Colab, GitHub
  and download links; a figure without a label, caption or alt text;
- a thumbnail the home page's listing would shrink until its text cannot be read (the
  message gives the `blog.thumbnail` crop that fits), or one that is another post's;
- a post that shows its spread without a spread.json beside it, a report edited, made
  from other code, or around other page results; a bound number stated as fact in the
  prose though the report's runs show it otherwise (tools/measure/spread_report.py);
- a number a reader reads (prose, tables, math, console fences, alt text, captions,
  front matter, included files) that reads as a result but is not bound to one the
  run recorded, or is bound and disagrees with it (tools/numbers/bindings.py);
- a data download not pinned to a full 40-hex commit revision, however imported;
- a TODO placeholder left by `make new` in the prose, front matter, a caption or the
  thumbnail's alt text (metadata blog.thumbnail);
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
import decimal
import hashlib
import math
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.numbers import bindings
from tools.measure import spread_report
from tools.core.data_sources import HUB_DATA, STAND_IN_DATA, STAND_IN_SHA256
from tools.live.ablation_report import REPORT, printed_problems, report_problems
from tools.core.seal import check_provenance, check_seal
from tools.author.export_cells import EXPORTS, export_drift, sources_of
from tools.author.inline_helpers import setup_drift
from tools.author.post_links import THUMBNAIL, duplicate_thumbnail, links_drift, repository_url, thumbnail_problem
from tools.core.printed import data_digests, printed_devices, printed_digests
from tools.live.reader_files import EXPORTED, published_copies
from tools.core.notebooks import (
    PLACEHOLDER, POSTS_DIR, REPO_ROOT, CellOptionsError, NotebookError, blog_metadata, cell_options,
    code_cells, describe_cell, download_calls, find_posts, folders_without_notebook, front_matter, parse_cell,
    parse_problem, parsed_code_cells, post_name, read_notebook, unreadable_file,
)

REQUIRED_FRONT_MATTER = ("title", "description", "date", "categories")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")
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
    for check in (check_cell_options, check_front_matter, check_links, check_thumbnail, check_provenance, check_seal,
                  check_execution, check_outputs_against_provenance, check_published_reader, check_setup, check_exports,
                  check_reports, check_spread, check_imports, check_figures, check_folds, check_fenced_divs,
                  check_placeholders, check_revisions, check_literal_results, check_records, check_prose_numbers):
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


def check_thumbnail(nb, path, root):
    """The listing's picture of the post: its text readable at the size the home page shows it, and no other
    post's picture (the rules tests/test_rendered_site.py measures in a browser, read here from the PNG)."""
    for problem in (thumbnail_problem(nb), duplicate_thumbnail(nb, path.parent)):
        if problem:
            yield THUMBNAIL, problem


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
    """A post that exports a page's model (the live reader's, the decoding lab's): the files the page serves
    must be the ones its stored run printed the digests of."""
    printed = printed_digests(nb)
    for folder, command in published_copies(blog_metadata(nb), path.parent.name, root):
        for name in EXPORTED:
            published = folder / name
            shown = published.relative_to(root).as_posix() if published.is_relative_to(root) else str(published)
            if not published.is_file():
                yield "notebook", f"{shown} is missing: a page serves this post's model; run `{command}`"
                continue
            digest = hashlib.sha256(published.read_bytes()).hexdigest()
            if digest not in printed.get(name, set()):
                said = "prints no digest for it" if name not in printed else "prints another digest for it"
                yield "notebook", (f"{shown} (sha256 {digest[:12]}…) is not the file this post's stored run made "
                                   f"(its outputs' `  {name}  sha256 …` line {said}); run `{command}`, or "
                                   "`make execute` first if the post changed")


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


def check_exports(nb, path, root):
    """A helper exported from this post's marked cells, or inlined by it, is in step with those cells."""
    own = sources_of(Path(path).parent.name)
    declared = [name for name in blog_metadata(nb).get("helpers", []) if name in EXPORTS]
    for name in dict.fromkeys(own + declared):
        try:  # the source post is checked against the notebook being checked, not the repository's copy
            drift = export_drift(name, root, nb if name in own else None)
        except NotebookError as error:
            drift = str(error)
        if drift:
            yield "exported cells", drift


def check_reports(nb, path, root):
    """A sealed report beside the post (ablations.json) is intact, made by the repository's code, and what the
    post printed of it."""
    report = Path(path).parent / REPORT.name
    problems = report_problems(report, root)
    yield from (("ablations.json", problem) for problem in problems)
    if not problems:
        yield from printed_problems(nb, report)


def check_spread(nb, path, root):
    """The spread report describes this post, and the prose states as fact only what all its runs show."""
    where = spread_report.SPREAD_REPORT
    if spread_report.shows_spread(nb) and not spread_report.report_path(Path(path).parent).exists():
        yield where, "the post shows its spread, but there is no spread.json beside it: run `make spread POST=…`"
        return
    problems = spread_report.report_problems(nb, Path(path).parent)
    yield from ((where, problem) for problem in problems)
    if not problems:
        yield from spread_report.printed_problems(nb, Path(path).parent)
        yield from spread_report.claim_problems(nb, Path(path).parent)


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


GENERIC_SUMMARIES = {"", "code", "show the code", "show code", "hide the code"}
# Quarto writes a fold's summary into the page as HTML, unescaped: `<end>` in it is taken for a tag and
# vanishes ("Mean P() at each step").
TAG_LIKE = re.compile(r"<[A-Za-z/][^<>]*>")


def check_folds(nb, path, root):
    """The code a post teaches is shown; a cell that folds (a figure's drawing, plumbing) names what it hides,
    in words a page can show."""
    for number, cell in code_cells(nb):
        options = cell_options(cell)
        if options.get("code-fold") in (True, "show", "true"):
            summary = str(options.get("code-summary", "")).strip()
            if summary.lower() in GENERIC_SUMMARIES:
                yield describe_cell(number, cell), ("folds its code without saying what it hides: give it "
                                                    '`#| code-summary: "…"` (e.g. "The code that draws the loss '
                                                    'curve"), or show it')
            elif tag := TAG_LIKE.search(summary):
                yield describe_cell(number, cell), (f"its fold's summary holds {tag.group()}, "
                                                    "which the page takes for an HTML tag and hides: name it in "
                                                    "words (the end token) instead")


DIV_FENCE = re.compile(r"^ {0,3}(:{3,})\s*(.*?)\s*$")
CODE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def check_fenced_divs(nb, path, root):
    """Pandoc's fenced divs may span cells (a fold opened above a code cell is closed below it), so they
    are followed through the whole notebook: one left open swallows the rest of the page, and a heading
    inside one (other than a callout's title, its first line) is hidden by the fold."""
    open_divs = []  # [where it opened, its first line, whether anything followed it yet]
    for number, cell in enumerate(nb.cells, start=1):
        if number == 1 or cell.cell_type != "markdown":  # cell 1 is the front matter
            if open_divs and cell.cell_type == "code":
                open_divs[-1][2] = True
            continue
        for line, in_code in markdown_lines(cell.source):
            if not line.strip():
                continue
            fence = None if in_code else DIV_FENCE.match(line)
            heading = None if in_code or fence else HEADING.match(line)
            if heading and open_divs and open_divs[-1][2]:
                where, opened, _ = open_divs[-1]
                yield describe_cell(number, cell), (f"the heading {heading.group(1)!r} lies inside `{opened}` "
                                                    f"({where}), so the page hides it: close the div before it")
            if open_divs:
                open_divs[-1][2] = True
            if fence and fence.group(2):
                open_divs.append([describe_cell(number, cell), line.strip(), False])
            elif fence and open_divs:
                open_divs.pop()
    for where, opened, _ in open_divs:
        yield where, (f"opens `{opened}` and nothing closes it, so it holds the rest of the page: "
                      "end it with a line of colons (`:::::` for a fold) where it should stop")


def markdown_lines(source):
    """(line, whether it lies in a fenced code block) for each line of a markdown cell."""
    code_fence = None
    for line in source.splitlines():
        if code_fence is None and (fence := CODE_FENCE.match(line)):
            code_fence = fence.group(1)
            yield line, True
            continue
        if code_fence is not None:
            if line.strip() and set(line.strip()) == {code_fence[0]} and len(line.strip()) >= len(code_fence):
                code_fence = None
            yield line, True
            continue
        yield line, False


def check_placeholders(nb, path, root):
    """Text that `make new` left for the author to write: in prose, front matter and figure captions."""
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "markdown" and PLACEHOLDER in cell.source:
            yield describe_cell(number, cell), f"placeholder {PLACEHOLDER} left in the text; write it"
        elif cell.cell_type == "code":
            unwritten = [name for name, value in cell_options(cell).items() if PLACEHOLDER in str(value)]
            if unwritten:
                yield describe_cell(number, cell), f"placeholder {PLACEHOLDER} left in {', '.join(unwritten)}; write it"
    chosen = blog_metadata(nb).get("thumbnail")
    if isinstance(chosen, dict) and PLACEHOLDER in str(chosen.get("alt", "")):
        yield "notebook metadata", (f"placeholder {PLACEHOLDER} left in blog.thumbnail's alt, the thumbnail's alt "
                                    "text; write it (what the part of the figure it shows holds), then `make inline`")


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


def check_literal_results(nb, path, root):
    """A run's own result is what its code computed: `result("acc", 97.2)` records a number typed into the cell,
    which no run measured (a reference, `reference=True`, is a number from elsewhere and may be)."""
    parsed, _ = parsed_code_cells(nb)
    for number, cell, tree in parsed:
        for node in ast.walk(tree) if tree else []:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "result"):
                continue
            arguments = dict(zip(("name", "value", "template", "label", "reference"), node.args))
            arguments.update((keyword.arg, keyword.value) for keyword in node.keywords if keyword.arg)
            value, reference = arguments.get("value"), arguments.get("reference")
            if value is None or not is_literal(value) or \
                    isinstance(reference, ast.Constant) and reference.value is True:
                continue
            name = arguments.get("name")
            shown = name.value if isinstance(name, ast.Constant) else ast.unparse(name) if name else "…"
            yield describe_cell(number, cell), (
                f"result {shown} records a literal, {ast.unparse(value)}, which no run computed: compute it in the "
                "cell (or, for a number from elsewhere, pass reference=True)")


def is_literal(node):
    """Is this expression a bare literal: a constant, signed or not (97.2, -0.5, "97.2")? Arithmetic on constants
    (post 1's guessing odds, `10 ** 3`) is worked out in the cell, and left to the reader of the code."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant)


SHOWN_NUMBER = re.compile(r"[-\u2212]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")  # as _results.result() writes one


def check_records(nb, path, root):
    """Each result's record keeps the number its output shows: the number, rounded as the text writes it, is the
    text's (a record edited and sealed again by hand, or written by other code than _results.result, is not)."""
    records, _ = bindings.recorded_results(nb)  # check_prose_numbers names malformed records
    for name, record in records.items():
        problem = record_number_problem(record.text, None if math.isnan(record.number) else record.number)
        if problem:
            number, cell = next((number, cell) for number, cell in code_cells(nb) if number == record.cell)
            yield describe_cell(number, cell), f"result {name} {problem}; run `make execute`"


def record_number_problem(text, number):
    """Why a record's `number` is not the number its `text` shows, or None."""
    shown = SHOWN_NUMBER.search(text)
    if number is None or shown is None:
        return None if number is None and shown is None else \
            f"records the number {number} but shows {text}, which {'is' if shown else 'is not'} a number"
    written = decimal.Decimal(shown.group().replace(",", "").replace("\u2212", "-"))
    exponent = written.as_tuple().exponent  # the last place written: 87.3 -> -1; 1.0e-05 -> -6
    if abs(decimal.Decimal(repr(float(number))) - written) > decimal.Decimal("5.000001").scaleb(exponent - 1):
        return f"records the number {number} but shows {text}, which that number does not round to"
    return None


def check_prose_numbers(nb, path, root):
    """Every number a reader reads is bound to the run or marked, and agrees (tools/numbers/bindings.py)."""
    return bindings.problems_of(nb, Path(path).parent, root)


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
