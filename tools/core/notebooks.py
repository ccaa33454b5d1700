"""What every tool needs to know about a post notebook, written once.

A post is `posts/<yyyy-mm-dd>-<slug>/index.ipynb`. The tools keep their own
records in the notebook's metadata under the key `blog`:

- `nb.metadata.blog.helpers`: the single-source helper files the notebook uses;
- `nb.metadata.blog.smoke_parameters`: small values for a test run on a CPU;
- `nb.metadata.blog.provenance`: where, when and how the stored outputs were made;
- `nb.metadata.blog.seal`: SHA-256 digests, made when the outputs were made, over
  every code cell's source and outputs in notebook order and over the provenance.
  `make check` recomputes them: outputs, images, provenance, the set or the order
  of code cells edited after the run no longer match. It is tamper-evidence against
  hand edits (anyone can recompute a digest), not a cryptographic signature.
"""
import ast
import errno
import hashlib
import io
import json
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

import nbformat
import yaml
from nbformat.warnings import DuplicateCellId

PLACEHOLDER = "TODO"  # what `make new` leaves for the author to write; `make check` lists each one left
REPO_ROOT = Path(__file__).resolve().parents[2]
POSTS_DIR = REPO_ROOT / "posts"
NOTEBOOK_NAME = "index.ipynb"
SETUP_TAG = "generated-setup"
# A generated cell that shows a computing helper the post reuses (tools/author/inline_helpers.py).
HELPER_TAG = "generated-helper"
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"


class NotebookError(Exception):
    """A problem with a notebook file that the author has to fix; the message says how."""


class CellOptionsError(NotebookError):
    """A code cell's `#|` options are not YAML; every check that reads options stops on it."""


SITE_CONFIG = "_quarto.yml"


def shown(path):
    """How a message names a file: relative to the repository when it lives there, else as given."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except (ValueError, OSError):
        return str(path)


def yaml_problem(error):
    """'line 3, column 7: expected <block end>, but found ...': where and what, from a PyYAML error."""
    mark = getattr(error, "problem_mark", None)
    at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    return at + " ".join(str(getattr(error, "problem", None) or error).split())


def site_config(root=REPO_ROOT):
    """_quarto.yml as a mapping whose `website` (if any) is a mapping too.

    Every tool that needs a site setting reads it here, so a missing, unreadable or
    malformed file is one NotebookError naming the file, the line and the fix, never a
    traceback from the YAML parser.
    """
    path = Path(root) / SITE_CONFIG
    restore = f"restore it (`git checkout -- {SITE_CONFIG}`)"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotebookError(f"{shown(path)} is missing: the site's settings (website.repo-url, website.site-url) "
                            f"live there; {restore}") from None
    except UnicodeDecodeError as error:
        raise NotebookError(f"{shown(path)} is not UTF-8 text (byte {error.start}: {error.reason}); "
                            "save it as UTF-8") from None
    except OSError as error:
        raise NotebookError(f"cannot read {shown(path)} ({error.strerror or error}); {restore}") from None
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise NotebookError(f"{shown(path)} is not valid YAML ({yaml_problem(error)}); fix that line "
                            f"(`git diff {SITE_CONFIG}` shows what changed)") from None
    except ValueError as error:  # PyYAML builds dates and numbers itself, and some fail there
        raise NotebookError(f"{shown(path)} holds a value YAML cannot build ({error}); fix it") from None
    if not isinstance(config, dict):
        raise NotebookError(f"{shown(path)} holds {type(config).__name__ if config is not None else 'nothing'}, "
                            f"not the site's settings (a mapping with project:, website: …); {restore}")
    if not isinstance(config.get("website", {}), (dict, type(None))):
        raise NotebookError(f"{shown(path)}: website is {json.dumps(config['website'], default=str)[:40]}, "
                            "not a mapping of settings (repo-url: …, site-url: …); fix it")
    return config


# ---- writing files: all or nothing --------------------------------------------------------------

def cannot_write(error, path):
    """'cannot write posts/x/index.ipynb (No space left on device): free some space …': one line that names
    the file, what the system said and what to do, for any OSError met while writing it."""
    path = Path(getattr(error, "filename", None) or path)
    folder = shown(path.parent)
    code = getattr(error, "errno", None)
    if code in (errno.ENOSPC, errno.EDQUOT):
        fix = "the disk is full: free some space and run it again"
    elif code in (errno.EACCES, errno.EPERM):
        fix = f"{folder} is not writable: make it writable (`chmod u+w {folder}`) and run it again"
    elif code == errno.EROFS:
        fix = f"{folder} is on a read-only file system: run it where the checkout can be written"
    elif code == errno.ENAMETOOLONG:
        fix = "the name is longer than the file system allows: shorten it"
    elif code == errno.ENOENT:
        fix = f"{folder} does not exist (was it moved or deleted while this ran?)"
    else:
        fix = "fix that and run it again"
    return f"cannot write {shown(path)} ({getattr(error, 'strerror', None) or error}): {fix}"


def notebook_text(nb):
    """The notebook's file text, exactly as nbformat.write writes it."""
    out = io.StringIO()
    nbformat.write(nb, out)
    return out.getvalue()


