"""Checks of the questions on a rendered page open in Playwright (docs/questions.md), for any page.

Each returns a list of problems, empty when the page passes, so a test can show that it fails:

- `answer_problems(page)`: for every `.question`, each wrong answer that has a hint shows that hint,
  an unlisted wrong answer is refused, the right answer is accepted and opens the explanation;
- `keyboard_problems(page)`: the same done with the keyboard alone (Tab, arrows, Enter, Space),
  with a visible focus on every control;
- `no_script_problems(page)`: on a page opened with JavaScript off, the prompt and the options are
  shown and the answer is in a closed <details>.

The first two answer the questions: open a fresh page for each.
"""
import json

FEEDBACK_TIMEOUT_MS = 2000

QUESTIONS = """() => [...document.querySelectorAll('.question[data-kind]')].map(box => {
  const clean = node => {
    const copy = node.cloneNode(true);
    copy.querySelectorAll('.question-hint-label').forEach(label => label.remove());
    return copy.textContent.replace(/\\s+/g, ' ').trim();
  };
  return {
    id: box.id,
    kind: box.dataset.kind,
    enhanced: box.classList.contains('question-enhanced') && !!box.querySelector('form.question-form'),
    live: (box.querySelector('.question-feedback') || {getAttribute: () => null}).getAttribute('aria-live'),
    options: [...box.querySelectorAll('input[type=radio]')].map(radio => {
      const hint = box.querySelector(`.question-hint[data-for="${radio.value}"]`);
      return {radio: radio.id, right: radio.dataset.right === 'true',
              label: radio.labels[0] ? radio.labels[0].textContent.trim() : '', hint: hint ? clean(hint) : null};
    }),
    answers: [...box.querySelectorAll('.question-explanation .answer')].map(span => span.textContent.trim()),
    wrong: [...box.querySelectorAll('.question-hint[data-value]')].map(hint =>
      ({value: hint.dataset.value, hint: clean(hint)})),
    stuck: box.querySelector('.question-stuck-text') ? clean(box.querySelector('.question-stuck-text')) : null,
  };
})"""

FEEDBACK = """id => {
  const box = document.getElementById(id);
  const feedback = box.querySelector('.question-feedback');
  const answer = box.querySelector('details.question-answer');
  return {state: feedback ? feedback.dataset.state || '' : '',
          text: feedback ? feedback.textContent.replace(/\\s+/g, ' ').trim() : '',
          boxed: !!feedback && feedback.getBoundingClientRect().height > 2,
          explanation: !!answer && answer.open && answer.checkVisibility({visibilityProperty: true})
            && !!answer.querySelector('.question-explanation')?.checkVisibility({visibilityProperty: true})};
}"""

FILLED = """id => { const f = document.getElementById(id).querySelector('.question-feedback');
  return !!f && f.childElementCount > 0; }"""

FOCUS_SHOWN = """() => {
  const element = document.activeElement;
  if (!element || element === document.body) return null;
  const style = getComputedStyle(element);
  const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
  return {id: element.id, tag: element.tagName.toLowerCase(), type: element.type || '',
          text: element.textContent.trim(), ring,
          question: element.closest('.question') ? element.closest('.question').id : null};
}"""


def questions(page):
    """What each `.question` on the page holds, as the checks need it."""
    return page.evaluate(QUESTIONS)


def feedback(page, question_id):
    """The live region's state ("right", "wrong", …) and words once it has spoken, and whether the
    explanation is shown."""
    try:
        page.wait_for_function(FILLED, arg=question_id, timeout=FEEDBACK_TIMEOUT_MS)
    except Exception:  # Playwright's TimeoutError: nothing said
        return {"state": "", "text": "", "explanation": False}
    return page.evaluate(FEEDBACK, question_id)


def _selector(element_id):
    return f"[id={json.dumps(element_id)}]"


def _far_from(answers):
    """A number no sensible answer is near."""
    from decimal import Decimal, InvalidOperation
    values = []
    for answer in answers:
        try:
            values.append(abs(float(Decimal("".join(ch for ch in answer.replace("\u2212", "-")
                                                     if ch.isdigit() or ch in "-.e")))))
        except (InvalidOperation, ValueError):
            pass
    return str(round(max(values, default=0) * 1000 + 123457))


