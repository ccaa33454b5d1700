"""Part 1's lesson code as exported to _encoder_decoder.py (attention written out, the blocks, the
reader) and _three_digits.py: the
reader's shapes and causality, the MNIST file's check, the canvases, the teacher-forced pair and
greedy reading do what the post says. Tiny models on one thread: the file runs in seconds."""
import math

import numpy as np
import pytest
import torch

from _encoder_decoder import Attention, Reader, ReaderConfig, causal_mask, patchify
from _three_digits import END, START, VOCAB, compose, load_mnist, read_greedily, teacher_pair
from tools.core.notebooks import find_posts, read_notebook
from tools.numbers.bindings import recorded_results

torch.set_num_threads(1)
TINY = ReaderConfig(VOCAB, width=16, heads=2, encoder_blocks=1, decoder_blocks=1)


def tiny_reader(seed=0):
    torch.manual_seed(seed)
    return Reader(TINY).eval()


def canvases(count, seed=0):
    return torch.rand(count, 1, 28, 84, generator=torch.Generator().manual_seed(seed))


def test_attention_is_the_formula_head_by_head():
    torch.manual_seed(0)
    attention = Attention(width=8, heads=2).eval()
    x, context = torch.randn(3, 4, 8), torch.randn(3, 5, 8)
    out, weights = attention(x, context)
    assert out.shape == (3, 4, 8) and weights.shape == (3, 2, 4, 5)
    q, k, v = attention.query(x), attention.key(context), attention.value(context)
    for head in range(2):
        part = slice(4 * head, 4 * head + 4)  # each head is its own slice of the width
        expected = torch.softmax(q[..., part] @ k[..., part].transpose(1, 2) / math.sqrt(4), dim=-1)
        assert torch.allclose(weights[:, head], expected, atol=1e-6)
    mixed = torch.cat([weights[:, h] @ v[..., 4 * h:4 * h + 4] for h in range(2)], dim=-1)
    assert torch.allclose(out, attention.output(mixed), atol=1e-6)


def test_a_blocked_key_gets_no_weight_and_each_row_sums_to_one():
    torch.manual_seed(0)
    attention = Attention(width=8, heads=2).eval()
    x = torch.randn(2, 4, 8)
    _, weights = attention(x, x, causal_mask(4))
    assert torch.all(weights.masked_select(causal_mask(4)) == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 4), atol=1e-6)


def test_causal_mask_blocks_what_lies_after_each_position_and_counts_six_at_four():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.sum().item() == 6  # the post's "count by hand" answer
    assert not mask.diagonal().any() and mask[0, 1:].all() and not mask[3].any()


def test_patchify_cuts_48_patches_of_49_pixels_row_by_row():
    images = torch.arange(28 * 84, dtype=torch.float32).reshape(1, 1, 28, 84)
    patches = patchify(images)
    assert patches.shape == (1, 48, 49)
    assert torch.equal(patches[0, 1], images[0, 0, :7, 7:14].reshape(49)), "the second patch is the next one right"
    assert torch.equal(patches[0, 12], images[0, 0, 7:14, :7].reshape(49)), "the 13th starts the second row"


def test_the_reader_has_the_shapes_the_post_states_and_the_parameter_count_it_prints():
    model = tiny_reader()
    memory = model.encode(canvases(3))
    assert memory.shape == (3, 48, TINY.width)
    logits, weights = model.decode(torch.full((3, 4), START), memory, keep_attention=True)
    assert logits.shape == (3, 4, VOCAB) and weights.shape == (3, 4, 48)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 4), atol=1e-5)
    [post] = find_posts("three-digits")
    printed = recorded_results(read_notebook(post))[0]["parameters"].number
    assert sum(p.numel() for p in Reader(ReaderConfig(VOCAB)).parameters()) == printed


def test_the_decoder_sees_no_token_after_its_own_position():
    model = tiny_reader()
    memory = model.encode(canvases(2))
    tokens = torch.tensor([[START, 4, 7, 1], [START, 0, 2, 2]])
    changed = tokens.clone()
    changed[:, 2:] = 9
    full, altered = model.decode(tokens, memory), model.decode(changed, memory)
    assert torch.allclose(full[:, :2], altered[:, :2], atol=1e-6)
    assert not torch.allclose(full[:, 2:], altered[:, 2:])


def test_teacher_pair_shifts_the_digits_between_start_and_end():
    inputs, targets = teacher_pair(torch.tensor([[4, 7, 0]]))
    assert inputs.tolist() == [[START, 4, 7, 0]] and targets.tolist() == [[4, 7, 0, END]]


def test_compose_glues_three_tiles_and_labels_them_left_to_right():
    images = np.stack([np.full((28, 28), (k + 1) / 10, np.float32) for k in range(10)])
    labels = np.arange(10)
    canvases_, digits = compose(images, labels, 5, np.random.default_rng(0))
    assert canvases_.shape == (5, 1, 28, 84) and digits.shape == (5, 3)
    for canvas, row in zip(canvases_, digits):
        shades = [canvas[0, 0, 28 * k].item() for k in range(3)]
        assert shades == pytest.approx([(d + 1) / 10 for d in row.tolist()])


def test_greedy_reading_writes_four_tokens_for_each_canvas():
    readings = read_greedily(tiny_reader(), canvases(3))
    assert readings.shape == (3, 4) and readings.dtype == torch.long


@pytest.mark.parametrize("content, said", [
    (b"not a zip", "is not a readable .npz file"),
    ("missing", "lacks the arrays"),
])
def test_load_mnist_refuses_a_wrong_file_with_a_message(tmp_path, content, said):
    path = tmp_path / "mnist.npz"
    if content == "missing":
        np.savez(path, x_train=np.zeros((2, 28, 28), np.uint8), y_train=np.zeros(2, np.uint8))
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=said):
        load_mnist(path)
