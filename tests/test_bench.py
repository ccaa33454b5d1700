"""The training-step benchmark times the posts' own code (part 1's model in `_encoder_decoder.py`,
part 2's training in `_reader.py`) against the same files at a git ref:
it reads the posts' sizes, checks a changed reader computes the same losses (or says it cannot),
counts FLOPs, and prints its table. Tiny sizes keep it fast; nothing here asserts a time."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import _encoder_decoder
import _reader
from tools.core.notebooks import NOTEBOOK_NAME, POSTS_DIR, REPO_ROOT, parameters_cell, read_notebook
from tools.measure import bench

WORKING = bench.working_sources()  # {file: text}
TODAY = bench.as_version(_encoder_decoder, _reader)
FORWARD = "        return self.decode(tokens, self.encode(images))\n"


def tiny(batch_size=4):
    return {"config": {"width": 16, "heads": 2, "encoder_blocks": 1, "decoder_blocks": 1},
            "recipe": {"batch_size": batch_size}, "steps_per_epoch": 10}


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def run_against(monkeypatch, capsys, source, *args):
    """bench.main on tiny sizes, with `source` ({file: text}) standing in for the code at HEAD."""
    monkeypatch.setattr(bench, "post_sizes", lambda post: tiny())
    monkeypatch.setattr(bench, "source_at", lambda ref: source)
    status = bench.main(["--post", "2", "--steps", "2", "--blocks", "2", "--warmup", "1", *args])
    out, err = capsys.readouterr()
    return status, out, err


def changed(old, new):
    """Today's code with `old` replaced by `new` in the one file that holds it once."""
    [name] = [name for name, text in WORKING.items() if text.count(old) == 1]  # it must apply to today's code
    return {**WORKING, name: WORKING[name].replace(old, new)}


@pytest.mark.parametrize("post", sorted(bench.POSTS))
def test_sizes_are_the_posts_knobs(post):
    knobs = {}
    exec(parameters_cell(read_notebook(POSTS_DIR / bench.POSTS[post] / NOTEBOOK_NAME)).source, knobs)
    sizes = bench.post_sizes(post)
    assert sizes["config"] == {name: knobs[name] for name in ("width", "heads", "encoder_blocks", "decoder_blocks")}
    assert sizes["recipe"]["batch_size"] == knobs["batch_size"]
    assert sizes["recipe"]["learning_rate"] == knobs["learning_rate"]
    assert _encoder_decoder.Reader(_encoder_decoder.ReaderConfig(_reader.VOCAB, **sizes["config"]))  # the model takes them


def test_bench_runs_and_prints_its_fields(monkeypatch, capsys):
    status, out, _ = run_against(monkeypatch, capsys, WORKING)
    assert status == 0
    assert "1 thread" in out
    assert "the working tree's are the same as HEAD's; timing them alone" in out
    assert "post 2 (2026-06-25-reading-when-to-stop): width 16, 2 heads, 1+1 blocks, batch 4" in out
    assert "timing _reader.train_one_epoch" in out
    assert "GFLOP per training step (forward + backward, attention included): working tree " in out
    assert "block 1/2: working tree" in out and "block 2/2: working tree" in out
    for column in ("ms/step", "blocks min-max", "wall ms/step", "GFLOP/step", "GFLOP/s", "% of ceiling"):
        assert column in out, column
    assert "    working tree  " in out
    assert "ceiling: the (192 × 16)·(16 × 64) matmul" in out  # batch 4 · 48 patches, width 16
    assert "same losses" not in out and "speed-up" not in out  # one version: nothing to compare


def test_a_changed_reader_is_timed_against_the_ref(monkeypatch, capsys):
    """A change that computes the same thing (a needless copy of the canvases)."""
    source = changed(FORWARD, "        return self.decode(tokens, self.encode(images.clone()))\n")
    status, out, _ = run_against(monkeypatch, capsys, source)
    assert status == 0
    assert "differ from HEAD's; timing both, interleaved" in out
    assert "same losses: 3 training steps from the same weights, max |Δ loss| 0.0e+00: same" in out
    assert "block 1/2: HEAD " in out and "   working tree " in out.split("block 1/2:")[1].splitlines()[0]
    assert "    HEAD  " in out and "    working tree  " in out
    assert "speed-up of the working tree over HEAD: " in out and "pairs of blocks" in out


def test_a_reader_that_computes_otherwise_fails_the_check(monkeypatch, capsys):
    source = changed("nn.GELU()", "nn.ReLU()")
    status, out, err = run_against(monkeypatch, capsys, source)
    assert status == 1
    assert ": DIFFERENT (within 1e-05)" in out
    assert "compute different losses" in err


def test_a_structurally_different_reader_skips_the_check(monkeypatch, capsys):
    source = changed("nn.Linear(width, 4 * width), nn.GELU(),\n                         nn.Linear(4 * width, width)",
                     "nn.Linear(width, 2 * width), nn.GELU(),\n                         nn.Linear(2 * width, width)")
    status, out, _ = run_against(monkeypatch, capsys, source)
    assert status == 0
    assert "the two differ in structure (state_dict names or shapes): the equality check is skipped" in out
    assert "same losses" not in out
    assert "speed-up of the working tree over HEAD" in out


def test_the_code_at_a_git_ref_is_loaded(tmp_path):
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    for name, text in WORKING.items():
        (tmp_path / name).write_text(text.replace("\nSCHEDULES = ", "\nVOCAB = 99\nSCHEDULES = "), encoding="utf-8")
    subprocess.run([*git, "add", *bench.CODE], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], cwd=tmp_path, check=True)
    (tmp_path / "_reader.py").write_text("VERSION = 'edited'\n")
    sources = bench.source_at("HEAD", root=tmp_path)
    assert "VOCAB = 99" in sources["_reader.py"], "the committed text, not the working tree's"
    version = bench.load_version(sources, "at_test")
    assert version.VOCAB == 99 and version.Reader(version.ReaderConfig(version.VOCAB, 16, 2, 1, 1))
    with pytest.raises(SystemExit, match="no _encoder_decoder.py at 'nonesuch'"):
        bench.source_at("nonesuch", root=tmp_path)


def test_flop_count_is_positive_grows_with_batch_and_counts_attention():
    torch.set_num_threads(1)
    counts = {}
    for size in (4, 8):
        trainer = bench.Trainer(TODAY, tiny(size))
        counts[size] = bench.step_flops(trainer, bench.canvases(1, size))
    assert 0 < counts[4] < counts[8]
    counter = FlopCounterMode(display=False, custom_mapping=bench.CPU_ATTENTION_FLOPS)
    with counter:
        bench.Trainer(TODAY, tiny(4)).train(bench.canvases(1, 4))
    assert counter.get_total_flops() == counts[4]
    counted = counter.get_flop_counts()["Global"]
    assert counted.get(torch.ops.aten.bmm, 0) > 0, "the attention written out: q·kᵀ and weights·v are counted"


def test_the_command_runs_on_a_post():
    result = subprocess.run([sys.executable, "-m", "tools.measure.bench", "--post", "3", "--steps", "1",
                             "--blocks", "1", "--warmup", "0"],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "post 3 (2026-07-09-reading-handwriting): width 96, 4 heads, 2+2 blocks, batch 128" in result.stdout
    assert "ceiling: the (6,144 × 96)·(96 × 384) matmul" in result.stdout
