// The live reader: draw up to three digits, then watch an encoder–decoder read them one token
// at a time, in the browser. The model (model/*.onnx) and its card (model/card.json) are trained,
// measured and exported by a post (the one card.post.url links to); tools/live/reader_model.py copies
// them here. ONNX Runtime Web runs it, single-threaded (a static host cannot send the
// cross-origin isolation headers that threads need), loaded only when Read is first pressed.

const START = 10, END = 11;
const HEIGHT = 28, WIDTH = 84, BOX = 28;   // the model's canvas: three 28×28 boxes side by side
const SCALE = 10;                          // the drawing canvas is 10× the model's
const PATCH = 7;                           // the encoder's patches: a 4×12 grid of 7×7
const PEN = 2.2 * SCALE;                   // MNIST strokes are about two pixels wide
const INK_LEVEL = 20;                      // a drawing-canvas pixel above this grey level is ink
const HERE = new URL(".", import.meta.url);

const ink = document.getElementById("ink");
const overlay = document.getElementById("attention");
const readButton = document.getElementById("read");
const message = document.getElementById("message");
const reading = document.getElementById("reading");
const announce = document.getElementById("announce");
const looked = document.getElementById("looked");
const pen = ink.getContext("2d", { willReadFrequently: true });
const heat = overlay.getContext("2d");

let example = null;      // { pixels, label } when a shipped example is on the canvas, else null
let examples = null;     // the sprite and labels, fetched on first use
let runtime = null;      // { ort, encoder, decoder }, loaded on first Read
let drawing = false;
let cardLoaded = null;   // the promise of model/card.json, fetched on load

// ---- drawing ----------------------------------------------------------------------------------

function clearCanvas() {
  pen.fillStyle = "#000";
  pen.fillRect(0, 0, ink.width, ink.height);
  heat.clearRect(0, 0, overlay.width, overlay.height);
  example = null;
}

function canvasPoint(event) {
  const box = ink.getBoundingClientRect();
  return [(event.clientX - box.left) * ink.width / box.width, (event.clientY - box.top) * ink.height / box.height];
}

// Forget the last reading: its tokens, its overlay and its message belong to the old drawing.
function clearReading() {
  reading.replaceChildren();
  heat.clearRect(0, 0, overlay.width, overlay.height);
  looked.textContent = "";
  say("");
}

function startStroke(event) {
  if (example) clearCanvas();   // drawing replaces a loaded example
  if (reading.childElementCount || message.textContent) clearReading();
  drawing = true;
  ink.setPointerCapture?.(event.pointerId);
  const [x, y] = canvasPoint(event);
  pen.strokeStyle = "#fff";
  pen.lineWidth = PEN;
  pen.lineCap = pen.lineJoin = "round";
  pen.beginPath();
  pen.moveTo(x, y);
  pen.lineTo(x + 0.01, y);
  pen.stroke();
  event.preventDefault();
}

function continueStroke(event) {
  if (!drawing) return;
  const [x, y] = canvasPoint(event);
  pen.lineTo(x, y);
  pen.stroke();
  event.preventDefault();
}

function endStroke() {
  drawing = false;
}

// ---- the model's input, made the way MNIST digits were made ------------------------------------

function inkBounds(data, size) {
  let top = size, left = size, bottom = -1, right = -1;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (data[(y * size + x) * 4] > INK_LEVEL) {
        top = Math.min(top, y); bottom = Math.max(bottom, y);
        left = Math.min(left, x); right = Math.max(right, x);
      }
    }
  }
  return bottom < 0 ? null : { left, top, width: right - left + 1, height: bottom - top + 1 };
}

