"""assets/units.lua: a share's number and its "%" never part at a line break.

The posts write "87.5 %", and a line could break in that space, leaving the "%" alone at the start of
the next line. The filter puts a no-break space there; code keeps its spaces. Run with the pandoc
Quarto brings (fast); the rendered posts are checked for the same in test_rendered_site.py.
"""
from tests.test_questions import pandoc_html
from tools.core.notebooks import REPO_ROOT

FILTER = REPO_ROOT / "assets" / "units.lua"
PROSE = ("The cure reads 87.5 %<!--=exact--> of them, between 82.3 % and 87.0 %, (96.1 %), "
         "and `x = 5 %` in code stays as it is. The 3 % rule; 10 % of 989 right.")


def to_html(markdown, filtered=True):
    return pandoc_html(markdown, FILTER if filtered else None)


def test_without_the_filter_the_sign_can_part_from_its_number():
    assert "87.5 %" in to_html(PROSE, filtered=False)


def test_every_share_keeps_its_sign_and_code_keeps_its_space():
    html = to_html(PROSE)
    for share in ("87.5\u00a0%", "82.3\u00a0%", "87.0\u00a0%", "(96.1\u00a0%)", "3\u00a0%", "10\u00a0%"):
        assert share in html, share
    assert "<!--=exact-->" in html, "the marker after the sign is kept"
    assert "<code>x = 5 %</code>" in html
    assert "\u00a0%" not in html.split("<code>")[1].split("</code>")[0]


def test_the_site_runs_the_filter():
    import yaml
    config = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text())
    assert "assets/units.lua" in config["filters"]
