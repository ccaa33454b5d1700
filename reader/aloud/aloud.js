// The decoding lab: type a number from 0 to 999 and watch the numbers-aloud post's encoder–decoder say it,
// one word at a time, greedily or by beam search, in the browser. The model (model/*.onnx) and its card
// (model/card.json: vocabularies, special ids, sizes, the post's own greedy readings of its held-out
// numbers) are exported by that post; tools/live/aloud_model.py copies them here (make aloud-model). ONNX
// Runtime Web, the live reader's pinned copy in ../vendor/ort, runs them single-threaded, loaded on the
// first Step.
//
// The two graphs:
//   encoder.onnx  source (B, L_src) int64                          -> memory (B, L_src, width)
//   decoder.onnx  memory, source (for its <pad> mask), words (B, T) -> logits (B, T, words),
//                                                                       cross_attention (B, T, L_src)
// Only the last position's row of each output is read: the next word, and where it looked.

const HERE = new URL(".", import.meta.url);
const SHOWN_WORDS = 5;                       // the next-word bars: the likeliest five

const input = document.getElementById("number");
const note = document.getElementById("number-note");
const message = document.getElementById("message");
const announce = document.getElementById("announce");
const said = document.getElementById("said");
const bars = document.getElementById("probabilities");
const nextNote = document.getElementById("next-note");
const attentionTable = document.getElementById("attention");
const beamPanel = document.getElementById("beam-panel");
const beamTable = document.getElementById("beams");
const buttons = ["step", "run", "reset"].map((id) => document.getElementById(id));

let card = null;       // model/card.json, fetched on load
let runtime = null;    // { ort, encoder, decoder }, loaded on the first step
let reading = null;    // the reading under way: see start()
let busy = Promise.resolve();

// ---- the model's inputs and outputs -------------------------------------------------------------

// "427" -> [4, 2, 7, <end>, <pad>…], as the post's source_ids() makes it; null for anything but 0–999.
function parseNumber(text) {
  const trimmed = text.trim();
  if (!/^[0-9]{1,3}$/.test(trimmed)) return null;
  return Number(trimmed);
}

function sourceIds(number) {
  const { end, pad } = card.tokens;
  const ids = [...String(number)].map(Number).concat(end);
  while (ids.length < card.sizes.source_length) ids.push(pad);
  return ids;
}

const int64 = (ort, ids, rows = 1) => new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [rows, ids.length / rows]);

async function loadRuntime() {
  if (runtime) return runtime;
  say("Loading the model and ONNX Runtime (about 12 MB, once)…");
  const ort = await import(new URL("../vendor/ort/ort.wasm.min.mjs", HERE).href);
  ort.env.wasm.wasmPaths = new URL("../vendor/ort/", HERE).href;
  ort.env.wasm.numThreads = 1;
  const options = { executionProviders: ["wasm"] };
  const [encoder, decoder] = await Promise.all([
    ort.InferenceSession.create(new URL("model/encoder.onnx", HERE).href, options),
    ort.InferenceSession.create(new URL("model/decoder.onnx", HERE).href, options),
  ]);
  runtime = { ort, encoder, decoder };
  return runtime;
}

// The next word's log-probabilities and the last position's cross-attention after `words` (ids, <start> first).
async function nextWord(words) {
  const { ort, decoder } = runtime;
  const { logits, cross_attention: attention } = await decoder.run({
    memory: reading.memory, source: int64(ort, reading.source), words: int64(ort, words),
  });
  const vocabulary = logits.dims.at(-1), sources = attention.dims.at(-1);
  const scores = Array.from(logits.data.slice(-vocabulary));
  const top = Math.max(...scores);
  const logTotal = top + Math.log(scores.reduce((sum, s) => sum + Math.exp(s - top), 0));
  return { logProbs: scores.map((s) => s - logTotal), attention: Array.from(attention.data.slice(-sources)) };
}