// One box of the drawing as 28×28 grey levels in [0, 1]: crop to the ink, scale the longer side to
// 20 pixels (anti-aliased), and place it so that its centre of mass sits at the centre. Null if empty.
function boxAsDigit(index) {
  const size = BOX * SCALE;
  const bounds = inkBounds(pen.getImageData(index * size, 0, size, size).data, size);
  if (!bounds) return null;
  const factor = 20 / Math.max(bounds.width, bounds.height);
  const w = Math.max(1, Math.round(bounds.width * factor)), h = Math.max(1, Math.round(bounds.height * factor));
  const small = new OffscreenCanvas(w, h).getContext("2d", { willReadFrequently: true });
  small.imageSmoothingEnabled = true;
  small.imageSmoothingQuality = "high";
  small.drawImage(ink, index * size + bounds.left, bounds.top, bounds.width, bounds.height, 0, 0, w, h);
  const grey = small.getImageData(0, 0, w, h).data;
  let mass = 0, sumX = 0, sumY = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = grey[(y * w + x) * 4] / 255;
      mass += v; sumX += v * x; sumY += v * y;
    }
  }
  const clamp = (value, limit) => Math.min(Math.max(value, 0), limit);
  const left = clamp(Math.round(BOX / 2 - 0.5 - sumX / mass), BOX - w);
  const top = clamp(Math.round(BOX / 2 - 0.5 - sumY / mass), BOX - h);
  const digit = new Float32Array(BOX * BOX);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) digit[(top + y) * BOX + left + x] = grey[(y * w + x) * 4] / 255;
  }
  return digit;
}

// ---- checking the ink before reading ------------------------------------------------------------
// The model has only seen digits, so it answers every canvas with digits. These rules catch what
// is not one digit per box before it gets a confident wrong answer. Each threshold sits between
// what tools/live/handwriting_set.py's non-MNIST digits do (measured on 300 of its canvases, with
// the page's pen and with the set's own, 11 to 52 px wide) and what hard_inputs() does; drawing
// canvas pixels, a box being 280 px.
const LIMITS = {
  dotSide: 45,         // ink spanning under 45 px (two pen widths) is a dot or a tap; digits span 88 px or more
  smallSide: 93,       // under a third of the box the pen's width swamps the digit once scaled: read, but say so
  thinPen: 8,          // a typical stroke under 8 px turns faint grey at 28 px; the page's pen is 22, the set's 11+
  fullShare: 0.5,      // ink over half the box is a scribble or a filled area; the set's digits cover at most 44 %
  crossingRows: 30,    // rows inked on both sides of a box edge; the set's digits, at most 10
  twoDigitsAspect: 1.1, // wider than this, with a clean gap between two tall parts: two digits in one box
  flatAspect: 3,       // ink this many times wider than tall, and ...
  flatStrokes: 2       // ... no taller than this many strokes: a dash, which no digit is
};

// For each ink pixel, the shorter of its horizontal and vertical runs of ink: across a stroke
// that is the pen's width. Their median is the box's typical stroke width.
function typicalStroke(mask, size) {
  const across = new Uint16Array(size * size).fill(65535);
  for (const [step, line] of [[1, size], [size, 1]]) {   // rows, then columns
    for (let a = 0; a < size; a++) {
      let run = 0;
      for (let b = 0; b <= size; b++) {
        const i = a * line + b * step;
        if (b < size && mask[i]) { run++; continue; }
        for (let back = 1; back <= run; back++) {
          const j = i - back * step;
          across[j] = Math.min(across[j], run);
        }
        run = 0;
      }
    }
  }
  const counts = new Uint32Array(size + 1);
  let total = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) { counts[across[i]]++; total++; }
  for (let width = 0, seen = 0; width <= size; width++) {
    seen += counts[width];
    if (seen * 2 >= total) return width;
  }
  return size;
}

// Whether the ink splits, at an empty column, into two parts that are each at least half as tall as
// all of it: two digits side by side. Single digits drawn in one box keep their strokes overlapping.
function holdsTwoDigits(mask, size, bounds) {
  if (bounds.width <= LIMITS.twoDigitsAspect * bounds.height) return false;
  const top = new Int32Array(size).fill(size), bottom = new Int32Array(size).fill(-1);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (mask[y * size + x]) { top[x] = Math.min(top[x], y); bottom[x] = Math.max(bottom[x], y); }
    }
  }
  const tallness = (from, to) => {
    let high = size, low = -1;
    for (let x = from; x < to; x++) { high = Math.min(high, top[x]); low = Math.max(low, bottom[x]); }
    return low - high + 1;
  };
  const right = bounds.left + bounds.width;
  for (let x = bounds.left + 1; x < right - 1; x++) {
    if (bottom[x] >= 0) continue;
    if (tallness(bounds.left, x) >= bounds.height / 2 && tallness(x, right) >= bounds.height / 2) return true;
  }
  return false;
}

