"""Execute post notebooks in place, keeping the author's edits and recording provenance.

Quarto never runs our code: it renders the outputs stored in each notebook. So
running a post is a separate, explicit step, and this is it. A run can take
minutes to hours, and the author keeps writing meanwhile, so the notebook on disk
is never overwritten with the copy that was executed. Instead, when the run
finishes, the file is read again and the new outputs are merged onto it: a code
cell gets the outputs of the run only if its source is still the source that ran;
prose and code edited during the run stay as the author left them (an edited code
cell keeps its old outputs, and `make check` calls it stale).

The merged notebook is written atomically, so a crash or Ctrl-C leaves the old
file intact. A kernel that dies (out of memory, a segfault in a library) is
restarted and the run retried; a cell that raises is not retried: its error is
reported with the post and the cell, and nothing is written.

Each successful run records, in the notebook's metadata, when and where it ran
(Python and package versions, device, machine), which parameters it used, which
data it read (by whether its code calls a download function at all), and a seal:
SHA-256 digests over every code cell's source and outputs, in order, and over that
provenance, which `make check` recomputes (tools/core/notebooks.py).

The kernel is always this project's: the Python running this tool, whatever
kernelspec named `python3` a user may have installed (one pointing at another
Python would run the post without the project's packages).

Ctrl-C stops the run and writes nothing: "interrupted: the notebook on disk is as
it was before this run", exit status 130. So does any other failure: a post folder
that cannot be written is found before the run starts (a probe file is made and
removed); a full disk at the end says so, and the notebook is as it was.

What the tool learns from the kernel at the end (versions, device, machine) does not
travel through the notebook's `sys.stdout`, which a cell may replace
(`sys.stdout = open(os.devnull, "w")`): it is published as display data. A replaced
stream is reported, naming the cell that assigns it, since what later cells print
is then missing from the saved outputs.
"""
import argparse
import ast
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone

from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets import default

from tools.core import numerics
from tools.run import standin_data
from tools.numbers.bindings import recorded_results, rewrite_notebook
from tools.author.inline_helpers import helper_problems, setup_drift
from tools.core.data_sources import HUB_DATA, STAND_IN_DATA
from tools.core.notebooks import (
    INJECTED_TAG, NO_DOWNLOAD, NotebookError, assigned_names, blog_metadata, cannot_write, cell_key, code_cells,
    describe_cell, download_calls, find_posts, folders_without_notebook, parameters_cell, parsed_code_cells,
    post_name, read_notebook, record_seal, unreadable_file, write_notebook_atomically,
)

PROBE_TAG = "provenance-probe"
# Packages whose versions a reader needs to reproduce a run.
RECORDED_PACKAGES = ["torch", "numpy", "matplotlib", "visualtorch", "huggingface_hub", "nbclient", "ipykernel"]
PROJECT_KERNEL = "reading-digits-project"
INTERRUPTED = "interrupted: the notebook on disk is as it was before this run"
# How long one cell may run, and how large one output may be, unless told otherwise (--cell-timeout and
# --max-output-mb; CELL_TIMEOUT and MAX_OUTPUT_MB in the environment, which `make execute` passes on). The longest
# cell of the posts trains for about 12 minutes on one CPU thread; their largest output is under 0.1 MB.
DEFAULT_CELL_TIMEOUT_S = 30 * 60
DEFAULT_MAX_OUTPUT_MB = 2.0