def new_file_mode():
    """The mode a new file gets from the process's umask (mkstemp's own is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def new_folder_mode():
    """The mode a new folder gets from the process's umask (mkdtemp's own is 0700)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def stage_file(path, content):
    """Write `content` (text or bytes) to a new temporary file beside `path` and return its name.

    The temporary file has `path`'s mode, or the umask's for a new file; on any failure
    (a full disk, a folder that is not writable) it is removed and the error raised.
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content.encode("utf-8") if isinstance(content, str) else content)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, path.stat().st_mode & 0o777 if path.exists() else new_file_mode())
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def write_files_atomically(files):
    """Write every (path, text or bytes) of `files`, or none of them.

    Each is first written in full to a temporary file beside its target: that is where
    a full disk or a read-only folder stops a write, and then every temporary file is
    removed and the targets are as they were. Only when all are written are they renamed
    over their targets, which needs no space.
    """
    staged = []
    try:
        for path, content in files:
            try:
                staged.append((stage_file(path, content), Path(path)))
            except OSError as error:  # it names the temporary file, if anything: name the file meant
                if error.errno is None:
                    raise
                raise OSError(error.errno, error.strerror, str(path)) from error
        for temporary, path in staged:
            os.replace(temporary, path)
    except BaseException:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)
        raise


def find_posts(substring=None, posts_dir=POSTS_DIR, every_match=False):
    """The post notebooks, oldest first, optionally only those whose folder name contains `substring`.

    A folder named exactly `substring` wins. A part of a name that several posts share
    stops with their list unless `every_match` says the author meant all of them:
    running several hour-long posts by accident is worse than asking again.
    """
    # Folders starting with "." or "_" are not posts (Quarto skips them too): a half-made `make new`, say.
    posts = sorted(path for path in Path(posts_dir).glob(f"*/{NOTEBOOK_NAME}")
                   if not path.parent.name.startswith((".", "_")))
    if not substring:
        return posts
    exact = [path for path in posts if path.parent.name == substring]
    if exact:
        return exact
    every_post = posts
    posts = [path for path in posts if substring in path.parent.name]
    if not posts:
        skipped = [f"{folder.name}: {why}" for folder, why in folders_without_notebook(posts_dir) if substring in folder.name]
        raise NotebookError(f"no post folder under {shown(posts_dir)} matches {substring!r}" +
                            "".join(f"\n  {line}" for line in skipped) + no_match_hint(substring, every_post))
    if len(posts) > 1 and not every_match:
        names = "\n".join(f"  {path.parent.name}" for path in posts)
        raise NotebookError(f"POST={substring} matches {len(posts)} posts:\n{names}\n"
                            f"name one (its folder name, or a part only it has), or add ALL=1 to take them all")
    return posts


def no_match_hint(substring, posts):
    """What to write instead of a POST= that matches no folder: its hyphenated form when that matches, else the list."""
    hyphenated = re.sub(r"[^a-z0-9]+", "-", substring.lower()).strip("-")
    near = [path.parent.name for path in posts if hyphenated and hyphenated in path.parent.name]
    if hyphenated != substring and near:
        return (f"; folder names are lower case with hyphens for spaces: POST={hyphenated} matches "
                f"{', '.join(near)}")
    names = ", ".join(path.parent.name for path in posts) or "none yet (make new TITLE=\"…\" starts one)"
    return f"; POST= is a post's folder name or a part of one; the posts: {names}"


def folders_without_notebook(posts_dir=POSTS_DIR):
    """(folder, why) for each post folder the tools would skip because it holds no `index.ipynb`."""
    found = []
    for folder in sorted(path for path in posts_dir.iterdir() if path.is_dir()):
        if folder.name.startswith((".", "_")) or (folder / NOTEBOOK_NAME).exists():
            continue
        others = sorted(path.name for path in folder.glob("*.ipynb"))
        held = f"holds {', '.join(others)}" if others else "holds no notebook"
        found.append((folder, f"no {NOTEBOOK_NAME} ({held}): the tools and Quarto look for "
                              f"{folder.name}/{NOTEBOOK_NAME} exactly; rename the post's notebook to it"))
    return found


def post_name(path):
    """How messages name a post: its folder, relative to the repository when it lives there."""
    path = Path(path).resolve()
    try:
        return str(path.parent.relative_to(REPO_ROOT))
    except ValueError:
        return str(path.parent)


def read_notebook(path):
    try:
        with warnings.catch_warnings():  # nbformat renames a copied cell's id and warns; the seal check names the copy
            warnings.simplefilter("ignore", DuplicateCellId)
            nb = nbformat.read(str(path), as_version=4)
    except FileNotFoundError:
        raise NotebookError(f"{path}: no such notebook") from None
    except Exception as error:  # nbformat raises several unrelated types for a broken file
        raise NotebookError(f"{path}: not a readable notebook ({error})") from None
    malformed = malformed_cell(nb) or malformed_metadata(nb)
    if malformed:
        raise NotebookError(f"{path}: {malformed}")
    return nb


def malformed_cell(nb):
    """What breaks the notebook format in its first broken cell, or None.

    nbformat reads such a file with only a warning, and every tool would then fail
    somewhere else with a traceback; the author is better told here.
    """
    if not isinstance(nb.get("cells"), list):
        return "has no list of cells; it is not a notebook as Jupyter writes it"
    for number, cell in enumerate(nb.cells, start=1):
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        where = f"cell {number} ({kind or 'no type'})"
        if kind not in ("code", "markdown", "raw"):
            return f"{where}: cell_type must be code, markdown or raw"
        source = cell.get("source")
        if not isinstance(source, str) and not (isinstance(source, list) and all(isinstance(line, str) for line in source)):
            return f"{where}: source is {json.dumps(source)}, not text; give it a string (\"\" for an empty cell)"
        if kind == "code" and not isinstance(cell.get("outputs"), list):
            return f"{where}: has no outputs list; add \"outputs\": [] (or open and save it in Jupyter)"
    return None


# The tools' own records and the shape each must have; `helpers` is a list of file names.
BLOG_RECORDS = {"provenance": dict, "seal": dict, "smoke_parameters": dict, "helpers": list}


def malformed_metadata(nb):
    """What is wrong with the tools' own records in the notebook metadata (edited by hand), or None."""
    blog = nb.metadata.get("blog", {})
    if not isinstance(blog, dict):
        return f"metadata blog is {json.dumps(blog)[:40]}, not a mapping; restore it (run `make execute`)"
    for key, kind in BLOG_RECORDS.items():
        if blog.get(key) is not None and not isinstance(blog[key], kind):
            return (f"metadata blog.{key} is {json.dumps(blog[key])[:40]}, not a {'mapping' if kind is dict else 'list'}; "
                    "restore it (run `make execute`)")
    return None