// What each box holds: null if empty, else its ink's size, share of the box and typical stroke.
function boxSurvey(data, index) {
  const size = BOX * SCALE;
  const mask = new Uint8Array(size * size);
  let count = 0, top = size, left = size, bottom = -1, right = -1;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (data[(y * WIDTH * SCALE + index * size + x) * 4] <= INK_LEVEL) continue;
      mask[y * size + x] = 1;
      count++;
      top = Math.min(top, y); bottom = Math.max(bottom, y);
      left = Math.min(left, x); right = Math.max(right, x);
    }
  }
  if (!count) return null;
  const bounds = { left, top, width: right - left + 1, height: bottom - top + 1 };
  return {
    side: Math.max(bounds.width, bounds.height),
    share: count / (size * size),
    stroke: typicalStroke(mask, size),
    twoDigits: holdsTwoDigits(mask, size, bounds),
    flat: bounds.width >= LIMITS.flatAspect * bounds.height,
    height: bounds.height,
  };
}

// Rows where ink touches both sides of the edge between box `left` and the next: a digit drawn across it.
function crossingRows(data, left) {
  const edge = (left + 1) * BOX * SCALE, row = WIDTH * SCALE;
  let rows = 0;
  for (let y = 0; y < HEIGHT * SCALE; y++) {
    if (data[(y * row + edge - 1) * 4] > INK_LEVEL && data[(y * row + edge) * 4] > INK_LEVEL) rows++;
  }
  return rows;
}

const NOT_DIGITS = "That doesn't look like digits";
const list = (numbers) => numbers.length > 1
  ? `boxes ${numbers.slice(0, -1).join(", ")} and ${numbers.at(-1)}` : `box ${numbers[0]}`;

// { problem } when the ink is not one digit per box, else { small: [box numbers] } for boxes whose
// digit is small enough to read less reliably (read anyway, with a hint).
function checkInk() {
  const data = pen.getImageData(0, 0, ink.width, ink.height).data;
  const boxes = [0, 1, 2].map((k) => boxSurvey(data, k));
  const named = (test) => boxes.map((box, k) => box && test(box) ? k + 1 : 0).filter(Boolean);
  let found;
  if ((found = named((box) => box.share > LIMITS.fullShare)).length) {
    return { problem: `${NOT_DIGITS}: ${list(found)} ${found.length > 1 ? "are" : "is"} mostly covered in ink, ` +
      "like a scribble. Clear, then write one digit per box." };
  }
  if ((found = named((box) => box.side < LIMITS.dotSide)).length) {
    return { problem: `${NOT_DIGITS}: ${list(found)} ${found.length > 1 ? "hold" : "holds"} only a dot. ` +
      "Write a whole digit, filling most of the box." };
  }
  if ((found = named((box) => box.flat && box.height <= LIMITS.flatStrokes * box.stroke)).length) {
    return { problem: `${NOT_DIGITS}: ${list(found)} ${found.length > 1 ? "hold" : "holds"} only a flat line. ` +
      "Write a whole digit, filling most of the box." };
  }
  const crossed = [0, 1].filter((k) => crossingRows(data, k) > LIMITS.crossingRows);
  if (crossed.length) {
    const k = crossed[0] + 1;
    return { problem: `The ink crosses the line between box ${k} and box ${k + 1}: the model reads each box on its ` +
      "own, so keep every digit inside its box. Clear, then draw again." };
  }
  if ((found = named((box) => box.twoDigits)).length) {
    const boxesNamed = list(found);
    return { problem: `${boxesNamed[0].toUpperCase()}${boxesNamed.slice(1)} ${found.length > 1 ? "seem" : "seems"} ` +
      "to hold two digits: " +
      "the model reads at most three digits, one per box. Clear, then write each digit in its own box." };
  }
  if ((found = named((box) => box.stroke < LIMITS.thinPen)).length) {
    const stroke = boxes[found[0] - 1].stroke;
    return { problem: `The strokes in ${list(found)} are too thin to read (about ${stroke} px; the pen draws ` +
      `${PEN}): the model learned from thicker ones. Clear, then draw with the pen.` };
  }
  return { small: named((box) => box.side < LIMITS.smallSide) };
}

