"""assets/tokens.lua: the models' special tokens stay words on the page.

A bare `<end>` in markdown (prose, or a table a cell printed as Markdown) is read by pandoc as a
raw HTML tag, and the browser drops it: the re-run tables said "smallest P() where it is due". The
filter gives <start>, <end> and <pad> back as text; everything else passes untouched. Run with the
pandoc Quarto brings (fast); the rendered site is checked for the same in test_rendered_site.py.
"""
import yaml

from tests.test_questions import pandoc_html
from tools.core.notebooks import REPO_ROOT

FILTER = REPO_ROOT / "assets" / "tokens.lua"
PROSE = "The smallest P(<end>) where it is due; then <pad>, after <start>. A <b>bold</b> word, and `<end>` as code."
TABLE = "| result | this page |\n|:--|--:|\n| hundred on <end> | 0.77 |\n"


def to_html(markdown, filtered=True):
    return pandoc_html(markdown, FILTER if filtered else None)


def test_without_the_filter_a_bare_token_becomes_a_tag():
    """What the filter is for: pandoc alone writes the token as a tag, which a browser drops."""
    assert "P(<end>)" in to_html(PROSE, filtered=False)
    assert "hundred on <end>" in to_html(TABLE, filtered=False)


def test_bare_tokens_stay_text_in_prose_and_tables():
    prose = to_html(PROSE)
    assert "P(&lt;end&gt;)" in prose and "then &lt;pad&gt;, after &lt;start&gt;" in prose
    assert "hundred on &lt;end&gt;" in to_html(TABLE)


def test_other_html_and_code_pass_untouched():
    prose = to_html(PROSE)
    assert "<b>bold</b>" in prose, "real HTML is still HTML"
    assert "<code>&lt;end&gt;</code>" in prose, "code keeps its own escaping"
    assert "<end>" not in prose


def test_the_site_runs_it_before_the_questions_filter():
    """The questions' filter turns options into HTML; it must meet a token as text."""
    filters = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text(encoding="utf-8"))["filters"]
    assert filters.index("assets/tokens.lua") < filters.index("assets/questions.lua")
