"""Time the posts' own training step on one CPU thread, against the matmul ceiling.

    .venv/bin/python -m tools.measure.bench [--post 2|3] [--steps N] [--blocks K] [--warmup W] [--against REF]

It times the code the posts run: the `Reader` of `_encoder_decoder.py` (exported from
part 1, reused by part 2 and the handwriting post), sized by the post's parameters cell and
given part 2's vocabulary, trained by `_reader.py`'s own `train_one_epoch` (exported from part
2) on exactly as many batches of random canvases (`_reader.compose`) as the steps timed. Part
1 trains the same model with a shorter loop of its own, and the numbers-aloud post reads with
another model: neither is benched. The ceiling is a matmul of the model's main shape,
(batch·48 × width)·(width × 4·width); the step's GFLOP/s is shown as a share of its rate.

A candidate is a change to the real code (the exported cells, then `make export`): the two
files (CODE) at the git ref `--against` (default HEAD) are timed against the working tree's
in interleaved blocks (REF, working tree, REF, ...), so that the machine's other work falls
on both, after a check that the two give the same losses over three steps from the same
weights (skipped, with a word, when their state_dicts differ in names or shapes); the same
file is timed once. Times are the process's CPU time, the wall clock beside them.
"""
import argparse
import ast
import types
import importlib.util
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import fields
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

import _encoder_decoder
import _reader
from tools.core.notebooks import NOTEBOOK_NAME, POSTS_DIR, REPO_ROOT, parameters_cell, read_notebook

POSTS = {2: "2026-06-25-reading-when-to-stop", 3: "2026-07-09-reading-handwriting"}  # by part
SEED = 0
CHECK_STEPS = 3
SAME_WITHIN = 1e-5  # largest |Δ loss| that counts as the same
CEILING_REPEATS = 20
CODE = ("_encoder_decoder.py", "_reader.py")  # the model, then the training and the reading
aten = torch.ops.aten


def say(line=""):
    print(line, flush=True)


def post_sizes(post):
    """The post's knobs for `ReaderConfig` and `Recipe`, read from its parameters cell, and
    its steps per epoch (which only shape the learning-rate schedule)."""
    cell = parameters_cell(read_notebook(POSTS_DIR / POSTS[post] / NOTEBOOK_NAME))
    knobs = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body
             if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    return {"config": {f.name: knobs[f.name] for f in fields(_encoder_decoder.ReaderConfig) if f.name != "vocab"},
            "recipe": {f.name: knobs[f.name] for f in fields(_reader.Recipe) if f.name in knobs},
            "steps_per_epoch": math.ceil(knobs["train_size"] / knobs["batch_size"])}


def source_at(ref, root=REPO_ROOT):
    """{file: its text as the git ref `ref` has it}, for each file of CODE."""
    texts = {}
    for name in CODE:
        shown = subprocess.run(["git", "show", f"{ref}:{name}"], cwd=root, capture_output=True, text=True)
        if shown.returncode:
            raise SystemExit(f"bench: no {name} at {ref!r}: {shown.stderr.strip()}")
        texts[name] = shown.stdout
    return texts


def working_sources():
    return {name: Path(module.__file__).read_text(encoding="utf-8") for name, module in
            zip(CODE, (_encoder_decoder, _reader))}


def as_version(model, training):
    """One version of the posts' code: the model's classes and the training's functions, side by side."""
    return types.SimpleNamespace(Reader=model.Reader, ReaderConfig=model.ReaderConfig, VOCAB=training.VOCAB,
                                 Recipe=training.Recipe, optimiser_and_schedule=training.optimiser_and_schedule,
                                 train_one_epoch=training.train_one_epoch)