// The 1×1×28×84 input, or a message saying why there is nothing sensible to read.
function modelInput() {
  if (example) return { pixels: example.pixels, small: [] };
  const digits = [0, 1, 2].map(boxAsDigit);
  const drawn = digits.map(Boolean);
  if (!drawn.some(Boolean)) {
    return { problem: "The canvas is empty: draw a digit in box 1 with a finger or the mouse, " +
      "or press Random example." };
  }
  const checked = checkInk();
  if (checked.problem) return checked;
  const gap = drawn.findIndex((isDrawn, i) => !isDrawn && drawn.slice(i + 1).some(Boolean));
  if (gap >= 0) {
    return { problem: `Box ${gap + 1} is empty but a box to its right is not: write the digits from the left, without gaps.` };
  }
  const pixels = new Float32Array(HEIGHT * WIDTH);
  digits.forEach((digit, k) => {
    if (!digit) return;
    for (let y = 0; y < BOX; y++) {
      for (let x = 0; x < BOX; x++) pixels[y * WIDTH + k * BOX + x] = digit[y * BOX + x];
    }
  });
  return { pixels, small: checked.small };
}

// ---- shipped examples ---------------------------------------------------------------------------

async function loadExamples() {
  if (examples) return examples;
  const [meta, sprite] = await Promise.all([
    fetch(new URL("examples.json", HERE)).then((response) => response.json()),
    new Promise((resolve, reject) => {
      const image = new Image();
      image.onload = () => resolve(image);
      image.onerror = () => reject(new Error("could not load examples.png"));
      image.src = new URL("examples.png", HERE).href;
    }),
  ]);
  const canvas = new OffscreenCanvas(sprite.width, sprite.height).getContext("2d", { willReadFrequently: true });
  canvas.drawImage(sprite, 0, 0);
  examples = { meta, grey: canvas.getImageData(0, 0, sprite.width, sprite.height).data };
  return examples;
}

async function loadExample(index) {
  const { meta, grey } = await loadExamples();
  const row = ((index % meta.rows) + meta.rows) % meta.rows;
  const pixels = new Float32Array(HEIGHT * WIDTH);
  for (let i = 0; i < pixels.length; i++) pixels[i] = grey[(row * HEIGHT * WIDTH + i) * 4] / 255;
  clearCanvas();
  const picture = new ImageData(WIDTH, HEIGHT);
  pixels.forEach((v, i) => picture.data.set([v * 255, v * 255, v * 255, 255], i * 4));
  const small = new OffscreenCanvas(WIDTH, HEIGHT);
  small.getContext("2d").putImageData(picture, 0, 0);
  pen.imageSmoothingEnabled = false;
  pen.drawImage(small, 0, 0, ink.width, ink.height);
  example = { pixels, label: meta.labels[row] };
  clearReading();
  say(`Held-out example ${row + 1} of ${meta.rows}. Press Read.`);
  return example.label;
}

// ---- running the model --------------------------------------------------------------------------

async function loadRuntime() {
  if (runtime) return runtime;
  say("Loading the model and ONNX Runtime (about 17 MB, once)…");
  const ort = await import(new URL("vendor/ort/ort.wasm.min.mjs", HERE).href);
  ort.env.wasm.wasmPaths = new URL("vendor/ort/", HERE).href;
  ort.env.wasm.numThreads = 1;
  const options = { executionProviders: ["wasm"] };
  const [encoder, decoder] = await Promise.all([
    ort.InferenceSession.create(new URL("model/encoder.onnx", HERE).href, options),
    ort.InferenceSession.create(new URL("model/decoder.onnx", HERE).href, options),
  ]);
  runtime = { ort, encoder, decoder };
  return runtime;
}

