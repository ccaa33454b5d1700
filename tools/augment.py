"""Augmented training for the live reader: MNIST canvases bent towards what visitors draw.

Why: trained on MNIST canvases alone, the reader misreads digits that are drawn thinner or
thicker, slanted, rotated, differently proportioned or off-centre, which is how a visitor's
drawing differs from MNIST (domain shift; measure it with tools/handwriting_set.py). The fix
on the training side is to show the model such variation: each 28×28 tile of a training
canvas gets its own random stroke width (dilation or erosion by a 3×3 max-pool), scale and
aspect, rotation and shear, shift (now and then far enough that its ink crosses into the
next box, as a visitor's ink does), and an elastic distortion (a smoothed random
displacement field); one `F.grid_sample` does all the geometry for the whole batch, so it
costs about a tenth of a training step on one CPU thread. A share of canvases stays as it
is, so the model still sees MNIST as it comes.

What bending cannot do is teach a letter form MNIST never shows: its writers drew a 1 as a
bare line, and a 1 with a flag (and a foot), as much of the world writes it, is read as a 7
or a 2. `flag_ones` (off unless asked for) draws that flag onto a share of the training 1s.

The training run is post 2's compact recipe (width 96, 4 heads, 2+2 post-norm blocks, AdamW
with a half-epoch linear warm-up to 2e-3 then cosine decay to zero, batch 128, label
smoothing 0.1, gradient clip 1.0, 60,000 canvases, seed 0), with the model class of
tools/reader_model.py, exported to ONNX the same way and scored on MNIST's 10,000 held-out
canvases and on the non-MNIST handwriting set, by length.

    python -m tools.augment --out /tmp/augmented --epochs 6          # train with augmentation
    python -m tools.augment --out /tmp/plain --epochs 4 --no-augment # post 2's run, for comparison
    python -m tools.augment --out /tmp/flagged --epochs 6 --flag-ones 0.5  # and flag half the 1s
    python -m tools.augment --preview /tmp/augmented.png            # look at augmented canvases
"""
import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from tools import handwriting_set
from tools.reader_model import PAD, VOCAB, Reader, Recipe, canvases, exact_share, export, onnx_reader, read_all, \
    teacher_pair, torch_reader

BOX = 28
MARGIN = 6  # each tile is warped onto a canvas this much wider on both sides, so its ink can cross a box edge


@dataclass
class Augmentation:
    clean_share: float = 0.2        # canvases left as MNIST made them
    scale: tuple = (0.8, 1.12)      # both axes
    aspect: float = 0.2             # log of the extra x-scale, uniform in ±this
    rotation_degrees: float = 12.0  # standard deviation
    shear: float = 0.25             # standard deviation of the slant (x shift per unit of y)
    shift: float = 1.5              # pixels, uniform in ±this on both axes
    edge_crossing_share: float = 0.08
    edge_crossing: tuple = (3.0, 6.0)  # pixels of extra sideways shift when a tile crosses an edge
    elastic: float = 1.5            # largest displacement amplitude, pixels
    thicken: float = 0.55           # chance of thickening a stroke (else thinning or none)
    thin: float = 0.25
    flag_ones: float = 0.0          # chance of giving a 1 the flag (and maybe the base) MNIST's 1s lack
    base_share: float = 0.4         # of the flagged 1s, how many also get a base


def segment_ink(a, b, half_width, size=BOX):
    """(n, 1, size, size) ink of one straight pen stroke per tile, from a (n, 2) to b (n, 2), in pixels."""
    ys, xs = torch.meshgrid(torch.arange(size) + 0.5, torch.arange(size) + 0.5, indexing="ij")
    centres = torch.stack([xs, ys], -1).reshape(1, -1, 2)
    direction = (b - a)[:, None, :]
    along = ((centres - a[:, None, :]) * direction).sum(-1) / (direction ** 2).sum(-1).clamp_min(1e-6)
    nearest = a[:, None, :] + along.clamp(0, 1)[..., None] * direction
    distance = (centres - nearest).norm(dim=-1)
    return (half_width[:, None] + 0.5 - distance).clamp(0, 1).reshape(-1, 1, size, size)


