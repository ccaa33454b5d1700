"""The rendered posts read as lessons: each number shown once, and one table of what a re-run gives.

Checked on the real render in `_site/` (as tests/test_rendered_site.py: CI renders first and sets
REQUIRE_RENDER=1), each check first proven on a small page written here, which must fail it:

- no result echo line: a line `label: text` (or one tagged "(reference)") that only restates a number
  `result()` recorded; the number belongs to the table, figure or sentence that shows it;
- a post with a spread report shows exactly one table of what a re-run gives, whose every row holds
  this page's value inside its low-to-high range;
- no section heading and no question lies inside a folded callout, where the reader never sees it;
- above the appendix ("How this page was made"), neither the prose nor a printed output names a make
  command, a seal, a digest or a numeric path: that plumbing is the appendix's.
"""
import json
import re
from html.parser import HTMLParser

import pytest

from tests.test_rendered_site import post_page, published_posts, rendered_site  # noqa: F401 (a fixture)
from tools.core.notebooks import read_notebook
from tools.measure.spread_report import report_path
from tools.numbers.bindings import recorded_results

SPREAD_CAPTION = re.compile(r"This page and (\d+) re-runs of it")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


class OutputText(HTMLParser):
    """The lines of every printed cell output (Quarto's div.cell-output pre) on a page."""

    def __init__(self):
        super().__init__()
        self.depth, self.lines, self.buffer = 0, [], []

    def handle_starttag(self, tag, attrs):
        classes = dict(attrs).get("class") or ""
        if tag == "div" and "cell-output" in classes.split():
            self.depth = 1
        elif self.depth and tag == "div":
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth and tag == "div":
            self.depth -= 1
            if not self.depth:
                self.lines += "".join(self.buffer).splitlines()
                self.buffer = []

    def handle_data(self, data):
        if self.depth:
            self.buffer.append(data)


class FoldedContent(HTMLParser):
    """Section headings (h2, h3) and questions found inside a collapsed callout (div.callout-collapse)."""

    def __init__(self):
        super().__init__()
        self.depth, self.heading, self.found = 0, None, []  # depth: divs open inside a fold, 0 outside

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div" and self.depth:
            self.depth += 1
            if "question" in classes:
                self.found.append(f"a question ({dict(attrs).get('id')})")
        elif tag == "div" and "callout-collapse" in classes:
            self.depth = 1
        elif self.depth and tag in ("h2", "h3"):
            self.heading = []

    def handle_endtag(self, tag):
        if tag == "div" and self.depth:
            self.depth -= 1
        elif tag in ("h2", "h3") and self.heading is not None:
            self.found.append(f"the heading {''.join(self.heading).strip()!r}")
            self.heading = None

    def handle_data(self, data):
        if self.heading is not None:
            self.heading.append(data)


def folded_content(page_html):
    parser = FoldedContent()
    parser.feed(page_html)
    return parser.found


def output_lines(page_html):
    parser = OutputText()
    parser.feed(page_html)
    return [line.strip() for line in parser.lines if line.strip()]


def echo_lines(page_html, records):
    """Output lines that only restate a recorded result: `label: text`, or anything tagged (reference)."""
    echoes = {f"{record.label}: {record.text}" for record in records if record.label}
    return [line for line in output_lines(page_html)
            if line in echoes or line.endswith("(reference)")]


class Tables(HTMLParser):
    """Every table on a page as rows of cell texts, with the text just before it."""

    def __init__(self):
        super().__init__()
        self.tables, self.row, self.cell, self.before = [], None, None, []

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"before": " ".join(self.before[-40:]), "rows": []})
        elif tag == "tr" and self.tables:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.tables[-1]["rows"].append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        else:
            self.before += data.split()


# Plumbing the appendix holds (issue 34, item 4): a digest is its hex (or a SHA-256 named); a sentence may say
# that the appendix prints one. Code cells are not read: a folded cell that checks a file computes its digest,
# as it should; what it prints is read.
PLUMBING = re.compile(r"\bseal(?:ed|s)?\b|\bSHA-?256\b|\b[0-9a-f]{16,}\b|\bAVX|\bnumeric paths?\b|"
                      r"vector instructions|test suite", re.I)
MAKE_COMMAND = re.compile(r"^make [a-z]")
APPENDIX_ID = "how-this-page-was-made"