function softmax(scores) {
  const top = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

// Each token's probability is the softmax of the logits divided by the card's temperature, which
// the post fitted on the blind test's tuning half so that a reading's probability says how often
// such readings are right. A reading's confidence is the product of the probabilities of every
// token it chose, its <end> included: doubt about where the number ends counts too. A reading whose
// confidence (with the card's unsure_shifts, its steady confidence: steadyConfidence below) is under
// the card's unsure_below (chosen on the same tuning half) is flagged. A product over more
// tokens is smaller, so the card holds one threshold per number of digits read ({"1": …, "2": …,
// "3": …}); a single number applies to every length. UNSURE and the temperature 1 are only for a
// card without them.
const UNSURE = 0.5;

function unsureBelow(card, digitsRead) {
  const threshold = card?.unsure_below;
  if (typeof threshold === "number") return threshold;
  // a reading that never ends shows four digits: the post counts it with the three-digit ones
  return threshold?.[String(Math.min(digitsRead, 3))] ?? UNSURE;
}

function softmaxAt(scores, temperature) {
  return softmax(scores.map((s) => s / temperature));
}

// The canvas moved dx pixels right and dy down: what leaves it is lost and the strip it uncovers is
// blank, as the post's `shifted` does.
function shiftedPixels(pixels, dx, dy) {
  const moved = new Float32Array(HEIGHT * WIDTH);
  for (let y = Math.max(dy, 0); y < HEIGHT + Math.min(dy, 0); y++) {
    for (let x = Math.max(dx, 0); x < WIDTH + Math.min(dx, 0); x++) {
      moved[y * WIDTH + x] = pixels[(y - dy) * WIDTH + x - dx];
    }
  }
  return moved;
}

// With the card's unsure_shifts, the confidence the thresholds apply to is the post's "steady" one:
// the mean, over the canvas and its copies moved by each shift, of the confidence each gives the
// same reading. A reading that a pixel's move would change, or make much less sure, scores low.
// When the reading was read with those very copies (read_with_shifts), read() has every view's
// product already; otherwise this pass reads the copies at once, the decoder fed the whole reading
// (one encoder and one decoder run for all of them). Without shifts it is the canvas's own.
async function steadyConfidence({ ort, encoder, decoder }, pixels, chosen, own, shifts, temperature) {
  if (!shifts.length) return own;
  const copies = shifts.length;
  const images = viewsOf(pixels, shifts).subarray(HEIGHT * WIDTH);  // the copies without the drawing
  const { memory } = await encoder.run({ image: new ort.Tensor("float32", images, [copies, 1, HEIGHT, WIDTH]) });
  const fed = [START, ...chosen.slice(0, -1)];
  const tokens = BigInt64Array.from(shifts.flatMap(() => fed), BigInt);
  const { logits } = await decoder.run({ memory, tokens: new ort.Tensor("int64", tokens, [copies, fed.length]) });
  const vocabulary = logits.dims.at(-1);
  let total = own;
  for (let copy = 0; copy < copies; copy++) {
    total += chosen.reduce((product, token, step) => {
      const at = (copy * fed.length + step) * vocabulary;
      return product * softmaxAt(Array.from(logits.data.slice(at, at + vocabulary)), temperature)[token];
    }, 1);
  }
  return total / (copies + 1);
}

// The drawing, then its copies moved by each shift: one batch for the encoder.
function viewsOf(pixels, shifts) {
  const size = HEIGHT * WIDTH;
  const images = new Float32Array((shifts.length + 1) * size);
  images.set(pixels);
  shifts.forEach(([dx, dy], i) => images.set(shiftedPixels(pixels, dx, dy), (i + 1) * size));
  return images;
}

const shiftsOf = (value) => (Array.isArray(value) ? value : []);
const sameShifts = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// One step of a reading of several views at once: every view is fed the same tokens, and the next
// token is the likeliest on their temperature-scaled probabilities averaged (the post's read_views,
// together). Returns the token, that mean probability of it, each view's probability of it, and the
// drawing's own cross-attention map for it (view 0, the last position).
async function readStep(decoder, ort, memory, tokens, views, temperature) {
  const fed = BigInt64Array.from(Array.from({ length: views }, () => tokens).flat(), BigInt);
  const { logits, cross_attention: attention } = await decoder.run({
    memory, tokens: new ort.Tensor("int64", fed, [views, tokens.length]) });
  const vocabulary = logits.dims.at(-1), patches = attention.dims.at(-1), last = tokens.length - 1;
  const perView = Array.from({ length: views }, (_, view) => {
    const at = (view * tokens.length + last) * vocabulary;
    return softmaxAt(Array.from(logits.data.slice(at, at + vocabulary)), temperature);
  });
  const mean = perView[0].map((_, token) => perView.reduce((sum, p) => sum + p[token], 0) / views);
  const token = mean.indexOf(Math.max(...mean));
  return { token, probability: mean[token], ofEachView: perView.map((p) => p[token]),
           weights: Array.from(attention.data.slice(last * patches, (last + 1) * patches)) };
}

function showAttention(weights) {
  heat.clearRect(0, 0, overlay.width, overlay.height);
  const strongest = Math.max(...weights);
  const side = PATCH * SCALE;
  weights.forEach((w, i) => {
    heat.fillStyle = `rgba(235, 104, 52, ${(0.75 * w / strongest).toFixed(3)})`;
    heat.fillRect((i % 12) * side, Math.floor(i / 12) * side, side, side);
  });
}

const tokenName = (item) => item.classList.contains("end") ? "the end token"
  : `digit ${item.dataset.step}, “${item.dataset.token}”`;

// Show one token's map on the canvas, say whose it is, and mark that token.
function showMapOf(item) {
  showAttention(item.weights);
  reading.querySelectorAll("li").forEach((other) => other.classList.toggle("shown", other === item));
  looked.textContent = `Orange on the canvas: where the model looked for ${tokenName(item)}. ` +
    "Point at or tap another token to see its map.";
}

// One token of the reading; pointing at it, tapping it or focusing it shows where the model looked for it.
function showToken(token, probability, step, weights) {
  const item = document.createElement("li");
  const percent = `${(100 * probability).toFixed(0)}%`;
  const label = token === END ? "end" : token < 10 ? String(token) : "?";
  item.className = token === END ? "end" : "digit";
  item.tabIndex = 0;
  item.innerHTML = `<span class="token"></span><span class="probability"></span>`;
  item.querySelector(".token").textContent = label;
  item.querySelector(".probability").textContent = percent;
  item.dataset.token = label;
  item.dataset.step = String(step + 1);
  item.dataset.probability = String(probability);
  item.weights = weights;
  item.title = `${label}: ${percent} sure; point here or tap to see where the model looked`;
  for (const event of ["mouseenter", "focus", "click"]) item.addEventListener(event, () => showMapOf(item));
  reading.append(item);
  showMapOf(item);
  announce.textContent = token === END ? `The model stops: end, ${percent} sure.`
    : `Digit ${step + 1}: ${label}, ${percent} sure.`;
}

// What to say once the reading is over: the number, and any reason to doubt it.
function verdict(digits, small, confidence, unsureBelow, steadied) {
  if (!digits) return `${NOT_DIGITS}: the model read no digit in it.`;
  const notes = [`Read: ${digits}.`];
  if (confidence < unsureBelow) {
    const least = [...reading.querySelectorAll("li")]
      .reduce((a, b) => (Number(b.dataset.probability) < Number(a.dataset.probability) ? b : a));
    const which = least.classList.contains("end") ? "where the number ends" : `digit ${least.dataset.step}`;
    const how = steadied ? " with the drawing moved a pixel each way too" : "";
    notes.push(`The model is unsure of this reading (${(100 * confidence).toFixed(0)}% sure${how}; least of ` +
      `${which}): check it, or write it again more clearly.`);
  }
  if (small.length) {
    notes.push(`The writing in ${list(small)} is small: digits that fill most of their box read more reliably.`);
  }
  return notes.join(" ");
}

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function read() {
  const checking = performance.now();
  const input = modelInput();
  const checkMs = performance.now() - checking;   // counted in the first digit's time: the visitor waits for it
  if (input.problem) {
    clearReading();
    say(input.problem, true);
    return null;
  }
  readButton.disabled = true;
  try {
    const [runtime, card] = await Promise.all([loadRuntime(), cardLoaded]);
    const { ort, encoder, decoder } = runtime;
    const temperature = card?.temperature ?? 1;
    clearReading();
    say("Reading…");
    const started = performance.now();
    // With the card's read_with_shifts the drawing is read together with its moved copies, as the
    // post chose on its tuning half; without, the drawing alone (one view).
    const readShifts = shiftsOf(card?.read_with_shifts), views = readShifts.length + 1;
    const { memory } = await encoder.run({
      image: new ort.Tensor("float32", viewsOf(input.pixels, readShifts), [views, 1, HEIGHT, WIDTH]) });
    const tokens = [START], chosen = [], products = new Array(views).fill(1);
    let digits = "";
    for (let step = 0; step < 4; step++) {
      const { token, probability, ofEachView, weights } = await readStep(decoder, ort, memory, tokens, views,
                                                                          temperature);
      ofEachView.forEach((p, view) => { products[view] *= p; });
      chosen.push(token);
      showToken(token, probability, step, weights);
      if (step === 0) window.liveReader.firstTokenMs = checkMs + performance.now() - started;
      await nextFrame();   // let this token show before the next one is computed
      if (token >= 10) break;
      tokens.push(token);
      digits += token;
    }
    const confidence = products[0];   // the drawing's own: the product of its tokens' probabilities
    // leave a digit's map on the canvas, not the end token's: the last digit read
    const lastDigit = [...reading.querySelectorAll("li.digit")].at(-1);
    if (lastDigit) showMapOf(lastDigit);
    else { heat.clearRect(0, 0, overlay.width, overlay.height); looked.textContent = ""; }
    // The steady confidence over the views just read costs nothing more; over other shifts, a pass of its own.
    const shifts = shiftsOf(card?.unsure_shifts);
    const steady = !digits ? confidence
      : shifts.length && sameShifts(shifts, readShifts) ? products.reduce((a, b) => a + b, 0) / views
        : await steadyConfidence(runtime, input.pixels, chosen, confidence, shifts, temperature);
    say(verdict(digits, input.small, steady, unsureBelow(card, digits.length), shifts.length > 0), !digits);
    // the whole reading, the moved copies included: what the visitor waits for the verdict
    Object.assign(window.liveReader, { confidence, steady, views, pixels: input.pixels, chosen,
                                       readMs: checkMs + performance.now() - started });
    return digits;
  } catch (error) {
    say(`Something went wrong while reading: ${error.message}`, true);
    throw error;
  } finally {
    readButton.disabled = false;
  }
}

// ---- page ---------------------------------------------------------------------------------------

function say(text, problem = false) {
  message.textContent = text;
  message.classList.toggle("problem", problem);
}

// A share as the post prints it, f"{100 * share:.1f} %", kept on one line.
function percentOf(share) {
  const figure = document.createElement("span");
  figure.className = "figure";
  figure.textContent = `${(100 * share).toFixed(1)} %`;
  return figure;
}

// The card quotes only numbers the post printed, and links to the post that made and measured them.
async function showCard() {
  const card = await cardLoaded;
  const count = (n) => n.toLocaleString("en");
  const post = document.createElement("a");
  post.href = card.post.url;
  post.textContent = card.post.title;
  const pen = card.pen_exact;
  document.getElementById("card").replaceChildren(
    `The model: ${count(card.parameters)} parameters, trained and measured in the post “`, post, "”. ",
    "Through these exported files it reads ", percentOf(card.mnist_exact.all),
    ` of ${count(card.mnist_canvases)} held-out MNIST canvases exactly right, and `,
    percentOf(pen.all), ` of ${count(card.pen_canvases)} numbers written by real people with a pen, ` +
      "drawn through this page (a blind test: ",
    "1 digit ", percentOf(pen["1"]), ", 2 digits ", percentOf(pen["2"]),
    ", 3 digits ", percentOf(pen["3"]), "). On the project's synthetic handwriting: ",
    percentOf(card.handwriting_exact.all), ".",
    howItReads(card), ...trainedOn(card.recipe));
}

// The card's figures are the page's way of reading: say which it is.
function howItReads(card) {
  const copies = shiftsOf(card.read_with_shifts).length;
  return copies ? ` It reads your drawing together with ${copies} copies of it, each moved a pixel: each ` +
    `next token is the one the ${copies + 1} views find likeliest on average.` : "";
}

// What the model learned from besides MNIST, when the card says: people's pen digits, whose
// writers are not the blind test's.
function trainedOn(recipe) {
  if (!recipe?.people_digits || !recipe?.people_writers) return [];
  return [` Besides MNIST it learned from ${recipe.people_digits.toLocaleString("en")} digits written ` +
    `with a pen by ${recipe.people_writers} other people, none of them a writer of the blind test.`];
}

ink.addEventListener("pointerdown", startStroke);
ink.addEventListener("pointermove", continueStroke);
ink.addEventListener("pointerup", endStroke);
ink.addEventListener("pointercancel", endStroke);
ink.addEventListener("pointerleave", endStroke);
readButton.addEventListener("click", () => read().catch(() => {}));
document.getElementById("clear").addEventListener("click", () => {
  clearCanvas();
  clearReading();
});
document.getElementById("example").addEventListener("click", () => loadExample(Math.floor(Math.random() * 1e6)));

clearCanvas();
cardLoaded = fetch(new URL("model/card.json", HERE)).then((response) => response.json());
showCard();
// For tests and the curious: drive the reader from the console.
window.liveReader = {
  read, loadExample, checkInk, clear: () => document.getElementById("clear").click(), firstTokenMs: null,
};