def flag_ones(tiles, is_one, generator, setting):
    """Give some 1s the up-stroke from the top (a flag) and a foot, as many people outside the US write it.

    MNIST's writers drew a 1 as a bare line, so a model trained on it reads a flagged 1 as a 7; no
    bending of MNIST's own 1s can teach a form it never shows. The flag starts at the top of the
    1's ink and runs down-left at 20 to 50 degrees, a quarter to nearly half the 1's height long.
    """
    n = len(tiles)
    ink = tiles[:, 0] > 0.5
    rows = ink.any(dim=2)
    has_ink = rows.any(dim=1)
    top = rows.float().argmax(dim=1)
    bottom = BOX - 1 - rows.flip(1).float().argmax(dim=1)
    picked = lambda row: tiles[torch.arange(n), 0, row]
    columns = torch.arange(BOX) + 0.5
    centre_x = lambda row: (picked(row) * columns).sum(1) / picked(row).sum(1).clamp_min(1e-6)
    height = (bottom - top + 1).float()
    half_width = (tiles.sum(dim=(1, 2, 3)) / height.clamp_min(1) / 2).clamp(0.6, 2.0)
    uniform = lambda low, high: low + (high - low) * torch.rand(n, generator=generator)
    length, angle = uniform(0.25, 0.45) * height, torch.deg2rad(uniform(20, 50))
    start = torch.stack([centre_x(top), top.float() + 0.5], 1)
    flag_end = start + torch.stack([-length * torch.cos(angle), length * torch.sin(angle)], 1)
    flag = segment_ink(start, flag_end, half_width)
    reach = uniform(0.15, 0.3) * height
    foot = torch.stack([centre_x(bottom), bottom.float() + 0.5], 1)
    base = segment_ink(foot - torch.stack([reach, torch.zeros(n)], 1), foot + torch.stack([reach, torch.zeros(n)], 1),
                       half_width)
    flagged = (is_one & has_ink & (torch.rand(n, generator=generator) < setting.flag_ones))[:, None, None, None]
    with_base = flagged & (torch.rand(n, 1, 1, 1, generator=generator) < setting.base_share)
    out = torch.where(flagged, torch.maximum(tiles, flag), tiles)
    return torch.where(with_base, torch.maximum(out, base), out)


def stroke_width(tiles, generator, setting):
    """Thicken or thin each tile's strokes: blend towards a 3×3 dilation (max-pool) or erosion."""
    n = len(tiles)
    choice = torch.rand(n, generator=generator)
    amount = torch.rand(n, generator=generator)[:, None, None, None]
    dilated = F.max_pool2d(tiles, 3, stride=1, padding=1)
    twice = F.max_pool2d(dilated, 3, stride=1, padding=1)
    eroded = -F.max_pool2d(-tiles, 3, stride=1, padding=1)
    # mostly up to one dilation (about 2 pixels wider), now and then a little more; less for digits
    # that are bold already (much ink in the tile), which would close up into blots
    ink = tiles.mean(dim=(1, 2, 3), keepdim=True)
    growth = 1.3 * amount * ((0.24 - ink) / 0.1).clamp(0, 1)
    thick = torch.where(growth < 1, tiles + growth * (dilated - tiles), dilated + (growth - 1) * (twice - dilated))
    thinned = tiles + amount * (eroded - tiles)
    thicken = (choice < setting.thicken)[:, None, None, None]
    thin = ((choice >= setting.thicken) & (choice < setting.thicken + setting.thin))[:, None, None, None]
    return torch.where(thicken, thick, torch.where(thin, thinned, tiles))