def write_notebook_atomically(nb, path):
    """Write to a temporary file beside `path`, then rename it over `path`.

    A crash or Ctrl-C at any moment leaves either the old file or the new one,
    never a truncated notebook.
    """
    write_files_atomically([(path, notebook_text(nb))])


def blog_metadata(node):
    """The tools' own metadata dict on a notebook or a cell, created if missing."""
    return node.metadata.setdefault("blog", {})


def source_sha256(source):
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def code_cells(nb):
    """(1-based cell number, cell) for every code cell, numbered as in the whole notebook."""
    return [(number, cell) for number, cell in enumerate(nb.cells, start=1) if cell.cell_type == "code"]


def describe_cell(number, cell):
    """'cell 7 (code)': how a message points the author at a cell."""
    return f"cell {number} ({cell.cell_type})"


def has_tag(cell, tag):
    return tag in cell.metadata.get("tags", [])


def cell_options(cell):
    """Quarto's `#|` options at the top of a code cell, as a dict."""
    lines = []
    for line in cell.source.splitlines():
        if not line.startswith("#|"):
            break
        lines.append(line[2:].strip())
    if not lines:
        return {}
    try:
        options = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f"option line {mark.line + 1}: " if mark else ""
        raise CellOptionsError(f"the `#|` options starting {'#| ' + lines[0]!r} are not valid YAML "
                               f"({at}{getattr(error, 'problem', None) or 'unreadable'}); fix them") from None
    return options if isinstance(options, dict) else {}


