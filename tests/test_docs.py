"""The docs cannot drift from the code they describe: lists of helpers, exports and make targets agree.

The helpers a post may declare are listed once, in tools/author/inline_helpers.py (HELPERS); the
modules `make export` writes once, in tools/author/export_cells.py (EXPORTS). Wherever prose lists
helpers (three or more named together in a parenthesis that follows the word "helpers"), it
lists them all; `make export`'s help
names every module it writes; every make target the README or docs/ tell you to run exists.
"""
import re
import subprocess

from tools.author.export_cells import EXPORTS
from tools.author.inline_helpers import HELPERS, PRESENTATION_HELPERS
from tools.core.notebooks import REPO_ROOT

# Lists a doc may give: all the helpers, those that only show (the spread's digest leaves them out), the others.
WHOLE_LISTS = [set(HELPERS), set(PRESENTATION_HELPERS), set(HELPERS) - set(PRESENTATION_HELPERS)]
HELPER_NAME = re.compile(r"_[a-z_]+\.py")
HELPER_LIST = re.compile(r"helpers[^()]{0,80}\(([^()]*)\)", re.S)


def documents():
    texts = [REPO_ROOT / "README.md", REPO_ROOT / "Makefile", *sorted((REPO_ROOT / "docs").glob("*.md")),
             *sorted((REPO_ROOT / "tools").rglob("*.py"))]
    return {path.relative_to(REPO_ROOT).as_posix(): path.read_text(encoding="utf-8") for path in texts}


def partial_helper_lists(text):
    """Each parenthesis naming three or more helpers but not a whole list of them: (the names, what is missing)."""
    found = []
    for inside in HELPER_LIST.findall(text):
        named = set(HELPER_NAME.findall(inside)) & set(HELPERS)
        if len(named) >= 3 and named not in WHOLE_LISTS:
            found.append((sorted(named), sorted(set(HELPERS) - named)))
    return found


def test_a_list_of_helpers_in_the_docs_lists_them_all():
    drifted = {name: lists for name, text in documents().items() if (lists := partial_helper_lists(text))}
    assert drifted == {}, f"these lists leave helpers out (HELPERS is the one list): {drifted}"


def test_the_drift_check_finds_a_partial_list():
    assert partial_helper_lists("copies the helpers (_results.py, _style.py, _arch.py) in") == [
        (["_arch.py", "_results.py", "_style.py"], sorted(set(HELPERS) - {"_results.py", "_style.py", "_arch.py"}))]
    assert partial_helper_lists("the helpers it declares (" + ", ".join(HELPERS) + ")") == []
    assert partial_helper_lists("the code (_reader.py, _cure.py, _pen.py)") == []  # not a list of helpers


def make_help():
    return subprocess.run(["make", "--no-print-directory", "-s", "help"], cwd=REPO_ROOT, capture_output=True,
                          text=True, check=True).stdout


def test_make_export_help_names_every_module_it_writes():
    line = next(line for line in make_help().splitlines() if line.startswith("export"))
    assert all(module in line for module in EXPORTS), line


def test_every_make_target_the_docs_name_exists():
    targets = {line.split()[0] for line in make_help().splitlines() if line.strip()}
    named = {name: set(re.findall(r"`make ([a-z][a-z-]*)", text)) for name, text in documents().items()
             if name.endswith(".md")}
    unknown = {name: sorted(found - targets) for name, found in named.items() if found - targets}
    assert unknown == {}, f"the docs name make targets that `make help` does not list: {unknown}"


# ---- the README's table of what a re-run gives: the posts' own spread reports --------------------------------

# Each row of the README's table: the post (part of its folder name) and the headline result it quotes.
README_HEADLINES = {"Reading three digits": ("three-digits", "exact"),
                    "When to stop": ("when-to-stop", "exact"),
                    "Reading handwriting": ("handwriting", "pen_exact_after"),
                    "Reading numbers aloud": ("numbers-aloud", "first_perfect_epoch")}
TABLE_ROW = re.compile(r"^\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*$",
                       re.MULTILINE)


def readme_headlines(text):
    """{post title: (the page, the re-runs, its run's time)} from the README's table."""
    return {row[0]: row[1:] for row in TABLE_ROW.findall(text) if row[0] in README_HEADLINES}


def minutes(seconds):
    """How the README gives a recorded run's time: "6 min", "25 min"; under a minute, "1 min"."""
    return f"{max(1, round(seconds / 60))} min"


def span(low, high):
    """"86.3 to 89.0 %" for the texts "86.3%" and "89.0 %"; "9 to 20"; one value when both ends agree."""
    unit = " %" if low.endswith("%") else ""
    ends = [text.rstrip("% ").strip() for text in (low, high)]
    return (ends[0] if ends[0] == ends[1] else f"{ends[0]} to {ends[1]}") + unit


def test_the_readme_quotes_each_post_s_headline_and_its_spread_as_the_post_s_report_holds_them():
    from tools.core.notebooks import find_posts, read_notebook
    from tools.measure.spread_report import read_report, report_path, spreads
    rows = readme_headlines((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    assert set(rows) == set(README_HEADLINES), f"the README's table lacks rows: {set(README_HEADLINES) - set(rows)}"
    for title, (page, reruns, run_time) in rows.items():
        post, name = README_HEADLINES[title]
        [path] = find_posts(post)
        recorded = read_notebook(path).metadata["blog"]["provenance"]["duration_s"]
        assert run_time == minutes(recorded), \
            f"{title}: the README says a run takes {run_time!r}, the page's provenance {minutes(recorded)!r}"
        spread = spreads(read_report(report_path(path.parent)))[name]
        low, high = (spread.texts[spread.numbers.index(value)] for value in (spread.low, spread.high))
        assert page.replace(" %", "%").endswith(spread.texts[0].replace(" %", "%")), \
            f"{title}: the README says {page!r}, the page {spread.texts[0]!r}"
        assert reruns == span(low, high), f"{title}: the README says {reruns!r}, the report {low} to {high}"


def test_the_readme_table_reader_finds_a_row():
    assert span("86.3%", "89.0 %") == "86.3 to 89.0 %" and span("9", "20") == "9 to 20" and span("5", "5") == "5"
    assert minutes(384.0) == "6 min" and minutes(29) == "1 min" and minutes(1500) == "25 min"
    table = "| post | the page | the re-runs | a run |\n| --- | --- | --- | --- |\n" \
            "| When to stop | exact 97.0 % | 97.0 to 97.2 % | 15 min |\n| Other | a | b | c |\n"
    assert readme_headlines(table) == {"When to stop": ("exact 97.0 %", "97.0 to 97.2 %", "15 min")}
