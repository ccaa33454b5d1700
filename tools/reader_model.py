"""Train, export and score the model behind the live reader (reader/), on the CPU.

The live reader lets a visitor draw a number and watch it being read one digit at a
time, in the browser, on a static site. Post 2's own model (11 million parameters)
is too big to download on demand, so the page runs a compact model of the same
design: the post-2 recipe (one to three digits drawn from the left, `<start>`,
`<end>` and `<pad>`, label smoothing, gradient clipping) at post 1's size. It
trains here on one CPU thread, seeded, in about ten minutes.

The model is exported with `torch.onnx.export` as two graphs: an encoder (canvas ->
patch memory) and a one-step decoder (memory and the tokens so far -> next-token
scores and the last block's cross-attention), so the page can show each digit and
where the model looked as soon as it is produced. Its held-out exact-sequence
accuracy is measured *through the exported graphs* with onnxruntime, and written
with the rest of the model card to reader/model/card.json, which the page shows.

    python -m tools.reader_model            # train, export, score, write reader/model and the examples
    python -m tools.reader_model --score    # only score the committed ONNX files again
"""
import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from tools import standin_data
from tools.notebooks import REPO_ROOT

READER_DIR = REPO_ROOT / "reader"
MODEL_DIR = READER_DIR / "model"
START, END, PAD = 10, 11, 12
VOCAB = 13
EXAMPLES = 32  # held-out canvases shipped with the page as a sprite


@dataclass
class Recipe:
    epochs: int = 6
    train_size: int = 60_000
    test_size: int = 10_000
    batch_size: int = 128
    learning_rate: float = 1e-3
    weight_decay: float = 0.01
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    width: int = 96
    heads: int = 4
    encoder_blocks: int = 2
    decoder_blocks: int = 2
    seed: int = 0


# ---- data: post 2's canvases -------------------------------------------------------------------

def compose(images, labels, count, rng):
    """`count` canvases of 1..3 digits from the left, their tokens `d1 .. dk <end> <pad> ..` and lengths."""
    lengths = rng.integers(1, 4, size=count)
    picks = rng.integers(0, len(images), size=(count, 3))
    present = np.arange(3)[None, :] < lengths[:, None]
    tiles = images[picks] * present[:, :, None, None]
    canvases = np.concatenate([tiles[:, k] for k in range(3)], axis=2)  # (count, 28, 84)
    tokens = np.full((count, 4), PAD)
    tokens[:, :3] = np.where(present, labels[picks], PAD)
    tokens[np.arange(count), lengths] = END
    return torch.from_numpy(canvases).unsqueeze(1), torch.from_numpy(tokens)


def canvases(split, count):
    """`count` canvases from the stand-in's full MNIST `split`, as post 2 makes them (train: seed 0, test: seed 1)."""
    arrays = standin_data.read_npz(standin_data.build()["mnist/mnist-full.npz"])
    images = arrays[f"x_{split}"].astype(np.float32) / 255
    return compose(images, arrays[f"y_{split}"].astype(np.int64), count,
                   np.random.default_rng({"train": 0, "test": 1}[split]))


# ---- the model: post 2's design ----------------------------------------------------------------

class EncoderBlock(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.feed_forward = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)

    def forward(self, x):
        x = self.norm1(x + self.attention(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.feed_forward(x))


class DecoderBlock(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.self_attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.cross_attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.feed_forward = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(width), nn.LayerNorm(width), nn.LayerNorm(width)

    def forward(self, y, memory, keep_attention=False):
        length = y.shape[1]
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool, device=y.device), diagonal=1)
        y = self.norm1(y + self.self_attention(y, y, y, attn_mask=mask, need_weights=False)[0])
        attended, weights = self.cross_attention(y, memory, memory, need_weights=keep_attention)  # (B, T, 48)
        y = self.norm2(y + attended)
        return self.norm3(y + self.feed_forward(y)), weights


def patchify(images):
    """(B, 1, 28, 84) canvases to (B, 48, 49): 7×7 patches, row by row over the 4×12 grid."""
    return images.unfold(2, 7, 7).unfold(3, 7, 7).reshape(images.shape[0], 48, 49)