FRONT_MATTER = re.compile(r"\A\s*---\s*\n(.*?)\n---\s*(\n|\Z)", re.DOTALL)


def front_matter(nb):
    """The YAML front matter in the notebook's first cell, or None when there is none."""
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        return None
    match = FRONT_MATTER.match(nb.cells[0].source)
    if not match:
        return None
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        raise NotebookError(f"front matter is not valid YAML: {error}") from None
    except ValueError as error:  # PyYAML builds dates itself: 2026-13-45 fails here
        raise NotebookError(f"front matter holds an impossible date ({error}); write date: YYYY-MM-DD") from None
    return data if isinstance(data, dict) else {}


def prose_of(cell):
    """A markdown cell's text without its front matter block."""
    return FRONT_MATTER.sub("", cell.source, count=1)


def python_of(source):
    """Cell source as plain Python: IPython syntax (`%run`, `x = !ls`) becomes the calls IPython makes of it.

    IPython's own transformer does it, so the checks see exactly what the kernel runs;
    `%run x.py` becomes `get_ipython().run_line_magic('run', 'x.py')`.
    """
    try:
        ast.parse(source)
        return source
    except SyntaxError:
        pass
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # the light environment of the publish workflow may lack IPython
        raise NotebookError("a cell uses IPython syntax, and IPython is not installed to read it: "
                            "install requirements.txt (or add ipython to requirements-site.txt)") from None
    return TransformerManager().transform_cell(source)


def parse_problem(source):
    """Why the cell does not parse as Python even after IPython's transforms, or None."""
    try:
        ast.parse(python_of(source))
    except SyntaxError as error:
        return f"does not parse as Python (line {error.lineno}: {error.msg}), so no check can read it; fix it"
    return None


def parse_cell(source):
    """The cell's syntax tree, or None if it is not valid Python even for IPython (see `parse_problem`)."""
    try:
        return ast.parse(python_of(source))
    except SyntaxError:
        return None