# Runs last, in the post's own kernel, so what it reports is what the post used. It reports as display
# data, not by print(): a post may have replaced sys.stdout (or shadowed print), and the report must still arrive.
PROBE_MIME = "application/vnd.reading-digits.provenance+json"
PROBE_SOURCE = f"""
import importlib.metadata as _metadata, platform as _platform, sys as _sys
from IPython.display import display as _display
def _version(name):
    try:
        return _metadata.version(name)
    except _metadata.PackageNotFoundError:
        return None
def _cpu():
    try:
        with open("/proc/cpuinfo") as _info:
            return next(line.split(":", 1)[1].strip() for line in _info if line.startswith("model name"))
    except (OSError, StopIteration):
        return _platform.processor() or _platform.machine()
def _numerics():
    import os as _os
    _found = {{_name: _os.environ.get(_name) for _name in {sorted(numerics.PINNED)!r}}}
    if "torch" in _sys.modules:
        _found["cpu_capability"] = _sys.modules["torch"].backends.cpu.get_cpu_capability()
    return _found
def _replaced_streams():
    try:
        from ipykernel.iostream import OutStream as _OutStream
    except ImportError:
        return {{}}
    return {{_name: repr(getattr(_sys, _name))[:120] for _name in ("stdout", "stderr")
            if not isinstance(getattr(_sys, _name), _OutStream)}}
_display({{{PROBE_MIME!r}: {{
    "python": _platform.python_version(),
    "packages": {{_name: _version(_name) for _name in {RECORDED_PACKAGES!r}}},
    "device": str(globals().get("device", "not reported by the post")),
    "machine": {{"system": _platform.platform(), "architecture": _platform.machine(), "cpu": _cpu()}},
    "numerics": _numerics(),
    "replaced_streams": _replaced_streams(),
}}}}, raw=True)
"""


class ExecutionFailed(Exception):
    """A post could not be executed; the message names the post, the cell and the reason."""


def cell_timeout_s(given=None):
    """Seconds one cell may run: `given` (the command line), else $CELL_TIMEOUT, else 30 minutes."""
    return setting(given, "CELL_TIMEOUT", DEFAULT_CELL_TIMEOUT_S)


def max_output_mb_of(given=None):
    """Megabytes one output may take in the notebook: `given`, else $MAX_OUTPUT_MB, else 2."""
    return setting(given, "MAX_OUTPUT_MB", DEFAULT_MAX_OUTPUT_MB)


def setting(given, variable, default):
    if given is not None:
        return given
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        raise NotebookError(f"{variable}={value!r} is not a number") from None
    if number <= 0:
        raise NotebookError(f"{variable}={value!r} must be more than 0")
    return int(number) if number.is_integer() else number


def with_parameters(nb, overrides):
    """A copy of `nb` with a cell after its parameters cell that sets `overrides` (papermill's convention)."""
    nb = nbformat.from_dict(nb)
    if not overrides:
        return nb
    cell = parameters_cell(nb)
    if cell is None:
        raise NotebookError("has no code cell tagged 'parameters' to override")
    unknown = sorted(set(overrides) - set(assigned_names(cell.source)))
    if unknown:
        raise NotebookError(f"parameters cell does not define {unknown}")
    lines = ["# Parameters injected for this run; the post's own values are in the cell above."]
    lines += [f"{name} = {value!r}" for name, value in overrides.items()]
    injected = nbformat.v4.new_code_cell("\n".join(lines), metadata={"tags": [INJECTED_TAG]})
    nb.cells.insert(nb.cells.index(cell) + 1, injected)
    return nb


class ProjectKernelSpecs(KernelSpecManager):
    """One kernel only: the Python running this tool, with the project's packages.

    Jupyter looks for a kernel named `python3` in the user's folders before the
    project's, so a user-level kernelspec could run a post in another Python.
    """

    def find_kernel_specs(self):
        return {PROJECT_KERNEL: str(Path(sys.executable).parent)}

    def get_kernel_spec(self, kernel_name):
        return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                          display_name=f"Python ({PROJECT_KERNEL})", language="python", metadata={},
                          resource_dir=str(Path(sys.executable).parent))


class ProjectKernelManager(AsyncKernelManager):
    @default("kernel_spec_manager")
    def _project_kernel_specs(self):
        return ProjectKernelSpecs(parent=self)


