"""How far a re-run moves a post's results: run it again on other numeric paths and seeds.

    make spread POST=part [RUNS=n] [JOBS=2]

A post's numbers are one sample of a noisy process: another seed, or another CPU's
kernels, gives other last digits, and training carries them further. This tool executes
the post RUNS more times, each in a temporary copy of its folder (the committed notebook
and its files are never touched), offline on the stand-in data:

- on two numeric paths: `pinned`, the AVX2 kernels the setup cell asks for
  (tools/core/numerics.py), and `native`, the widest this chip has (AVX-512 where it has it) with MKL and
  oneDNN free to choose, which is what a CPU without the pins, or a reader's own
  environment, may use;
- with the seeds 0, 1, 2, ... injected into the parameters cell.

The page itself is the pinned path with its own seed; the runs cover the other
combinations, the three-run core first (native with the page's seed, pinned with the
next, native with the one after), then the rest of the grid.

Then it executes the post in place (`make execute`, offline), so that the page's own
spread cell prints the ranges, and writes spread.json beside the notebook: per run its
path, seed, environment, device, CPU and time, and every result it recorded; the page's
results; the notebook's code digest; all under a seal (`make check` refuses a report
that was edited, that measured other code, or whose page results are not the page's).
Progress is printed per run and per cell.

A page made on another chip need not drop out of the spread when the post is re-executed here
after a change that moves no result (a cell cut in two, a figure's layout): `CARRY=REF` keeps the
page run of the report at git ref REF as one more run, when that page ran on another CPU than this
one and every pinned-path run both reports made (same seed) gave the same results under both codes
(at least three of them; the native path is the machine's own, so it is not compared).
The run says where it came from; nothing else is carried.
"""
import argparse
import itertools
import json
import math
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from tools.core import numerics
from tools.run import standin_data
from tools.run.execute_posts import (
    ExecutionFailed, copy_post, execute_copy, execute_in_place, refuse_stale_setups,
)
from tools.core.notebooks import (
    REPO_ROOT, NotebookError, assigned_names, blog_metadata, find_posts, parameters_cell, post_name, read_notebook,
)
from tools.core.seal import sealed
from tools.measure.cell_times import recorded_seconds
from tools.measure.spread_report import (
    CODE_DIGEST, SPREAD_REPORT, ReportError, code_sha256, measured_this_code, read_report, report_path, results_of,
    table_names, taken_from_the_run,
)

DEFAULT_RUNS = 3  # the fewest that give two numeric paths and three seeds with the page's run


def planned_runs(count, page_seed=0):
    """[(path, seed)] for `count` runs beside the page's (pinned, page_seed): the core first, then the grid."""
    seeds = itertools.count(page_seed)
    grid = [(path, seed) for seed in (next(seeds) for _ in range(count + 1)) for path in ("native", "pinned")]
    core = [("native", page_seed), ("pinned", page_seed + 1), ("native", page_seed + 2)]
    ordered = core + [run for run in grid if run not in core and run != ("pinned", page_seed)]
    return ordered[:count]


def page_seed(nb):
    cell = parameters_cell(nb)
    if cell is None or "seed" not in assigned_names(cell.source):
        raise NotebookError("has no `seed` in its parameters cell, so its runs cannot be given other seeds")
    namespace = {}
    exec(compile(cell.source, "parameters", "exec"), namespace)  # the post's own knobs: plain assignments
    return int(namespace["seed"])


def saved_run_path(path, numeric_path, seed):
    return REPO_ROOT / ".cache" / "spread" / path.parent.name / f"{numeric_path}-seed{seed}.json"


