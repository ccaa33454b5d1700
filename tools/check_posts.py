"""Publishing checks: is every post fit to render as it is stored?

Quarto renders the outputs stored in each notebook and never runs code, so a
notebook can look finished while its outputs are stale, broken or from a toy run.
This tool refuses such a post, naming the post, the cell and what to do:

- a code cell that never ran, a figure cell with no image, or an error output;
- a stale cell: its source no longer matches the hash recorded when it ran;
- a generated setup cell that differs from `_style.py` / `_arch.py`;
- a sibling import or a `sys.path` edit (a lifted-out notebook must still run);
- front matter without title, description, date or categories, or without the
  generated Colab, GitHub and download links; a figure without a label, caption
  or alt text;
- a number quoted in the prose (a percentage, a decimal such as a loss, or a count
  written with thousands separators) that no output of the same notebook prints.
  Reference values from elsewhere pass when the notebook prints them beside its own;
- a data download not pinned to a full 40-hex commit revision;
- a TODO placeholder left by `make new` in the prose, front matter or a caption;
- outputs from a smoke run (overridden parameters), or with no provenance at all.

Exit status 0 when every post passes, 1 otherwise. A post whose front matter says
`draft: true` is left out of the site by Quarto: its problems are listed, marked
as a draft's, and do not fail the check until the draft mark is removed.
"""
import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.inline_helpers import setup_drift
from tools.post_links import links_drift, repository_url
from tools.notebooks import (
    INJECTED_TAG, REPO_ROOT, NotebookError, blog_metadata, cell_options, code_cells, describe_cell, find_posts,
    front_matter, has_tag, parse_cell, post_name, prose_of, read_notebook, source_sha256,
)

PLACEHOLDER = "TODO"  # what `make new` leaves for the author to write
REQUIRED_FRONT_MATTER = ("title", "description", "date", "categories")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")
TEXT_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex")
DOWNLOAD_FUNCTIONS = {"hf_hub_download", "snapshot_download", "load_dataset"}
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
        draft = bool((front_matter(nb) or {}).get("draft"))
    except NotebookError as error:
        return False, [Problem(post_name(path), "notebook", str(error))]
    problems = []
    for check in (check_front_matter, check_links, check_provenance, check_execution, check_setup, check_imports,
                  check_figures, check_placeholders, check_revisions, check_prose_numbers):
        try:
            problems += [Problem(post_name(path), where, what) for where, what in check(nb, Path(path), root)]
        except NotebookError as error:
            problems.append(Problem(post_name(path), "notebook", str(error)))
    return draft, problems


def check_front_matter(nb, path, root):
    matter = front_matter(nb)
    if matter is None:
        yield "cell 1", "no front matter: the first cell must be markdown starting with a --- YAML block"
        return
    missing = [key for key in REQUIRED_FRONT_MATTER if not matter.get(key)]
    if missing:
        yield "cell 1 (front matter)", f"missing {', '.join(missing)}"


def check_links(nb, path, root):
    if front_matter(nb) is not None:
        drift = links_drift(nb, path.parent.name, repository_url(root))
        if drift:
            yield "cell 1 (front matter)", f"{drift}; run `make inline`"


def check_provenance(nb, path, root):
    provenance = blog_metadata(nb).get("provenance")
    if not provenance:
        yield "notebook", "no provenance: its outputs were not made by `make execute`; run it"
    elif provenance.get("parameters_overridden"):
        yield "notebook", (f"outputs are from a smoke run (parameters overridden: {provenance['parameters_overridden']}); "
                           "run `make execute` with the post's own parameters")
    for number, cell in code_cells(nb):
        if has_tag(cell, INJECTED_TAG):
            yield describe_cell(number, cell), "injected parameters cell from a smoke run; delete it and re-execute"


def check_execution(nb, path, root):
    for number, cell in code_cells(nb):
        where = describe_cell(number, cell)
        if not cell.source.strip():
            continue
        if cell.execution_count is None:
            yield where, "has no outputs: it never ran; run `make execute`"
            continue
        recorded = blog_metadata(cell).get("source_sha256")
        if recorded is None:
            yield where, "no recorded source hash: it was not run by `make execute`"
        elif recorded != source_sha256(cell.source):
            yield where, "stale: its code changed after it ran; run `make execute`"
        for output in cell.outputs:
            if output.output_type == "error":
                yield where, f"error output {output.ename}: {output.evalue}"
            elif output.output_type == "stream" and output.name == "stderr" and "Traceback" in output.text:
                yield where, "a traceback was printed to stderr"


