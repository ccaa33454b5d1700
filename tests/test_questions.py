"""Questions the reader answers on the page (docs/questions.md): the filter, the script, the styles.

The three examples of docs/questions.md are rendered with the real Quarto and the site's own
settings and assets into a fixture site, then opened in Chromium, light and dark, at 1280 and
390 px: every wrong answer shows its own hint, the right one is accepted, the keyboard alone does it,
no console error, no request to another origin, no serious axe finding, nothing wider than a phone;
with JavaScript off the answer is in a closed <details>. The filter's refusals run through plain
pandoc (fast). Each browser check is shown to fail on a copy of the site with one thing broken.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.questions_in_browser import answer_problems, feedback, keyboard_problems, no_script_problems, questions
from tests.test_rendered_site import DESKTOP, PHONE, THEMES, browser, visit  # noqa: F401 (browser: a fixture)
from tools.core.notebooks import REPO_ROOT
from tools.numbers.bindings import bindings_in
from tools.site.browser import served

DOCS = REPO_ROOT / "docs" / "questions.md"
FILTER = REPO_ROOT / "assets" / "questions.lua"
EXAMPLES = re.findall(r"```markdown\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
KINDS = ("choice", "number", "shape")


def quarto():
    """The Quarto `make` uses: on the PATH, else the one assembled in .cache/quarto, else the venv's."""
    found = shutil.which(os.environ.get("QUARTO", "quarto")) or REPO_ROOT / ".cache" / "quarto" / "bin" / "quarto"
    if Path(found).is_file():
        return str(found)
    installed = sorted(REPO_ROOT.glob(".venv/lib/python*/site-packages/quarto_cli/bin/quarto"))
    return str(installed[0]) if installed else None


def pandoc():
    """Quarto's own pandoc, else one on the PATH."""
    binary = quarto()
    bundled = sorted(Path(binary).resolve().parent.glob("tools/*/pandoc")) if binary else []
    bundled = [path for path in bundled if path.is_file()]
    return str(bundled[0]) if bundled else shutil.which("pandoc")


def no_render(why):
    if os.environ.get("REQUIRE_RENDER"):
        pytest.fail(f"REQUIRE_RENDER is set but {why}")
    pytest.skip(why)


def pandoc_html(markdown, lua_filter=None):
    """`markdown` as pandoc writes it in HTML, through `lua_filter` when one is given (a filter's own test)."""
    binary = pandoc()
    if binary is None:
        no_render("no pandoc (Quarto brings one)")
    done = subprocess.run([binary, "-f", "markdown", "-t", "html", "--wrap=none",
                           *(["-L", str(lua_filter)] if lua_filter else [])],
                          input=markdown, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def page_text():
    """The fixture page: the docs' three examples, one section each."""
    sections = [f"## {kind.capitalize()}\n\n{example}" for kind, example in zip(KINDS, EXAMPLES)]
    return '---\ntitle: "Questions"\n---\n\nThe examples of docs/questions.md.\n\n' + "\n".join(sections)


def notebook_text():
    """The same examples in a notebook's markdown cells, as a post writes them."""
    sources = ['---\ntitle: "Questions in a notebook"\n---', *EXAMPLES]
    cells = [{"cell_type": "markdown", "metadata": {}, "source": source.splitlines(keepends=True)} for source in sources]
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                    "language": "python"}},
                       "nbformat": 4, "nbformat_minor": 5})