class ImportedNames:
    """What each name in a notebook's code stands for, following imports and plain aliases.

    `import sys as s`, `from sys import path`, `fetch = hf_hub_download`: a check that
    looked for the literal `sys.path` or `hf_hub_download` would miss them, so names are
    resolved to the dotted name they were bound to (`s.path` -> `sys.path`).
    The kernel shares one namespace across cells, so bindings carry over in notebook order.
    """

    def __init__(self):
        self.bound = {}

    def learn(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.bound[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.bound[alias.asname or alias.name] = f"{self.qualify(node.module)}.{alias.name}"
            elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
                value = self.qualified(node.value)
                for target in node.targets:
                    if isinstance(target, ast.Name) and value and value != target.id:
                        self.bound[target.id] = value

    def qualify(self, dotted):
        head, _, rest = dotted.partition(".")
        head = self.bound.get(head, head)
        return f"{head}.{rest}" if rest else head

    def qualified(self, node):
        """`s.path.append` -> 'sys.path.append' when `s` is sys; None for anything but names and attributes."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            owner = self.qualified(node.value)
            return f"{owner}.{node.attr}" if owner else None
        return None


def parsed_code_cells(nb):
    """(number, cell, tree or None) for each code cell, and the names its imports and aliases bind.

    Names are learnt from the whole notebook first: a check that reads cell 3 knows
    an alias bound in cell 7 too, which errs on the side of looking.
    """
    names = ImportedNames()
    parsed = [(number, cell, parse_cell(cell.source)) for number, cell in code_cells(nb)]
    for _, _, tree in parsed:
        if tree is not None:
            names.learn(tree)
    return parsed, names


DOWNLOAD_FUNCTIONS = {"hf_hub_download", "snapshot_download", "load_dataset"}
# What provenance says of a notebook that downloads nothing (it makes its own data).
NO_DOWNLOAD = "none downloaded: the notebook makes its own data"


def download_calls(nb):
    """(number, cell, call, function name) for every call of a data download function, however it was imported."""
    found = []
    parsed, names = parsed_code_cells(nb)
    for number, cell, tree in parsed:
        for node in ast.walk(tree) if tree else []:
            if isinstance(node, ast.Call):
                name = (names.qualified(node.func) or "").rsplit(".", 1)[-1]
                if name in DOWNLOAD_FUNCTIONS:
                    found.append((number, cell, node, name))
    return found


def parameters_cell(nb):
    cells = [cell for cell in nb.cells if cell.cell_type == "code" and has_tag(cell, PARAMETERS_TAG)]
    return cells[0] if cells else None


def assigned_names(source):
    """Names bound by plain top-level assignments, e.g. the knobs of a parameters cell."""
    tree = parse_cell(source)
    names = []
    for node in tree.body if tree else []:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names += [target.id for target in targets if isinstance(target, ast.Name)]
    return names


def canonical_json(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def joined(value):
    """Notebook text may be stored as one string or as a list of lines; both mean the same."""
    return "".join(value) if isinstance(value, list) and all(isinstance(line, str) for line in value) else value


def output_record(output):
    """What a reader sees of one output: its type, text, data (images included) and error.

    Nothing volatile is in it: nbclient's timestamps live in the cell's metadata, not here.
    """
    record = {"output_type": output.get("output_type")}
    for key in ("name", "ename", "evalue", "traceback", "metadata"):
        if key in output:
            record[key] = output[key]
    if "text" in output:
        record["text"] = joined(output["text"])
    if "data" in output:
        record["data"] = {kind: joined(value) for kind, value in output["data"].items()}
    return record


def sealed_code_cells(nb):
    """The code cells a seal covers: all but empty ones, which run nothing and print nothing."""
    return [(number, cell) for number, cell in code_cells(nb) if joined(cell.source).strip()]


def cell_key(position, cell):
    """How a code cell is known across a run and in the seal: its id, or its place in notebooks without ids."""
    return cell.get("id") or f"code cell {position}"


# A code cell's metadata is sealed too, for Quarto renders from it: tags (remove-cell, hide-output,
# remove-input…) and any cell option written there instead of as a `#|` line (label, fig-cap, output,
# include, echo…). Left out are only what Jupyter and nbclient keep for themselves: timestamps and
# the editor's view of the cell, which no page shows.
UNSEALED_CELL_METADATA = {"execution", "ExecuteTime", "collapsed", "scrolled", "jupyter", "editable", "deletable",
                          "trusted"}


def sealed_metadata(cell):
    return {key: value for key, value in cell.get("metadata", {}).items() if key not in UNSEALED_CELL_METADATA}


# Seal version 2 leaves out the `#|` options that only say how the code is shown (folded or open,
# and the fold's label). They change nothing that ran and nothing an output shows, so folding a cell
# no longer costs a re-run; every other option (caption, alt text, output, echo…) stays sealed.
SEAL_VERSION = 2
PRESENTATION_OPTIONS = frozenset({"code-fold", "code-summary"})
OPTION_KEY = re.compile(r"#\| ?([A-Za-z0-9_-]+)\s*:")


def without_presentation_options(source):
    """`source` without its leading `code-fold`/`code-summary` option lines (and their continuations)."""
    lines = source.splitlines(keepends=True)
    options = 0
    while options < len(lines) and lines[options].startswith("#|"):
        options += 1
    kept, dropping = [], False
    for line in lines[:options]:
        key = OPTION_KEY.match(line)
        if key:  # a line without a key of its own continues the value above it
            dropping = key.group(1) in PRESENTATION_OPTIONS
        if not dropping:
            kept.append(line)
    return "".join(kept + lines[options:])


def cell_seal(position, cell, version=SEAL_VERSION):
    source = joined(cell.source)
    if version >= 2:
        source = without_presentation_options(source)
    outputs = [output_record(output) for output in cell.get("outputs", [])]
    return {
        "id": cell_key(position, cell),
        "source_sha256": source_sha256(source),
        "sha256": hashlib.sha256(canonical_json({"source": source, "outputs": outputs}).encode("utf-8")).hexdigest(),
        "metadata_sha256": hashlib.sha256(canonical_json(sealed_metadata(cell)).encode("utf-8")).hexdigest(),
    }


def compute_seal(nb, version=SEAL_VERSION):
    """The seal of the notebook as it is now: per code cell, the provenance, and the whole in order.

    `version` 1 (seals without a version) digests each cell's source whole; 2 leaves out the options
    that only fold or label the code (`without_presentation_options`)."""
    cells = [cell_seal(position, cell, version) for position, (_, cell) in enumerate(sealed_code_cells(nb))]
    provenance = blog_metadata(nb).get("provenance")
    provenance_sha256 = hashlib.sha256(canonical_json(provenance).encode("utf-8")).hexdigest()
    digest = hashlib.sha256(canonical_json({"cells": cells, "provenance": provenance_sha256}).encode("utf-8"))
    seal = {"cells": cells, "provenance_sha256": provenance_sha256, "sha256": digest.hexdigest()}
    return {"version": version, **seal} if version >= 2 else seal


def record_seal(nb):
    """Seal the outputs as they are now; only `make execute`, a seal upgrade that found the old seal holding
    (tools/core/seal.py), and test fixtures should call this."""
    blog_metadata(nb)["seal"] = compute_seal(nb)


def sync_posts(drift_of, bring_in_line, *, check, substring=None):
    """Report (`check`) or mend each post's generated parts; returns the exit status.

    `drift_of(nb, path)` says what is out of date, or None; `bring_in_line(nb, path)`
    mends it in memory and says what it did, or returns (what it did, [(path, bytes or
    text), ...]) for files of its own to write with the notebook (a thumbnail). The
    mended notebooks and those files are written together at the end, all or none
    (`write_files_atomically`): a full disk or a read-only post folder leaves every one
    as it was, and says so.
    """
    problems, mended = 0, []
    try:
        for path in find_posts(substring):
            nb = read_notebook(path)
            try:
                drift = drift_of(nb, path)
                if drift and check:
                    problems += 1
                    print(f"{post_name(path)}: {drift}; run `make inline`")
                elif drift:
                    try:
                        done = bring_in_line(nb, path)
                    except OSError as error:  # it may write a file of its own (a thumbnail)
                        problems += 1
                        print(f"{post_name(path)}: {cannot_write(error, path)}")
                        continue
                    done, files = done if isinstance(done, tuple) else (done, [])
                    mended.append((path, notebook_text(nb), done, list(files)))
            except NotebookError as error:
                problems += 1
                print(f"{post_name(path)}: {error}")
            except (OSError, UnicodeDecodeError) as error:
                problems += 1
                print(f"{post_name(path)}: {unreadable_file(error, nb)}")
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2
    if mended:
        try:
            write_files_atomically([item for path, text, _, files in mended for item in [*files, (path, text)]])
        except OSError as error:
            print(f"{cannot_write(error, mended[0][0])}; no notebook was changed", file=sys.stderr)
            return 1
        for path, _, done, _ in mended:
            print(f"{post_name(path)}: {done}")
    return 1 if problems else 0


def unreadable_file(error, nb=None):
    """A message for a helper or config file that is missing or not UTF-8 text."""
    if isinstance(error, UnicodeDecodeError):
        helpers = ", ".join(blog_metadata(nb).get("helpers", [])) if nb is not None else ""
        which = f"one of its helper files ({helpers})" if helpers else "a file it needs"
        return f"{which} is not UTF-8 text (byte {error.start}: {error.reason}); save it as UTF-8"
    name = getattr(error, "filename", None) or "a file it needs"
    return f"cannot read {name} ({error.strerror or error}); restore it (e.g. `git checkout -- {Path(name).name}`)"
