"""Time the image posts' training steps on one CPU thread: today's code against the candidate.

    .venv/bin/python -m tools.measure.bench [--post 1|2|4] [--steps N] [--blocks K] [--warmup W]

For each post (1, 2 and 4 unless --post names one) it builds the post's model twice, from
`tools/measure/bench_reference.py` (today's code, frozen) and from `tools/measure/bench_candidate.py` (the
rewrite), each with the post's recipe (optimiser, loss, label smoothing, gradient
clipping, schedule) and batch size, on random canvases of the post's shape. Then:

1. it checks that the two compute the same thing: the reference's weights, mapped into
   the candidate, give the same scores, loss and gradients, and three training steps from
   there the same losses (to 1e-5); the run fails if not;
2. it counts one training step's floating-point operations (forward and backward) with
   `torch.utils.flop_counter.FlopCounterMode`, attention included;
3. after W warm-up steps each it times N training steps of each model in K interleaved
   blocks (reference, candidate, reference, candidate, ...), so that whatever else the
   machine does falls on both, and after each pair of blocks times the ceiling: a matmul
   of the model's own main shape, (batch·48 × width)·(width × 4·width), the feed-forward
   layer's;
4. it replays the candidate step's own matmuls (same shapes and layouts) on their own:
   the time no rewrite of the rest of the step can go under.

It prints ms per step (median over blocks, and the blocks' spread), GFLOP per step,
GFLOP/s, that as a share of the ceiling, and the speed-up, per post and as a summary
against issue #20's targets (1.5× per step; the step at 50 % of the ceiling or more).
Times are this process's CPU time, which other work on the machine barely moves; the
wall clock is printed beside them (they differ when the machine was busy). Nothing is
asserted about times: it is a measurement, not a test.
"""
import argparse
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

from tools.measure import bench_candidate as candidate
from tools.measure import bench_reference as reference

TARGET_SPEEDUP = 1.5
TARGET_CEILING_SHARE = 0.5
SAME_WITHIN = 1e-5  # largest |difference| in scores, losses and (relative) gradients that counts as the same
SEED = 0
aten = torch.ops.aten


# --- the two models, their recipes, and the mapping between their weights ----------------

def candidate_config(post):
    settings = reference.POSTS[post]
    return candidate.Config(vocab=settings["vocab"], width=settings["width"], heads=settings["heads"],
                            encoder_blocks=settings["encoder_blocks"],
                            decoder_blocks=settings["decoder_blocks"])


def candidate_state(reference_state, width):
    """The reference's weights under the candidate's names. nn.MultiheadAttention keeps
    queries', keys' and values' projections in one (3·width × width) `in_proj`; that is the
    candidate's `query_key_value` in self-attention, and its `query` (the first third) and
    `key_value` (the rest) in cross-attention. `out_proj` is `out`; the rest is unchanged."""
    state = {}
    for name, tensor in reference_state.items():
        name = name.replace(".out_proj.", ".out.")
        if ".cross_attention.in_proj_" in name:
            prefix, kind = name.split(".in_proj_")
            state[f"{prefix}.query.{kind}"] = tensor[:width]
            state[f"{prefix}.key_value.{kind}"] = tensor[width:]
        else:
            state[name.replace(".in_proj_", ".query_key_value.")] = tensor
    return state


class Trainer:
    """One model with its post's optimiser and schedule; `step(batch)` is one training step."""

    def __init__(self, post, which, state=None, seed=SEED):
        settings = reference.POSTS[post]
        self.post, self.which = post, which
        torch.manual_seed(seed)
        if which == "reference":
            self.model = reference.reader_class(post)()
            self.optimiser, self.scheduler = reference.optimiser_and_schedule(post, self.model)
        else:
            self.model = candidate.Reader(candidate_config(post))
            if state is not None:  # a reference's weights
                self.model.load_state_dict(candidate_state(state, settings["width"]))
            self.optimiser = candidate.optimiser(self.model, settings["learning_rate"],
                                                 settings["weight_decay"])
            self.scheduler = reference.schedule(post, self.optimiser)
        self.model.train()

    def step(self, batch):
        if self.which == "reference":
            return reference.training_step(self.post, self.model, self.optimiser, self.scheduler, *batch)
        return candidate_step(self.post, self.model, self.optimiser, self.scheduler, *batch)


