"""The training-step benchmark: the candidate computes what the frozen reference computes,
repeats itself bit for bit, and `python -m tools.measure.bench` runs and prints its table.
Nothing here asserts a time."""
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from tools.measure import bench
from tools.measure import bench_candidate as candidate
from tools.measure import bench_reference as reference
from tools.core.notebooks import REPO_ROOT

POSTS = sorted(reference.POSTS)  # 1, 2, 4


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def models_on_the_same_weights(post):
    torch.manual_seed(0)
    ref = reference.reader_class(post)()
    cand = candidate.Reader(bench.candidate_config(post))
    cand.load_state_dict(bench.candidate_state(ref.state_dict(), reference.POSTS[post]["width"]))
    return ref, cand


@pytest.mark.parametrize("post", POSTS)
def test_same_parameters_as_the_post(post):
    ref, cand = models_on_the_same_weights(post)
    counts = {name: p.numel() for name, p in cand.named_parameters()}
    assert sum(counts.values()) == sum(p.numel() for p in ref.parameters())
    # what the posts print: 534,348 parameters for post 1's 12 tokens, 534,541 for 13
    assert sum(counts.values()) == {1: 534_348, 2: 534_541, 4: 534_541}[post]


@pytest.mark.parametrize("post", POSTS)
def test_candidate_computes_what_the_reference_does(post):
    same = bench.compare(post)
    assert same["parameters"][0] == same["parameters"][1]
    for key in ("logits", "loss", "gradients", "training loss"):
        assert same[key] <= 1e-5, (key, same[key])


def test_the_check_notices_a_different_function(monkeypatch):
    """One weight nudged by 1e-3 in the mapping: the comparison must see it."""
    mapping = bench.candidate_state

    def nudged(state, width):
        state = dict(mapping(state, width))
        state["head.bias"] = state["head.bias"] + 1e-3
        return state

    monkeypatch.setattr(bench, "candidate_state", nudged)
    assert bench.compare(2, steps=1)["logits"] > 1e-4


@pytest.mark.parametrize("post", POSTS)
def test_attention_maps_agree(post):
    """The posts' figures read the last cross-attention, averaged over heads."""
    ref, cand = models_on_the_same_weights(post)
    images, inputs, _ = reference.random_batch(post, 8, torch.Generator().manual_seed(3))
    ref.eval()
    cand.eval()
    with torch.no_grad():
        ref_logits, ref_weights = ref.decode(inputs, ref.encode(images), keep_attention=True)
        cand_logits, cand_weights = cand.decode(inputs, cand.encode(images), keep_attention=True)
        shorter = inputs[:, :2]  # greedy reading feeds the decoder fewer tokens
        ref_short, cand_short = ref(images, shorter), cand(images, shorter)
    assert cand_weights.shape == ref_weights.shape == (8, 4, 48)
    torch.testing.assert_close(cand_weights, ref_weights, rtol=0, atol=1e-6)
    torch.testing.assert_close(cand_logits, ref_logits, rtol=0, atol=1e-5)
    torch.testing.assert_close(cand_short, ref_short, rtol=0, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_written_out_attention_is_what_training_calls(causal):
    generator = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 4, 5, 24, generator=generator) for _ in range(3))
    written_out, weights = candidate.attention(q, k, v, causal)
    torch.testing.assert_close(written_out, F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 5))
    if causal:
        assert (weights[..., 0, 1:] == 0).all()


@pytest.mark.parametrize("post", [1, 2])  # post 4's model and recipe are post 2's
def test_candidate_training_is_bit_identical_from_the_same_seed(post):
    data = bench.batches(post, 3)

    def run():
        trainer = bench.Trainer(post, "candidate", seed=7)
        losses = [trainer.step(batch).item() for batch in data]
        return losses, trainer.model.state_dict()

    (losses, state), (again, state_again) = run(), run()
    assert losses == again
    assert all(torch.equal(state[name], state_again[name]) for name in state)


def test_flop_count_includes_attention_and_is_the_same_for_both():
    batch = bench.batches(2, 1)[0]
    counts = {which: bench.step_flops(bench.Trainer(2, which), batch) for which in ("reference", "candidate")}
    assert counts["reference"] == counts["candidate"]
    without_attention = torch.utils.flop_counter.FlopCounterMode(display=False)
    with without_attention:
        bench.Trainer(2, "candidate").step(batch)
    assert counts["candidate"] > without_attention.get_total_flops() > 10e9


def test_bench_runs_and_prints_its_table():
    result = subprocess.run([sys.executable, "-m", "tools.measure.bench", "--steps", "2", "--warmup", "1", "--post", "2"],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "1 thread" in out
    assert "same function" in out and ": same (within 1e-05)" in out
    assert "block 1/2" in out and "block 2/2" in out  # interleaved blocks, as progress
    for column in ("ms/step", "blocks min-max", "GFLOP/step", "GFLOP/s", "% of ceiling"):
        assert column in out, column
    for line in ("    reference ", "    candidate ", "    speed-up ", "    ceiling    (6,144 × 96)·(96 × 384)",
                 "matmuls (", "summary:", "  targets"):
        assert line in out, line
    summary = out.split("summary:")[1].splitlines()
    assert summary[2].split()[0] == "2" and "speed-up" in summary[2]  # one row, for post 2


def test_bench_refuses_a_post_without_an_image_model(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--post", "3"])
    assert "invalid choice" in capsys.readouterr().err