class Reader(nn.Module):
    def __init__(self, recipe):
        super().__init__()
        width = recipe.width
        self.patch_projection = nn.Linear(49, width)
        self.patch_positions = nn.Parameter(torch.randn(1, 48, width) * 0.02)
        self.token_embedding = nn.Embedding(VOCAB, width)
        self.token_positions = nn.Parameter(torch.randn(1, 4, width) * 0.02)
        self.encoder = nn.ModuleList(EncoderBlock(width, recipe.heads) for _ in range(recipe.encoder_blocks))
        self.decoder = nn.ModuleList(DecoderBlock(width, recipe.heads) for _ in range(recipe.decoder_blocks))
        self.head = nn.Linear(width, VOCAB)

    def encode(self, images):
        x = self.patch_projection(patchify(images)) + self.patch_positions
        for block in self.encoder:
            x = block(x)
        return x  # (B, 48, width)

    def decode(self, tokens, memory, keep_attention=False):
        y = self.token_embedding(tokens) + self.token_positions[:, :tokens.shape[1]]
        for block in self.decoder:
            y, weights = block(y, memory, keep_attention)
        return (self.head(y), weights) if keep_attention else self.head(y)  # (B, T, VOCAB)

    def forward(self, images, tokens):
        return self.decode(tokens, self.encode(images))


class Encoder(nn.Module):
    """The exported encoder graph: canvas (B, 1, 28, 84) -> memory (B, 48, width)."""

    def __init__(self, reader):
        super().__init__()
        self.reader = reader

    def forward(self, image):
        return self.reader.encode(image)


class DecoderStep(nn.Module):
    """The exported decoder graph: memory and tokens so far -> scores per position and last cross-attention."""

    def __init__(self, reader):
        super().__init__()
        self.reader = reader

    def forward(self, memory, tokens):
        return self.reader.decode(tokens, memory, keep_attention=True)


# ---- training ----------------------------------------------------------------------------------

def teacher_pair(tokens):
    """Decoder input `<start> d1 d2 d3` (ends and pads as <pad>) and target `d1 .. dk <end> <pad> ..`."""
    inputs = torch.cat([torch.full((len(tokens), 1), START), tokens[:, :3]], dim=1)
    return inputs.masked_fill(inputs == END, PAD), tokens


def train(recipe, train_set, echo=print):
    torch.manual_seed(recipe.seed)
    torch.set_num_threads(1)
    images, tokens = train_set
    model = Reader(recipe)
    optimiser = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate, weight_decay=recipe.weight_decay)
    order = torch.Generator().manual_seed(recipe.seed)
    for epoch in range(1, recipe.epochs + 1):
        started, total = time.perf_counter(), 0.0
        model.train()
        for batch in torch.randperm(len(images), generator=order).split(recipe.batch_size):
            inputs, targets = teacher_pair(tokens[batch])
            loss = F.cross_entropy(model(images[batch], inputs).reshape(-1, VOCAB), targets.reshape(-1),
                                   ignore_index=PAD, label_smoothing=recipe.label_smoothing)
            optimiser.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), recipe.clip_norm)
            optimiser.step()
            total += loss.item() * len(batch)
        echo(f"epoch {epoch}/{recipe.epochs}  loss {total / len(images):.4f}  ({time.perf_counter() - started:.0f} s)")
    return model.eval()


@torch.no_grad()
def read_greedily(encode, decode, images, steps=4):
    """Greedy readings of a batch, given `encode(images) -> memory` and `decode(memory, tokens) -> logits`."""
    memory = encode(images)
    tokens = np.full((len(images), 1), START, dtype=np.int64)
    for _ in range(steps):
        next_token = np.asarray(decode(memory, tokens))[:, -1].argmax(-1)
        tokens = np.concatenate([tokens, next_token[:, None]], axis=1)
    return tokens[:, 1:]


def exact_share(readings, tokens):
    """Share of canvases read exactly: every digit and <end> right; nothing after <end> scored."""
    tokens = np.asarray(tokens)
    return float(((readings == tokens) | (tokens == PAD)).all(axis=1).mean())


def read_all(reader, images, chunk=1000):
    """Greedy readings of many canvases, `chunk` at a time, with a reader's (encode, decode) pair."""
    encode, decode = reader
    return np.concatenate([read_greedily(encode, decode, images[i:i + chunk]) for i in range(0, len(images), chunk)])


def torch_reader(model):
    """(encode, decode) for read_greedily, from the PyTorch model."""
    return model.encode, lambda memory, tokens: model.decode(torch.from_numpy(tokens), memory).numpy()