def geometry(n, generator, setting):
    """Per tile: the 2×2 matrix taking output offsets to input offsets, and the shift (pixels)."""
    def uniform(low, high, *shape):
        return low + (high - low) * torch.rand(n, *shape, generator=generator)
    scale = uniform(*setting.scale)
    x_scale = scale * torch.exp(uniform(-setting.aspect, setting.aspect))
    angle = torch.randn(n, generator=generator) * math.radians(setting.rotation_degrees)
    shear = torch.randn(n, generator=generator) * setting.shear
    cos, sin = torch.cos(angle), torch.sin(angle)
    # forward map: scale, then slant (x += shear * -y, so a positive shear leans right), then rotate
    forward = torch.stack([
        torch.stack([cos * x_scale, -sin * scale - cos * shear * scale], -1),
        torch.stack([sin * x_scale, cos * scale - sin * shear * scale], -1)], -2)
    shift = uniform(-setting.shift, setting.shift, 2)
    crossing = torch.rand(n, generator=generator) < setting.edge_crossing_share
    sideways = uniform(*setting.edge_crossing) * torch.where(torch.rand(n, generator=generator) < 0.5, -1.0, 1.0)
    shift[:, 0] += torch.where(crossing, sideways, torch.zeros(n))
    return torch.linalg.inv(forward), shift


def elastic_field(n, generator, setting, height, width):
    """A smooth random displacement field (n, height, width, 2) in pixels: coarse noise, upsampled."""
    coarse = torch.randn(n, 2, 5, 6, generator=generator)
    field = F.interpolate(coarse, size=(height, width), mode="bicubic", align_corners=True)
    amplitude = setting.elastic * torch.rand(n, 1, 1, 1, generator=generator)
    return (field * amplitude).permute(0, 2, 3, 1)


def augment(images, generator, setting=Augmentation(), tokens=None):
    """Augmented copies of canvases (B, 1, 28, 84): each tile warped on its own; empty tiles stay empty.

    `tokens` (B, 4), the canvases' targets, are needed only to find the 1s for `setting.flag_ones`.
    """
    batch = len(images)
    tiles = images.reshape(batch, 1, BOX, 3, BOX).permute(0, 3, 1, 2, 4).reshape(batch * 3, 1, BOX, BOX)
    n = len(tiles)
    if setting.flag_ones > 0:
        tiles = flag_ones(tiles, (tokens[:, :3] == 1).reshape(-1), generator, setting)
    tiles = stroke_width(tiles, generator, setting)
    inverse, shift = geometry(n, generator, setting)
    wide = BOX + 2 * MARGIN
    ys, xs = torch.meshgrid(torch.arange(BOX) + 0.5 - BOX / 2, torch.arange(wide) + 0.5 - wide / 2, indexing="ij")
    out = torch.stack([xs, ys], -1).reshape(1, -1, 2) - shift[:, None, :]          # (n, H*W, 2), pixels
    source = torch.einsum("nij,npj->npi", inverse, out).reshape(n, BOX, wide, 2)
    source = source + elastic_field(n, generator, setting, BOX, wide)
    warped = F.grid_sample(tiles, source / (BOX / 2), mode="bilinear", padding_mode="zeros", align_corners=False)
    warped = warped.reshape(batch, 3, BOX, wide)
    canvas = torch.zeros(batch, BOX, 3 * BOX + 2 * MARGIN)
    for k in range(3):  # overlapping margins: ink that crossed an edge lands in the neighbouring box
        canvas[:, :, k * BOX:k * BOX + wide] = torch.maximum(canvas[:, :, k * BOX:k * BOX + wide], warped[:, k])
    augmented = canvas[:, None, :, MARGIN:MARGIN + 3 * BOX].clamp(0, 1)
    # thinning and shrinking leave faint grey lines; a pen's line is as dark however thin it is
    brightest = augmented.reshape(batch, 1, BOX, 3, BOX).amax(dim=(2, 4), keepdim=True).clamp_min(0.2)
    augmented = (augmented.reshape(batch, 1, BOX, 3, BOX) / brightest).clamp(0, 1).reshape(batch, 1, BOX, 3 * BOX)
    keep = (torch.rand(batch, generator=generator) < setting.clean_share)[:, None, None, None]
    return torch.where(keep, images, augmented)


# ---- post 2's compact training run, with or without augmentation -------------------------------

@dataclass
class Run:
    epochs: int = 6
    learning_rate: float = 2e-3
    warmup_epochs: float = 0.5
    augment: bool = True
    flag_ones: float = 0.0