def load_version(sources, tag):
    """A version made from `sources` ({file: text}, as source_at gives), its modules registered under `tag`."""
    modules = []
    with tempfile.TemporaryDirectory(prefix="bench-") as folder:
        for name in CODE:
            path = Path(folder) / name
            path.write_text(sources[name], encoding="utf-8")
            spec = importlib.util.spec_from_file_location(f"{name[1:-3]}_{tag}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # dataclasses look their module up there
            spec.loader.exec_module(module)
            modules.append(module)
    return as_version(*modules)


class Trainer:
    """A post's reader from one version of `_reader`, with that version's optimiser and schedule."""

    def __init__(self, module, sizes):
        torch.manual_seed(SEED)
        self.module = module
        self.model = module.Reader(module.ReaderConfig(module.VOCAB, **sizes["config"]))
        self.recipe = module.Recipe(**sizes["recipe"])
        self.optimiser, self.scheduler = module.optimiser_and_schedule(
            self.model, self.recipe, sizes["steps_per_epoch"])
        self.order = torch.Generator().manual_seed(SEED)

    def train(self, data):
        """The post's `train_one_epoch` over `data`: one training step per batch; the mean loss."""
        return self.module.train_one_epoch(self.model, self.optimiser, self.scheduler, data,
                                           self.recipe, self.order)


def canvases(batches, batch_size, seed=SEED):
    """`batches` batches of canvases (B, 1, 28, 84) and tokens, composed of random 'digits'."""
    rng = np.random.default_rng(seed)
    digits = rng.random((256, _reader.TILE, _reader.TILE), dtype=np.float32)
    images, tokens, _ = _reader.compose(digits, rng.integers(0, 10, size=256), batches * batch_size, rng)
    return images, tokens


def first(data, batches, batch_size):
    return tuple(part[:batches * batch_size] for part in data)


def loss_difference(reference, candidate, sizes):
    """Max |Δ loss| over CHECK_STEPS steps from the reference's weights; None when the two
    models' state_dicts differ in names or shapes."""
    ref, cand = Trainer(reference, sizes), Trainer(candidate, sizes)
    state = ref.model.state_dict()
    if {k: v.shape for k, v in state.items()} != {k: v.shape for k, v in cand.model.state_dict().items()}:
        return None
    cand.model.load_state_dict(state)
    size = sizes["recipe"]["batch_size"]
    steps = zip(*(part.split(size) for part in canvases(CHECK_STEPS, size, seed=SEED + 1)))
    return max(abs(ref.train(batch) - cand.train(batch)) for batch in steps)


# The posts write attention out as matmuls, which FlopCounterMode counts. It knows the CUDA fused
# attention kernels but not the CPU one (scaled_dot_product_attention, nn.MultiheadAttention): a
# candidate that calls it is counted with these, or its attention would count zero.
CPU_ATTENTION_FLOPS = {
    aten._scaled_dot_product_flash_attention_for_cpu:
        lambda q, k, v, *args, out_shape=None, **kwargs: sdpa_flop_count(q, k, v),
    aten._scaled_dot_product_flash_attention_for_cpu_backward:
        lambda grad, q, k, v, *args, out_shape=None, **kwargs: sdpa_backward_flop_count(grad, q, k, v),
}


def step_flops(trainer, batch):
    """Floating-point operations of one training step (forward, backward, optimiser) on `batch`."""
    counter = FlopCounterMode(display=False, custom_mapping=CPU_ATTENTION_FLOPS)
    with counter:
        trainer.train(batch)
    return counter.get_total_flops()


def ceiling(sizes):
    """A function doing CEILING_REPEATS matmuls of the model's main shape, their FLOPs, the shape."""
    rows, width = sizes["recipe"]["batch_size"] * _reader.PATCHES, sizes["config"]["width"]
    x, weight = torch.randn(rows, width), torch.randn(4 * width, width)

    def run():
        for _ in range(CEILING_REPEATS):
            F.linear(x, weight)  # what nn.Linear(width, 4·width) does
    return run, CEILING_REPEATS * 2 * rows * width * 4 * width, f"({rows:,} × {width})·({width} × {4 * width})"


def seconds(function):
    """(CPU, wall) seconds one call took: other work on the machine barely moves the first."""
    cpu, wall = time.process_time(), time.perf_counter()
    function()
    return time.process_time() - cpu, time.perf_counter() - wall


def machine():
    info = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines()
             if line.startswith("model name")] if info.exists() else []
    return names[0] if names else platform.processor() or platform.machine()