// Word ids by falling log-probability, ties in id order.
const ranked = (logProbs) => logProbs.map((_, id) => id).sort((a, b) => logProbs[b] - logProbs[a] || a - b);

// ---- a reading, greedy or by beam search ---------------------------------------------------------
// A reading is { number, source, memory, mode, steps, done }. Greedy keeps one hypothesis; beam search
// keeps `beam_width`. A hypothesis is { words (ids, <start> first), score (total log-probability),
// rows (one per word said: { word, logProbs, attention }) }.

async function start(number, mode) {
  const { ort, encoder } = await loadRuntime();
  const source = sourceIds(number);
  const { memory } = await encoder.run({ source: int64(ort, source) });
  reading = { number, source, memory, mode, steps: 0, done: false,
              beams: [{ words: [card.tokens.start], score: 0, rows: [] }] };
}

const ended = (hypothesis) => hypothesis.words.at(-1) === card.tokens.end;
const maxSteps = () => card.sizes.target_length - 1;   // the post reads TARGET_LENGTH - 1 words at most

async function extend(hypothesis, width) {
  const { logProbs, attention } = await nextWord(hypothesis.words);
  return ranked(logProbs).slice(0, width).map((word) => ({
    words: [...hypothesis.words, word],
    score: hypothesis.score + logProbs[word],
    rows: [...hypothesis.rows, { word, logProbs, attention }],
  }));
}

// One step: greedy appends the likeliest word; beam search extends every kept reading that has not ended by
// its `beam_width` likeliest words and keeps the best `beam_width` of all (the post's beam_search()).
async function step() {
  if (reading.done) return;
  if (reading.mode === "greedy") {
    reading.beams = await extend(reading.beams[0], 1);
  } else {
    const width = card.beam_width;
    const candidates = [];
    for (const hypothesis of reading.beams) {
      if (ended(hypothesis)) candidates.push(hypothesis);
      else candidates.push(...await extend(hypothesis, width));
    }
    reading.beams = candidates.sort((a, b) => b.score - a.score).slice(0, width);   // stable, as Python's sort
  }
  reading.steps += 1;
  reading.done = reading.beams.every(ended) || reading.steps >= maxSteps();
}

const spell = (words) => words.filter((id) => !Object.values(card.tokens).includes(id)).map((id) => card.words[id]).join(" ");
const shownWord = (id) => card.words[id];

// ---- showing it ---------------------------------------------------------------------------------

function say(text, problem = false) {
  message.textContent = text;
  message.classList.toggle("problem", problem);
}

function percent(p) {
  return p >= 0.0005 ? `${(100 * p).toFixed(1)} %` : "< 0.1 %";
}

function showSourceColumns() {
  const head = attentionTable.tHead.rows[0];
  head.replaceChildren(head.cells[0]);
  const typed = card ? parseNumber(input.value) : null;
  const source = reading ? reading.source : typed === null ? [] : sourceIds(typed);
  for (const id of source) {
    const cell = document.createElement("th");
    cell.scope = "col";
    cell.textContent = card.source_tokens[id];
    head.append(cell);
  }
}

function showSaid(hypothesis) {
  said.replaceChildren(...hypothesis.rows.map(({ word }, i) => {
    const item = document.createElement("li");
    item.textContent = shownWord(word);
    item.className = word === card.tokens.end ? "end" : "word";
    if (i === hypothesis.rows.length - 1) item.classList.add("latest");
    return item;
  }));
}

function showBars(row) {
  if (!row) {
    bars.replaceChildren();
    nextNote.hidden = false;
    return;
  }
  nextNote.hidden = true;
  bars.replaceChildren(...ranked(row.logProbs).slice(0, SHOWN_WORDS).map((id) => {
    const p = Math.exp(row.logProbs[id]);
    const item = document.createElement("li");
    item.dataset.probability = String(p);
    item.dataset.word = shownWord(id);
    if (id === row.word) item.classList.add("chosen");
    item.innerHTML = '<span class="label"></span><span class="track"><span class="fill"></span></span>' +
      '<span class="value"></span>';
    item.querySelector(".label").textContent = shownWord(id);
    item.querySelector(".fill").style.width = `${(100 * p).toFixed(1)}%`;
    item.querySelector(".value").textContent = percent(p);
    return item;
  }));
}