def learning_rate_factor(step, total_steps, warmup_steps):
    """A linear warm-up, then a cosine decay to zero (post 2's schedule)."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    return 0.5 * (1 + math.cos(math.pi * (step - warmup_steps) / (total_steps - warmup_steps)))


def train(recipe, run, train_set, echo=print):
    torch.manual_seed(recipe.seed)
    torch.set_num_threads(1)
    images, tokens = train_set
    model = Reader(recipe)
    optimiser = torch.optim.AdamW(model.parameters(), lr=run.learning_rate, weight_decay=recipe.weight_decay)
    steps_per_epoch = math.ceil(len(images) / recipe.batch_size)
    total, warmup = run.epochs * steps_per_epoch, max(1, round(run.warmup_epochs * steps_per_epoch))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: learning_rate_factor(step, total, warmup))
    order = torch.Generator().manual_seed(recipe.seed)
    distortions = torch.Generator().manual_seed(recipe.seed + 1)  # its own stream: same order and init as without
    setting = Augmentation(flag_ones=run.flag_ones)
    seconds = 0.0
    for epoch in range(1, run.epochs + 1):
        started, loss_sum = time.perf_counter(), 0.0
        model.train()
        for batch in torch.randperm(len(images), generator=order).split(recipe.batch_size):
            batch_images = augment(images[batch], distortions, setting, tokens[batch]) if run.augment else images[batch]
            inputs, targets = teacher_pair(tokens[batch])
            loss = F.cross_entropy(model(batch_images, inputs).reshape(-1, VOCAB), targets.reshape(-1),
                                   ignore_index=PAD, label_smoothing=recipe.label_smoothing)
            optimiser.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), recipe.clip_norm)
            optimiser.step()
            scheduler.step()
            loss_sum += loss.item() * len(batch)
        seconds += time.perf_counter() - started
        echo(f"epoch {epoch}/{run.epochs}  loss {loss_sum / len(images):.4f}  ({time.perf_counter() - started:.0f} s)")
    return model.eval(), seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="train, then write reader.pt, the ONNX files and scores.json here")
    parser.add_argument("--epochs", type=int, default=Run.epochs)
    parser.add_argument("--no-augment", action="store_true")
    parser.add_argument("--flag-ones", type=float, default=0.0, metavar="SHARE",
                        help="give this share of training 1s a flag (and some a base), as flag_ones() explains")
    parser.add_argument("--preview", help="write a PNG of augmented training canvases to this path")
    args = parser.parse_args(argv)
    recipe = Recipe()
    if args.preview:
        images, tokens = canvases("train", 24)
        shown = augment(images, torch.Generator().manual_seed(1), Augmentation(flag_ones=0.5), tokens)
        pairs = torch.stack([images, shown], dim=1).reshape(-1, 28, 84)  # each canvas, then its augmented copy
        labels = ["".join(str(t) for t in row if t < 10) for row in tokens.tolist()]
        handwriting_set.save_preview((pairs.numpy() * 255).round().astype(np.uint8),
                                     [f"{label}{suffix}" for label in labels for suffix in ("", " augmented")],
                                     args.preview, count=48)
    if not args.out:
        return 0
    run = Run(epochs=args.epochs, augment=not args.no_augment, flag_ones=args.flag_ones)
    model, seconds = train(recipe, run, canvases("train", recipe.train_size), echo=lambda line: print(line, flush=True))
    print(f"training took {seconds / 60:.1f} min on 1 thread", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out / "reader.pt")
    export(model, args.out)
    mnist_images, mnist_tokens = canvases("test", recipe.test_size)
    scores = {
        "run": asdict(run), "training_seconds": round(seconds),
        "mnist_exact_torch": exact_share(read_all(torch_reader(model), mnist_images), mnist_tokens),
        "mnist_exact_onnx": exact_share(read_all(onnx_reader(args.out), mnist_images), mnist_tokens),
        "handwriting_exact_onnx": handwriting_set.score_onnx(args.out),
    }
    (args.out / "scores.json").write_text(json.dumps(scores, indent=2) + "\n")
    print(json.dumps(scores, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