class LessonText(HTMLParser):
    """The prose, its code spans and the printed outputs of a page above its appendix; code cells left out."""

    def __init__(self):
        super().__init__()
        self.stack, self.kind, self.done = [], "prose", False
        self.prose, self.spans, self.outputs = [], [], []

    def handle_starttag(self, tag, attrs):
        if self.done:
            return
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "section" and attributes.get("id") == APPENDIX_ID:
            self.done = True
            return
        if tag == "div":
            kind = "code" if "sourceCode" in classes else "output" if "cell-output" in classes else None
            self.stack.append(self.kind)
            if kind:
                self.kind = kind
                if kind == "output":
                    self.outputs.append("")
        elif tag == "code" and self.kind == "prose":
            self.spans.append("")
            self.kind = "span"

    def handle_endtag(self, tag):
        if self.done:
            return
        if tag == "div" and self.stack:
            self.kind = self.stack.pop()
        elif tag == "code" and self.kind == "span":
            self.kind = "prose"

    def handle_data(self, data):
        if self.done or self.kind == "code":
            return
        if self.kind == "span":
            self.spans[-1] += data
        elif self.kind == "output":
            self.outputs[-1] += data
        else:
            self.prose.append(data)


def plumbing_above_the_appendix(page_html):
    """What the lesson above the appendix says of the plumbing: each hit with a little of its context."""
    parser = LessonText()
    parser.feed(page_html)
    prose = " ".join(" ".join(parser.prose).split())
    found = [prose[max(0, hit.start() - 40):hit.end() + 20] for hit in PLUMBING.finditer(prose)]
    found += [f"`{span}`" for span in parser.spans if MAKE_COMMAND.match(span)]
    lines = [line.strip() for output in parser.outputs for line in output.splitlines()]
    found += [line for line in lines if PLUMBING.search(line)]
    return found


def spread_tables(page_html):
    parser = Tables()
    parser.feed(page_html)
    return [table for table in parser.tables if SPREAD_CAPTION.search(table["before"][-300:])]


def value_of(text):
    found = NUMBER.search(text)
    return float(found.group().replace(",", "")) if found else None


def rows_outside(table):
    """Rows of a re-run table whose page value lies outside the range printed beside it."""
    outside = []
    for row in table["rows"][1:]:
        if len(row) != 4 or "no run" in row[2]:
            continue
        page = value_of(row[1])
        ends = [float(number.replace(",", "")) for number in NUMBER.findall(row[2].replace(" to ", " "))]
        if page is None or not ends:
            continue
        low, high = min(ends), max(ends)
        if not low <= page <= high:
            outside.append(row)
    return outside


# ---- each check proven on a page written here --------------------------------------------------------

class Record:
    def __init__(self, label, text):
        self.label, self.text = label, text


ECHO_PAGE = """<div class="cell-output cell-output-stdout"><pre><code>epoch  loss
1      0.41
held-out canvases read exactly: 87.9%
</code></pre></div>"""


def test_an_echo_line_is_caught_and_a_table_line_is_not():
    records = [Record("held-out canvases read exactly", "87.9%")]
    assert echo_lines(ECHO_PAGE, records) == ["held-out canvases read exactly: 87.9%"]
    assert echo_lines(ECHO_PAGE.replace("held-out canvases read exactly: 87.9%", "exact 87.9%"), records) == []
    tagged = '<div class="cell-output"><pre>original run: 87.3%  (reference)</pre></div>'
    assert echo_lines(tagged, []) == ["original run: 87.3%  (reference)"]


FOLDED_PAGE = """<h2>Training</h2><div class="callout"><div id="callout-1" class="callout-1-contents callout-collapse collapse">
<div class="callout-body"><p>Plumbing.</p><div class="cell"><pre>code</pre></div>{inside}</div></div></div>{after}"""


def test_a_heading_or_question_inside_a_fold_is_caught_and_one_after_it_is_not():
    question = '<div id="question-x" class="question question-choice"><p>Which?</p></div>'
    assert folded_content(FOLDED_PAGE.format(inside="<h2>Confidence</h2>" + question, after="")) == [
        "the heading 'Confidence'", "a question (question-x)"]
    assert folded_content(FOLDED_PAGE.format(inside="", after="<h2>Confidence</h2>" + question)) == []


def a_spread_table(page, ends):
    return (f"<p>This page and 3 re-runs of it (numeric paths native and pinned; seeds 0, 1, 2), from spread.json:</p>"
            f"<table><tr><th>result</th><th>this page</th><th>page and re-runs, low to high</th><th>runs</th></tr>"
            f"<tr><td>read exactly</td><td>{page}</td><td>{ends}</td><td>4</td></tr></table>")