def candidate_step(post, model, optimiser, scheduler, images, inputs, targets):
    """The posts' training step with the candidate's model, optimiser and clipping."""
    logits = model(images, inputs)  # (B, 4, vocab)
    loss = reference.loss_of(post, logits, targets)
    optimiser.zero_grad()
    loss.backward()
    if reference.POSTS[post]["clip_norm"] is not None:
        candidate.clip_gradients(model, reference.POSTS[post]["clip_norm"])
    optimiser.step()
    if scheduler is not None:
        scheduler.step()
    return loss


def batches(post, count, seed=SEED):
    generator = torch.Generator().manual_seed(seed)
    size = reference.POSTS[post]["batch_size"]
    return [reference.random_batch(post, size, generator) for _ in range(count)]


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())


# --- same function ------------------------------------------------------------------------

def compare(post, steps=3):
    """Differences between reference and candidate on the same weights: the scores, loss and
    gradients of one batch (each gradient relative to its tensor's largest entry), then the
    losses of `steps` training steps from there on further batches."""
    ref = Trainer(post, "reference")
    cand = Trainer(post, "candidate", state=ref.model.state_dict())
    data = batches(post, steps + 1, seed=SEED + 1)
    images, inputs, targets = data[0]
    ref_logits, cand_logits = ref.model(images, inputs), cand.model(images, inputs)
    ref_loss, cand_loss = (reference.loss_of(post, part, targets) for part in (ref_logits, cand_logits))
    ref_loss.backward()
    cand_loss.backward()
    width = reference.POSTS[post]["width"]
    ref_grads = candidate_state({name: p.grad for name, p in ref.model.named_parameters()}, width)
    gradients = max(((p.grad - ref_grads[name]).abs().max() / ref_grads[name].abs().max().clamp_min(1e-30)).item()
                    for name, p in cand.model.named_parameters())
    ref.optimiser.zero_grad()
    cand.optimiser.zero_grad()
    trained = [abs(ref.step(batch).item() - cand.step(batch).item()) for batch in data[1:]]
    return {"logits": (ref_logits - cand_logits).abs().max().item(),
            "loss": abs(ref_loss.item() - cand_loss.item()), "gradients": gradients,
            "training loss": max(trained),
            "parameters": (parameter_count(ref.model), parameter_count(cand.model))}


# --- counting and timing --------------------------------------------------------------------

def _flash_attention_flops(query, key, value, *args, out_shape=None, **kwargs):
    return sdpa_flop_count(query, key, value)


def _flash_attention_backward_flops(grad_out, query, key, value, *args, out_shape=None, **kwargs):
    return sdpa_backward_flop_count(grad_out, query, key, value)


# FlopCounterMode knows the CUDA attention kernels but not the CPU one that both models call
# (the reference through nn.MultiheadAttention): without these, attention would count zero.
CPU_ATTENTION_FLOPS = {
    aten._scaled_dot_product_flash_attention_for_cpu: _flash_attention_flops,
    aten._scaled_dot_product_flash_attention_for_cpu_backward: _flash_attention_backward_flops,
}


def step_flops(trainer, batch):
    counter = FlopCounterMode(display=False, custom_mapping=CPU_ATTENTION_FLOPS)
    with counter:
        trainer.step(batch)
    return counter.get_total_flops()


MATMULS = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default}


class RecordMatmuls(TorchDispatchMode):
    """Notes every matmul a step calls: the op, and each tensor argument's shape and strides."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in MATMULS:
            layout = [(a.shape, a.stride()) if isinstance(a, torch.Tensor) else a for a in args]
            self.calls.append((func, layout, dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


def matmul_replay(trainer, batch):
    """A function that runs the step's matmuls alone, on random operands laid out as the
    step's were (transposed views included); outputs are fresh, as in the step."""
    recorder = RecordMatmuls()
    with recorder:
        trainer.step(batch)
    calls = []
    for func, layout, kwargs in recorder.calls:
        args = [torch.empty_strided(a[0], a[1]).normal_() if isinstance(a, tuple) else a for a in layout]
        calls.append((func, args, kwargs))

    def replay():
        for func, args, kwargs in calls:
            func(*args, **kwargs)
    counter = FlopCounterMode(display=False)
    with counter:
        replay()
    return replay, counter.get_total_flops() / 1e9