class ProgressClient(NotebookClient):
    """An nbclient that prints each cell as it starts and echoes what the notebook prints (epochs, say).

    Cells are announced with the numbers they have in the author's notebook (`numbers`:
    cell id -> number), so progress and error messages agree even when a smoke run
    adds a cell of injected parameters.
    """

    def __init__(self, nb, name, echo, numbers, max_output_bytes=None, **kwargs):
        super().__init__(nb, kernel_name=PROJECT_KERNEL, kernel_manager_class=ProjectKernelManager, **kwargs)
        self.name, self.echo = name, echo
        self.numbers, self.running, self.max_output_bytes, self.shown = numbers, None, max_output_bytes, {}
        self.too_large = None  # (cell, bytes) of an output that passed the limit; the kernel is interrupted
        self.positions = {index: position for position, (index, _) in enumerate(self.runnable_cells(), start=1)}
        self.labels = {index: f"cell {numbers[cell.get('id')]}" if cell.get("id") in numbers else cell_label(cell, numbers)
                       for index, cell in self.runnable_cells()}
        self.on_cell_start = self.announce_cell

    def runnable_cells(self):
        return [(index, cell) for index, cell in enumerate(self.nb.cells)
                if cell.cell_type == "code" and PROBE_TAG not in cell.metadata.get("tags", [])]

    def running_cell(self):
        """The cell that was running last, numbered as in the author's notebook."""
        return "a cell" if self.running is None else cell_label(self.nb.cells[self.running], self.numbers)

    def announce_cell(self, cell, cell_index):
        self.running = cell_index
        if cell_index in self.positions:
            self.echo(f"[{self.name}] {self.labels[cell_index]} "
                      f"({self.positions[cell_index]}/{len(self.positions)} code cells)")

    def was_signalled(self):
        """True when Ctrl-C (or SIGTERM) reached nbclient's own handler, which shuts the kernel down.

        nbclient then reports a dead kernel, or fails an assertion while cleaning up;
        neither says what happened, so the caller asks here.
        """
        return getattr(self, "_async_cleanup_kernel_future", None) is not None

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] == "stream" and cell_index in self.positions:
            for line in msg["content"]["text"].rstrip("\n").splitlines():
                self.echo(f"    | {line}")
        if self.too_large:
            return None  # the run is being stopped: what comes after is not kept
        if self.max_output_bytes and msg["msg_type"] in ("stream", "display_data", "execute_result"):
            # A stream's messages make one output: count them together, and stop the run as soon as it is
            # too large (a cell printing in a loop would otherwise fill the memory, or never end).
            content = msg["content"]
            key = (cell_index, "stream", content.get("name")) if msg["msg_type"] == "stream" else (cell_index, id(msg))
            added = len(content["text"]) if msg["msg_type"] == "stream" else len(json.dumps(content.get("data", {})))
            self.shown[key] = self.shown.get(key, 0) + added
            if self.shown[key] > self.max_output_bytes:
                self.too_large = (self.running_cell(), self.shown[key])
                asyncio.ensure_future(self.km.interrupt_kernel())
                return None
        return super().output(outs, msg, display_id, cell_index)


def cell_label(cell, numbers):
    """'cell 7 (code)' as in the author's notebook; the cell a smoke run injects has no number there."""
    if cell.get("id") in numbers:
        return describe_cell(numbers[cell.get("id")], cell)
    tags = cell.metadata.get("tags", [])
    if PROBE_TAG in tags:
        return "the cell the tool runs after the last one (it reports versions and device)"
    return "the injected parameters cell" if INJECTED_TAG in tags else "a cell"


def copy_post(post_dir, scratch, ignore=None):
    """A copy of the post folder `post_dir` in the folder `scratch`, the other posts linked beside it; returns it.

    A later part may read what an earlier one saved in its own folder (the handwriting post loads the
    reader part 2 saved, as ../<part 2's folder>/reader.pt), so a copy must find its neighbours where
    the real folder has them. They are linked, not copied: a post writes only into its own folder.
    """
    post_dir, scratch = Path(post_dir), Path(scratch)
    copy = scratch / post_dir.name
    shutil.copytree(post_dir, copy, ignore=ignore)
    for neighbour in sorted(post_dir.resolve().parent.iterdir()):
        if neighbour.is_dir() and neighbour.name != post_dir.name and not (scratch / neighbour.name).exists():
            (scratch / neighbour.name).symlink_to(neighbour, target_is_directory=True)
    return copy


