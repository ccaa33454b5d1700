"""Export a post's marked code cells into a helper module, the way nbdev does.

A post that teaches code a later post reuses is that code's only source. Its code cells whose
`#|` options include `export: true` are copied, in notebook order and without their `#|` option
lines, into a module (EXPORTS): part 1's into `_encoder_decoder.py` (the reader: attention written
out, the blocks, the model) and `_three_digits.py` (its data check, canvases, teacher forcing and
greedy reading), part 2's into `_reader.py` (tokens with <end> and <pad>, the canvases of one to
three digits, the training and the reading the image posts share), the handwriting post's into
`_cure.py`. A post that exports to more than one module names the module in each marked cell
(`#| export: _encoder_decoder.py`). A later post declares the module in `blog.helpers` and `make
inline` shows it in a folded cell of its own, named after the part that teaches it
(tools/author/inline_helpers.py), so it uses the code without repeating it, and a change to the
lesson reaches it.

Run it after editing a marked cell (`make export`; `make` and `make inline` do).
With --check it writes nothing and names each helper out of step with its cells,
which `make check` also reports. Edit the marked cells, never the modules: the next
export overwrites them.
"""
import argparse
import ast
import builtins
import sys
import textwrap
from pathlib import Path

from tools.core.notebooks import REPO_ROOT, CellOptionsError, NotebookError, blog_metadata, cell_options, read_notebook

EXPORT_MARK = "#| export: true"  # a Quarto cell option (YAML), so the page hides it
# helper file: the post folder whose marked cells it is made from
# In order: a later module may take names from an earlier one (_cure.py from _reader.py).
EXPORTS = {"_encoder_decoder.py": "2026-06-18-reading-three-digits", "_three_digits.py": "2026-06-18-reading-three-digits",
           "_reader.py": "2026-06-25-reading-when-to-stop", "_cure.py": "2026-07-09-reading-handwriting"}
# Where `make export` keeps the text it replaced (an edit by hand, say, which the next export
# would otherwise drop): the last one only, so nothing is lost silently.
REPLACED = Path(".cache") / "export"


def source_lines(cell):
    """The cell's lines, whatever its line ends (CRLF from an editor on Windows)."""
    return cell.source.replace("\r\n", "\n").split("\n")


def option_lines(cell):
    """The `#|` lines a code cell starts with."""
    lines = source_lines(cell)
    count = 0
    while count < len(lines) and lines[count].startswith("#|"):
        count += 1
    return lines[:count]


def export_value(cell, number=None):
    """What a code cell's `export` option says: None (not exported), True, or the module it names.

    A cell whose options mention export in any other way (`#| export`, nbdev's form, which
    Quarto reads as a stray word; `#| export: no`) is refused by name rather than skipped."""
    if cell.cell_type != "code":
        return None
    mentions = any("export" in line for line in option_lines(cell))
    try:
        value = cell_options(cell).get("export")
    except CellOptionsError as error:
        if not mentions:
            return None
        raise NotebookError(f"cell {number}: {error}") from None
    if value is True or (isinstance(value, str) and value in EXPORTS):
        return value
    if mentions and value is not False:
        raise NotebookError(f"cell {number} (code) mentions export in its `#|` options but is not marked "
                            f"`{EXPORT_MARK}` (or `#| export:` and one of {', '.join(EXPORTS)}); write that "
                            "line, or drop the mention")
    return None


def is_exported(cell, number=None):
    """Whether a code cell is marked for export, to its post's module or to one it names."""
    return export_value(cell, number) is not None


def exports_to(cell, number, post, module):
    """Whether a marked cell of `post` goes into `module` (None: any module). A post with several
    modules must name one in each marked cell; `export: true` there would be a guess."""
    value = export_value(cell, number)
    if value is None or module is None:
        return value is not None
    own = sources_of(post)
    if isinstance(value, str):
        if value not in own:
            raise NotebookError(f"posts/{post}/index.ipynb cell {number} exports to {value}, which EXPORTS "
                                f"makes from posts/{EXPORTS[value]}; name one of {', '.join(own)}")
        return value == module
    if len(own) > 1:
        raise NotebookError(f"posts/{post}/index.ipynb cell {number} is marked `{EXPORT_MARK}`, but this post "
                            f"exports to {' and '.join(own)}: write `#| export: {own[0]}` (or the other)")
    return True