def check_setup(nb, path, root):
    drift = setup_drift(nb, root)
    if drift:
        yield "setup cell", f"{drift}; run `make inline`, then `make execute`"


def sibling_modules(post_dir, root):
    """Module names a notebook must not import: anything living in the repository or beside the post."""
    return {file.stem for folder in (root, post_dir) for file in folder.glob("*.py")} | {
        folder.name for folder in root.iterdir() if (folder / "__init__.py").exists()}


def check_imports(nb, path, root):
    siblings = sibling_modules(path.parent, root)
    for number, cell in code_cells(nb):
        where = describe_cell(number, cell)
        if re.search(r"^\s*%run\b", cell.source, re.MULTILINE):
            yield where, "%run of another file: inline what it needs instead"
        tree = parse_cell(cell.source)
        for node in ast.walk(tree) if tree else []:
            if isinstance(node, ast.ImportFrom) and node.level:
                yield where, "relative import: a post must not import from beside itself"
            imported = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            for name in imported:
                if name.split(".")[0] in siblings:
                    yield where, f"imports sibling module {name!r}: declare it in blog.helpers and `make inline`"
            if is_sys_path(node):
                yield where, "edits sys.path: a lifted-out notebook must run without the repository"


def is_sys_path(node):
    """True for `sys.path.append(...)`, `sys.path += ...`, `sys.path = ...`, `sys.path[0:0] = ...`."""
    def names_sys_path(target):
        while isinstance(target, ast.Subscript):
            target = target.value
        return isinstance(target, ast.Attribute) and target.attr == "path" and \
            isinstance(target.value, ast.Name) and target.value.id == "sys"
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
    cells = code_cells(nb)
    literals = string_assignments(cell for _, cell in cells)
    for number, cell in cells:
        where = describe_cell(number, cell)
        for url in UNPINNED_URL.findall(cell.source):
            yield where, f"download URL not pinned to a 40-hex commit: {url}"
        tree = parse_cell(cell.source)
        for node in ast.walk(tree) if tree else []:
            if isinstance(node, ast.Call) and called_name(node) in DOWNLOAD_FUNCTIONS:
                reason = unpinned_reason(node, literals)
                if reason:
                    yield where, f"{called_name(node)}(…) {reason}"


def called_name(call):
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)


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


# A number that states a result: a percentage, a decimal, or a count with thousands separators.
QUOTED_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\.?\d)(\s*%)?")
ANY_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def quoted_numbers(text):
    """The result-like numbers in prose, normalised (no thousands separators)."""
    found = []
    for match in QUOTED_NUMBER.finditer(text):
        whole, fraction, percent = match.groups()
        if fraction or percent or "," in whole:
            found.append(whole.replace(",", "") + (fraction or ""))
    return found


def readable_prose(markdown):
    """Markdown with what is not prose removed: code, raw HTML blocks, link targets, tags, citations."""
    markdown = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)
    markdown = re.sub(r"`[^`]*`", " ", markdown)
    markdown = re.sub(r"\]\([^)]*\)", "]", markdown)
    markdown = re.sub(r"<[^>]+>", " ", markdown)
    markdown = re.sub(r"\[@[^\]]*\]|@[\w:-]+", " ", markdown)
    return markdown


def printed_numbers(nb):
    """Every number that any output of the notebook prints, normalised like `quoted_numbers`."""
    texts = []
    for _, cell in code_cells(nb):
        for output in cell.outputs:
            texts.append(output.get("text", ""))
            texts += ["".join(output.get("data", {}).get(kind, "")) for kind in TEXT_TYPES]
    return {number.replace(",", "") for number in ANY_NUMBER.findall("\n".join(texts))}


def check_prose_numbers(nb, path, root):
    printed = printed_numbers(nb)
    matter = front_matter(nb) or {}
    prose = [("cell 1 (front matter)", " ".join(str(matter.get(key, "")) for key in ("title", "description")))]
    prose += [(describe_cell(number, cell), prose_of(cell)) for number, cell in enumerate(nb.cells, start=1)
              if cell.cell_type == "markdown"]
    for where, text in prose:
        unprinted = [number for number in quoted_numbers(readable_prose(text)) if number not in printed]
        if unprinted:
            yield where, f"prose quotes {', '.join(dict.fromkeys(unprinted))}, which no output prints"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="only posts whose folder name contains this")
    parser.add_argument("notebooks", nargs="*", type=Path, help="check these notebooks instead of the posts")
    args = parser.parse_args(argv)
    try:
        paths = args.notebooks or find_posts(args.post)
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2
    drafts, problems, draft_problems = 0, [], []
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