def execute_copy(nb, post_dir, name, *, overrides=None, env=None, time_limit=None, kernel_retries=1, echo=print,
                 cell_timeout=None, max_output_mb=None):
    """Execute a copy of `nb` from `post_dir` and return it, sealed and with provenance; `nb` is not touched.

    `time_limit` bounds the whole run; `cell_timeout` (seconds) each cell, and `max_output_mb` each output
    (both default to the environment's CELL_TIMEOUT and MAX_OUTPUT_MB, else 30 minutes and 2 MB).
    Raises KeyboardInterrupt when Ctrl-C stopped it, whatever state nbclient was left in.
    """
    per_cell, largest = cell_timeout_s(cell_timeout), max_output_mb_of(max_output_mb)
    working = with_parameters(nb, overrides)
    working.cells.append(nbformat.v4.new_code_cell(PROBE_SOURCE, metadata={"tags": [PROBE_TAG]}))
    numbers = {cell.get("id"): number for number, cell in enumerate(nb.cells, start=1) if cell.get("id")}
    started = time.monotonic()
    deadline = started + time_limit if time_limit else None
    for attempt in range(kernel_retries + 1):
        client = ProgressClient(
            nbformat.from_dict(working), name, echo, numbers, coalesce_streams=True,
            resources={"metadata": {"path": str(post_dir)}}, max_output_bytes=largest * 1e6,
            timeout_func=lambda cell: max(1, min(per_cell, int(deadline - time.monotonic()))) if deadline else per_cell,
        )
        # The kernel process's own stderr (its log, a C library's complaint) goes to a file, shown
        # only when the kernel dies: its shutdown chatter after Ctrl-C is not the author's concern.
        with tempfile.TemporaryFile("w+", prefix="kernel-", suffix=".log") as kernel_log:
            try:
                executed = client.execute(env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})}, stderr=kernel_log)
                failure = None
            except BaseException as error:  # nbclient's cleanup after Ctrl-C can raise anything, an AssertionError too
                failure = error
                said = last_words(kernel_log)
        if client.too_large:  # before Ctrl-C: the tool interrupted the kernel itself
            cell, size = client.too_large
            raise ExecutionFailed(f"{name}: {cell} shows an output of {size / 1e6:.1f} MB so far, past the limit of "
                                  f"{largest:.1f} MB: stopped there; {OUTPUT_ADVICE}") from None
        if failure is None:
            break
        if client.was_signalled() or isinstance(failure, KeyboardInterrupt) or \
                getattr(failure, "ename", None) == "KeyboardInterrupt":
            raise KeyboardInterrupt from None
        if isinstance(failure, DeadKernelError):
            if attempt == kernel_retries:
                raise ExecutionFailed(f"{name}: the kernel died {attempt + 1} times; gave up{said}") from None
            echo(f"[{name}] the kernel died{said}; starting a fresh one (retry {attempt + 1} of {kernel_retries})")
        elif isinstance(failure, CellTimeoutError):
            if deadline and deadline - time.monotonic() < 1:
                raise ExecutionFailed(f"{name}: ran past its time limit of {time_limit} s, in "
                                      f"{client.running_cell()}; nothing was written") from None
            raise ExecutionFailed(f"{name}: {client.running_cell()} ran past the time limit of {per_cell} s for one "
                                  "cell; if it needs longer, raise it (--cell-timeout SECONDS, or "
                                  "`make execute CELL_TIMEOUT=…`); nothing was written") from None
        elif isinstance(failure, CellExecutionError):
            raise ExecutionFailed(f"{name}: {failed_cell(client.nb, numbers)} raised {failure.ename}: "
                                  f"{failure.evalue}; fix it and run again (nothing was written)") from None
        elif isinstance(failure, OSError):  # no kernel could start: a full disk for its connection file, say
            raise ExecutionFailed(f"{name}: could not run the kernel ({failure.strerror or failure}"
                                  + (f": {failure.filename}" if failure.filename else "") + "); nothing was written"
                                  ) from None
        else:
            raise failure
    probe = executed.cells.pop()
    oversized(executed, numbers, name, largest)
    reported = probe_report(probe, name)
    replaced = reported.pop("replaced_streams", None) or {}
    if replaced:
        echo(replaced_stream_warning(name, nb, replaced))
    record_provenance(executed, reported, overrides, env, started)
    return executed