def bench_post(post, versions, steps, blocks, warmup):
    """Time `versions` ({name: module}, the reference first) on the post's step; 0 if fine, 1 if
    the two compute different losses."""
    sizes = post_sizes(post)
    config, size = sizes["config"], sizes["recipe"]["batch_size"]
    trainers = {name: Trainer(module, sizes) for name, module in versions.items()}
    parameters = sum(p.numel() for p in next(iter(trainers.values())).model.parameters())
    say(f"post {post} ({POSTS[post]}): width {config['width']}, {config['heads']} heads, "
        f"{config['encoder_blocks']}+{config['decoder_blocks']} blocks, batch {size}, "
        f"{parameters:,} parameters; timing _reader.train_one_epoch")
    status = 0
    if len(versions) == 2:
        difference = loss_difference(*versions.values(), sizes)
        if difference is None:
            say("  the two differ in structure (state_dict names or shapes): the equality check is skipped")
        else:
            same = difference <= SAME_WITHIN
            status = 0 if same else 1
            say(f"  same losses: {CHECK_STEPS} training steps from the same weights, max |Δ loss| "
                f"{difference:.1e}: {'same' if same else 'DIFFERENT'} (within {SAME_WITHIN:g})")

    per_block = math.ceil(steps / blocks)
    data = canvases(max(per_block, warmup, 1), size)
    flops = {name: step_flops(trainer, first(data, 1, size)) for name, trainer in trainers.items()}
    say("  GFLOP per training step (forward + backward, attention included): "
        + ", ".join(f"{name} {count / 1e9:.2f}" for name, count in flops.items()))
    for trainer in trainers.values():
        if warmup:
            trainer.train(first(data, warmup, size))
    run_ceiling, ceiling_flops, shape = ceiling(sizes)
    run_ceiling()
    say(f"  warmed up: {warmup} step{'' if warmup == 1 else 's'} each; "
        f"timing {steps} steps each in {blocks} interleaved blocks")

    times = {name: [] for name in trainers}  # (CPU, wall) ms per step, one per block
    rates = []  # the ceiling's GFLOP per CPU second, once per round of blocks
    for block in range(blocks):
        count = steps // blocks + (block < steps % blocks)
        for name, trainer in trainers.items():
            elapsed = seconds(lambda: trainer.train(first(data, count, size)))
            times[name].append(tuple(1000 * part / count for part in elapsed))
        rates.append(ceiling_flops / 1e9 / seconds(run_ceiling)[0])
        say(f"  block {block + 1}/{blocks}: " + "   ".join(f"{name} {times[name][-1][0]:7.1f} ms/step"
                                                          for name in trainers)
            + f"   ceiling {rates[-1]:6.1f} GFLOP/s")

    top = statistics.median(rates)
    ms = {name: statistics.median(cpu for cpu, _ in times[name]) for name in trainers}
    label = max(len(name) for name in trainers) + 2
    say(f"  post {post}: {steps} steps each, {torch.get_num_threads()} thread; ms = CPU time, median over blocks")
    say(f"    {'':{label}}{'ms/step':>8} {'blocks min-max':>15} {'wall ms/step':>13} {'GFLOP/step':>11} "
        f"{'GFLOP/s':>8} {'% of ceiling':>13}")
    for name in trainers:
        cpu = [c for c, _ in times[name]]
        wall = statistics.median(w for _, w in times[name])
        rate = flops[name] / 1e9 / ms[name] * 1000
        say(f"    {name:{label}}{ms[name]:8.1f} {f'{min(cpu):.1f}-{max(cpu):.1f}':>15} {wall:13.1f} "
            f"{flops[name] / 1e9:11.2f} {rate:8.1f} {100 * rate / top:12.0f} %")
    if len(trainers) == 2:
        ref, cand = trainers
        pairs = [r[0] / c[0] for r, c in zip(times[ref], times[cand])]
        walls = statistics.median(w for _, w in times[ref]) / statistics.median(w for _, w in times[cand])
        say(f"    speed-up of the {cand} over {ref}: {ms[ref] / ms[cand]:.2f}x (pairs of blocks "
            f"{min(pairs):.2f}-{max(pairs):.2f}x; wall clock {walls:.2f}x)")
    say(f"    ceiling: the {shape} matmul, {top:.1f} GFLOP/s (blocks {min(rates):.1f}-{max(rates):.1f})")
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.measure.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--post", type=int, choices=sorted(POSTS), action="append",
                        help="the post whose reader to time (repeatable; default: 2 and 3; post 1's reader "
                             "lives in its notebook, not exported, and post 4's model is another)")
    parser.add_argument("--steps", type=int, default=20, help="timed training steps of each version")
    parser.add_argument("--blocks", type=int, default=4, help="interleaved blocks the steps are split into")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps of each version first")
    parser.add_argument("--against", default="HEAD", metavar="REF",
                        help="the git ref whose code (CODE) the working tree's is timed against (default HEAD)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.blocks < 1 or args.warmup < 0:
        parser.error("--steps and --blocks must be at least 1, --warmup at least 0")

    torch.set_num_threads(1)
    say(f"torch {torch.__version__}, {torch.get_num_threads()} thread, {machine()}, "
        f"{torch.backends.cpu.get_cpu_capability()}, {os.cpu_count()} cores on the machine")
    reference, working = source_at(args.against), as_version(_encoder_decoder, _reader)
    files = " and ".join(CODE)
    if reference == working_sources():
        say(f"{files}: the working tree's are the same as {args.against}'s; timing them alone")
        versions = {"working tree": working}
    else:
        say(f"{files}: the working tree's differ from {args.against}'s; timing both, interleaved")
        versions = {args.against: load_version(reference, "at_ref"), "working tree": working}
    statuses = [bench_post(post, versions, args.steps, min(args.blocks, args.steps), args.warmup)
                for post in args.post or sorted(POSTS)]
    if any(statuses):
        print("the two versions compute different losses: the speed-up compares different functions",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
