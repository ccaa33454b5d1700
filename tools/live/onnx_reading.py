"""Reading canvases through the live reader's exported graphs with onnxruntime, as the page does.

The page's model is two graphs (encoder.onnx: canvas -> memory; decoder.onnx: memory and the tokens so
far -> next-token scores and cross-attention). `OnnxReader` puts them behind the interface the lesson's
own greedy reading calls (`encode`, `decode`), so the tools read with `_reader.read_greedily` and the
lesson's tokens and canvases (`_reader.compose`), never a copy of them. One part is a copy: the handwriting
post's reading of five views together (`shifted`, `read_together`), which the post defines in cells of its
own rather than in an exported module (its exported module's digest keys the ablation report); the
test of `read_together` holds it to a plain loop, and the page's port to onnxruntime's reading through it.
"""
import json
import re
from pathlib import Path

import numpy as np
import torch

import _reader
from tools.core.notebooks import shown
from tools.live.reader_files import PublishError
from tools.run import standin_data


def canvases(split, count):
    """`count` canvases from the stand-in's full MNIST `split`, as post 2 makes them (train: seed 0, test: seed 1)."""
    arrays = standin_data.read_npz(standin_data.build()["mnist/mnist-full.npz"])
    images = arrays[f"x_{split}"].astype(np.float32) / 255
    made, tokens, _ = _reader.compose(images, arrays[f"y_{split}"].astype(np.int64), count,
                                      np.random.default_rng({"train": 0, "test": 1}[split]))
    return made, tokens


def onnx_session(path, label=None):
    """An onnxruntime session of the graph at `path`, one thread; PublishError (naming the file as `label`, else
    by its path) when it is missing or not a graph onnxruntime loads."""
    try:
        import onnxruntime
    except ImportError:
        raise PublishError("onnxruntime is not installed, and it reads the graphs: run `make` "
                           "(it installs requirements.txt)") from None
    path = Path(path)
    label = label or shown(path)
    if not path.is_file():
        raise PublishError(f"{label} does not exist")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own classes (InvalidProtobuf, Fail, ...), with no common base
        said = " ".join(str(error).split())
        said = said.split(" : ", 2)[-1] if said.startswith("[ONNXRuntimeError]") else said
        said = re.sub(r"Load model (from )?\S+ failed: ?", "", said)
        raise PublishError(f"{label} is not an ONNX graph onnxruntime can load ({type(error).__name__}: "
                           f"{said[:160]})") from None


def onnx_sessions(folder):
    return [onnx_session(Path(folder) / name) for name in ("encoder.onnx", "decoder.onnx")]


class OnnxReader:
    """The exported graphs in a folder, read through the lesson's model interface."""

    def __init__(self, folder):
        self.encoder, self.decoder = onnx_sessions(folder)

    def encode(self, images):
        """Canvases (B, 1, 28, 84) to memory (B, PATCHES, width)."""
        return torch.from_numpy(self.encoder.run(None, {"image": images.numpy()})[0])

    def decode(self, tokens, memory):
        """Logits (B, T, VOCAB) for the token after each of `tokens` (B, T)."""
        return torch.from_numpy(self.decoder.run(None, {"memory": memory.numpy(), "tokens": tokens.numpy()})[0])


def onnx_reader(folder):
    return OnnxReader(folder)


def served_reading(folder):
    """How the live page reads with the card in `folder`: {"shifts": the moved copies read together with
    the canvas (none: the canvas alone), "temperature": the card's}; a folder without a card reads alone."""
    card_path = Path(folder) / "card.json"
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
    return {"shifts": [tuple(shift) for shift in card.get("read_with_shifts") or []],
            "temperature": card.get("temperature", 1.0)}


def shifted(images, dx, dy):
    """Canvases (B, 1, 28, 84) moved dx pixels right and dy down, what leaves them lost and the strip
    uncovered blank: the handwriting post's `shifted`, which the page's shiftedPixels ports too."""
    moved = torch.zeros_like(images)
    height, width = images.shape[-2:]
    moved[..., max(dy, 0):height + min(dy, 0), max(dx, 0):width + min(dx, 0)] = \
        images[..., max(-dy, 0):height + min(-dy, 0), max(-dx, 0):width + min(-dx, 0)]
    return moved


@torch.no_grad()
def read_together(reader, images, shifts, temperature):
    """Greedy readings (B, STEPS) of canvases read with their copies moved by `shifts`: every view fed
    the same tokens, each next token the likeliest on the views' temperature-scaled probabilities
    averaged (the handwriting post's read_views with together=True)."""
    views = torch.cat([shifted(images, dx, dy) for dx, dy in ((0, 0), *shifts)])
    memory = reader.encode(views)
    tokens = torch.full((len(views), 1), _reader.START)
    for _ in range(_reader.STEPS):
        step = (reader.decode(tokens, memory)[:, -1] / temperature).softmax(-1)
        chosen = step.view(len(shifts) + 1, len(images), -1).mean(0).argmax(-1)
        tokens = torch.cat([tokens, chosen.repeat(len(shifts) + 1)[:, None]], dim=1)
    return tokens[:len(images), 1:]


def read_all(reader, images, chunk=1000, shifts=(), temperature=1.0):
    """Greedy readings (N, STEPS) of many canvases, `chunk` at a time, as a NumPy array: of each canvas
    alone, or with `shifts` read together as the page does (`served_reading` gives the card's)."""
    def read(batch):
        return read_together(reader, batch, shifts, temperature) if shifts else _reader.read_greedily(reader, batch)[0]
    return np.concatenate([read(images[i:i + chunk]).numpy() for i in range(0, len(images), chunk)])