OUTPUT_ADVICE = ("print or plot less (or raise the limit: --max-output-mb MB, or `make execute MAX_OUTPUT_MB=…`); "
                 "nothing was written")


def oversized(executed, numbers, name, largest):
    """ExecutionFailed, naming the cell and the size, for the first output larger than `largest` MB in the notebook."""
    for cell in executed.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            size = len(json.dumps(output, ensure_ascii=False).encode("utf-8"))
            if size > largest * 1e6:
                raise ExecutionFailed(f"{name}: {cell_label(cell, numbers)} shows an output of {size / 1e6:.1f} MB, "
                                      f"over the limit of {largest:.1f} MB; {OUTPUT_ADVICE}")


def probe_report(probe, name):
    """What the probe cell published about the kernel; ExecutionFailed when nothing readable arrived."""
    for output in probe.get("outputs", []):
        report = output.get("data", {}).get(PROBE_MIME)
        if isinstance(report, str):
            try:
                report = json.loads(report)
            except ValueError:
                continue
        if isinstance(report, dict):
            return dict(report)
    said = "; ".join(f"{output.get('ename')}: {output.get('evalue')}" for output in probe.get("outputs", [])
                     if output.get("output_type") == "error")
    raise ExecutionFailed(f"{name}: every cell ran, but the kernel's report of its versions and device (a cell the "
                          f"tool runs after the last) did not arrive{f' ({said})' if said else ''}; a cell may have "
                          "replaced IPython's display machinery: undo that in the cell that does it and run again "
                          "(nothing was written)")


STREAMS = {"sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__"}


def stream_assigning_cells(nb):
    """'cell 3 (code)' for each code cell that assigns sys.stdout or sys.stderr (also through an alias or setattr)."""
    found = []
    parsed, names = parsed_code_cells(nb)
    for number, cell, tree in parsed:
        for node in ast.walk(tree) if tree else []:
            targets = (node.targets if isinstance(node, ast.Assign) else [node.target]
                       if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            assigns = any(names.qualified(target) in STREAMS for target in targets)
            if isinstance(node, ast.Call) and names.qualified(node.func) == "setattr" and len(node.args) >= 2:
                owner, attribute = node.args[0], node.args[1]
                assigns |= (isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)
                            and f"{names.qualified(owner)}.{attribute.value}" in STREAMS)
            if assigns:
                found.append(describe_cell(number, cell))
                break
    return found


def replaced_stream_warning(name, nb, replaced):
    """One line: which cell replaced which stream, what that costs, and what to write instead."""
    streams = " and ".join(f"sys.{stream} (now {shown})" for stream, shown in sorted(replaced.items()))
    cells = stream_assigning_cells(nb)
    who = " and ".join(cells) if cells else "a cell (none assigns it by name)"
    return (f"[{name}] warning: {who} replaced {streams}, so what the cells after it print is not in the saved "
            "outputs (everything the notebook showed is saved); to silence a block, use "
            "contextlib.redirect_stdout, which puts the stream back")


def last_words(kernel_log):
    """The last line the dead kernel wrote to its stderr, apart from its start-up warning, for the message."""
    kernel_log.seek(0)
    lines = [line.strip() for line in kernel_log.read().splitlines()
             if line.strip() and "running over TCP without encryption" not in line]
    return f" (it said: {lines[-1][:160]})" if lines else ""