# ---- export and scoring through ONNX -----------------------------------------------------------

def export(model, folder):
    """Write encoder.onnx and decoder.onnx (weights inside the files: the browser loads one file each)."""
    folder.mkdir(parents=True, exist_ok=True)
    batch, length = torch.export.Dim("B", min=1, max=4096), torch.export.Dim("T", min=1, max=4)
    image = torch.zeros(2, 1, 28, 84)
    memory = model.encode(image)
    tokens = torch.full((2, 3), START, dtype=torch.long)
    torch.onnx.export(Encoder(model), (image,), folder / "encoder.onnx", input_names=["image"],
                      output_names=["memory"], dynamic_shapes={"image": {0: batch}}, external_data=False)
    torch.onnx.export(DecoderStep(model), (memory, tokens), folder / "decoder.onnx",
                      input_names=["memory", "tokens"], output_names=["logits", "cross_attention"],
                      dynamic_shapes={"memory": {0: batch}, "tokens": {0: batch, 1: length}}, external_data=False)


def onnx_sessions(folder):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return [onnxruntime.InferenceSession(str(folder / name), options, providers=["CPUExecutionProvider"])
            for name in ("encoder.onnx", "decoder.onnx")]


def onnx_reader(folder):
    """(encode, decode) for read_greedily, from the exported graphs in `folder`."""
    encoder, decoder = onnx_sessions(folder)
    return (lambda images: encoder.run(None, {"image": images.numpy()})[0],
            lambda memory, tokens: decoder.run(None, {"memory": memory, "tokens": tokens})[0])


def write_examples(test_set, folder):
    """The first held-out canvases as one PNG sprite (stacked vertically) and their labels."""
    from PIL import Image
    images, tokens = test_set
    sprite = (images[:EXAMPLES, 0].reshape(EXAMPLES * 28, 84).numpy() * 255).round().astype(np.uint8)
    Image.fromarray(sprite, mode="L").save(folder / "examples.png", optimize=True)
    labels = ["".join(str(t) for t in row if t < 10) for row in tokens[:EXAMPLES].tolist()]
    (folder / "examples.json").write_text(json.dumps({"rows": EXAMPLES, "height": 28, "width": 84, "labels": labels}))


def write_card(recipe, model, accuracy, seconds, folder):
    card = {
        "recipe": asdict(recipe),
        "parameters": sum(p.numel() for p in model.parameters()),
        "held_out_exact_onnx": round(accuracy["onnx"], 4),
        "held_out_exact_torch": round(accuracy["torch"], 4),
        "held_out_canvases": recipe.test_size,
        "training_seconds": round(seconds),
        "onnx_bytes": {name: (folder / name).stat().st_size for name in ("encoder.onnx", "decoder.onnx")},
        "trained_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "data": standin_data.__doc__.splitlines()[0] + " (mnist-full.npz)",
        "tokens": {"start": START, "end": END, "pad": PAD},
    }
    (folder / "card.json").write_text(json.dumps(card, indent=2) + "\n")
    return card


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--score", action="store_true", help="only score the committed ONNX files on held-out canvases")
    parser.add_argument("--epochs", type=int, default=Recipe.epochs)
    args = parser.parse_args(argv)
    recipe = Recipe(epochs=args.epochs)
    test_set = canvases("test", recipe.test_size)
    if args.score:
        accuracy = exact_share(read_all(onnx_reader(MODEL_DIR), test_set[0]), test_set[1])
        print(f"held-out exact-sequence accuracy through ONNX: {100 * accuracy:.2f} % of {len(test_set[0]):,}")
        return 0
    started = time.perf_counter()
    model = train(recipe, canvases("train", recipe.train_size), echo=lambda line: print(line, flush=True))
    seconds = time.perf_counter() - started
    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), MODEL_DIR / "reader.pt")
    export(model, MODEL_DIR)
    accuracy = {"torch": exact_share(read_all(torch_reader(model), test_set[0]), test_set[1]),
                "onnx": exact_share(read_all(onnx_reader(MODEL_DIR), test_set[0]), test_set[1])}
    write_examples(test_set, READER_DIR)
    card = write_card(recipe, model, accuracy, seconds, MODEL_DIR)
    print(json.dumps({key: card[key] for key in ("parameters", "held_out_exact_onnx", "held_out_exact_torch",
                                                "onnx_bytes", "training_seconds")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