def _judge(question, given, seen, expect, hint=None):
    """Problems with what the page said to one answer."""
    where = f"#{question['id']} ({question['kind']}) answered {given!r}"
    problems = []
    if seen["state"] != expect:
        problems.append(f"{where}: the page said {seen['state'] or 'nothing'!r} ({seen['text']!r}), not {expect!r}")
    if hint and hint not in seen["text"]:
        problems.append(f"{where}: its hint {hint!r} is not shown (the page said {seen['text']!r})")
    if expect == "right" and not seen["explanation"]:
        problems.append(f"{where}: right, but the explanation stays hidden")
    return problems


def _answer(page, question, given):
    """Give one answer with the mouse and the Check button; what the page said."""
    box = page.locator(_selector(question["id"]))
    if question["kind"] == "choice":
        page.locator(_selector(given)).check()
    else:
        box.locator("input[type=text]").fill(given)
    box.locator("button.question-check").click()
    return feedback(page, question["id"])


def answer_problems(page):
    """For every question on the open page: wrong answers show their own hints, the right answer is
    accepted. [] when all do."""
    problems = []
    found = questions(page)
    for question in found:
        where = f"#{question['id']} ({question['kind']})"
        if not question["enhanced"]:
            problems.append(f"{where}: not made interactive (no form: did assets/questions.js run?)")
            continue
        if question["live"] not in ("polite", "assertive"):
            problems.append(f"{where}: its feedback is not a live region")
        if question["kind"] == "choice":
            options = question["options"]
            if not any(option["right"] for option in options):
                problems.append(f"{where}: no option is right")
            for option in options:
                if not option["right"]:
                    seen = _answer(page, question, option["radio"])
                    problems += _judge(question, option["label"], seen, "wrong", option["hint"] or question["stuck"])
            for option in options:
                if option["right"]:
                    seen = _answer(page, question, option["radio"])
                    problems += _judge(question, option["label"], seen, "right")
            continue
        if not question["answers"]:
            problems.append(f"{where}: no `.answer` in its explanation")
            continue
        for wrong in question["wrong"]:
            seen = _answer(page, question, wrong["value"])
            problems += _judge(question, wrong["value"], seen, "wrong", wrong["hint"])
        unlisted = _far_from(question["answers"]) if question["kind"] == "number" else "(nothing, like, this)"
        seen = _answer(page, question, unlisted)
        problems += _judge(question, unlisted, seen, "wrong", question["stuck"])
        for answer in question["answers"]:
            seen = _answer(page, question, answer)
            problems += _judge(question, answer, seen, "right")
    return problems