def test_a_page_outside_its_printed_range_is_caught():
    [table] = spread_tables(a_spread_table("89.5%", "86.1% to 88.0%"))
    assert rows_outside(table) == [["read exactly", "89.5%", "86.1% to 88.0%", "4"]]
    [table] = spread_tables(a_spread_table("275", "220 to 273"))
    assert rows_outside(table), "part 1 once printed 275 misreads beside 220 to 273"
    [table] = spread_tables(a_spread_table("1,234", "1,200 to 1,300"))
    assert rows_outside(table) == []
    assert len(spread_tables(a_spread_table("1", "1") * 2)) == 2, "two tables are counted as two"


SPREAD_CAPTION_OUTPUT = """<div class="cell-output cell-output-display cell-output-markdown">
<p>This page and 3 re-runs of it (numeric paths native and pinned; seeds 0, 1, 2), from spread.json:</p></div>"""
PLUMBING_PAGE = """<main><section id="training"><h2>Training</h2><p>Run <code>make spread</code> to see it.</p>
<div class="cell"><details class="code-fold"><summary>Loading the file</summary><div class="sourceCode">
<pre class="sourceCode"><code>digest = hashlib.sha256(data).hexdigest()</code></pre></div></details>
<div class="cell-output cell-output-stdout"><pre><code>3,000 canvases
  sha256 f4d405f3</code></pre></div></div>
</section><section id="how-this-page-was-made"><h2>How this page was made</h2>
<p><code>make spread</code> wrote the sealed report; the digest is the file's.</p>""" + SPREAD_CAPTION_OUTPUT + """
</section></main>"""


def test_plumbing_above_the_appendix_is_caught_and_in_it_is_not():
    assert plumbing_above_the_appendix(PLUMBING_PAGE) == ["`make spread`", "sha256 f4d405f3"]
    above = PLUMBING_PAGE.replace("to see it.", "to see it, under a seal.")
    assert "under a seal." in plumbing_above_the_appendix(above)[0]
    table_above = PLUMBING_PAGE.replace("</section><section", SPREAD_CAPTION_OUTPUT + "</section><section", 1)
    assert "numeric paths native and pinned" in plumbing_above_the_appendix(table_above)[-1], \
        "the re-run table's caption names the numeric paths: it belongs in the appendix"
    bare = PLUMBING_PAGE.replace("  sha256 f4d405f3", "the pinned set (the appendix prints its digest)\n  f4d405f3919d6ff52b")
    assert plumbing_above_the_appendix(bare) == ["`make spread`", "f4d405f3919d6ff52b"], "the hex, not the word"


# ---- the real render -----------------------------------------------------------------------------------

@pytest.mark.parametrize("notebook", published_posts(), ids=lambda path: path.parent.name)
def test_no_result_is_echoed_on_its_own_line(rendered_site, notebook):  # noqa: F811
    records, _ = recorded_results(read_notebook(notebook))
    page = post_page(rendered_site, notebook).read_text(encoding="utf-8")
    assert echo_lines(page, records.values()) == [], f"{notebook.parent.name}: result lines that repeat a number"


@pytest.mark.parametrize("notebook", published_posts(), ids=lambda path: path.parent.name)
def test_no_section_or_question_is_folded_away(rendered_site, notebook):  # noqa: F811
    page = post_page(rendered_site, notebook).read_text(encoding="utf-8")
    assert folded_content(page) == [], f"{notebook.parent.name}: inside a fold (is a `:::::` missing?)"


@pytest.mark.parametrize("notebook", published_posts(), ids=lambda path: path.parent.name)
def test_one_re_run_table_holds_the_page_inside_every_range(rendered_site, notebook):  # noqa: F811
    if not report_path(notebook.parent).exists():
        pytest.skip("this post measures no spread")
    runs = len(json.loads(report_path(notebook.parent).read_text())["runs"])
    tables = spread_tables(post_page(rendered_site, notebook).read_text(encoding="utf-8"))
    assert len(tables) == 1, f"{notebook.parent.name}: {len(tables)} tables of what a re-run gives, not one"
    [table] = tables
    assert SPREAD_CAPTION.search(table["before"]).group(1) == str(runs)
    assert len(table["rows"]) > 1 and rows_outside(table) == []


@pytest.mark.parametrize("notebook", published_posts(), ids=lambda path: path.parent.name)
def test_the_lesson_leaves_the_plumbing_to_the_appendix(rendered_site, notebook):  # noqa: F811
    page = post_page(rendered_site, notebook).read_text(encoding="utf-8")
    assert plumbing_above_the_appendix(page) == [], f"{notebook.parent.name}: plumbing above the appendix"