def failed_cell(working, numbers):
    """The cell that raised, numbered as in the author's notebook (the working copy has extra cells)."""
    raised = next((cell for cell in working.cells if any(
        output.output_type == "error" for output in cell.get("outputs", []))), None)
    return "a cell" if raised is None else cell_label(raised, numbers)


def data_read(nb, env):
    """What the provenance says the run read: only a notebook that downloads something read a data file."""
    if not download_calls(nb):
        return NO_DOWNLOAD
    return STAND_IN_DATA if standin_data.offline_environment().items() <= (env or {}).items() else HUB_DATA


def record_provenance(executed, reported, overrides, env, started):
    blog_metadata(executed)["provenance"] = {
        "executed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "duration_s": round(time.monotonic() - started, 1),
        **reported,
        "parameters_overridden": dict(overrides or {}),
        "data": data_read(executed, env),
    }
    for _, cell in code_cells(executed):
        cell.metadata.get("blog", {}).pop("source_sha256", None)  # per-cell hashes of older runs: the seal holds them
        if cell.metadata.get("blog") == {}:
            del cell.metadata["blog"]
    record_seal(executed)


def transplant_outputs(executed, onto):
    """Copy the run's outputs onto the current notebook, cell by cell, where the code is unchanged.

    Returns the numbers of code cells that were edited during the run and so kept their old outputs.
    """
    ran = {cell_key(position, cell): cell for position, (_, cell) in enumerate(code_cells(executed))}
    edited = []
    for position, (number, cell) in enumerate(code_cells(onto)):
        source = ran.get(cell_key(position, cell))
        if source is None or source.source != cell.source:
            edited.append(number)
            continue
        cell.outputs = source.outputs
        cell.execution_count = source.execution_count
        cell.metadata.pop("blog", None)
        if "blog" in source.metadata:
            cell.metadata["blog"] = dict(source.metadata["blog"])
        if "execution" in source.metadata:
            cell.metadata["execution"] = source.metadata["execution"]
    for key in ("provenance", "seal"):
        blog_metadata(onto)[key] = blog_metadata(executed)[key]
    return edited


def writable_folder_problem(path):
    """Why the notebook at `path` could not be replaced when the run ends, or None: found before an hour-long run.

    A probe file is made and removed beside it (os.access is not enough: it says yes to root on a
    read-only mount); a disk that fills up during the run is still reported at the end.
    """
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=path.parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        return cannot_write(OSError(error.errno, error.strerror, str(path)) if error.errno else error, path)
    return None


def stale_setup(nb, name):
    """`name: why; run make inline` when the post's generated setup cell is out of step with its helpers or
    with the packages its cells import (tools/author/inline_helpers.py), or None. A run would execute the old
    helper code (or lack a package), and `make check` would refuse its outputs only afterwards."""
    try:
        drift = setup_drift(nb)
    except NotebookError as error:  # blog.helpers names an unknown helper: the message says what to declare
        return f"{name}: {error}; nothing was run"
    except (OSError, UnicodeDecodeError) as error:
        drift = next(iter(helper_problems()), None) or unreadable_file(error, nb)
    if drift:
        return f"{name}: {drift}; run `make inline` (it rewrites the setup cell), then run this again; nothing was run"
    return None


def refuse_stale_setups(paths):
    """Before anything runs: ExecutionFailed naming each of the posts at `paths` whose setup cell is stale."""
    stale = [problem for problem in (stale_setup(read_notebook(path), post_name(path)) for path in paths) if problem]
    if stale:
        raise ExecutionFailed("\n".join(stale))


def say_results(executed, name, echo):
    """Show what the run recorded with result() (_results.py), `name = value`: the numbers the prose may quote."""
    records, _ = recorded_results(executed)
    if records:
        echo(f"[{name}] {len(records)} result(s) recorded (bind them in the prose: `make bind`):")
    for record in records.values():
        echo(f"  {record.name} = {record.text}" + ("  (reference)" if record.reference else ""))


