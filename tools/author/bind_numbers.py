"""Propose the markers that bind a post's prose numbers to its run: `make bind POST=… [WRITE=1]`.

For each number a reader reads that is not yet bound (tools/numbers/bindings.py), it lists the
markers whose value fits: a result() the run recorded that shows exactly that number,
else a setting of the parameters cell equal to it, else a result it rounds. A value
alone decides nothing (a 1 fits many things), so a fit is proposed only when its name
or printed label shares more words with the number's sentence than any other fit does;
--write (make: WRITE=1) writes those. The rest are listed for the author to decide.
It reads the stored outputs and never runs the notebook.
"""
import argparse
import sys

from tools.numbers.bindings import proposals, with_markers
from tools.core.notebooks import NotebookError, cannot_write, find_posts, post_name, read_notebook, \
    write_notebook_atomically


def report(proposed):
    """One line per unbound number: the marker to write, the candidates, or that nothing fits."""
    for proposal in proposed:
        quoted = proposal.place.text[proposal.number.start:proposal.number.unit_end].strip()
        if proposal.decided:
            verdict = f"→ {quoted}{proposal.markers[0]}"
        elif proposal.markers:
            verdict = f"cannot decide; the value fits {', '.join(proposal.markers[:4])}" + (
                "" if len(proposal.markers) <= 4 else f" and {len(proposal.markers) - 4} more")
        else:
            verdict = ("cannot decide: no recorded result or setting has this value; record it with result(), "
                       "or mark it <!--text: what it is--> if it is not a result")
        print(f"  {proposal.where}: …{proposal.context()}…\n      {verdict}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--post", help="only the post whose folder name is this, or the one that contains it")
    parser.add_argument("--all", action="store_true", help="with --post: every post that matches")
    parser.add_argument("--write", action="store_true", help="write every marker that is the only fit")
    args = parser.parse_args(argv)
    try:
        paths = find_posts(args.post, every_match=args.all)
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2
    undecided = 0
    for path in paths:
        try:
            nb = read_notebook(path)
        except NotebookError as error:
            print(f"{post_name(path)}: {error}", file=sys.stderr)
            undecided += 1
            continue
        proposed = proposals(nb)
        print(f"{post_name(path)}: {len(proposed)} unbound number(s)")
        report(proposed)
        undecided += sum(not proposal.decided for proposal in proposed)
        if args.write and any(proposal.decided for proposal in proposed):
            written = with_markers(proposed)
            try:
                write_notebook_atomically(nb, path)
            except OSError as error:
                print(f"{post_name(path)}: {cannot_write(error, path)}; nothing was written", file=sys.stderr)
                return 1
            print(f"{post_name(path)}: wrote {written} marker(s); reread them, then `make check`")
    return 1 if undecided else 0


if __name__ == "__main__":
    sys.exit(main())