def exported_code(cell):
    """The cell's code without its leading `#|` option lines (line ends as `\\n`)."""
    return "\n".join(source_lines(cell)[len(option_lines(cell)):]).strip("\n")


def module_text(nb, post, root=REPO_ROOT, module=None):
    """The helper's text: a generated-file header, then the code of each cell marked for `module`
    (None: every marked cell).

    Each marked cell must parse on its own as Python (no IPython magics), since the helper is
    imported and inlined as plain Python; a cell that does not is named."""
    cells = []
    for number, cell in enumerate(nb.cells, start=1):
        if not exports_to(cell, number, post, module):
            continue
        code = exported_code(cell)
        try:
            ast.parse(code)
        except SyntaxError as error:
            raise NotebookError(f"posts/{post}/index.ipynb cell {number} is marked `{EXPORT_MARK}` but is not "
                                f"plain Python (line {error.lineno}: {error.msg}); fix that cell") from None
        if code.strip():
            cells.append(code)
    if not cells:
        raise NotebookError(f"posts/{post}/index.ipynb has no code cell marked `{EXPORT_MARK}` to export"
                            + (f" to {module}" if module else ""))
    header = (f"# Generated by `make export` from the cells marked `{mark_of(module) if module else EXPORT_MARK}` in\n"
              f"# posts/{post}/index.ipynb. Edit those cells, not this file.\n")
    body = "\n\n\n".join(cells)
    imports = helper_imports(body, blog_metadata(nb).get("helpers", []), root)
    block = "".join(f"{line}\n" for line in imports) + "\n\n" if imports else ""
    return header + "\n\n" + block + body + "\n"


def top_level_names(tree):
    """{name: the statement that binds it at the top of a module}: defs, classes, assignments, imports."""
    bound = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                bound.update({name.id: node for name in ast.walk(target) if isinstance(name, ast.Name)})
    return bound


def free_names(code):
    """Names `code` reads that it never binds anywhere (arguments, assignments, defs and imports count)."""
    tree = ast.parse(code)
    read, bound = set(), set(top_level_names(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - bound - set(dir(builtins))


def helper_imports(code, helpers, root=REPO_ROOT):
    """The import lines a module of `code` needs for the names the post's setup cell gives it.

    In the post, the inlined helpers define those names; as a module, it imports them: a
    helper's own imports (`import numpy as np`) as the helper writes them, the rest from the
    helper that defines them last, as the setup cell would (`from _reader import TILE`)."""
    wanted = free_names(code)
    taken = {}
    for helper in helpers if wanted else []:
        tree = helper_tree(helper, root)
        for name, node in top_level_names(tree).items():
            from_a_helper = isinstance(node, ast.ImportFrom) and (node.module or "").startswith("_")
            if name in wanted and not from_a_helper:  # the helper it came from defines it
                taken[name] = (helper, node)
    is_import = (ast.Import, ast.ImportFrom)
    modules = sorted({ast.unparse(node) for _, node in taken.values() if isinstance(node, is_import)})
    lines = []
    for helper in helpers:
        names = sorted(name for name, (owner, node) in taken.items()
                       if owner == helper and not isinstance(node, is_import))
        line = f"from {helper[:-3]} import {', '.join(names)}"
        if names and len(line) > 88:  # wrapped as a formatter would, to fit the page column
            wrapped = textwrap.wrap(", ".join(names) + ",", 84)
            line = f"from {helper[:-3]} import (\n" + "".join(f"    {part}\n" for part in wrapped) + ")"
        if names:
            lines.append(line)
    return modules + lines


def helper_tree(helper, root=REPO_ROOT):
    """The parsed text of a helper the exported cells may take names from; NotebookError, in one line naming it,
    when it is not UTF-8 or not Python (a missing one raises FileNotFoundError, as reading it does)."""
    try:
        text = (Path(root) / helper).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"helper {helper} is not UTF-8 text (byte {error.start}: {error.reason}); "
                            "save it as UTF-8") from None
    try:
        return ast.parse(text, filename=helper)
    except SyntaxError as error:
        where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "") if error.lineno else \
            "a null byte"
        raise NotebookError(f"helper {helper} does not parse as Python ({where}: {error.msg}); fix {helper}") from None
    except ValueError as error:  # a null byte, in Pythons before 3.11.4
        raise NotebookError(f"helper {helper} is not Python text ({error}); fix {helper}") from None