function showAttention(hypothesis) {
  const body = attentionTable.tBodies[0];
  body.replaceChildren(...hypothesis.rows.map(({ word, attention }, i) => {
    const row = document.createElement("tr");
    if (i === hypothesis.rows.length - 1) row.className = "latest";
    const head = document.createElement("th");
    head.scope = "row";
    head.textContent = shownWord(word);
    row.append(head);
    attention.forEach((weight) => {
      const cell = document.createElement("td");
      cell.dataset.weight = String(weight);
      cell.innerHTML = '<span class="value"></span><span class="track"><span class="fill"></span></span>';
      cell.querySelector(".value").textContent = weight.toFixed(2);
      cell.querySelector(".fill").style.width = `${(100 * weight).toFixed(1)}%`;
      row.append(cell);
    });
    return row;
  }));
}

function showBeams() {
  beamPanel.hidden = !reading || reading.mode !== "beam";
  if (beamPanel.hidden) return;
  beamTable.tBodies[0].replaceChildren(...reading.beams.map((hypothesis, rank) => {
    const row = document.createElement("tr");
    row.dataset.score = String(hypothesis.score);
    const words = hypothesis.rows.map(({ word }) => shownWord(word)).join(" ");
    for (const text of [String(rank + 1), words || "<start>", hypothesis.score.toFixed(3)]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    if (ended(hypothesis)) row.classList.add("ended");
    return row;
  }));
}

function show() {
  const leading = reading ? reading.beams[0] : { rows: [] };
  showSourceColumns();
  showSaid(leading);
  showBars(leading.rows.at(-1));
  showAttention(leading);
  showBeams();
  buttons[0].disabled = buttons[1].disabled = !!reading?.done;
}

// The same number read the other way (beam search after a greedy reading, greedy after a beam search),
// without touching what is shown.
async function otherReading() {
  const width = reading.mode === "greedy" ? card.beam_width : 1;
  let beams = [{ words: [card.tokens.start], score: 0, rows: [] }];
  for (let steps = 0; steps < maxSteps() && !beams.every(ended); steps++) {
    const candidates = [];
    for (const hypothesis of beams) {
      if (ended(hypothesis)) candidates.push(hypothesis);
      else candidates.push(...await extend(hypothesis, width));
    }
    beams = candidates.sort((a, b) => b.score - a.score).slice(0, width);
  }
  return spell(beams[0].words);
}

// What to say once the reading is over: the words, whether the number was held out, and the other way's reading.
async function verdict() {
  const words = spell(reading.beams[0].words);
  const parts = [`Read aloud: “${words}”.`];
  const other = await otherReading();
  const otherName = reading.mode === "greedy" ? `Beam search (width ${card.beam_width})` : "Greedy decoding";
  parts.push(other === words ? `${otherName} reads it the same way.` : `${otherName} reads it differently: “${other}”.`);
  if (card.greedy_readings[String(reading.number)] !== undefined) {
    parts.push("This number was held out of training: the model never saw it.");
  }
  return parts.join(" ");
}

function announceStep() {
  const latest = reading.beams[0].rows.at(-1);
  const p = Math.exp(latest.logProbs[latest.word]);
  announce.textContent = reading.mode === "greedy"
    ? `Word ${reading.steps}: ${shownWord(latest.word)}, ${percent(p)}.`
    : `Step ${reading.steps}: best reading so far “${spell(reading.beams[0].words)}”.`;
}

// ---- the controls -------------------------------------------------------------------------------

function mode() {
  return document.querySelector("input[name=mode]:checked").value;
}

function typedNumber() {
  const number = parseNumber(input.value);
  if (number === null) {
    say("Type a whole number from 0 to 999 (digits only), then press Step.", true);
    input.setAttribute("aria-invalid", "true");
    return null;
  }
  input.removeAttribute("aria-invalid");
  note.textContent = String(number) !== input.value.trim() ? `read as ${number}` : "";
  return number;
}

// Run `action` after whatever is under way: a click during a step waits for it instead of interleaving.
function queued(action) {
  busy = busy.then(action, action).catch((error) => {
    say(`Something went wrong: ${error.message}`, true);
    throw error;
  });
  return busy;
}

async function stepOnce() {
  await cardLoaded;
  if (!reading || reading.done) {
    const number = typedNumber();
    if (number === null) return null;
    if (reading?.done) reading = null;
    if (!reading) {
      await start(number, mode());
      say(mode() === "greedy" ? "Reading greedily…" : `Reading by beam search, width ${card.beam_width}…`);
    }
  }
  await step();
  show();
  announceStep();
  if (reading.done) say(await verdict());
  return spell(reading.beams[0].words);
}

async function runToEnd() {
  let words = await stepOnce();
  while (reading && !reading.done) words = await stepOnce();
  return words;
}

function reset() {
  reading = null;
  say("");
  announce.textContent = "";
  show();
}

buttons[0].addEventListener("click", () => queued(stepOnce).catch(() => {}));
buttons[1].addEventListener("click", () => queued(runToEnd).catch(() => {}));
buttons[2].addEventListener("click", () => queued(reset).catch(() => {}));
document.getElementById("number-form").addEventListener("submit", (event) => {
  event.preventDefault();   // Enter in the box is Step; after a finished reading it starts the next one
  queued(stepOnce).catch(() => {});
});
input.addEventListener("input", () => queued(() => { reset(); note.textContent = ""; }).catch(() => {}));
for (const radio of document.querySelectorAll("input[name=mode]")) {
  radio.addEventListener("change", () => queued(reset).catch(() => {}));
}

// The card links to the post that trained, measured and exported the model.
async function showCard() {
  const post = document.createElement("a");
  post.href = card.post.url;
  post.textContent = card.post.title;
  const held = Object.keys(card.greedy_readings).length;
  document.getElementById("card").replaceChildren(
    `The model: ${card.parameters.toLocaleString("en")} parameters, trained and exported in the post “`, post,
    `”. It never saw ${held.toLocaleString("en")} of the numbers in training (the post's held-out set); ` +
      "the page says when you type one of them.");
  for (const span of document.querySelectorAll(".beam-width")) span.textContent = String(card.beam_width);
}

const cardLoaded = fetch(new URL("model/card.json", HERE)).then((response) => response.json()).then((loaded) => {
  card = loaded;
  showCard();
  show();
});

// For tests and the curious: drive the lab from the console.
window.aloudLab = {
  ready: cardLoaded,
  // The whole reading of `number` in `how` ("greedy" or "beam"), as the buttons would make it.
  read: (number, how = "greedy") => queued(async () => {
    await cardLoaded;
    input.value = String(number);
    document.querySelector(`input[name=mode][value=${how}]`).checked = true;
    reset();
    return runToEnd();
  }),
  step: () => queued(stepOnce),
  reset: () => queued(reset),
  // What the page shows now: the bars' probabilities, the latest attention row, the kept readings' scores.
  shown: () => ({
    probabilities: [...bars.querySelectorAll("li")].map((item) => Number(item.dataset.probability)),
    attention: [...attentionTable.querySelectorAll("tbody tr.latest td")].map((cell) => Number(cell.dataset.weight)),
    beams: [...beamTable.querySelectorAll("tbody tr")].map((row) => Number(row.dataset.score)),
    said: [...said.querySelectorAll("li")].map((item) => item.textContent),
  }),
};
