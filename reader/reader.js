// The live reader: draw up to three digits, then watch an encoder–decoder read them one token
// at a time, in the browser. The model (model/*.onnx) is trained and exported by
// tools/reader_model.py; ONNX Runtime Web runs it, single-threaded (a static host cannot send
// the cross-origin isolation headers that threads need), loaded only when Read is first pressed.

const START = 10, END = 11;
const HEIGHT = 28, WIDTH = 84, BOX = 28;   // the model's canvas: three 28×28 boxes side by side
const SCALE = 10;                          // the drawing canvas is 10× the model's
const PATCH = 7;                           // the encoder's patches: a 4×12 grid of 7×7
const HERE = new URL(".", import.meta.url);

const ink = document.getElementById("ink");
const overlay = document.getElementById("attention");
const readButton = document.getElementById("read");
const message = document.getElementById("message");
const reading = document.getElementById("reading");
const announce = document.getElementById("announce");
const pen = ink.getContext("2d", { willReadFrequently: true });
const heat = overlay.getContext("2d");

let example = null;      // { pixels, label } when a shipped example is on the canvas, else null
let examples = null;     // the sprite and labels, fetched on first use
let runtime = null;      // { ort, encoder, decoder }, loaded on first Read
let drawing = false;

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

function startStroke(event) {
  if (example) clearCanvas();   // drawing replaces a loaded example
  drawing = true;
  ink.setPointerCapture?.(event.pointerId);
  const [x, y] = canvasPoint(event);
  pen.strokeStyle = "#fff";
  pen.lineWidth = 2.2 * SCALE;  // MNIST strokes are about two pixels wide
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
      if (data[(y * size + x) * 4] > 20) {
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

// The 1×1×28×84 input, or a message saying why there is nothing sensible to read.
function modelInput() {
  if (example) return { pixels: example.pixels };
  const digits = [0, 1, 2].map(boxAsDigit);
  const drawn = digits.map(Boolean);
  if (!drawn.some(Boolean)) {
    return { problem: "The canvas is empty: draw a digit in box 1, or press Random example." };
  }
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
  return { pixels };
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
  reading.replaceChildren();
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

function showAttention(weights) {
  heat.clearRect(0, 0, overlay.width, overlay.height);
  const strongest = Math.max(...weights);
  const side = PATCH * SCALE;
  weights.forEach((w, i) => {
    heat.fillStyle = `rgba(235, 104, 52, ${(0.75 * w / strongest).toFixed(3)})`;
    heat.fillRect((i % 12) * side, Math.floor(i / 12) * side, side, side);
  });
}

// One token of the reading; pointing at it (or focusing it) shows where the model looked for it.
function showToken(token, probability, step, weights) {
  const item = document.createElement("li");
  const percent = `${(100 * probability).toFixed(1)}%`;
  const label = token === END ? "end" : token < 10 ? String(token) : "?";
  item.className = token === END ? "end" : "digit";
  item.tabIndex = 0;
  item.innerHTML = `<span class="token"></span><span class="probability"></span>`;
  item.querySelector(".token").textContent = label;
  item.querySelector(".probability").textContent = percent;
  item.dataset.token = label;
  item.title = `${label}: ${percent} likely; point here to see where the model looked`;
  item.addEventListener("mouseenter", () => showAttention(weights));
  item.addEventListener("focus", () => showAttention(weights));
  reading.append(item);
  announce.textContent = token === END ? `The model stops: end, ${percent} sure.`
    : `Digit ${step + 1}: ${label}, ${percent} sure.`;
}

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function read() {
  const input = modelInput();
  if (input.problem) {
    say(input.problem, true);
    return null;
  }
  readButton.disabled = true;
  try {
    const { ort, encoder, decoder } = await loadRuntime();
    reading.replaceChildren();
    say("Reading…");
    const started = performance.now();
    const { memory } = await encoder.run({ image: new ort.Tensor("float32", input.pixels, [1, 1, HEIGHT, WIDTH]) });
    const tokens = [START];
    let digits = "";
    for (let step = 0; step < 4; step++) {
      const fed = new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), [1, tokens.length]);
      const { logits, cross_attention: attention } = await decoder.run({ memory, tokens: fed });
      const last = Array.from(logits.data.slice(-13));
      const probabilities = softmax(last);
      const token = last.indexOf(Math.max(...last));
      const weights = Array.from(attention.data.slice(-48));
      showAttention(weights);
      showToken(token, probabilities[token], step, weights);
      if (step === 0) window.liveReader.firstTokenMs = performance.now() - started;
      await nextFrame();   // let this token show before the next one is computed
      if (token >= 10) break;
      tokens.push(token);
      digits += token;
    }
    say(digits ? `Read: ${digits}` : "The model did not read a digit.");
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

async function showCard() {
  const card = await fetch(new URL("model/card.json", HERE)).then((response) => response.json());
  const percent = (100 * card.held_out_exact_onnx).toFixed(1);
  document.getElementById("card").textContent =
    `The model: ${card.parameters.toLocaleString("en")} parameters, the design of the variable-length post at ` +
    `a size a browser can fetch. Measured through these exported files, it reads ${percent}% of ` +
    `${card.held_out_canvases.toLocaleString("en")} held-out canvases exactly right.`;
}

ink.addEventListener("pointerdown", startStroke);
ink.addEventListener("pointermove", continueStroke);
ink.addEventListener("pointerup", endStroke);
ink.addEventListener("pointercancel", endStroke);
ink.addEventListener("pointerleave", endStroke);
readButton.addEventListener("click", () => read().catch(() => {}));
document.getElementById("clear").addEventListener("click", () => {
  clearCanvas();
  reading.replaceChildren();
  say("");
});
document.getElementById("example").addEventListener("click", () => loadExample(Math.floor(Math.random() * 1e6)));

clearCanvas();
showCard();
// For tests and the curious: drive the reader from the console.
window.liveReader = { read, loadExample, clear: () => document.getElementById("clear").click(), firstTokenMs: null };
