"""Inline the shared helpers a post declares (HELPERS below: the one list of them) into its setup cell.

A reader who lifts one notebook out of the repository, or opens it in Colab, must
be able to run it top to bottom, so no post may import a sibling module or touch
sys.path. Yet the palette, the diagram settings and the writer of the non-MNIST
handwriting set should be written once. So the helpers live at the top of the
repository, and this tool copies their current text into every notebook that declares
them (notebook metadata `blog.helpers`, e.g. ["_style.py", "_arch.py"]): those that only
show or record into a generated, folded setup cell at the top; those that compute, lesson
code a post reuses, each into a generated, folded cell of its own, named after it.

Run it after editing a helper; `make` does. With --check it writes nothing and
lists every notebook whose setup cell no longer matches its helpers. Changing a
setup cell makes that cell's stored outputs stale, which `make check` then reports
until the post is executed again: that is deliberate.

The setup cell also makes the notebook run outside the project: its first block
installs, at the versions pinned in requirements.txt, the packages the post and
its helpers import that are missing (Colab lacks visualtorch; a bare Jupyter may
lack everything). Inside the project's venv nothing is missing and it does nothing.
"""
import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat

from tools.core import numerics
from tools.author.export_cells import EXPORTS, mark_of
from tools.core.notebooks import (
    HELPER_TAG, REPO_ROOT, SETUP_TAG, NotebookError, blog_metadata, code_cells, describe_cell, has_tag, parse_cell, site_config,
    sync_posts,
)
from tools.author.post_links import repository_url

# Inlining order, and what each helper needs before it (_arch.py uses _style.py's palette;
# _pen.py draws with _handwriting.py's port of the page; the others stand alone). A helper
# that needs another imports from it by name (`from _handwriting import page_input`), so it
# also works as a module; inlined, that import is dropped, the names being defined above it. _encoder_decoder.py and
# _three_digits.py are generated from part 1's marked cells, _reader.py from part 2's (tools/author/export_cells.py).
HELPERS = {"_results.py": [], "_seal.py": [], "_spread.py": ["_results.py", "_seal.py"], "_style.py": [], "_arch.py": ["_style.py"],
           "_encoder_decoder.py": [], "_three_digits.py": [], "_reader.py": [], "_handwriting.py": [], "_pen.py": ["_handwriting.py"]}
# Short words: the setup cell's summary, which lists them, is on every post's first screen.
WHAT_THEY_GIVE = {"_results.py": "recording", "_seal.py": "checks", "_spread.py": "re-run table", "_style.py": "charts",
                  "_arch.py": "diagrams", "_encoder_decoder.py": "part 1's reader",
                  "_three_digits.py": "part 1's canvases",
                  "_reader.py": "part 2's training",
                  "_handwriting.py": "handwriting set", "_pen.py": "pen digits"}
# The helpers that only show or record what the post computes (named results, the spread's table, chart
# style, diagrams): a change to them changes how a page looks, never a result, so a spread outlives it.
PRESENTATION_HELPERS = ("_results.py", "_seal.py", "_spread.py", "_style.py", "_arch.py")
# Only they go into the setup cell. A helper that computes is lesson code a post reuses: it is shown in a
# generated cell of its own (HELPER_TAG), folded under a summary that names it and where it is taught. It is
# placed after the setup cell at first; an author may move it (before its first use), and it stays there.
SHOWN_AS = {"_encoder_decoder.py": "Part 1's reader, reused: attention written out, the encoder and decoder blocks, "
                                    "the model",
            "_three_digits.py": "Part 1's canvases, reused: the MNIST file's check, the canvases of three digits, "
                                "teacher forcing and greedy reading",
            "_reader.py": "Part 2's training, reused: the end and pad tokens, the canvases, the training and "
                          "the greedy reading",
            "_handwriting.py": "The writer of the handwriting set: digits as pen strokes, drawn like the live page",
            "_pen.py": "The pen digits: real writers' strokes from UCI's file, drawn like the live page"}
# Import names whose distribution is called something else; every other import is looked up by its own name.
DISTRIBUTION_OF = {"PIL": "pillow", "yaml": "PyYAML"}


