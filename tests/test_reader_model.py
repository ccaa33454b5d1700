"""The live reader's exported graphs compute what the PyTorch model computes."""
import json

import numpy as np
import pytest
import torch

from tools import reader_model
from tools.reader_model import (
    MODEL_DIR, Reader, Recipe, canvases, exact_share, onnx_reader, onnx_sessions, read_all, torch_reader,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def held_out():
    return canvases("test", 200)


@pytest.fixture(scope="module")
def committed_model():
    model = Reader(Recipe())
    model.load_state_dict(torch.load(MODEL_DIR / "reader.pt", weights_only=True))
    return model.eval()


def test_committed_onnx_matches_pytorch_on_held_out_canvases(committed_model, held_out):
    images, tokens = held_out
    encoder, decoder = onnx_sessions(MODEL_DIR)
    memory = encoder.run(None, {"image": images.numpy()})[0]
    with torch.no_grad():
        expected_memory = committed_model.encode(images).numpy()
        inputs = reader_model.teacher_pair(tokens)[0]
        expected_logits, expected_attention = committed_model.decode(inputs, torch.from_numpy(memory),
                                                                     keep_attention=True)
    logits, attention = decoder.run(None, {"memory": memory, "tokens": inputs.numpy()})
    assert np.abs(memory - expected_memory).max() < 1e-4
    assert np.abs(logits - expected_logits.numpy()).max() < 1e-4
    assert np.abs(attention - expected_attention.numpy()).max() < 1e-5

    onnx_digits = read_all(onnx_reader(MODEL_DIR), images)
    torch_digits = read_all(torch_reader(committed_model), images)
    assert np.array_equal(onnx_digits, torch_digits)
    assert exact_share(onnx_digits, tokens) > 0.85


def test_decoder_length_stays_dynamic(committed_model):
    _, decoder = onnx_sessions(MODEL_DIR)
    memory = np.zeros((1, 48, Recipe().width), dtype=np.float32)
    for length in (1, 2, 3, 4):
        logits, attention = decoder.run(None, {"memory": memory, "tokens": np.full((1, length), 10, dtype=np.int64)})
        assert logits.shape == (1, length, 13) and attention.shape == (1, length, 48)


def test_card_reports_what_the_exported_model_scores():
    card = json.loads((MODEL_DIR / "card.json").read_text())
    assert card["held_out_exact_onnx"] >= 0.90
    assert card["onnx_bytes"] == {name: (MODEL_DIR / name).stat().st_size for name in ("encoder.onnx", "decoder.onnx")}
    assert sum(card["onnx_bytes"].values()) <= 3.5e6


def test_export_of_a_fresh_model_keeps_parity(tmp_path):
    torch.manual_seed(0)
    model = Reader(Recipe(width=32, heads=2, encoder_blocks=1, decoder_blocks=1)).eval()
    reader_model.export(model, tmp_path)
    encoder, decoder = onnx_sessions(tmp_path)
    images = torch.rand(3, 1, 28, 84)
    tokens = np.array([[10, 4, 2], [10, 7, 12], [10, 1, 12]], dtype=np.int64)
    memory = encoder.run(None, {"image": images.numpy()})[0]
    with torch.no_grad():
        expected = model.decode(torch.from_numpy(tokens), model.encode(images)).numpy()
    assert np.abs(decoder.run(None, {"memory": memory, "tokens": tokens})[0] - expected).max() < 1e-4
