"""Publishing a post's exported model into the folder a static page loads it from, all or nothing.

A post that feeds a page in reader/ (the live reader, the decoding lab) exports its model itself: it
writes ONNX graphs and a card.json into its own model/ folder (git-ignored) and prints each file's
SHA-256 as `  <name>  sha256 <hex>`. Publishing copies those files into the page's folder, after
checking that they are the ones the post's stored run made (their digests are in its sealed outputs),
that the card has what the page reads, and that the graphs load and have the inputs and outputs the
page feeds and reads. Every check runs first; the new folder is then written in full beside the
page's folder under a temporary name and swapped in with one rename, so a failure at any point leaves
the page's folder as it was and nothing else behind.

`Export` says what one page takes; `checked_files` and `publish` do the rest for any post and any
destination (tools/live/reader_model.py: `make reader-model`; tools/live/aloud_model.py:
`make aloud-model`).
"""
import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tools.author.post_links import website_setting
from tools.core.notebooks import (
    REPO_ROOT, NotebookError, cannot_write, new_folder_mode, post_name, read_notebook, shown, site_config,
    write_files_atomically,
)
from tools.core.printed import printed_digests
from tools.core.seal import check_provenance, check_seal
from tools.live.onnx_reading import onnx_session
from tools.live.reader_files import EXPORT_FOLDER, PublishError


@dataclass(frozen=True)
class Export:
    """What one page loads from a post's export.

    page: how messages name the page ("the live reader"); command: the make command that publishes
    (said when a file changes mid-publish); names: the files copied, card.json among them; graphs:
    {graph file: ([inputs], [outputs])} by name, as the page feeds and reads them; card_problems:
    (card, post folder name) -> what is missing or wrong in the card, [] when nothing is.
    """
    page: str
    command: str
    names: tuple
    graphs: dict
    card_problems: Callable


# ---- small pieces every publish step uses -------------------------------------------------------

def execute_command(post):
    """How a message tells the author to re-run the post: make execute POST=<folder name without its date>."""
    return f"make execute POST={re.sub(r'^[0-9]{4}-[0-9]{2}-[0-9]{2}-', '', Path(post).parent.name)}"


def file_sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def site_url(root=REPO_ROOT):
    """_quarto.yml's website.site-url, ending in /; NotebookError naming the file when it is missing or not YAML."""
    site_config(root)
    return website_setting("site-url", root).rstrip("/") + "/"