def saved_run(path, nb, numeric_path, seed):
    """A run of this very code made earlier, or None: one an interrupted `make spread` saved, else the same
    run in the post's own report when that report measured this code (an edit that leaves the code digest,
    such as a new presentation helper, needs only the page run again). A kept run keeps its own machine."""
    saved = saved_run_path(path, numeric_path, seed)
    try:
        entry = json.loads(saved.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return reported_run(path, nb, numeric_path, seed)
    return entry["run"] if entry.get("code_sha256") == code_sha256(nb) else None


def reported_run(path, nb, numeric_path, seed):
    """The run on `numeric_path` with `seed` in the post's sealed report, if that report measured this code."""
    report = read_report(report_path(path.parent))  # ReportError if it was edited: nothing is kept from it
    if report is None or not measured_this_code(report, nb):
        return None
    return next((run for run in report["runs"] if (run["path"], run["seed"]) == (numeric_path, seed)), None)


def run_once(job):
    """Execute one copy of the post; returns the run's entry for the report, also kept in .cache/spread."""
    path, (numeric_path, seed), label, fresh = job
    nb = read_notebook(path)
    earlier = None if fresh else saved_run(path, nb, numeric_path, seed)
    if earlier is not None:
        print(f"[{post_name(path)} {label}] made before by this code (on {earlier.get('cpu') or 'an unnamed CPU'}): "
              f"kept", flush=True)
        return {**earlier, "label": label}
    environment = numerics.paths()[numeric_path]
    env = {**standin_data.offline_environment(), **environment,
           "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    with tempfile.TemporaryDirectory(prefix="spread-") as scratch:
        copy = copy_post(path.parent, scratch, ignore=shutil.ignore_patterns(SPREAD_REPORT))
        executed = execute_copy(nb, copy, f"{post_name(path)} {label}", overrides={"seed": seed}, env=env,
                                kernel_retries=1, echo=lambda line: print(line, flush=True))
    provenance = blog_metadata(executed)["provenance"]
    entry = {"label": label, "path": numeric_path, "seed": seed, "environment": environment,
            "numerics": provenance.get("numerics"), "device": provenance.get("device"),
            "cpu": provenance.get("machine", {}).get("cpu"), "duration_s": provenance.get("duration_s"),
            "results": results_of(executed)}
    saved = saved_run_path(path, numeric_path, seed)
    saved.parent.mkdir(parents=True, exist_ok=True)
    write_report({"code_sha256": code_sha256(nb), "run": entry}, saved)
    return entry


CARRY_MATCHES = 3  # common runs with equal results that show a code change moved nothing on this machine


def carried_page(earlier, runs):
    """The page run of the `earlier` report (read and seal-checked) as one more run, or NotebookError saying why
    not: it must come from a CPU none of `runs` ran on, and the runs both reports made on the pinned path must
    agree to the last digit, at least CARRY_MATCHES of them, so that the code it ran computes what this code
    computes. Native runs are not compared: that path is the machine's own, and two machines that name the same
    CPU (two hosts of one cloud type) can take different kernels on it, so a difference there says nothing of
    the code."""
    machine = (earlier.get("machine") or {}).get("cpu")
    covered = sorted({run.get("cpu") or "an unnamed CPU" for run in runs})
    if not machine or machine in covered:
        raise NotebookError(f"the earlier page ran on {machine or 'an unnamed CPU'}, and the runs on "
                            f"{', '.join(covered)}: only a page of another chip is worth carrying")
    made = {(run["path"], run["seed"]): run["results"] for run in runs}
    common = [run for run in earlier["runs"] if run["path"] == "pinned" and (run["path"], run["seed"]) in made]
    moved = [run["label"] for run in common if run["results"] != made[run["path"], run["seed"]]]
    if moved or len(common) < CARRY_MATCHES:
        raise NotebookError(f"the earlier report's runs do not show the code change moving nothing: "
                            f"{len(common)} pinned-path runs in common (at least {CARRY_MATCHES} needed), "
                            f"{len(moved)} of them with other results ({', '.join(moved[:3])})")
    page = earlier["page"]
    return {"label": f"the page of {earlier['made_at'][:10]} on {machine} ({page['path']} path, seed {page['seed']}), "
                     f"carried: its code computed what this code does",
            "path": page["path"], "seed": page["seed"], "environment": earlier["paths"][page["path"]],
            "numerics": page.get("numerics"), "device": None, "cpu": machine, "duration_s": None,
            "results": page["results"], "carried_from": {"made_at": earlier["made_at"],
                                                         "code_sha256": earlier["code_sha256"]}}


def report_at(path, ref):
    """The post's report as committed at git `ref`, seal-checked; NotebookError where there is none."""
    target = report_path(path.parent)
    shown = subprocess.run(["git", "show", f"{ref}:{target.relative_to(REPO_ROOT).as_posix()}"], cwd=REPO_ROOT,
                           capture_output=True, text=True)
    if shown.returncode != 0:
        raise NotebookError(f"no {SPREAD_REPORT} of {post_name(path)} at {ref}: {shown.stderr.strip()}")
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / SPREAD_REPORT
        copy.write_text(shown.stdout, encoding="utf-8")
        return read_report(copy)  # ReportError if it was edited


def report(nb, runs, page_nb, name):
    provenance = blog_metadata(page_nb)["provenance"]
    return sealed({
        "post": name,
        "made_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "code_sha256": code_sha256(nb),
        "code_digest": CODE_DIGEST,
        "packages": provenance.get("packages"),
        "machine": provenance.get("machine"),
        "paths": numerics.paths(),
        "page": {"path": "pinned", "seed": page_seed(nb), "numerics": provenance.get("numerics"),
                 "results": results_of(page_nb)},
        "runs": runs,
    })


def write_report(made, path):
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(made, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(path)  # never a half-written report


BUDGET_S = 3600  # what a post's spread should cost on two cores


def expected_cost_s(run_s, count, jobs, cores):
    """Seconds the runs and the page's own re-run take: the runs go `jobs` at a time, and more jobs than
    cores share the cores, so each wave takes a run's time stretched by jobs/cores; then the page runs alone."""
    waves = math.ceil(count / jobs)
    return waves * run_s * max(1.0, jobs / cores) + run_s


def cost_line(nb, count, jobs, cores=None, kept=0):
    """What the spread will cost, from the page's own recorded duration, said before anything runs. `kept`
    runs made earlier by this very code (saved by an interrupted spread, or in the post's own report) cost
    nothing: they are read back."""
    cores = cores or os.cpu_count() or 1
    to_make = count - kept
    kept_words = f", {kept} kept from an earlier run of this code" if kept else ""
    run_s = recorded_seconds(nb)
    if not isinstance(run_s, (int, float)) or run_s <= 0:
        return (f"{to_make} runs{kept_words} and the page: no recorded duration to estimate from "
                f"(run `make execute` first)")
    cost = expected_cost_s(run_s, to_make, jobs, cores)
    verdict = "within" if cost <= BUDGET_S else "OVER"
    return (f"expected cost: about {cost / 60:.0f} min ({to_make} runs of about {run_s / 60:.0f} min{kept_words}, "
            f"{jobs} at a time on {cores} cores, then the page), {verdict} the {BUDGET_S // 60} min budget of a "
            f"post's spread")


def kept_runs(path, nb, plan, fresh=False):
    """How many of the planned runs were made earlier by this very code, and are read back, not run."""
    return 0 if fresh else sum(saved_run(path, nb, numeric_path, seed) is not None for numeric_path, seed in plan)


def spread(path, count, jobs, fresh=False, carry=None):
    nb = read_notebook(path)
    earlier = report_at(path, carry) if carry else None  # before an hour of runs: refused at once if missing
    plan = planned_runs(count, page_seed(nb))
    labels = [f"run {number}/{len(plan)} ({numeric_path} path, seed {seed})"
              for number, (numeric_path, seed) in enumerate(plan, start=1)]
    print(f"[{post_name(path)}] {len(plan)} runs, {jobs} at a time: " + "; ".join(labels), flush=True)
    print(f"[{post_name(path)}] {cost_line(nb, count, jobs, kept=kept_runs(path, nb, plan, fresh))}", flush=True)
    standin_data.build()
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        runs = pool.map(run_once, [(path, run, label, fresh) for run, label in zip(plan, labels)], chunksize=1)
    print(f"[{post_name(path)}] {len(runs)} runs done in {time.monotonic() - started:.0f} s", flush=True)
    if earlier is not None:
        runs = [*runs, carried_page(earlier, runs)]
        print(f"[{post_name(path)}] {runs[-1]['label']}", flush=True)
    # The page's spread cell reads the runs: write them first, then run the page.
    target = report_path(path.parent)
    write_report(report(nb, runs, nb, post_name(path)), target)
    page = run_page(path, nb)
    made = report(page, runs, page, post_name(path))
    write_report(made, target)
    before, listed = results_of(nb), table_names(page)
    shown_as_measured = sorted(name for name, value in made["page"]["results"].items()
                               if before.get(name) != value and name not in taken_from_the_run(page)
                               and (listed is None or name in listed))
    if shown_as_measured:
        # The page's table shows this run's own values for the results recorded before it (_results.RECORDED);
        # one it lists that is recorded after it is shown as the report held it when the page ran, the previous
        # run's, which moved. With the report now holding the new ones, one more run of the page shows them (bit
        # for bit the same results: the check below says so). A result the table does not list needs no second run.
        print(f"[{post_name(path)}] {', '.join(shown_as_measured)} moved and {'is' if len(shown_as_measured) == 1 else 'are'} "
              "recorded after the table of what a re-run gives: running the page once more, so that the table "
              "takes in the new values", flush=True)
        again = run_page(path, nb)
        if results_of(again) != made["page"]["results"]:
            raise NotebookError("the page gave other results on a second run on this machine; it does not repeat "
                                "itself bit for bit (a seed or a thread count?), so its spread cannot be measured")
    print(f"[{post_name(path)}] wrote {target} (seal {made['seal'][:16]})", flush=True)


def run_page(path, nb):
    """Execute the post in place; its notebook after, refused if a code cell changed since `nb` was read."""
    execute_in_place(path, offline=True, echo=lambda line: print(line, flush=True))
    page = read_notebook(path)
    if code_sha256(page) != code_sha256(nb):
        raise NotebookError("a code cell changed while the runs went on; run `make spread` again")
    return page


def migrate_digest(path):
    """Re-key a report made with an earlier reading of the code (spread_report.DIGESTS) to the current one, when
    (and only when) it measured this very notebook: its digest, read its own way, matches the notebook's code
    and its page results are the page's. The report is re-sealed by this tool, not by hand; nothing else in it
    changes. Returns what it did, in words."""
    nb = read_notebook(path)
    target = report_path(path.parent)
    report = read_report(target)
    if report is None:
        raise NotebookError(f"{post_name(path)}: no {SPREAD_REPORT} to re-key")
    if report.get("code_digest") == CODE_DIGEST:
        return f"{post_name(path)}: {SPREAD_REPORT} is keyed to the current code digest ({CODE_DIGEST}) already"
    if not measured_this_code(report, nb) or report["page"]["results"] != results_of(nb):
        raise NotebookError(f"{post_name(path)}: {SPREAD_REPORT} measured other code or other page results than "
                            "this notebook's; it cannot be re-keyed, run `make spread` again")
    made = sealed({**report, "code_sha256": code_sha256(nb), "code_digest": CODE_DIGEST})
    write_report(made, target)
    return f"{post_name(path)}: {SPREAD_REPORT} re-keyed to the code digest {CODE_DIGEST} (seal {made['seal'][:16]})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", required=True, help="the post whose folder name contains this")
    parser.add_argument("--runs", type=int, help=f"re-runs beside the page (default: the post's blog.spread_runs, "
                                                 f"else {DEFAULT_RUNS})")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time, one CPU thread each (default 2)")
    parser.add_argument("--estimate", action="store_true", help="print what it would cost, run nothing")
    parser.add_argument("--fresh", action="store_true",
                        help="make every run anew, keeping none made before by this code (on this machine or in "
                             "the report)")
    parser.add_argument("--carry", metavar="REF",
                        help="keep the page run of the report at git ref REF, made on another chip, as one more run "
                             "(only where the runs both reports made agree to the last digit)")
    parser.add_argument("--migrate-digest", action="store_true",
                        help="re-key a report made before the results-only code digest (verified, runs nothing)")
    args = parser.parse_args(argv)
    try:
        [path] = find_posts(args.post)
        count = args.runs or blog_metadata(read_notebook(path)).get("spread_runs") or DEFAULT_RUNS
        if count < DEFAULT_RUNS:
            raise NotebookError(f"{count} runs cannot cover two numeric paths and three seeds; ask for "
                                f"{DEFAULT_RUNS} or more")
        if args.migrate_digest:
            print(migrate_digest(path))
            return 0
        if args.estimate:
            nb = read_notebook(path)
            kept = kept_runs(path, nb, planned_runs(count, page_seed(nb)), args.fresh)
            print(f"[{post_name(path)}] {cost_line(nb, count, args.jobs, kept=kept)}")
            return 0
        refuse_stale_setups([path])  # before an hour of runs: the re-run of the page at their end would refuse it
        spread(path, count, args.jobs, args.fresh, args.carry)
    except (NotebookError, ExecutionFailed, ReportError, standin_data.DataError) as error:
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted: the runs work on temporary copies; the post and its report are as they were",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
