"""Does your run of a post agree with the page? Each result against the spread the page measured.

    make compare POST=part                     # the post's notebook, after your `make execute`
    make compare POST=part NOTEBOOK=my.ipynb   # a run saved elsewhere (Colab, another machine)
    make compare NOTEBOOK=folder/              # every notebook in a folder named like a post

The page's results and those of its re-runs on other numeric paths and seeds are in the
spread.json beside the post (`make spread`). For every result the page records this prints
the page's value, yours, the range the page and its re-runs gave, and whether yours lies
inside it, as each is shown (87.9% is compared as 87.9). Your run agrees when every result
does; the exit status is 0 then, 1 when some result lies outside, and 2 when the notebook
cannot be compared: it runs other code than the page (an older or edited post), its outputs
no longer match its seal (edited after the run), it ran with other parameters than the
page's (a seed aside), or it records no results.
"""
import argparse
import sys
from pathlib import Path

from tools.core.seal import check_seal
from tools.core.notebooks import (
    INJECTED_TAG, POSTS_DIR, REPO_ROOT, NotebookError, blog_metadata, code_cells, find_posts, has_tag, post_name,
    read_notebook,
)
from tools.numbers.prose_numbers import NUMBER
from tools.measure.spread_report import (
    ReportError, measured_this_code, range_text, read_report, report_path, results_of, spreads,
)

AGREES, DISAGREES, NOT_COMPARABLE = 0, 1, 2


def shown_value(text):
    """The number as the output shows it: "87.9%" -> 87.9, "2,000" -> 2000.0; None for "nan"."""
    match = NUMBER.search(text or "")
    return float(match.group().replace(",", "").replace("\u2212", "-")) if match else None


def other_code(nb, page):
    """'cells 3 and 7' (numbered as in the page) whose code differs, or a count when cells were added or removed."""
    mine = [cell.source for _, cell in code_cells(nb) if not has_tag(cell, INJECTED_TAG)]
    theirs = [(number, cell.source) for number, cell in code_cells(page)]
    if len(mine) != len(theirs):
        return f"{len(mine)} code cells where the page has {len(theirs)}"
    differ = [str(number) for (number, source), own in zip(theirs, mine) if source != own]
    return ("cell " if len(differ) == 1 else "cells ") + ", ".join(differ[:8]) + (" …" if len(differ) > 8 else "")


def why_not_comparable(nb, path, report, page, page_path):
    if not measured_this_code(report, nb):
        if measured_this_code(report, page):
            where = other_code(nb, page)
        else:
            where = "the page itself changed since `make spread`"
        return f"it runs other code than the page ({where}): an older or edited version of the post"
    tampered = list(check_seal(nb, path, REPO_ROOT))
    if tampered:
        where, what = tampered[0]
        return f"its outputs do not match its seal ({where}: {what})"
    overridden = {name: value for name, value in
                  (blog_metadata(nb).get("provenance", {}).get("parameters_overridden") or {}).items()
                  if name != "seed"}
    if overridden:
        return f"it ran with other parameters than the page's ({overridden}), a smoke run perhaps"
    if not results_of(nb):
        return "it records no results"
    return None


def compare(nb, report):
    """[(name, page text, your text, spread, inside)] for every result the page records."""
    rows, yours_all = [], results_of(nb)
    for name, spread in spreads(report).items():
        values = [value for value in map(shown_value, spread.texts) if value is not None]
        yours = yours_all.get(name, {}).get("text")
        value = shown_value(yours)
        inside = value is not None and bool(values) and min(values) <= value <= max(values)
        rows.append((name, spread.texts[0], yours or "(none)", spread, inside))
    return rows


def report_on(nb_path, post_path, echo=print):
    """Compare the notebook at `nb_path` with the post at `post_path`; returns the exit status."""
    name = post_name(post_path)
    try:
        report = read_report(report_path(post_path.parent))
    except ReportError as error:
        echo(f"{name}: {error}")
        return NOT_COMPARABLE
    if report is None:
        echo(f"{name}: no spread report beside the post; `make spread POST=…` measures one")
        return NOT_COMPARABLE
    nb, page = read_notebook(nb_path), read_notebook(post_path)
    runs = len(report["runs"])
    echo(f"{nb_path} against {name} (the page and {runs} re-runs in {report_path(post_path.parent).name})")
    provenance = blog_metadata(nb).get("provenance", {})
    echo(f"  your run: {provenance.get('machine', {}).get('cpu', 'an unknown CPU')}, numeric path "
         f"{provenance.get('numerics') or 'not recorded'}")
    reason = why_not_comparable(nb, nb_path, report, page, post_path)
    if reason:
        echo(f"  cannot be compared: {reason}")
        return NOT_COMPARABLE
    rows = compare(nb, report)
    width = max(len(row[0]) for row in rows)
    echo(f"  {'result':<{width}}  {'page':>10}  {'yours':>10}  {'page and re-runs':<22}  verdict")
    for result, page_text, yours, spread, inside in rows:
        echo(f"  {result:<{width}}  {page_text:>10}  {yours:>10}  {range_text(spread):<22}  "
             + ("inside" if inside else "OUTSIDE"))
    outside = [row[0] for row in rows if not row[4]]
    if outside:
        echo(f"  your run does not agree with the page: {len(outside)} of {len(rows)} results lie outside "
             f"the spread the page measured ({', '.join(outside[:6])}{' …' if len(outside) > 6 else ''})")
        return DISAGREES
    echo(f"  your run agrees with the page: all {len(rows)} results lie within the spread it measured")
    return AGREES


def post_for(nb_path):
    """The post a saved notebook is a run of: by its file name (slug.ipynb) or its folder (slug/index.ipynb)."""
    for slug in (nb_path.stem, nb_path.parent.name):
        candidate = POSTS_DIR / slug / "index.ipynb"
        if candidate.exists():
            return candidate
    raise NotebookError(f"{nb_path}: no post is called {nb_path.stem!r}; name the post with POST=…")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="the post whose folder name contains this")
    parser.add_argument("--notebook", type=Path, help="your run (a notebook, or a folder of them); "
                                                      "default: the post's own notebook")
    args = parser.parse_args(argv)
    try:
        if args.notebook is None:
            if not args.post:
                raise NotebookError("name the post (POST=…) or your notebook (NOTEBOOK=…)")
            pairs = [(path, path) for path in find_posts(args.post)]
        else:
            notebooks = sorted(args.notebook.glob("*.ipynb")) if args.notebook.is_dir() else [args.notebook]
            if not notebooks:
                raise NotebookError(f"{args.notebook}: no notebook there")
            missing = [path for path in notebooks if not path.exists()]
            if missing:
                raise NotebookError(f"{missing[0]}: no such file")
            pairs = [(path, find_posts(args.post)[0] if args.post else post_for(path)) for path in notebooks]
        statuses = [report_on(nb_path, post_path) for nb_path, post_path in pairs]
    except NotebookError as error:
        print(error, file=sys.stderr)
        return NOT_COMPARABLE
    return max(statuses)


if __name__ == "__main__":
    sys.exit(main())