def source_notebook(name, root=REPO_ROOT):
    path = Path(root) / "posts" / EXPORTS[name] / "index.ipynb"
    if not path.exists():
        raise NotebookError(f"{name} is made from posts/{EXPORTS[name]}/index.ipynb, which is missing from {root}")
    return read_notebook(path)


def expected_text(name, root=REPO_ROOT, nb=None):
    """The helper's text as the source notebook's marked cells make it (`nb`: that notebook, if read)."""
    return module_text(nb if nb is not None else source_notebook(name, root), EXPORTS[name], root, name)


def export_drift(name, root=REPO_ROOT, nb=None):
    """Why helper `name` is out of step with its source cells, or None when it matches."""
    return drift_from(name, root, expected_text(name, root, nb))


def drift_from(name, root, expected):
    """Why the helper on disk differs from `expected`, its text as the cells make it, or None."""
    try:
        current = (Path(root) / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"{name} is missing; run `make export` to write it from posts/{EXPORTS[name]}"
    except UnicodeDecodeError:
        return f"{name} is not UTF-8 text; run `make export` to write it again from posts/{EXPORTS[name]}"
    if current != expected:
        return (f"{name} is out of step with the cells marked `{mark_of(name)}` in posts/{EXPORTS[name]}; "
                "run `make export` (edit those cells, not the helper)")
    return None


def mark_of(name):
    """The mark on the cells helper `name` is made from: `export: <name>` where its post exports
    to several modules, `export: true` (or the module's name) where it exports to one."""
    return f"#| export: {name}" if len(sources_of(EXPORTS[name])) > 1 else EXPORT_MARK


def sources_of(post_folder):
    """The helpers exported from this post folder's notebook."""
    return [name for name, post in EXPORTS.items() if post == post_folder]


def write_export(name, root, text):
    """Write `text` as helper `name`, keeping the text it replaces under .cache/export/."""
    target = Path(root) / name
    kept = None
    if target.exists():
        kept = Path(root) / REPLACED / f"{name}.replaced"
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(target.read_bytes())  # as it was, even if it was not UTF-8
    temporary = target.with_name(f".{name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(target)  # never a half-written helper
    return kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report drift, write nothing, exit 1 if any")
    args = parser.parse_args(argv)
    root, status = REPO_ROOT, 0
    problems = broken_helpers(root)
    if problems:  # a helper the exported cells take names from: it stops them all, with nothing written
        print("\n".join(f"{problem} (nothing was exported)" for problem in problems), file=sys.stderr)
        return 2
    for name in EXPORTS:  # in order: a later export may take names from an earlier one
        try:
            text = expected_text(name, root)  # the source notebook is read once per helper
            drift = drift_from(name, root, text)
            if drift is None:
                continue
            if args.check:
                print(drift)
                status = 1
                continue
            kept = write_export(name, root, text)
            print(f"{name}: exported from posts/{EXPORTS[name]}"
                  + (f" (the text it replaced is kept in {kept.relative_to(root)})" if kept else ""))
        except (NotebookError, OSError) as error:
            print(f"{name}: cannot export: {error}", file=sys.stderr)
            status = 2
    return status


def broken_helpers(root=REPO_ROOT):
    """Why a helper that the source posts declare, and that is not itself exported, cannot be read: one line each."""
    problems = []
    for name, post in EXPORTS.items():
        try:
            declared = blog_metadata(source_notebook(name, root)).get("helpers", [])
        except (NotebookError, OSError):
            continue  # the export itself says so
        for helper in declared:
            if helper in EXPORTS or any(helper in problem for problem in problems):
                continue
            try:
                helper_tree(helper, root)
            except NotebookError as error:
                problems.append(f"{name}: cannot export: {error}")
            except OSError as error:
                problems.append(f"{name}: cannot export: cannot read helper {helper} ({error.strerror or error})")
    return problems


if __name__ == "__main__":
    sys.exit(main())
