"""Run a post end to end with small parameters, on the CPU, against the stand-in data.

A post's full run can take minutes or hours; the test suite still has to execute
every post, so a broken cell is caught before an author spends that time. Each
post lists small values for the knobs of its `parameters` cell in its metadata
(`blog.smoke_parameters`); this tool injects them after the parameters cell, as
papermill does, forces the CPU (`--device cuda` tries a GPU path instead, as
tools/run/gpu_run.sh --smoke does), points the Hugging Face cache at the project's
stand-in (offline), and executes a copy of the post's folder in a temporary
directory, so the committed notebook and its outputs are never touched. A smoke
run's provenance records the overridden parameters, and `make check` refuses such
outputs as a post.
"""
import argparse
import sys
import tempfile
from pathlib import Path

import nbformat

from tools.run import standin_data
from tools.run.execute_posts import (
    ExecutionFailed, copy_post, execute_copy, refuse_stale_setups, say_skipped_folders, stale_setup,
)
from tools.core.notebooks import (
    NotebookError, assigned_names, blog_metadata, find_posts, parameters_cell, post_name, read_notebook,
)

DEFAULT_TIME_LIMIT_S = 600


def smoke_parameters(nb, device="cpu"):
    """The post's smoke values, with the device set (the CPU unless told) when the post has that knob."""
    overrides = dict(blog_metadata(nb).get("smoke_parameters") or {})
    if not overrides:
        raise NotebookError("has no smoke parameters (notebook metadata blog.smoke_parameters)")
    cell = parameters_cell(nb)
    if cell is not None and "device" in assigned_names(cell.source):
        overrides["device"] = device
    return overrides


def smoke_run(path, *, time_limit=DEFAULT_TIME_LIMIT_S, device="cpu", echo=print):
    """Execute a temporary copy of the post at `path` with its smoke parameters; returns the executed notebook.

    `device="cuda"` tries a GPU path quickly (tools/run/gpu_run.sh --smoke); by default the GPU is hidden.
    """
    path = Path(path)
    nb = read_notebook(path)
    refusal = stale_setup(nb, post_name(path))  # before the stand-in data is built or a kernel started
    if refusal:
        raise ExecutionFailed(refusal)
    overrides = smoke_parameters(nb, device)
    standin_data.build()
    env = {**standin_data.offline_environment(), "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    with tempfile.TemporaryDirectory(prefix="smoke-") as scratch:
        copy = copy_post(path.parent, scratch)
        return execute_copy(nb, copy, f"smoke {post_name(path)}", overrides=overrides, env=env,
                            time_limit=time_limit, kernel_retries=0, echo=echo)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="only the post whose folder name is this, or the one that contains it")
    parser.add_argument("--all", action="store_true", help="with --post: every post that matches (make: ALL=1)")
    parser.add_argument("--time-limit", type=int, default=DEFAULT_TIME_LIMIT_S, help="seconds allowed per post")
    parser.add_argument("--save", type=Path, help="folder to save the executed smoke notebooks in, for a look")
    parser.add_argument("--device", default="cpu", help="device for posts with a `device` knob (default: cpu)")
    args = parser.parse_args(argv)
    try:
        posts = find_posts(args.post, every_match=args.all)
        say_skipped_folders()
        refuse_stale_setups(posts)
        for number, path in enumerate(posts, start=1):
            print(f"== smoke run {number}/{len(posts)}: {post_name(path)}", flush=True)
            executed = smoke_run(path, time_limit=args.time_limit, device=args.device,
                                 echo=lambda line: print(line, flush=True))
            print(f"   passed in {blog_metadata(executed)['provenance']['duration_s']} s", flush=True)
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                nbformat.write(executed, args.save / f"{path.parent.name}.ipynb")
    except (NotebookError, ExecutionFailed, standin_data.DataError) as error:
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted: smoke runs work on a temporary copy; no post was touched", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