def fixture_config():
    """The site's own HTML settings and filters, on a one-page website."""
    config = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text(encoding="utf-8"))
    html = config["format"]["html"]
    keep = ("theme", "css", "include-after-body", "respect-user-color-scheme", "html-math-method", "toc")
    return {
        "project": {"type": "website", "output-dir": "_site"},
        "website": {"title": "Questions", "search": False,
                    "navbar": {"left": [{"href": "index.qmd", "text": "Home"}]}},
        "filters": config["filters"],
        "format": {"html": {key: html[key] for key in keep if key in html}},
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    binary = quarto()
    if binary is None:
        no_render("no Quarto (make installs one)")
    project = tmp_path_factory.mktemp("questions")
    shutil.copytree(REPO_ROOT / "assets", project / "assets")
    shutil.copy(REPO_ROOT / "styles.css", project / "styles.css")
    (project / "_quarto.yml").write_text(yaml.safe_dump(fixture_config(), sort_keys=False), encoding="utf-8")
    (project / "index.qmd").write_text(page_text(), encoding="utf-8")
    (project / "notebook.ipynb").write_text(notebook_text(), encoding="utf-8")
    done = subprocess.run([binary, "render", "--no-execute"], cwd=project, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return project / "_site"


# ---- the syntax --------------------------------------------------------------------------------------

def test_the_docs_have_one_example_of_each_kind_and_the_site_runs_the_filter():
    assert [re.search(r'kind="(\w+)"', example).group(1) for example in EXAMPLES] == list(KINDS)
    config = yaml.safe_load((REPO_ROOT / "_quarto.yml").read_text(encoding="utf-8"))
    assert "assets/questions.lua" in config["filters"]


def test_the_docs_examples_pass_the_numbers_check():
    """The accepted number is prose bound to the run; every other number in the examples is marked."""
    for example in EXAMPLES:
        found, problems = bindings_in(example)
        assert problems == [], problems
        assert all(bound.kind for bound in found), [bound.number.numeral for bound in found if not bound.kind]
    found, _ = bindings_in(EXAMPLES[1])
    answer = next(bound for bound in found if bound.kind == "=")
    assert (answer.number.numeral, answer.name, answer.number.unit) == ("87.9", "exact", "%")


def run_filter(markdown):
    binary = pandoc()
    if binary is None:
        no_render("no pandoc (Quarto brings one)")
    return subprocess.run([binary, "-f", "markdown", "-t", "html", "--wrap=none", "-L", str(FILTER)], input=markdown,
                          capture_output=True, text=True, timeout=60)


def test_without_script_the_answer_is_folded_and_the_options_unmarked():
    done = run_filter("\n\n".join(EXAMPLES))
    assert done.returncode == 0, done.stderr
    html = done.stdout
    boxes = re.split(r'(?=<div id="question-\d+")', html)[1:]
    assert len(boxes) == 3
    for box in boxes:
        before, _, folded = box.partition('<details class="question-answer"><summary>Answer</summary>')
        assert folded, "the answer is in a closed <details>"
        assert "question-explanation" in folded and "question-explanation" not in before
        assert "\u2610" not in box and "\u2612" not in box and 'data-right="true"' not in folded
    assert "If you chose <code>&lt;end&gt;</code>:" in boxes[0].partition("<details class=\"question-answer\"")[2]
    assert '<span class="answer">87.9 %<!--=exact--></span>' in boxes[1]
    assert 'data-value="0.879"' in boxes[1] and 'data-tolerance="0.5"' in boxes[1]


# (the example, the text in it, replaced by, what the refusal says)
WRITTEN_WRONGLY = {
    "unknown kind": (0, 'kind="choice"', 'kind="essay"', 'kind="essay"'),
    "no explanation": (0, EXAMPLES[0][EXAMPLES[0].index("::: explanation"):EXAMPLES[0].rindex("::::")], "",
                       "no `::: explanation`"),
    "no right option": (0, "- [x] `<start>`", "- [ ] `<start>`", "marks no option right"),
    "text under the right option": (0, "- [x] `<start>`", "- [x] `<start>`\n\n  Well done.", "under its right option"),
    "prompt after the list": (0, "::: hint", "A prompt too late.\n\n::: hint", "the prompt comes first"),
    "number without answer": (1, "]{.answer}", "]", "has no answer"),
    "number answer not a number": (1, "[87.9 %", "[about 88 %", "not a number: about 88 %"),
    "wrong number without hint": (1, "\n\n  That is the fraction; the question asks for a percentage.", "",
                                  "with no hint under it"),
    "tolerance on a shape": (2, 'kind="shape"', 'kind="shape" tolerance="1"', "only a number question takes"),
}


@pytest.mark.parametrize("case", WRITTEN_WRONGLY)
def test_the_filter_refuses_a_question_written_wrongly(case):
    example, old, new, says = WRITTEN_WRONGLY[case]
    assert old in EXAMPLES[example], case
    done = run_filter(EXAMPLES[example].replace(old, new, 1))
    assert done.returncode != 0 and says in done.stderr, (case, done.stderr)
    assert "docs/questions.md" in done.stderr


# ---- in the browser -------------------------------------------------------------------------------

OVERFLOW = """() => ({page: document.documentElement.scrollWidth - window.innerWidth,
  boxes: [...document.querySelectorAll('.question, .question *')]
    .filter(element => element.getBoundingClientRect().right > window.innerWidth + 1)
    .map(element => element.className || element.tagName).slice(0, 5)})"""


# Each unchosen option's radio: its ring and its fill against the page's background.
RADIOS = """() => [...document.querySelectorAll('.question-choice .form-check-input')].filter(r => !r.checked)
  .map(r => { const s = getComputedStyle(r);
    return {ring: s.borderTopStyle !== 'none' && parseFloat(s.borderTopWidth) >= 1 ? s.borderTopColor : null,
            fill: s.backgroundColor, page: getComputedStyle(document.body).backgroundColor}; })"""


def radio_problems(page):
    """An unchosen option must look unchosen: a ring that differs from the page, hollow inside (the dark
    theme once drew no ring and a white fill, so every option looked chosen)."""
    radios = page.evaluate(RADIOS)
    if not radios:
        return ["no unchosen radio on the page"]
    return [f"an unchosen option's radio: {radio}" for radio in radios
            if radio["ring"] in (None, radio["page"]) or radio["fill"] != radio["page"]][:1]


def page_problems(page, theme, viewport):
    """What the checks say of one open page: the radios, the answers, the theme in force, the width."""
    problems = []
    dark = page.evaluate("document.body.classList.contains('quarto-dark')")
    if dark != (theme == "dark"):
        problems.append(f"the page is not in the {theme} theme")
    problems += radio_problems(page)
    if len(questions(page)) != 3:
        problems.append(f"{len(questions(page))} questions on the page, not 3")
    problems += answer_problems(page)
    if viewport == PHONE:
        wide = page.evaluate(OVERFLOW)
        if wide["page"] > 0 or wide["boxes"]:
            problems.append(f"wider than the phone: {wide}")
    return problems


def browser_problems(browser, site, theme="light", viewport=DESKTOP, inspect=None, page="index.html"):
    with served(site) as base:
        seen = visit(browser, base, site, site / page, theme=theme, viewport=viewport,
                     inspect=inspect or (lambda page: page_problems(page, theme, viewport)))
    return [*seen.inspected, *(f"console: {error}" for error in seen.console_errors),
            *(f"failed: {failed}" for failed in seen.failed_requests),
            *(f"another origin: {url}" for url in seen.foreign_requests),
            *(f"axe: {finding}" for finding in seen.axe)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("theme", THEMES)
def test_every_wrong_answer_shows_its_hint_and_the_right_one_is_accepted(browser, site, theme, viewport):
    assert browser_problems(browser, site, theme, viewport) == []


def test_questions_in_a_notebook_markdown_cell_work_too(browser, site):
    assert browser_problems(browser, site, page="notebook.html") == []


def test_the_keyboard_alone_answers_every_question(browser, site):
    assert browser_problems(browser, site, "dark", PHONE, inspect=keyboard_problems) == []


def answer_ways(page):
    """Right at the first try opens the explanation; a wrong try does not, a second one does; the ways
    a reader may write a number or a shape."""
    said = {}
    box = {question["kind"]: question["id"] for question in questions(page)}

    def give(kind, text):
        locator = page.locator(f"[id='{box[kind]}']")
        if kind == "choice":
            locator.get_by_label(text).check()
        else:
            locator.locator("input[type=text]").fill(text)
        locator.locator("button.question-check").click()
        seen = feedback(page, box[kind])
        said[(kind, text)] = (seen["state"], seen["explanation"])

    give("choice", "<start>")
    give("number", "1")
    give("number", "0,879")     # a decimal comma: the fraction's hint
    for text in ("87,9 %", "88", "\u221287.9"):
        give("number", text)
    for text in ("(B, 48)", "[b,48,96]", "torch.Size([B, 48, 96])", "B × 48 × 96", "(B, 48, 96,)"):
        give("shape", text)
    return said


def test_the_first_right_answer_opens_the_explanation_and_a_second_wrong_try_does(browser, site):
    with served(site) as base:
        seen = visit(browser, base, site, site / "index.html", inspect=answer_ways)
    assert seen.inspected == {
        ("choice", "<start>"): ("right", True),
        ("number", "1"): ("wrong", False),
        ("number", "0,879"): ("wrong", True),
        ("number", "87,9 %"): ("right", True),
        ("number", "88"): ("right", True),          # within tolerance="0.5"
        ("number", "\u221287.9"): ("wrong", True),   # a minus sign is read, not dropped
        ("shape", "[b,48,96]"): ("right", True),
        ("shape", "torch.Size([B, 48, 96])"): ("right", True),
        ("shape", "B × 48 × 96"): ("right", True),
        ("shape", "(B, 48)"): ("wrong", False),
        ("shape", "(B, 48, 96,)"): ("right", True),
    }


def test_without_javascript_each_answer_is_in_a_closed_details(browser, site):
    with served(site) as base:
        context = browser.new_context(java_script_enabled=False, viewport=PHONE)
        page = context.new_page()
        page.goto(base + "index.html")
        found = page.evaluate("document.querySelectorAll('.question').length")
        problems = no_script_problems(page)
        context.close()
    assert found == 3 and problems == []


# ---- each check fails when one thing is broken ------------------------------------------------------

SCRIPT = "site_libs/quarto-contrib/questions-1/questions.js"
STYLES = "site_libs/quarto-contrib/questions-1/questions.css"
BREAKAGES = {
    # (file, text, replaced by, the check that must fail)
    "the hint is not shown": (SCRIPT, "const help = given.hint || stuck;", "const help = stuck;", "answers"),
    "any answer is right": (SCRIPT, "if (given.right) {", "if (true) {", "answers"),
    "the right answer is refused": (SCRIPT, "if (given.right) {", "if (false) {", "answers"),
    "the script never runs": ("index.html", 'src="site_libs/quarto-contrib/questions-1/questions.js"',
                              'src="data:text/javascript,"', "answers"),
    "Check cannot be reached by Tab": (SCRIPT, 'check.type = "submit";', 'check.type = "submit"; check.tabIndex = -1;',
                                       "keyboard"),
    "wider than a phone": (STYLES, ".question {", ".question { min-width: 480px;", "answers"),
    "faint feedback text": (STYLES, ".question-feedback:not(:empty) {",
                            ".question-feedback:not(:empty) { color: #999 !important; background: #fff !important;",
                            "answers"),
    "the answer is open": ("index.html", '<details class="question-answer">', '<details class="question-answer" open>',
                           "no script"),
}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_the_checks_fail_when_one_thing_is_broken(browser, site, tmp_path, breakage):
    file, old, new, check = BREAKAGES[breakage]
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    text = (broken / file).read_text(encoding="utf-8")
    assert old in text, (file, old)
    (broken / file).write_text(text.replace(old, new), encoding="utf-8")
    if check == "answers":
        problems = browser_problems(browser, broken, "dark", PHONE)
    elif check == "keyboard":
        problems = browser_problems(browser, broken, inspect=keyboard_problems)
    else:
        with served(broken) as base:
            context = browser.new_context(java_script_enabled=False)
            page = context.new_page()
            page.goto(base + "index.html")
            problems = no_script_problems(page)
            context.close()
    assert problems, f"nothing failed with {breakage}"


ROWS = """() => {
  const box = document.querySelector('.question[data-kind="choice"]');
  const top = (element) => Math.round(element.getBoundingClientRect().top);
  const radios = [...box.querySelectorAll('.question-choice')].map(top);
  const check = box.querySelector('button.question-check').getBoundingClientRect();
  const summary = box.querySelector('details.question-stuck > summary').getBoundingClientRect();
  return {radioRows: new Set(radios).size, choices: radios.length,
          stuckOnButtonsRow: summary.top < check.bottom && summary.bottom > check.top};
}"""
OPENED = """() => {
  const box = document.querySelector('.question[data-kind="choice"]');
  box.querySelector('details.question-stuck > summary').click();
  const text = box.querySelector('.question-stuck-text').getBoundingClientRect();
  const check = box.querySelector('button.question-check').getBoundingClientRect();
  const form = box.querySelector('form').getBoundingClientRect();
  return {below: text.top >= check.bottom, share: text.width / form.width};
}"""
# The run-in title is lengthened a letter at a time, so that every width of the room left beside it on the
# first line is tried; a prompt word split across two rows (other than at its hyphen) is returned.
SPLIT_WORDS = """() => {
  const box = document.querySelector('.question:has(> .question-prompt > p:first-child)');
  const title = box.querySelector(':scope > .question-title');
  const prompt = box.querySelector(':scope > .question-prompt > p');
  const text = [...prompt.childNodes].find((node) => node.nodeType === Node.TEXT_NODE && node.data.trim());
  const grown = document.createElement('span');
  title.append(' ', grown);
  const split = [];
  for (let letters = 0; letters <= 40; letters++) {
    grown.textContent = 'W'.repeat(letters);
    for (const word of text.data.matchAll(/[^\\s-]+/g)) {
      const range = document.createRange();
      range.setStart(text, word.index);
      range.setEnd(text, word.index + word[0].length);
      if (new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size > 1) split.push(word[0]);
    }
  }
  return split;
}"""
# Before the questions' script runs, one choice gets a long label, as a sentence-long answer has.
LONG_CHOICE = """document.addEventListener('DOMContentLoaded', () => {
  const option = document.querySelector('.question[data-kind="choice"] .question-option');
  (option.querySelector(':scope > p') || option).append(' is the token that opens every reading the decoder makes');
});"""


def test_a_question_takes_few_rows_and_a_long_choice_keeps_its_own(browser, site):
    """Short choices share a line and the "Hint" fold sits at the end of the buttons' row, on a phone too, so a
    question costs fewer screens; opened, the hint takes the full width under the buttons; one long choice puts
    every choice back on a row of its own."""
    with served(site) as base:
        short = visit(browser, base, site, site / "index.html",
                      inspect=lambda page: {**page.evaluate(ROWS), **page.evaluate(OPENED)})
        phone = visit(browser, base, site, site / "index.html", viewport=PHONE, inspect=lambda page: page.evaluate(ROWS))
        context = browser.new_context(viewport=DESKTOP)
        context.add_init_script(LONG_CHOICE)
        page = context.new_page()
        page.goto(base + "index.html", wait_until="networkidle")
        long = page.evaluate(ROWS)
        context.close()
    assert short.inspected["choices"] == 3 and short.inspected["radioRows"] == 1, short.inspected
    assert short.inspected["stuckOnButtonsRow"], short.inspected
    assert phone.inspected["stuckOnButtonsRow"], phone.inspected
    assert short.inspected["below"] and short.inspected["share"] > 0.9, short.inspected
    assert long["radioRows"] == 3, long


def test_a_prompt_word_beside_the_run_in_title_moves_down_whole(browser, site):
    """On a phone, a prompt's first word that does not fit beside the run-in title goes to the next line whole:
    the box lets long code break anywhere, and the prompt's words once split there ("Ho" / "w")."""
    with served(site) as base:
        seen = visit(browser, base, site, site / "index.html", viewport=PHONE, inspect=lambda page: page.evaluate(SPLIT_WORDS))
    assert seen.inspected == [], seen.inspected