def strict_json(text):
    """JSON as a browser's JSON.parse reads it: NaN and Infinity, which Python accepts, are refused."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON (a browser's JSON.parse refuses it)")
    return json.loads(text, parse_constant=refuse)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def is_text(value):
    return isinstance(value, str) and value.strip() != ""


def post_problems(card, post_folder):
    """What is wrong with a card's "post" (its title, and its url: the post's address on the site)."""
    if "post" not in card:
        return []
    post = card["post"]
    problems = []
    url = post.get("url", "") if isinstance(post, dict) else ""
    if not isinstance(post, dict) or not is_text(post.get("title")):
        problems.append("\"post\" needs a \"title\" (text)")
    expected = f"{site_url()}posts/{post_folder}/"
    if url != expected:
        problems.append(f"\"post\".\"url\" is {url!r}, not {expected}")
    return problems


def graph_problems(folder, graphs):
    """Graphs in `folder` that do not load, or whose inputs or outputs are not the ones `graphs` names."""
    problems = []
    for name, expected in graphs.items():
        try:
            session = onnx_session(Path(folder) / name, label=name)
        except PublishError as error:
            problems.append(str(error))
            continue
        found = ([node.name for node in session.get_inputs()], [node.name for node in session.get_outputs()])
        if found != tuple(expected):
            problems.append(f"{name} takes {found[0]} and gives {found[1]}; the page feeds {expected[0]} "
                            f"and reads {expected[1]}")
    return problems


# ---- checks before publishing -------------------------------------------------------------------

def checked_files(post, export):
    """(export folder, {file name: sha256 it was checked with}) once every check passes; else PublishError
    naming the file and the fix."""
    post = Path(post)
    where, rerun = post_name(post), execute_command(post)
    folder = post.parent / EXPORT_FOLDER
    try:
        nb = read_notebook(post)
    except NotebookError as error:
        raise PublishError(str(error)) from None
    # A digest is trusted only from outputs that are still what `make execute` sealed.
    untrusted = [what for check in (check_provenance, check_seal) for _, what in check(nb, post, REPO_ROOT)]
    if untrusted:
        raise PublishError(f"{where}: its stored outputs are not the ones its run made and sealed, so the digests "
                           f"they print prove nothing ({'; '.join(untrusted)}); re-execute the post: {rerun}")
    printed = printed_digests(nb)
    checked = {}
    for name in export.names:
        path = folder / name
        if not path.is_file():
            raise PublishError(f"{where}: {EXPORT_FOLDER}/{name} does not exist: the post writes it when it runs; "
                               f"re-execute the post: {rerun}")
        try:
            digest = checked[name] = file_sha256(path)
        except OSError as error:
            raise PublishError(f"{where}: cannot read {EXPORT_FOLDER}/{name} ({error.strerror or error}); "
                               f"re-execute the post: {rerun}") from None
        if digest not in printed.get(name, set()):
            said = "prints no digest for it" if name not in printed else "prints another digest for it"
            raise PublishError(f"{where}: {EXPORT_FOLDER}/{name} (sha256 {digest[:12]}…) is not the file the post's "
                               f"stored run made (its outputs' `  {name}  sha256 …` line {said}); "
                               f"re-execute the post: {rerun}")
    try:
        card = strict_json((folder / "card.json").read_text(encoding="utf-8"))
    except ValueError as error:  # UnicodeDecodeError too
        raise PublishError(f"{where}: {EXPORT_FOLDER}/card.json is not JSON ({error}); fix the cell that writes "
                           f"it, then re-execute the post: {rerun}") from None
    if not isinstance(card, dict):
        problems = [f"card.json holds {type(card).__name__}, not a JSON object"]
    else:
        problems = export.card_problems(card, post.parent.name)
    problems += graph_problems(folder, export.graphs)
    if problems:
        raise PublishError(f"{where}: {EXPORT_FOLDER}/ is not what {export.page} loads: " + "; ".join(problems)
                           + f". Fix the cell that exports it, then re-execute the post: {rerun}")
    return folder, checked


# ---- publishing ---------------------------------------------------------------------------------

def publish(post, target, export, echo=print):
    """Replace folder `target` with the post's checked export, all or nothing; returns the card.

    Every check runs before anything is written. The new folder is then written in full beside
    `target` (".<name>.publishing-…"), and swapped with it in one rename; other files of the old
    folder go with it. A failure at any point (a full disk, a folder that is not writable, Ctrl-C)
    removes what was written and leaves `target` as it was: PublishError says what happened.
    """
    folder, checked = checked_files(post, export)
    target = Path(target)
    staging, done = None, False
    try:
        contents = {name: (folder / name).read_bytes() for name in export.names}
        changed = [name for name, data in contents.items() if hashlib.sha256(data).hexdigest() != checked[name]]
        if changed:
            raise PublishError(f"{post_name(post)}: {EXPORT_FOLDER}/{', '.join(changed)} changed while it was being "
                               f"checked; run {export.command} again")
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.publishing-", dir=target.parent))
        write_files_atomically([(staging / name, data) for name, data in contents.items()])
        os.chmod(staging, target.stat().st_mode & 0o777 if target.is_dir() else new_folder_mode())
        card = json.loads(contents["card.json"].decode("utf-8"))
        summary = [f"  {name}  sha256 {file_sha256(staging / name)}" for name in export.names]
        retired = sorted(entry.name for entry in target.iterdir() if entry.name not in export.names) \
            if target.is_dir() else []
        swap_folders(staging, target)
        done = True
    except OSError as error:
        meant = Path(error.filename) if error.filename else target
        if staging is not None and meant.parent == staging:  # name the file it was to become, not the temporary
            error.filename = str(target / meant.name)
        elif meant.name.startswith(f".{target.name}.publishing-"):
            error.filename = str(target)
        raise PublishError(f"{cannot_write(error, target)}; {shown(target)} is as it was, and nothing was "
                           "left behind") from None
    finally:
        if staging is not None and staging.exists():  # the new folder on failure, the old one once swapped
            shutil.rmtree(staging, ignore_errors=True)
    if done:
        remove_leftovers(target)
        for line in summary:
            echo(line)
        for name in retired:
            echo(f"  removed {name}: the page loads only {', '.join(export.names)}")
    return card


def remove_leftovers(target):
    """Folders an earlier publish left beside `target` when it was killed outright (kill -9, power loss);
    the older publish step's per-file temporaries inside it went with the old folder."""
    for leftover in target.parent.glob(f".{target.name}.publishing-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def swap_folders(new, target):
    """Put folder `new` at `target` in one step; the old `target`, if any, is then at `new` (for removal).

    Linux swaps two paths atomically (renameat2 with RENAME_EXCHANGE), so `target` is never
    missing; elsewhere the old folder is renamed aside first and put back if the second rename fails.
    """
    new, target = Path(new), Path(target)
    if not target.exists():
        os.rename(new, target)
        return
    if exchange_paths(new, target):
        return
    aside = new.with_name(new.name + ".old")
    os.rename(target, aside)
    try:
        os.rename(new, target)
    except BaseException:
        os.rename(aside, target)
        raise
    os.rename(aside, new)


def exchange_paths(first, second):
    """Swap two paths atomically where the system can (Linux 3.15+); False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # an old kernel, or a file system without it
        return False
    raise OSError(code, os.strerror(code), str(second))
