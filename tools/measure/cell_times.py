"""Where a post's run spent its time: each code cell's seconds, from the times nbclient kept.

    make times [POST=part] [TOP=n]

`make execute` keeps, in each code cell's metadata, when the kernel started and finished it
(`execution`: nbclient's timestamps, which the seal leaves out). This lists the cells that took
longest, each with its first line of code and its share of the run, then the run's recorded
duration (its provenance) and the post's budget; without POST, last, the blog's runs added up
against its budget. Use it before making a post faster: the time is
almost always in one or two training cells. Reads the notebook only; runs nothing.
"""
import argparse
import sys
from datetime import datetime

from tools.core.notebooks import NotebookError, blog_metadata, code_cells, find_posts, post_name, read_notebook

POST_BUDGET_S = 10 * 60  # issue 33: each post re-runs in at most 10 minutes on one CPU thread
BLOG_BUDGET_S = 25 * 60  # and the whole blog in at most 25


def seconds_of(cell):
    """The seconds the kernel spent on `cell`, or None where nbclient kept no times (it never ran)."""
    times = cell.get("metadata", {}).get("execution") or {}
    start, end = times.get("iopub.execute_input"), times.get("shell.execute_reply")
    if not (start and end):
        return None
    parse = lambda stamp: datetime.fromisoformat(stamp.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def first_code_line(cell):
    lines = [line for line in cell.source.splitlines() if line.strip() and not line.startswith("#|")]
    return lines[0] if lines else ""


def cell_times(nb):
    """[(seconds, cell number, first line)] for every code cell that ran, longest first."""
    timed = [(seconds_of(cell), number, first_code_line(cell)) for number, cell in code_cells(nb)]
    return sorted(((seconds, number, line) for seconds, number, line in timed if seconds is not None),
                  key=lambda row: (-row[0], row[1]))


def recorded_seconds(nb):
    """How long the notebook's recorded run took (its provenance), or None where it has none."""
    return blog_metadata(nb).get("provenance", {}).get("duration_s")


def report(nb, top):
    """The lines `make times` prints for one notebook."""
    rows = cell_times(nb)
    if not rows:
        return ["no cell times: the notebook was not run by `make execute` (or its cells' metadata was cleared)"]
    total = sum(seconds for seconds, _, _ in rows)
    lines = [f"{seconds:8.1f} s  {seconds / total:4.0%}  cell {number:<3d} {line[:70]}"
             for seconds, number, line in rows[:top]]
    if len(rows) > top:
        rest = sum(seconds for seconds, _, _ in rows[top:])
        lines.append(f"{rest:8.1f} s  {rest / total:4.0%}  the other {len(rows) - top} cell(s)")
    recorded = recorded_seconds(nb)
    verdict = ("" if recorded is None else
               f"; recorded run {recorded:.0f} s, {'within' if recorded <= POST_BUDGET_S else 'OVER'} "
               f"the {POST_BUDGET_S // 60} min budget of a post")
    lines.append(f"cells {total:.0f} s in all{verdict}")
    return lines


def blog_line(durations):
    """The line after every post's report: their recorded runs added up, against the blog's budget.
    `durations` holds each post's recorded seconds, None where a post has none."""
    known = [seconds for seconds in durations if seconds is not None]
    missing = len(durations) - len(known)
    total = sum(known)
    verdict = "within" if total <= BLOG_BUDGET_S else "OVER"
    return (f"the blog: {len(known)} recorded run(s), {total / 60:.1f} min in all, {verdict} the "
            f"{BLOG_BUDGET_S // 60} min budget" + (f" ({missing} post(s) with no recorded run)" if missing else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--post", help="only posts whose folder name contains this")
    parser.add_argument("--top", type=int, default=8, help="how many cells to list (default 8)")
    args = parser.parse_args(argv)
    if args.top < 1:
        sys.exit("--top must be 1 or more")
    try:
        durations = []
        for path in find_posts(args.post, every_match=True):
            nb = read_notebook(path)
            print(f"[{post_name(path)}]")
            print("\n".join(report(nb, args.top)))
            durations.append(recorded_seconds(nb))
        if not args.post:
            print(blog_line(durations))
    except NotebookError as error:
        sys.exit(str(error))


if __name__ == "__main__":
    main()
