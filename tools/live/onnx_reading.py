"""Reading canvases through the live reader's exported graphs with onnxruntime, as the page does.

The page's model is two graphs (encoder.onnx: canvas -> memory; decoder.onnx: memory and the tokens so
far -> next-token scores and cross-attention). `OnnxReader` puts them behind the interface the lesson's
own greedy reading calls (`encode`, `decode`), so the tools read with `_reader.read_greedily` and the
lesson's tokens and canvases (`_reader.compose`), never a copy of them.
"""
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


def read_all(reader, images, chunk=1000):
    """Greedy readings (N, STEPS) of many canvases, `chunk` at a time, as a NumPy array."""
    return np.concatenate([_reader.read_greedily(reader, images[i:i + chunk])[0].numpy()
                           for i in range(0, len(images), chunk)])
