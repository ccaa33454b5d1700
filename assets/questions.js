// Questions the reader answers on the page: assets/questions.lua writes each as a box that works
// without scripts (the answer folded in a closed <details>); this turns it into radio buttons or an
// input, a Check button, a Show answer button and a live region that says right or wrong.
// A wrong answer shows the hint written for it; a second wrong try, a right answer or Show answer
// opens the explanation. docs/questions.md has the syntax.
(() => {
  const MINUS = /[\u2212\u2013]/g;
  const SPACES = /[\s\u00a0\u202f]+/g;

  // "87.9", "87.9 %", "−0.25", "1,024", "0,5", "1.2e-05" → a Number, or NaN.
  function numberOf(text) {
    let cleaned = text.replace(MINUS, "-").replace(SPACES, "").replace(/%$/, "");
    if (/^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(cleaned)) cleaned = cleaned.replace(/,/g, "");
    else if (/^[-+]?\d+,\d+$/.test(cleaned)) cleaned = cleaned.replace(",", ".");
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(cleaned)) return NaN;
    return Number(cleaned);
  }

  // Half a unit in the last place written: "87.9" → 0.05, "6" → 0.5 (anything that rounds to it).
  function halfLastPlace(text) {
    const cleaned = text.replace(SPACES, "").replace(/e.*$/i, "");
    const fraction = cleaned.match(/\.(\d+)/);
    const exponent = (text.match(/e([-+]?\d+)/i) || [0, "0"])[1];
    return 0.5 * 10 ** (-(fraction ? fraction[1].length : 0) + Number(exponent));
  }

  // "(B, 48, 96)", "[B,48,96]", "torch.Size([B, 48, 96])", "B × 48 × 96" → "b,48,96".
  function shapeOf(text) {
    let cleaned = text.replace(SPACES, "").replace(/^torch\.Size/i, "").toLowerCase();
    while (/^[([].*[)\]]$/.test(cleaned)) cleaned = cleaned.slice(1, -1);
    const parts = cleaned.split(/[,×]/);
    if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();  // (3,) is (3)
    return parts.join(",");
  }

  function cloneContent(from) {
    const copy = from.cloneNode(true);
    copy.querySelectorAll(".question-hint-label").forEach((label) => {
      const next = label.nextSibling;
      if (next && next.nodeType === Node.TEXT_NODE) next.textContent = next.textContent.replace(/^\s+/, "");
      label.remove();
    });
    copy.querySelectorAll("[id]").forEach((element) => element.removeAttribute("id"));
    return [...copy.childNodes];
  }

  const SHORT_CHOICE = 24;  // characters: the longest choice that still shares a line with others

  function enhance(box) {
    const id = box.id;
    const kind = box.dataset.kind;
    const answer = box.querySelector(":scope > details.question-answer");
    const stuck = box.querySelector(":scope > details.question-stuck .question-stuck-text");
    const hints = [...answer.querySelectorAll(".question-hint")];
    let tries = 0;

    const form = document.createElement("form");
    form.className = "question-form";
    form.noValidate = true;
    let read;  // () => {empty, right, hint} for what the reader gave

    if (kind === "choice") {
      const list = box.querySelector(":scope > .question-options");
      const fieldset = document.createElement("fieldset");
      const legend = document.createElement("legend");
      legend.className = "visually-hidden";
      legend.textContent = "Your answer";
      fieldset.append(legend);
      for (const option of list.querySelectorAll(".question-option")) {
        const row = document.createElement("div");
        row.className = "form-check question-choice";
        const radio = document.createElement("input");
        radio.type = "radio";
        radio.className = "form-check-input";
        radio.name = `${id}-answer`;
        radio.id = `${option.id}-input`;
        radio.value = option.id;
        if (option.dataset.right === "true") radio.dataset.right = "true";
        const label = document.createElement("label");
        label.className = "form-check-label";
        label.htmlFor = radio.id;
        const content = option.querySelector(":scope > p") || option;
        label.append(...content.childNodes);
        row.append(radio, label);
        fieldset.append(row);
      }
      form.append(fieldset);
      list.replaceWith(form);
      read = () => {
        const chosen = form.querySelector("input:checked");
        if (!chosen) return { empty: "Choose one of the answers first." };
        return {
          right: chosen.dataset.right === "true",
          hint: hints.find((hint) => hint.dataset.for === chosen.value),
        };
      };
    } else {
      const explanation = answer.querySelector(".question-explanation");
      const answers = [...explanation.querySelectorAll(".answer")].map((span) => span.textContent.trim());
      const row = document.createElement("div");
      row.className = "question-input";
      const label = document.createElement("label");
      label.htmlFor = `${id}-input`;
      const unit = box.dataset.unit ? `, in ${box.dataset.unit}` : "";
      label.textContent = kind === "number" ? `Your answer (a number${unit})` : "Your answer (a shape, such as (B, 3, 4))";
      const input = document.createElement("input");
      input.type = "text";
      input.id = `${id}-input`;
      input.className = "form-control";
      input.autocomplete = "off";
      input.spellcheck = false;
      input.setAttribute("autocapitalize", "off");
      if (kind === "number") input.inputMode = "decimal";
      const field = document.createElement("div");
      field.className = "question-field";
      field.append(input);
      if (box.dataset.unit) {
        const shown = document.createElement("span");
        shown.className = "question-unit";
        shown.setAttribute("aria-hidden", "true");  // the label says it
        shown.textContent = box.dataset.unit;
        field.append(shown);
      }
      row.append(label, field);
      form.append(row);
      box.querySelector(":scope > .question-prompt").after(form);
      if (kind === "number") {
        const tolerance = box.dataset.tolerance;
        const near = (given, written) => Math.abs(given - numberOf(written)) <=
          (tolerance !== undefined ? Number(tolerance) : halfLastPlace(written)) + 1e-12;
        read = () => {
          const given = numberOf(input.value);
          if (!input.value.trim()) return { empty: "Write a number first." };
          if (Number.isNaN(given)) return { empty: "Write a number, such as 12.5." };
          return {
            right: answers.some((written) => near(given, written)),
            hint: hints.find((hint) => near(given, hint.dataset.value)),
          };
        };
      } else {
        read = () => {
          if (!input.value.trim()) return { empty: "Write a shape first, such as (B, 3, 4)." };
          const given = shapeOf(input.value);
          return {
            right: answers.some((written) => shapeOf(written) === given),
            hint: hints.find((hint) => shapeOf(hint.dataset.value) === given),
          };
        };
      }
    }

    const actions = document.createElement("div");
    actions.className = "question-actions";
    const check = document.createElement("button");
    check.type = "submit";
    check.className = "btn btn-primary question-check";
    check.textContent = "Check";
    const show = document.createElement("button");
    show.type = "button";
    show.className = "btn question-show";
    show.textContent = "Show answer";
    actions.append(check, show);
    form.append(actions);
    // The hint's fold closes the buttons' row instead of taking a row of its own (its one-word
    // summary fits there on a 390 px phone too); opened, its text takes the full width under the
    // buttons (assets/questions.css).
    const stuckFold = box.querySelector(":scope > details.question-stuck");
    if (stuckFold) actions.append(stuckFold);
    // Short choices, such as three tokens, share a line; a long one keeps every choice on its own row.
    const labels = [...form.querySelectorAll(".question-choice .form-check-label")];
    if (labels.length && labels.every((label) => label.textContent.trim().length <= SHORT_CHOICE &&
                                              !label.querySelector("pre, math, img"))) {
      form.classList.add("question-choices-short");
    }

    const feedback = document.createElement("div");
    feedback.className = "question-feedback";
    feedback.setAttribute("role", "status");
    feedback.setAttribute("aria-live", "polite");
    feedback.setAttribute("aria-atomic", "true");
    form.after(feedback);

    answer.hidden = true;
    box.classList.add("question-enhanced");

    function reveal() {
      answer.hidden = false;
      answer.open = true;
    }

    // The live region is emptied first and filled a moment later, so that the same words said twice
    // are announced twice; only the latest message is written.
    let said = 0;
    function say(state, lead, nodes = []) {
      const turn = ++said;
      box.dataset.state = state;
      feedback.dataset.state = state;
      feedback.replaceChildren();
      setTimeout(() => {
        if (turn !== said) return;
        const first = document.createElement("p");
        const strong = document.createElement("strong");
        strong.textContent = lead;
        first.append(strong);
        const blocks = nodes.filter((node) => node.nodeType !== Node.TEXT_NODE || node.textContent.trim());
        // A hint's first paragraph continues the lead's line.
        if (blocks[0] && blocks[0].nodeType === Node.TEXT_NODE) first.append(" ", blocks.shift());
        else if (blocks[0] && blocks[0].tagName === "P") first.append(" ", ...blocks.shift().childNodes);
        feedback.replaceChildren(first, ...blocks);
      }, 50);
    }

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const given = read();
      if (given.empty) {
        say("empty", given.empty);
        return;
      }
      if (given.right) {
        say("right", "Right.", [document.createTextNode("The explanation is below.")]);
        reveal();
        return;
      }
      tries += 1;
      const help = given.hint || stuck;
      const nodes = help ? cloneContent(help) : [document.createTextNode("Try again.")];
      if (tries >= 2) {
        nodes.push(Object.assign(document.createElement("p"), { textContent: "The answer and why are below." }));
        reveal();
      }
      say("wrong", "Not quite.", nodes);
    });

    show.addEventListener("click", () => {
      reveal();
      say("shown", "The answer is open below.");  // for screen readers only (assets/questions.css)
    });
  }

  function enhanceAll() {
    for (const box of document.querySelectorAll(".question[data-kind]:not(.question-enhanced)")) {
      try {
        enhance(box);
      } catch (error) {
        // A box that cannot be enhanced stays as it was: its answer folded, which still works.
        console.warn(`question #${box.id} left as it is:`, error);
      }
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", enhanceAll);
  else enhanceAll();
})();