def ceiling(post):
    """A function doing `repeats` matmuls of the model's main shape, and their GFLOP."""
    settings = reference.POSTS[post]
    rows, width = settings["batch_size"] * candidate.PATCHES, settings["width"]
    x, weight = torch.randn(rows, width), torch.randn(4 * width, width)
    repeats = 20

    def run():
        for _ in range(repeats):
            F.linear(x, weight)
    return run, repeats * 2 * rows * width * 4 * width / 1e9, f"({rows:,} × {width})·({width} × {4 * width})"


def seconds(function, times=1):
    """(wall-clock, CPU) seconds `times` calls of `function` took. The CPU time is this
    process's own: on a machine that also runs other work it stays what the code costs,
    while the wall clock also counts the time the thread waited for a core."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(times):
        function()
    return time.perf_counter() - wall, time.process_time() - cpu


def machine():
    """The CPU's name, as /proc/cpuinfo gives it where there is one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            names = [line.split(":", 1)[1].strip() for line in info if line.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or platform.machine()


def say(line):
    print(line, flush=True)


# --- one post ------------------------------------------------------------------------------

def bench_post(post, steps, blocks, warmup):
    settings = reference.POSTS[post]
    say(f"post {post} ({settings['slug']}): batch {settings['batch_size']}, canvases "
        f"{tuple(reference.CANVAS)}, {reference.TOKENS} tokens, vocab {settings['vocab']}")
    same = compare(post)
    ok = all(same[key] <= SAME_WITHIN for key in ("logits", "loss", "gradients", "training loss"))
    ok = ok and same["parameters"][0] == same["parameters"][1]
    say(f"  same function: parameters {same['parameters'][0]:,} and {same['parameters'][1]:,}; on the "
        f"reference's weights max |Δ score| {same['logits']:.1e}, |Δ loss| {same['loss']:.1e}, "
        f"max |Δ gradient| {same['gradients']:.1e} of the tensor's largest; then 3 training steps: "
        f"max |Δ loss| {same['training loss']:.1e}: {'same' if ok else 'DIFFERENT'} (within {SAME_WITHIN:g})")

    trainers = {which: Trainer(post, which) for which in ("reference", "candidate")}
    data = batches(post, 4)
    flops = {which: step_flops(trainer, data[0]) / 1e9 for which, trainer in trainers.items()}
    say(f"  GFLOP per training step (forward + backward): reference {flops['reference']:.2f}, "
        f"candidate {flops['candidate']:.2f}")
    replay, replay_gflop = matmul_replay(trainers["candidate"], data[0])
    for trainer in trainers.values():
        for i in range(warmup):
            trainer.step(data[i % len(data)])
    replay()
    say(f"  warmed up: {warmup} steps each; timing {steps} steps each in {blocks} interleaved blocks")

    run_ceiling, ceiling_gflop, shape = ceiling(post)
    times = {"reference": [], "candidate": []}  # (wall, CPU) ms per step, one per block
    rates = []  # the ceiling's GFLOP per CPU second, once per pair of blocks
    done = 0
    for block in range(blocks):
        size = steps // blocks + (block < steps % blocks)
        for which in ("reference", "candidate"):
            trainer = trainers[which]
            batch_at = iter(range(done, done + size))
            elapsed = seconds(lambda: trainer.step(data[next(batch_at) % len(data)]), size)
            times[which].append(tuple(1000 * part / size for part in elapsed))
        done += size
        rates.append(ceiling_gflop / seconds(run_ceiling)[1])
        say(f"  block {block + 1}/{blocks}: reference {times['reference'][-1][1]:7.1f} ms/step   "
            f"candidate {times['candidate'][-1][1]:7.1f} ms/step   ceiling {rates[-1]:6.1f} GFLOP/s")
    floor = statistics.median(1000 * seconds(replay)[1] for _ in range(max(3, blocks)))

    top = statistics.median(rates)
    row = {"post": post, "ok": ok, "ceiling": top, "floor": floor, "flops": flops}
    for which in ("reference", "candidate"):
        cpu = [t[1] for t in times[which]]
        ms = statistics.median(cpu)
        row[which] = {"ms": ms, "low": min(cpu), "high": max(cpu),
                      "wall": statistics.median(t[0] for t in times[which]),
                      "rate": flops[which] / ms * 1000, "share": flops[which] / ms * 1000 / top}
    pairs = [r[1] / c[1] for r, c in zip(times["reference"], times["candidate"])]
    row["speedup"] = row["reference"]["ms"] / row["candidate"]["ms"]
    row["speedup range"] = (min(pairs), max(pairs))
    row["wall speedup"] = row["reference"]["wall"] / row["candidate"]["wall"]

    say(f"  post {post}: {steps} steps each in {blocks} interleaved blocks, {torch.get_num_threads()} thread; "
        f"ms = CPU time, median over blocks")
    say(f"    {'':10} {'ms/step':>8} {'blocks min-max':>15} {'wall ms/step':>13} {'GFLOP/step':>11} "
        f"{'GFLOP/s':>8} {'% of ceiling':>13}")
    for which in ("reference", "candidate"):
        r = row[which]
        spread = f"{r['low']:.1f}-{r['high']:.1f}"
        say(f"    {which:10} {r['ms']:8.1f} {spread:>15} {r['wall']:13.1f} {flops[which]:11.2f} "
            f"{r['rate']:8.1f} {100 * r['share']:12.0f} %")
    low, high = row["speedup range"]
    say(f"    speed-up   {row['speedup']:.2f}x (pairs of blocks {low:.2f}-{high:.2f}x; "
        f"wall clock {row['wall speedup']:.2f}x)")
    say(f"    ceiling    {shape} matmul: {top:.1f} GFLOP/s "
        f"(blocks {min(rates):.1f}-{max(rates):.1f})")
    say(f"    the candidate step's matmuls ({replay_gflop:.2f} GFLOP) alone: {floor:.1f} ms; "
        f"reference / that = {row['reference']['ms'] / floor:.2f}x, the speed-up if all else took no time")
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.measure.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--post", type=int, choices=sorted(reference.POSTS), action="append",
                        help="the post whose model to time (repeatable; default: 1, 2 and 4)")
    parser.add_argument("--steps", type=int, default=20, help="timed training steps of each model")
    parser.add_argument("--blocks", type=int, default=4, help="interleaved blocks the steps are split into")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps of each model first")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.blocks < 1 or args.warmup < 0:
        parser.error("--steps and --blocks must be at least 1, --warmup at least 0")
    blocks = min(args.blocks, args.steps)

    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, {machine()}, "
          f"{torch.backends.cpu.get_cpu_capability()}, {os.cpu_count()} cores on the machine", flush=True)
    rows = [bench_post(post, args.steps, blocks, args.warmup) for post in (args.post or sorted(reference.POSTS))]

    print()
    print(f"summary: CPU ms per training step, median of {blocks} interleaved blocks; targets (issue #20): "
          f"speed-up ≥ {TARGET_SPEEDUP}x, candidate ≥ {100 * TARGET_CEILING_SHARE:.0f} % of the ceiling")
    print(f"{'post':>4} {'reference':>10} {'candidate':>10} {'speed-up':>9} {'ref % ceil':>11} "
          f"{'cand % ceil':>12} {'ceiling GFLOP/s':>16} {'matmuls alone':>14} {'same':>5}  targets")
    for row in rows:
        met = [row["speedup"] >= TARGET_SPEEDUP, row["candidate"]["share"] >= TARGET_CEILING_SHARE]
        verdict = ", ".join(f"{name} {'met' if m else 'NOT met'}" for name, m in zip(("speed-up", "ceiling"), met))
        print(f"{row['post']:>4} {row['reference']['ms']:10.1f} {row['candidate']['ms']:10.1f} "
              f"{row['speedup']:8.2f}x {100 * row['reference']['share']:10.0f} % "
              f"{100 * row['candidate']['share']:11.0f} % {row['ceiling']:16.1f} {row['floor']:11.1f} ms "
              f"{'yes' if row['ok'] else 'NO':>5}  {verdict}")
    if not all(row["ok"] for row in rows):
        print("the candidate does not compute what the reference does: its timings mean nothing",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