def declared_helpers(nb):
    """The notebook's helpers in inlining order; an unknown or incomplete declaration is an error."""
    declared = blog_metadata(nb).get("helpers", [])
    unknown = [name for name in declared if name not in HELPERS]
    if unknown:
        raise NotebookError(f"metadata blog.helpers names unknown helper(s) {unknown}; known: {list(HELPERS)}")
    for name in declared:
        missing = [needed for needed in HELPERS[name] if needed not in declared]
        if missing:
            raise NotebookError(f"{name} needs {missing} declared too in metadata blog.helpers")
    return [name for name in HELPERS if name in declared]


def helper_text(name, root=REPO_ROOT):
    """The text of helper `name`, refused (NotebookError naming the file and the line) unless it is Python.

    A helper that does not parse would be inlined into every post that declares it, and
    `make check` would then blame a line of the setup cell; better to stop at the helper.
    Missing and non-UTF-8 files raise OSError and UnicodeDecodeError, as reading them does.
    """
    text = (Path(root) / name).read_text(encoding="utf-8")
    try:
        ast.parse(text, filename=name)
    except SyntaxError as error:
        if error.lineno is None:  # a null byte: Python 3.11 raises SyntaxError for it, without a line
            raise NotebookError(f"helper {name} is not Python text ({error.msg}); fix {name}, then run "
                                "`make inline` (nothing was inlined)") from None
        where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "")
        raise NotebookError(f"helper {name} does not parse as Python ({where}: {error.msg}); fix {name}, "
                            "then run `make inline` (nothing was inlined)") from None
    except ValueError as error:  # a null byte, in Pythons before 3.11.4
        raise NotebookError(f"helper {name} is not Python text ({error}); fix {name}, then run `make inline` "
                            "(nothing was inlined)") from None
    return text


def helper_imports(text):
    """The helpers `text` imports from: {"_handwriting.py": [(first line, last line)], ...}."""
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.ImportFrom) and not node.level and f"{node.module}.py" in HELPERS:
            found.setdefault(f"{node.module}.py", []).append((node.lineno, node.end_lineno))
        elif isinstance(node, ast.Import):
            found.update({f"{alias.name}.py": [None] for alias in node.names if f"{alias.name}.py" in HELPERS})
    return found


def inlined_text(name, root=REPO_ROOT):
    """helper_text() less its imports from other helpers, whose names the setup cell defines above it."""
    text = helper_text(name, root)
    dropped = {line for spans in helper_imports(text).values() for span in spans if span
               for line in range(span[0], span[1] + 1)}
    return "".join(line for number, line in enumerate(text.splitlines(keepends=True), start=1)
                   if number not in dropped)


def helper_problems(root=REPO_ROOT):
    """Why any of the helpers cannot be inlined (missing, not UTF-8, not Python): one line each."""
    problems = []
    for name in HELPERS:
        try:
            imports = helper_imports(helper_text(name, root))
            for other, spans in imports.items():
                if None in spans:
                    problems.append(f"helper {name} imports {other[:-3]} as a module, which an inlined cell "
                                    f"cannot; import its names: `from {other[:-3]} import ...`")
                elif other not in HELPERS[name]:
                    problems.append(f"helper {name} imports from {other}, which HELPERS does not list among "
                                    f"what {name} needs; add it there (tools/author/inline_helpers.py)")
        except NotebookError as error:
            problems.append(str(error))
        except FileNotFoundError:
            problems.append(f"helper {name} is missing from {root}; restore it (`git checkout -- {name}`)")
        except UnicodeDecodeError as error:
            problems.append(f"helper {name} is not UTF-8 text (byte {error.start}: {error.reason}); "
                            "save it as UTF-8")
        except OSError as error:
            problems.append(f"cannot read helper {name} ({error.strerror or error}); restore it")
    return problems