def _tab_to(page, question_id, predicate, limit=12):
    """Press Tab until the focused element satisfies `predicate`; what is focused, or None."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUS_SHOWN)
        if focused and focused["question"] == question_id and predicate(focused):
            return focused
    return None


def keyboard_problems(page):
    """Every question answered wrong, then right, then shown, with the keyboard alone."""
    problems = []
    for question in questions(page):
        where = f"#{question['id']} ({question['kind']}) by keyboard"
        if not question["enhanced"]:
            problems.append(f"{where}: not made interactive")
            continue
        # Start just above the question (its title), then only keys.
        page.evaluate("id => { const t = document.getElementById(id + '-title') || document.getElementById(id);"
                      " t.tabIndex = -1; t.focus(); }", question["id"])
        unfocused = []

        def reach(predicate, what):
            focused = _tab_to(page, question["id"], predicate)
            if focused is None:
                problems.append(f"{where}: Tab never reaches {what}")
            elif not focused["ring"]:
                unfocused.append(what)
            return focused

        if question["kind"] == "choice":
            radios = [option["radio"] for option in question["options"]]
            right = next(i for i, option in enumerate(question["options"]) if option["right"])
            wrong = next((i for i, option in enumerate(question["options"]) if not option["right"]), None)
            first = reach(lambda f: f["type"] == "radio", "an option")
            if first is None:
                continue
            # Space chooses the focused option, the arrow keys move to the next one and choose it.
            page.keyboard.press("Space")
            position = radios.index(first["id"])
            if wrong is not None:
                for _ in range((wrong - position) % len(radios)):
                    page.keyboard.press("ArrowDown")
                if reach(lambda f: f["text"] == "Check", "the Check button") is None:
                    continue
                page.keyboard.press("Enter")
                problems += _judge(question, f"option {wrong + 1}", feedback(page, question["id"]), "wrong",
                                   question["options"][wrong]["hint"] or question["stuck"])
                page.keyboard.press("Shift+Tab")  # back to the chosen option
                focused = page.evaluate(FOCUS_SHOWN)
                if not focused or focused["type"] != "radio":
                    problems.append(f"{where}: Shift+Tab from Check does not return to the options")
                    continue
                position = radios.index(focused["id"])
            for _ in range((right - position) % len(radios)):
                page.keyboard.press("ArrowDown")
            if reach(lambda f: f["text"] == "Check", "the Check button") is None:
                continue
            page.keyboard.press("Space")
            problems += _judge(question, f"option {right + 1}", feedback(page, question["id"]), "right")
        else:
            if reach(lambda f: f["type"] == "text", "the answer box") is None:
                continue
            wrong = question["wrong"][0]["value"] if question["wrong"] else (
                _far_from(question["answers"]) if question["kind"] == "number" else "(no, such, shape)")
            page.keyboard.type(wrong)
            page.keyboard.press("Enter")
            hint = question["wrong"][0]["hint"] if question["wrong"] else question["stuck"]
            problems += _judge(question, wrong, feedback(page, question["id"]), "wrong", hint)
            page.keyboard.press("Control+A")
            page.keyboard.type(question["answers"][0])
            if reach(lambda f: f["text"] == "Check", "the Check button") is None:
                continue
            page.keyboard.press("Space")
            problems += _judge(question, question["answers"][0], feedback(page, question["id"]), "right")
        if reach(lambda f: f["text"] == "Show answer", "the Show answer button") is not None:
            page.keyboard.press("Enter")
            seen = feedback(page, question["id"])
            if not seen["explanation"]:
                problems.append(f"{where}: Show answer leaves the explanation hidden")
            if seen.get("boxed"):  # the answer opens just below: a box saying so repeats it
                problems.append(f"{where}: Show answer also shows a box ({seen['text']!r})")
            elif seen["state"] != "shown" or not seen["text"]:
                problems.append(f"{where}: Show answer tells a screen reader nothing")
        if unfocused:
            problems.append(f"{where}: no visible focus on {', '.join(unfocused)}")
    return problems


NO_SCRIPT = """() => [...document.querySelectorAll('.question')].map(box => {
  const answer = box.querySelector(':scope > details.question-answer');
  const explanation = answer && answer.querySelector('.question-explanation');
  // checkVisibility: false inside a closed <details>, whose content still has a layout box.
  const shown = element => !!element && element.checkVisibility({visibilityProperty: true, opacityProperty: true})
    && element.getBoundingClientRect().height > 0;
  return {
    id: box.id, kind: box.dataset.kind,
    prompt: shown(box.querySelector('.question-prompt')),
    options: [...box.querySelectorAll(':scope > .question-options .question-option')].map(shown),
    details: !!answer, open: !!answer && answer.open,
    summary: answer && answer.querySelector(':scope > summary') ? answer.querySelector(':scope > summary').textContent.trim() : '',
    explanation: !!explanation && explanation.textContent.trim().length > 0,
    explanation_shown: shown(explanation),
    marks: /[\\u2610\\u2612]|\\[[ xX]\\]/.test(box.querySelector('.question-options')?.textContent || ''),
    // the question's own controls (Quarto's copy button on a code block is the page's, not the question's)
    inputs: box.querySelectorAll('input, button:not(.code-copy-button)').length,
  };
})"""


def no_script_problems(page):
    """On a page opened with JavaScript off: each question shows its prompt and options, and holds its
    explanation in a closed <details> "Answer". [] when all do; also when the page has no question."""
    problems = []
    for box in page.evaluate(NO_SCRIPT):
        where = f"#{box['id']} ({box['kind']}) without JavaScript"
        if not box["prompt"]:
            problems.append(f"{where}: the prompt is not shown")
        if box["kind"] == "choice" and (not box["options"] or not all(box["options"])):
            problems.append(f"{where}: the options are not all shown")
        if box["marks"]:
            problems.append(f"{where}: the options show which is right")
        if not box["details"] or not box["explanation"]:
            problems.append(f"{where}: the explanation is not in a <details>")
        elif box["open"] or box["explanation_shown"]:
            problems.append(f"{where}: the answer is open before the reader asks")
        elif box["summary"] != "Answer":
            problems.append(f"{where}: the fold is labelled {box['summary']!r}, not 'Answer'")
        if box["inputs"]:
            problems.append(f"{where}: has {box['inputs']} controls that cannot work without JavaScript")
    return problems