def execute_in_place(path, *, offline=False, kernel_retries=1, echo=print, cell_timeout=None, max_output_mb=None):
    name = post_name(path)
    nb = read_notebook(path)
    refusal = stale_setup(nb, name)
    if refusal:
        raise ExecutionFailed(refusal)
    unwritable = writable_folder_problem(Path(path))
    if unwritable:
        raise ExecutionFailed(f"{name}: {unwritable}; nothing was run")
    env = standin_data.offline_environment() if offline else None
    echo(f"[{name}] executing from {path.parent}" + (" (offline, stand-in data)" if offline else ""))
    executed = execute_copy(nb, path.parent, name, env=env, kernel_retries=kernel_retries, echo=echo,
                            cell_timeout=cell_timeout, max_output_mb=max_output_mb)
    current = read_notebook(path)  # the author may have edited it while it ran
    edited = transplant_outputs(executed, onto=current)
    rewrites = rewrite_notebook(current)  # the prose follows the run: each bound number from its new record
    try:
        write_notebook_atomically(current, path)
    except OSError as error:
        raise ExecutionFailed(f"{name}: the run finished, but its outputs could not be saved: "
                              f"{cannot_write(error, path)}; the notebook on disk is as it was before this run"
                              ) from None
    seconds = blog_metadata(current)["provenance"]["duration_s"]
    echo(f"[{name}] done in {seconds} s; outputs saved")
    say_results(executed, name, echo)
    if rewrites:
        echo(f"[{name}] the run changed {len(rewrites)} sentence(s) of the prose; reread them:")
    for where, old, new in rewrites:
        echo(f"  {where}:\n    was: {old}\n    now: {new}")
    if edited:
        echo(f"[{name}] cells {edited} changed while it ran and kept their old outputs: run it again")


def say_skipped_folders():
    for folder, why in folders_without_notebook():
        print(f"skipped {post_name(folder / 'index.ipynb')}: {why}", file=sys.stderr, flush=True)


def positive(text):
    """A number above 0, for --cell-timeout and --max-output-mb."""
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0")
    return int(number) if number.is_integer() else number


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="only the post whose folder name is this, or the one that contains it")
    parser.add_argument("--all", action="store_true", help="with --post: every post that matches (make: ALL=1)")
    parser.add_argument("--offline", action="store_true",
                        help="read data from the project's stand-in cache (make standin) instead of the Hub")
    parser.add_argument("--kernel-retries", type=int, default=1, help="fresh kernels to try after one dies")
    parser.add_argument("--cell-timeout", type=positive, metavar="SECONDS",
                        help=f"how long one cell may run (default: $CELL_TIMEOUT, else {DEFAULT_CELL_TIMEOUT_S} s)")
    parser.add_argument("--max-output-mb", type=positive, metavar="MB",
                        help=f"how large one output may be (default: $MAX_OUTPUT_MB, else {DEFAULT_MAX_OUTPUT_MB:g} MB)")
    parser.add_argument("notebooks", nargs="*", type=Path, help="execute these notebooks instead of the posts")
    args = parser.parse_args(argv)
    try:
        posts = args.notebooks or find_posts(args.post, every_match=args.all)
        if not args.notebooks:
            say_skipped_folders()
        refuse_stale_setups(posts)
        for number, path in enumerate(posts, start=1):
            print(f"== post {number}/{len(posts)}: {post_name(path)}", flush=True)
            execute_in_place(path, offline=args.offline, kernel_retries=args.kernel_retries,
                             echo=lambda line: print(line, flush=True), cell_timeout=args.cell_timeout,
                             max_output_mb=args.max_output_mb)
    except (NotebookError, ExecutionFailed) as error:
        print(error, file=sys.stderr)
        return 1
    except OSError as error:  # anything else the file system refused: said in one line, never a traceback
        print(f"stopped: {error.strerror or error}" + (f" ({error.filename})" if error.filename else "")
              + "; the post it was running was not changed", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\n{INTERRUPTED}", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