def pinned_versions(requirements=REPO_ROOT / "requirements.txt"):
    """{normalised distribution name: (name as pinned, version)} from a requirements file of exact pins."""
    pins = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)==([^\s#;]+)\s*(#.*)?", line)
        if match:
            pins[normalised(match.group(1))] = (match.group(1), match.group(2))
    return pins


def normalised(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules(source):
    """Top-level names of the absolute imports in a piece of Python (magics ignored)."""
    tree = parse_cell(source)
    names = set()
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def needed_packages(nb, helpers, root=REPO_ROOT, requirements=REPO_ROOT / "requirements.txt"):
    """[(name, version)] of the pinned packages the post's code and its helpers import, in requirements order.

    Worked out from the text alone (no import is tried), so the answer is the same in every environment,
    the light one of the publish workflow included."""
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code" and not has_tag(cell, SETUP_TAG)]
    sources += [helper_text(name, root) for name in helpers]
    wanted = {normalised(DISTRIBUTION_OF.get(module, module)) for source in sources for module in imported_modules(source)}
    return [pin for key, pin in pinned_versions(requirements).items() if key in wanted]


def packages_block(packages):
    """Code that pip-installs the packages that are not installed at all, at their pinned versions."""
    pins = ", ".join(f'"{name}": "{version}"' for name, version in packages)
    return "\n".join([
        "# Installs the pinned packages this post needs that are missing (Colab, a notebook run on its own);",
        "# where they are all installed already, it does nothing.",
        "import importlib.metadata, subprocess, sys",
        "",
        "def _not_installed(pins):",
        "    missing = []",
        "    for name, version in pins.items():",
        "        try:",
        "            importlib.metadata.version(name)",
        "        except importlib.metadata.PackageNotFoundError:",
        "            missing.append(f\"{name}=={version}\")",
        "    return missing",
        "",
        f"if _missing := _not_installed({{{pins}}}):",
        '    print("installing", " ".join(_missing))',
        '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *_missing], check=True)',
    ])


def in_words(items):
    """"a", "a and b", "a, b and c": a list as a sentence says it."""
    items = list(items)
    return " and ".join(items) if len(items) < 3 else f"{', '.join(items[:-1])} and {items[-1]}"


SECTION, NUMERIC_PATH, PACKAGES = "# ---- {} ----", "numeric path", "packages"  # the setup cell's parts


def in_setup(helpers):
    """The helpers the setup cell holds: those that only show or record."""
    return [name for name in helpers if name in PRESENTATION_HELPERS]


def in_own_cells(helpers):
    """The helpers shown in cells of their own: those that compute."""
    return [name for name in helpers if name not in PRESENTATION_HELPERS]


def setup_source(helpers, root=REPO_ROOT, packages=(), repo_url=None):
    """The exact text of the generated setup cell: the numeric path, the packages the post imports, and those of
    `helpers` that only show or record (the others get cells of their own, helper_source)."""
    helpers = in_setup(helpers)
    names = in_words(helpers)
    gives = in_words(WHAT_THEY_GIVE[name] for name in helpers)
    parts = [
        "#| code-fold: true",
        # The files it is generated from are named in its first line, not in the summary: a line saved on the page.
        f'#| code-summary: "Setup: {"missing packages, " if packages else ""}{gives or "the numeric path"}"',
        f"# Generated from {names or 'tools/author/inline_helpers.py'} of {repo_url or repository_url()}; "
        f"edit {'those files' if len(helpers) > 1 else 'that file' if helpers else 'that'}, not this cell.",
    ]
    if "_spread.py" in helpers:  # a post that shows its spread runs on the path the spread calls pinned
        parts += ["", SECTION.format(NUMERIC_PATH), numerics.setup_block()]
    if packages:
        parts += ["", SECTION.format(PACKAGES), packages_block(packages)]
    for name in helpers:
        parts += ["", SECTION.format(name), inlined_text(name, root).rstrip("\n")]
    return "\n".join(parts)


def helper_source(name, root=REPO_ROOT, repo_url=None):
    """The exact text of the generated cell that shows computing helper `name`."""
    if name in EXPORTS:
        origin = (f"# `make export` writes {name} from the cells marked `{mark_of(name)}` in posts/{EXPORTS[name]},\n"
                  "# the post that teaches it; edit those cells, not this one.")
    else:
        origin = f"# Generated from {name} of {repo_url or repository_url()}; edit that file, not this cell."
    return "\n".join([
        "#| code-fold: true",
        f'#| code-summary: "{SHOWN_AS[name]} (generated from {name})"',
        origin,
        SECTION.format(name),
        inlined_text(name, root).rstrip("\n"),
    ])


def expected_helper_cells(nb, root=REPO_ROOT):
    """{helper: the text of its cell} for the computing helpers the notebook declares."""
    return {name: helper_source(name, root) for name in in_own_cells(declared_helpers(nb))}


def helper_cells(nb):
    """{helper: [its generated cells]} as the notebook carries them (a cell is named by its section line)."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and has_tag(cell, HELPER_TAG):
            names = [name for name in setup_sections(cell.source) if name in HELPERS] or ["?"]
            found.setdefault(names[0], []).append(cell)
    return found


def helper_cell_drift(nb, root=REPO_ROOT):
    """Why the cells that show the computing helpers differ from the helpers: [] when they match."""
    expected, found = expected_helper_cells(nb, root), helper_cells(nb)
    causes = []
    for name, text in expected.items():
        cells = found.get(name, [])
        if not cells:
            causes.append(f"lacks the cell that shows {name}, which metadata blog.helpers declares")
        elif len(cells) > 1:
            causes.append(f"has {len(cells)} cells that show {name} (expected 1)")
        elif cells[0].source != text:
            causes.append(f"its cell that shows {name} differs from the current {name} (the helper, or its copy "
                          "in the cell, was edited since `make inline` copied it)")
    extra = [name for name in found if name not in expected]
    if extra:
        causes.append(f"still shows {in_words(extra)} in a generated cell, which metadata blog.helpers no "
                      "longer declares")
    return causes


def expected_setup(nb, root=REPO_ROOT):
    """The setup cell text this notebook should carry, or None when it declares no helpers."""
    helpers = declared_helpers(nb)
    if not helpers:
        return None
    return setup_source(helpers, root, needed_packages(nb, helpers, root))


def setup_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "code" and has_tag(cell, SETUP_TAG)]


def setup_position(nb):
    """Right after the front matter cell, so the setup runs first and Quarto still finds the front matter."""
    return 1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0


def setup_drift(nb, root=REPO_ROOT):
    """Why the notebook's setup cell, or a cell that shows a computing helper, differs from its helpers, or None
    when they match."""
    expected = expected_setup(nb, root)
    cells = setup_cells(nb)
    if expected is None:
        if cells:
            return "has a generated setup cell but declares no helpers"
        extra = helper_cell_drift(nb, root)
        return ", and ".join(extra) if extra else None
    if len(cells) != 1:
        return f"declares {declared_helpers(nb)} but has {len(cells)} generated setup cells (expected 1)"
    causes = []
    if cells[0].source != expected:
        causes = drift_causes(nb, cells[0].source, expected, root)
        causes = ["setup cell " + (", and ".join(causes) if causes else
                                   f"differs from the current {in_words(in_setup(declared_helpers(nb)))} "
                                   "(or the pins it installs)")]
    causes += helper_cell_drift(nb, root)
    return ", and ".join(causes) if causes else None


def setup_sections(source):
    """{part: its text} of a setup cell: "header" (its first lines), then the numeric path, the packages
    and each helper, as setup_source() writes them."""
    known = {SECTION.format(name): name for name in (NUMERIC_PATH, PACKAGES, *HELPERS)}
    found, name, lines = {}, "header", []
    for line in source.split("\n") + [None]:
        if line is None or line in known:
            found[name] = "\n".join(lines).strip("\n")
            name, lines = known.get(line), []
        else:
            lines.append(line)
    return found


def installed_pins(packages_text):
    """{distribution: version} that a setup cell's packages block installs where missing."""
    match = re.search(r"_not_installed\((\{.*?\})\)", packages_text or "")
    try:
        return dict(ast.literal_eval(match.group(1))) if match else {}
    except (ValueError, SyntaxError, TypeError):
        return {}


def importers(nb, distribution, helpers, root=REPO_ROOT):
    """Who imports the pinned `distribution`, in words: ["cell 7 (code) imports yaml", "_pen.py imports …"]."""
    def modules_of(source):
        return sorted(module for module in imported_modules(source)
                      if normalised(DISTRIBUTION_OF.get(module, module)) == normalised(distribution))
    found = [(describe_cell(number, cell), modules_of(cell.source)) for number, cell in code_cells(nb)
             if not has_tag(cell, SETUP_TAG)]
    found += [(name, modules_of(helper_text(name, root))) for name in helpers]
    return [f"{who} imports {in_words(modules)}" for who, modules in found if modules]


def drift_causes(nb, source, expected, root=REPO_ROOT):
    """What makes the setup cell `source` differ from the `expected` one, each named: a helper (or its copy)
    edited, a helper declared or dropped, a package a cell now imports or no longer does, a pin changed."""
    now, wanted = setup_sections(source), setup_sections(expected)
    helpers = declared_helpers(nb)
    causes = []
    moved = [name for name in in_own_cells(helpers) if name in now]
    if moved:
        causes.append(f"still holds {in_words(moved)}, which {'computes' if len(moved) == 1 else 'compute'} and "
                      "belongs in a cell of its own now (`make inline` moves it)")
    edited = [name for name in in_setup(helpers) if name in now and now[name] != wanted[name]]
    if edited:
        causes.append(f"differs from the current {in_words(edited)} (the helper, or its copy in the cell, was "
                      "edited since `make inline` copied it)")
    missing = [name for name in in_setup(helpers) if name not in now]
    if missing:
        causes.append(f"lacks {in_words(missing)}, which metadata blog.helpers declares")
    extra = [name for name in now if name in HELPERS and name not in helpers]
    if extra:
        causes.append(f"still holds {in_words(extra)}, which metadata blog.helpers no longer declares")
    have, need = installed_pins(now.get(PACKAGES)), installed_pins(wanted.get(PACKAGES))
    for name, version in need.items():
        if name not in have:
            who = importers(nb, name, helpers, root)
            causes.append(f"does not install {name}=={version} ({in_words(who) or 'the post imports it'})")
        elif have[name] != version:
            causes.append(f"installs {name}=={have[name]}, not requirements.txt's {name}=={version}")
    gone = [f"{name}=={version}" for name, version in have.items() if name not in need]
    if gone:
        causes.append(f"still installs {in_words(gone)}, which no cell or helper imports any more")
    if NUMERIC_PATH in wanted and now.get(NUMERIC_PATH) != wanted[NUMERIC_PATH]:
        causes.append("differs from tools/core/numerics.py's numeric-path block")
    if not causes and now.get("header") != wanted.get("header"):
        causes.append("has other first lines (they name its helpers and _quarto.yml's website.repo-url)")
    return causes


def inline(nb, root=REPO_ROOT):
    """Bring the setup cell and the helpers' own cells in line with the helpers; True when the notebook changed."""
    if setup_drift(nb, root) is None:
        return False
    expected = expected_setup(nb, root)
    cells = setup_cells(nb)
    for extra in cells[1:]:
        nb.cells.remove(extra)
    if expected is None and cells:
        nb.cells.remove(cells[0])
    elif cells:
        cells[0].source = expected  # outputs stay; the changed hash marks them stale
    elif expected is not None:
        cell = nbformat.v4.new_code_cell(expected, metadata={"tags": [SETUP_TAG]})
        nb.cells.insert(setup_position(nb), cell)
    inline_helper_cells(nb, root)
    return True


def inline_helper_cells(nb, root=REPO_ROOT):
    """One current cell per computing helper: kept where the author put it, else placed after the setup cell
    (after the cell of the helper it needs, in HELPERS order); cells of helpers no longer declared go."""
    expected, found = expected_helper_cells(nb, root), helper_cells(nb)
    for name, cells in found.items():
        for cell in cells[1:] if name in expected else cells:
            nb.cells.remove(cell)
    after = setup_position(nb) + (1 if setup_cells(nb) else 0)
    for name, text in expected.items():
        if name in found:
            found[name][0].source = text
            after = nb.cells.index(found[name][0]) + 1
        else:
            nb.cells.insert(after, nbformat.v4.new_code_cell(text, metadata={"tags": [HELPER_TAG]}))
            after += 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report drift, write nothing, exit 1 if any")
    parser.add_argument("--post", help="only posts whose folder name contains this")
    args = parser.parse_args(argv)
    root = REPO_ROOT
    # Everything every post's setup cell is made from, before any post is touched: a broken helper
    # or site config stops the whole run, with nothing written.
    try:
        site_config(root)
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2
    problems = helper_problems(root)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    return sync_posts(lambda nb, path: setup_drift(nb, root), lambda nb, path: regenerate(nb, path, root),
                      check=args.check, substring=args.post)


def regenerate(nb, path, root=REPO_ROOT):
    inline(nb, root)
    return f"setup cell regenerated; re-run `make execute POST={path.parent.name}`"



def result_producing_setup(source):
    """The parts of a setup cell that can move a result: the numeric path it pins and the helpers that compute
    (not the packages it installs when missing, nor the presentation helpers), each as generated."""
    sections = setup_sections(source)
    return {name: text for name, text in sections.items()
            if name == NUMERIC_PATH or (name in HELPERS and name not in PRESENTATION_HELPERS)}

if __name__ == "__main__":
    sys.exit(main())
