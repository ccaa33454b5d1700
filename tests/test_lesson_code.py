"""The lesson code itself, as exported to _encoder_decoder.py (part 1's model, which part 2 reuses),
_reader.py (part 2) and the pure parts of _cure.py (the handwriting post):
canvases and tokens, the model's shapes and causality, the teacher-forced pair, the learning-rate
schedules, greedy reading, the scores and the verdicts do what their docstrings and the posts say.
Tiny models on one thread: the whole file runs in seconds."""
import math

import numpy as np
import pytest
import torch
import torch.nn as nn

import _cure
import _reader
from _encoder_decoder import Reader, ReaderConfig, causal_mask, patchify
from _reader import (
    DIGITS, END, PAD, PATCH, PATCH_COLUMNS, PATCH_ROWS, PATCHES, SCHEDULES, START, STEPS, TILE, VERDICTS, VOCAB,
    Recipe, compose, digits_of, digits_right, learning_rate_factor, optimiser_and_schedule, read_all,
    read_greedily, read_right, spell, teacher_pair, verdict,
)

torch.set_num_threads(1)

TINY = ReaderConfig(VOCAB, width=16, heads=2, encoder_blocks=1, decoder_blocks=1)


def tiny_reader(seed=0):
    torch.manual_seed(seed)
    return Reader(TINY).eval()


def canvases(count, seed=0):
    """Random canvases (count, 1, 28, 84) with values in [0, 1]."""
    return torch.rand(count, 1, TILE, DIGITS * TILE, generator=torch.Generator().manual_seed(seed))


def row(*tokens):
    return torch.tensor(tokens)


def numbered_digits(count=30):
    """Images whose every pixel says which image it is ((i + 1) / count), and labels i % 10."""
    images = np.repeat(((np.arange(count) + 1) / count).astype(np.float32), TILE * TILE).reshape(count, TILE, TILE)
    return images, np.arange(count) % 10


# ---- tokens and canvases -----------------------------------------------------------------------------------

def test_the_special_tokens_follow_the_ten_digits():
    assert (START, END, PAD, VOCAB) == (10, 11, 12, 13)
    assert STEPS == DIGITS + 1 == 4
    assert (PATCH_ROWS, PATCH_COLUMNS, PATCHES) == (4, 12, 48)


def test_compose_gives_canvases_tokens_and_lengths_of_the_documented_shapes():
    images, labels = numbered_digits()
    pictures, tokens, lengths = compose(images, labels, 40, np.random.default_rng(0))
    assert pictures.shape == (40, 1, TILE, DIGITS * TILE) and pictures.dtype == torch.float32
    assert tokens.shape == (40, STEPS) and tokens.dtype == torch.int64
    assert lengths.shape == (40,) and int(lengths.min()) >= 1 and int(lengths.max()) <= DIGITS


def test_compose_places_each_digit_on_its_tile_from_the_left_and_blanks_the_rest():
    images, labels = numbered_digits()
    pictures, tokens, lengths = compose(images, labels, 200, np.random.default_rng(3))
    assert set(lengths.tolist()) == {1, 2, 3}, "every length occurs in 200 canvases"
    for picture, token_row, length in zip(pictures[:, 0], tokens, lengths.tolist()):
        for k in range(DIGITS):
            tile = picture[:, k * TILE:(k + 1) * TILE]
            if k < length:
                value = float(tile[0, 0])
                assert value > 0 and (tile == value).all(), "one whole MNIST image per tile"
                index = round(value * len(images)) - 1
                assert token_row[k].item() == labels[index], "the token is the label of the image on that tile"
            else:
                assert (tile == 0).all(), "tiles past the length are blank"


def test_compose_tokens_are_the_digits_then_one_end_then_pads():
    images, labels = numbered_digits()
    _, tokens, lengths = compose(images, labels, 100, np.random.default_rng(1))
    for token_row, length in zip(tokens.tolist(), lengths.tolist()):
        assert all(t < START for t in token_row[:length])
        assert token_row[length] == END
        assert token_row[length + 1:] == [PAD] * (STEPS - length - 1)
    assert ((tokens == END).sum(dim=1) == 1).all()
    assert not (tokens == START).any(), "the targets never hold <start>"


def test_compose_is_deterministic_for_a_seeded_generator():
    images, labels = numbered_digits()
    first = compose(images, labels, 50, np.random.default_rng(7))
    again = compose(images, labels, 50, np.random.default_rng(7))
    other = compose(images, labels, 50, np.random.default_rng(8))
    for a, b in zip(first, again):
        assert torch.equal(a, b)
    assert not torch.equal(first[1], other[1]), "another seed draws other canvases"


def test_spell_names_the_specials_and_writes_digits_as_numbers():
    assert spell(row(4, 7, END, PAD)) == "4 7 <end> <pad>"
    assert spell(row(START, 0, 9)) == "<start> 0 9"
    assert spell(row(END, PAD, PAD, PAD)) == "<end> <pad> <pad> <pad>"


@pytest.mark.parametrize("tokens, number", [
    ((4, 7, END, PAD), "47"),
    ((4, 7, END, 3), "47"),        # digits after the first special do not count
    ((0, 0, 5, END), "005"),       # leading zeros are digits too
    ((1, 2, 3), "123"),            # no special at all
    ((END, 3, PAD, PAD), ""),
    ((PAD, 3, END, PAD), ""),
    ((9, START, 2, END), "9"),
])
def test_digits_of_reads_up_to_the_first_special(tokens, number):
    assert digits_of(row(*tokens)) == number


# ---- the teacher-forced pair and the causal mask -------------------------------------------------------------

def test_teacher_pair_starts_with_start_and_shifts_the_target_one_step_right():
    tokens = torch.tensor([[4, 7, END, PAD], [1, 2, 3, END], [5, END, PAD, PAD], [END, PAD, PAD, PAD]])
    inputs, targets = teacher_pair(tokens)
    assert inputs.tolist() == [[START, 4, 7, PAD], [START, 1, 2, 3], [START, 5, PAD, PAD], [START, PAD, PAD, PAD]]
    assert torch.equal(targets, tokens), "the target is the tokens as they are"
    assert inputs.shape == (4, STEPS)


def test_teacher_pair_on_composed_tokens_never_feeds_end_and_keeps_every_digit_in_place():
    images, labels = numbered_digits()
    _, tokens, _ = compose(images, labels, 100, np.random.default_rng(2))
    inputs, targets = teacher_pair(tokens)
    assert (inputs[:, 0] == START).all()
    assert not (inputs == END).any(), "<end> becomes <pad> in the input"
    digit = targets[:, :DIGITS] < START
    assert torch.equal(inputs[:, 1:][digit], targets[:, :DIGITS][digit]), "input t+1 is target t"
    assert (inputs[:, 1:][~digit] == PAD).all()


def test_causal_mask_blocks_the_upper_triangle_and_allows_the_diagonal():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.shape == (4, 4)
    assert mask.tolist() == [[False, True, True, True],
                             [False, False, True, True],
                             [False, False, False, True],
                             [False, False, False, False]]
    assert not causal_mask(7).diagonal().any()
    assert causal_mask(1).tolist() == [[False]]


# ---- the model ---------------------------------------------------------------------------------------------

def test_patchify_cuts_7x7_patches_row_by_row_over_the_grid():
    images = torch.arange(2 * TILE * DIGITS * TILE, dtype=torch.float32).reshape(2, 1, TILE, DIGITS * TILE)
    patches = patchify(images)
    assert patches.shape == (2, PATCHES, PATCH * PATCH)
    for b in range(2):
        for r in range(PATCH_ROWS):
            for c in range(PATCH_COLUMNS):
                expected = images[b, 0, r * PATCH:(r + 1) * PATCH, c * PATCH:(c + 1) * PATCH].flatten()
                assert torch.equal(patches[b, r * PATCH_COLUMNS + c], expected), (b, r, c)


def test_the_default_reader_has_the_parameter_count_the_post_prints():
    assert sum(p.numel() for p in Reader(ReaderConfig(VOCAB)).parameters()) == 534_541


def test_encoder_and_decoder_shapes_per_step():
    model = tiny_reader()
    images = canvases(3)
    memory = model.encode(images)
    assert memory.shape == (3, PATCHES, TINY.width)
    for length in range(1, STEPS + 1):
        tokens = torch.full((3, length), START)
        assert model.decode(tokens, memory).shape == (3, length, VOCAB)
    inputs, _ = teacher_pair(torch.tensor([[4, 7, END, PAD]] * 3))
    assert model(images, inputs).shape == (3, STEPS, VOCAB)


def test_decode_keeps_the_cross_attention_of_the_last_block_when_asked():
    model = tiny_reader()
    memory = model.encode(canvases(2))
    logits, weights = model.decode(torch.tensor([[START, 4, 7]] * 2), memory, keep_attention=True)
    assert logits.shape == (2, 3, VOCAB) and weights.shape == (2, 3, PATCHES)
    assert (weights >= 0).all() and torch.allclose(weights.sum(-1), torch.ones(2, 3), atol=1e-5)
    assert torch.allclose(logits, model.decode(torch.tensor([[START, 4, 7]] * 2), memory))


def test_the_decoder_sees_no_token_after_its_own_position():
    model = tiny_reader()
    memory = model.encode(canvases(2))
    tokens = torch.tensor([[START, 4, 7, 1], [START, 0, PAD, PAD]])
    changed = tokens.clone()
    changed[:, 2:] = torch.tensor([[9, 9], [3, 3]])
    full, altered = model.decode(tokens, memory), model.decode(changed, memory)
    assert torch.allclose(full[:, :2], altered[:, :2], atol=1e-6), "positions 0 and 1 cannot see positions 2, 3"
    assert not torch.allclose(full[:, 2:], altered[:, 2:]), "position 2 does see its own token"
    for length in range(1, STEPS):
        assert torch.allclose(model.decode(tokens[:, :length], memory), full[:, :length], atol=1e-5), \
            "a prefix scores as it does inside the whole sequence"


def test_the_decoder_reads_the_canvas():
    model = tiny_reader()
    tokens = torch.full((1, 2), START)
    first = model(canvases(1, seed=1), tokens)
    second = model(canvases(1, seed=2), tokens)
    assert not torch.allclose(first, second), "another canvas, other scores: cross-attention is wired"


# ---- the learning-rate schedules ---------------------------------------------------------------------------

def test_an_unknown_schedule_is_refused_by_name():
    with pytest.raises(ValueError, match="warmup-cosine.*'linear'"):
        learning_rate_factor("linear", 100, 10)


def test_the_constant_schedule_is_one_from_step_zero_and_ignores_the_warm_up():
    factor = learning_rate_factor("constant", 100, 10)
    assert [factor(step) for step in (0, 1, 9, 10, 50, 99, 100)] == [1.0] * 7


@pytest.mark.parametrize("schedule", ["warmup-cosine", "warmup-constant"])
def test_the_warm_up_rises_linearly_from_its_first_step_to_the_peak(schedule):
    factor = learning_rate_factor(schedule, 100, 10)
    warm = [factor(step) for step in range(10)]
    assert warm[0] == pytest.approx(0.1), "step 0 already takes one warm-up step's share, not zero"
    assert np.diff(warm) == pytest.approx([0.1] * 9), "linear"
    assert warm[-1] == pytest.approx(1.0), "the peak at the warm-up's last step"
    assert factor(10) == pytest.approx(1.0)


def test_warmup_constant_stays_at_the_peak_after_the_warm_up():
    factor = learning_rate_factor("warmup-constant", 100, 10)
    assert [factor(step) for step in range(10, 101)] == [1.0] * 91


def test_warmup_cosine_falls_from_the_peak_to_zero_at_the_end():
    factor = learning_rate_factor("warmup-cosine", 100, 10)
    after = [factor(step) for step in range(10, 101)]
    assert after[0] == pytest.approx(1.0)
    assert all(b <= a for a, b in zip(after, after[1:])), "never rises again"
    assert factor(55) == pytest.approx(0.5), "half way down half way through the decay"
    assert factor(100) == pytest.approx(0.0, abs=1e-12)
    assert 0 < factor(99) < 1e-3, "the last training step's rate is near zero"


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_every_schedule_stays_within_zero_and_the_peak(schedule):
    factor = learning_rate_factor(schedule, 50, 7)
    values = [factor(step) for step in range(50)]
    assert all(0 < value <= 1 for value in values)


def run_schedule(recipe, steps_per_epoch):
    """The learning rate each optimiser step of a whole run used."""
    model = nn.Linear(2, 2)
    optimiser, scheduler = optimiser_and_schedule(model, recipe, steps_per_epoch)
    used = []
    for _ in range(recipe.epochs * steps_per_epoch - 1):  # the last scheduler.step() is checked apart
        used.append(optimiser.param_groups[0]["lr"])
        optimiser.step()
        scheduler.step()
    used.append(optimiser.param_groups[0]["lr"])
    return optimiser, used


def test_optimiser_and_schedule_warm_up_over_the_recipe_s_share_of_an_epoch_then_decay():
    recipe = Recipe(epochs=2, learning_rate=2e-3, schedule="warmup-cosine", warmup_epochs=0.5, weight_decay=0.01)
    optimiser, used = run_schedule(recipe, steps_per_epoch=10)
    assert isinstance(optimiser, torch.optim.AdamW)
    assert optimiser.param_groups[0]["weight_decay"] == 0.01
    assert len(used) == 20
    assert used[:5] == pytest.approx([4e-4, 8e-4, 1.2e-3, 1.6e-3, 2e-3]), "five warm-up steps: half of ten"
    assert max(used) == pytest.approx(2e-3) and used[5] == pytest.approx(2e-3)
    assert used[-1] < 0.02 * 2e-3


def test_optimiser_and_schedule_warms_up_at_least_one_step():
    _, used = run_schedule(Recipe(epochs=1, schedule="warmup-constant", warmup_epochs=0.0, learning_rate=1e-3), 6)
    assert used == pytest.approx([1e-3] * 6), "a warm-up of zero epochs is one step at the peak"


def test_the_constant_schedule_trains_at_the_peak_throughout():
    _, used = run_schedule(Recipe(epochs=2, schedule="constant", learning_rate=1e-4), 4)
    assert used == pytest.approx([1e-4] * 8)


# ---- training ----------------------------------------------------------------------------------------------

def test_one_epoch_steps_once_per_batch_and_changes_the_model():
    images, labels = numbered_digits()
    pictures, tokens, _ = compose(images, labels, 12, np.random.default_rng(0))
    model = tiny_reader()
    before = [p.detach().clone() for p in model.parameters()]
    recipe = Recipe(epochs=1, batch_size=5)
    optimiser, scheduler = optimiser_and_schedule(model, recipe, steps_per_epoch=3)
    seen, steps = [], []

    def distort(batch_canvases, batch_tokens):
        seen.append((len(batch_canvases), len(batch_tokens)))
        return batch_canvases

    loss = _reader.train_one_epoch(model, optimiser, scheduler, (pictures, tokens), recipe,
                                   torch.Generator().manual_seed(0), distort, lambda: steps.append(1))
    assert math.isfinite(loss) and loss > 0
    assert seen == [(5, 5), (5, 5), (2, 2)], "batches of batch_size, the last one short"
    assert len(steps) == 3 and scheduler.last_epoch == 3
    assert model.training, "after_step may score the model; training resumes in train mode"
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


# ---- greedy reading ----------------------------------------------------------------------------------------

def forced_reader(token):
    """A tiny reader whose output layer always scores `token` highest, whatever it reads."""
    model = tiny_reader()
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.fill_(-5.0)
        model.head.bias[token] = 5.0
    return model


def test_a_reader_forced_to_end_writes_end_at_every_step_it_is_asked_for():
    readings, probabilities = read_greedily(forced_reader(END), canvases(3))
    assert readings.shape == (3, STEPS) and probabilities.shape == (3, STEPS, VOCAB)
    assert (readings == END).all(), "read_greedily writes `steps` tokens; it does not stop or pad by itself"
    assert torch.allclose(probabilities.sum(-1), torch.ones(3, STEPS), atol=1e-6)
    assert (probabilities.argmax(-1) == readings).all()
    assert read_right(readings, torch.tensor([[END, PAD, PAD, PAD]] * 3)).all(), "read as nothing"
    assert verdict(readings[0], row(END, PAD, PAD, PAD)) == "read right"
    assert verdict(readings[0], row(4, END, PAD, PAD)) == "stopped early"


def test_read_greedily_writes_as_many_steps_as_asked():
    readings, probabilities = read_greedily(forced_reader(7), canvases(2), steps=2)
    assert readings.tolist() == [[7, 7], [7, 7]] and probabilities.shape == (2, 2, VOCAB)
    assert verdict(readings[0], row(7, 7, END, PAD)) == "read right", "a cut reading is judged by its digits"
    assert verdict(readings[0], row(7, 7, 7, END)) == "stopped early"


class Scripted(nn.Module):
    """A stand-in reader: canvas b's next token is scripts[b][last token so far]; it records what it was fed."""

    def __init__(self, scripts):
        super().__init__()
        self.scripts, self.fed = scripts, []
        self.weight = nn.Parameter(torch.zeros(1))  # read_all asks for the device of a parameter

    def encode(self, images):
        return images[:, 0, 0, :1]  # the canvas's number, put in its first pixel

    def decode(self, tokens, memory):
        self.fed.append(tokens.clone())
        logits = torch.zeros(len(tokens), tokens.shape[1], VOCAB)
        for b, canvas in enumerate(memory[:, 0].long().tolist()):
            for t, last in enumerate(tokens[b].tolist()):
                logits[b, t, self.scripts[canvas][last]] = 3.0
        return logits


def numbered_canvases(numbers):
    images = torch.zeros(len(numbers), 1, TILE, DIGITS * TILE)
    images[:, 0, 0, 0] = torch.tensor(numbers, dtype=torch.float32)
    return images


def test_read_greedily_feeds_back_the_most_likely_token_from_start():
    scripts = [{START: 4, 4: 7, 7: END, END: PAD},  # "47", then <pad> after its <end>
               {START: END, END: 9, 9: 9},          # nothing, then it runs on after its <end>
               {START: 1, 1: 2, 2: 3, 3: 5}]        # four digits and no <end>
    model = Scripted(scripts)
    readings, probabilities = read_greedily(model, numbered_canvases([0, 1, 2]))
    assert readings.tolist() == [[4, 7, END, PAD], [END, 9, 9, 9], [1, 2, 3, 5]]
    assert [fed.shape[1] for fed in model.fed] == [1, 2, 3, 4], "one token more each step"
    assert (model.fed[-1][:, 0] == START).all()
    assert torch.equal(model.fed[-1][:, 1:], readings[:, :-1]), "each step reads back the tokens chosen"
    assert (probabilities.argmax(-1) == readings).all()
    truth = torch.tensor([[4, 7, END, PAD], [END, PAD, PAD, PAD], [1, 2, 3, END]])
    assert read_right(readings, truth).tolist() == [True, True, False], "what follows <end> is not scored"
    assert [verdict(r, t) for r, t in zip(readings, truth)] == ["read right", "read right", "ran on"]


def test_read_all_reads_in_chunks_what_read_greedily_reads_at_once():
    model = tiny_reader()
    images = canvases(7)
    whole = read_greedily(model, images)
    model.train()
    chunked = read_all(model, images, chunk=3)
    assert not model.training, "read_all reads in eval mode"
    assert torch.equal(chunked[0], whole[0])
    assert torch.allclose(chunked[1], whole[1], atol=1e-6)


def test_a_greedy_reading_fed_back_teacher_forced_scores_the_same():
    model = tiny_reader(seed=3)
    images = canvases(5, seed=4)
    readings, probabilities = read_greedily(model, images)
    inputs = torch.cat([torch.full((5, 1), START), readings[:, :-1]], dim=1)
    logits = model(images, inputs)
    assert torch.equal(logits.argmax(-1), readings)
    assert torch.allclose(logits.softmax(-1), probabilities, atol=1e-5)


# ---- scores and verdicts -----------------------------------------------------------------------------------

def test_read_right_needs_every_digit_and_the_end_and_ignores_what_follows():
    tokens = torch.tensor([[4, 7, END, PAD]] * 5 + [[1, 2, 3, END]])
    readings = torch.tensor([
        [4, 7, END, PAD],   # right
        [4, 7, END, 3],     # right: after <end> is unscored
        [4, 7, 3, END],     # ran on
        [4, END, PAD, PAD],  # stopped early
        [4, 1, END, PAD],   # wrong digit
        [1, 2, 3, PAD],     # no <end> after three digits
    ])
    right = read_right(readings, tokens)
    assert right.dtype == torch.bool and right.tolist() == [True, True, False, False, False, False]


def test_digits_right_is_the_share_of_digits_right_in_place():
    tokens = torch.tensor([[4, 7, END, PAD], [1, 2, 3, END]])
    readings = torch.tensor([[4, 9, 3, 3], [1, 2, 3, 3]])  # 7 misread; wrong <end>s do not count
    assert digits_right(readings, tokens) == pytest.approx(4 / 5)
    assert digits_right(tokens, tokens) == 1.0
    assert digits_right(torch.tensor([[2, 1, 0, 0]]), torch.tensor([[1, 2, END, PAD]])) == 0.0, "in place"


@pytest.mark.parametrize("reading, target, said", [
    ((4, 7, END, PAD), (4, 7, END, PAD), "read right"),
    ((4, 7, END, 9), (4, 7, END, PAD), "read right"),
    ((END, PAD, PAD, PAD), (END, PAD, PAD, PAD), "read right"),
    ((1, 2, 3, END), (1, 2, 3, END), "read right"),
    ((1, 2, 3), (1, 2, 3, END), "read right"),          # a reading cut at three steps has no room for <end>
    ((4, END, PAD, PAD), (4, 7, END, PAD), "stopped early"),
    ((END, 4, 7, END), (4, 7, END, PAD), "stopped early"),
    ((9, END, PAD, PAD), (4, 7, END, PAD), "stopped early"),  # shorter comes before wrong
    ((4, 7, 3, END), (4, 7, END, PAD), "ran on"),
    ((4, 7, 1, 2), (4, 7, END, PAD), "ran on"),
    ((3, END, PAD, PAD), (END, PAD, PAD, PAD), "ran on"),
    ((4, 7, PAD, PAD), (4, 7, END, PAD), "ran on"),     # the right digits, then no <end>
    ((4, 1, END, PAD), (4, 7, END, PAD), "wrong digit"),
    ((9, 9, 9, END), (1, 2, 3, END), "wrong digit"),
])
def test_verdict(reading, target, said):
    assert said in VERDICTS
    assert verdict(row(*reading), row(*target)) == said


def test_verdict_covers_every_verdict_and_agrees_with_read_right():
    images, labels = numbered_digits()
    _, tokens, _ = compose(images, labels, 400, np.random.default_rng(5))
    rng = np.random.default_rng(6)
    readings = tokens.clone()
    for i in range(len(readings)):  # change zero to two tokens of each reading, to digits or specials
        for _ in range(int(rng.integers(0, 3))):
            readings[i, rng.integers(STEPS)] = int(rng.choice([0, 3, 7, START, END, PAD, END]))
    verdicts = [verdict(r, t) for r, t in zip(readings, tokens)]
    assert set(verdicts) == set(VERDICTS)
    assert [v == "read right" for v in verdicts] == read_right(readings, tokens).tolist()


# ---- the pure parts of the cure (_cure.py) -------------------------------------------------------------------

def test_read_with_logits_reads_what_read_all_reads():
    model = tiny_reader(seed=5)
    images = canvases(6, seed=5)
    readings, logits = _cure.read_with_logits(model, images, chunk=4)
    expected, probabilities = read_all(model, images)
    assert torch.equal(readings, expected) and logits.shape == (6, STEPS, VOCAB)
    assert torch.allclose(logits.softmax(-1), probabilities, atol=1e-6)


def test_reading_confidence_multiplies_the_chosen_probabilities_up_to_the_first_end():
    readings = torch.tensor([[4, END, 9, 9], [1, 2, 3, 5], [END, END, 2, 2]])
    probabilities = torch.full((3, STEPS, VOCAB), 0.01)
    chosen = torch.tensor([[0.5, 0.8, 0.1, 0.1], [0.9, 0.9, 0.5, 0.5], [0.7, 0.2, 0.2, 0.2]])
    probabilities.scatter_(-1, readings[..., None], chosen[..., None])
    confidence = _cure.reading_confidence(readings, probabilities)
    assert confidence.tolist() == pytest.approx([0.4, 0.9 * 0.9 * 0.5 * 0.5, 0.7])


def test_fit_temperature_cools_an_underconfident_reader_and_warms_an_overconfident_one():
    readings = torch.tensor([[4, END, PAD, PAD]] * 20)
    sure = torch.zeros(20, STEPS, VOCAB)
    sure[:, 0, 4] = sure[:, 1, END] = 12.0  # nearly certain
    half_right = torch.arange(20) % 2 == 0
    hot = _cure.fit_temperature(sure, readings, half_right)
    assert 1 < hot <= 4, "right half the time but sure every time: the fit spreads the scores"
    unsure = sure / 12 * 1.5  # right every time but hesitant
    cold = _cure.fit_temperature(unsure, readings, torch.ones(20, dtype=torch.bool))
    assert 0.25 <= cold < 1, "right every time but hesitant: the fit sharpens the scores"


def test_augment_keeps_the_shape_and_range_and_is_seeded():
    images, labels = numbered_digits()
    pictures, tokens, _ = compose(images, labels, 6, np.random.default_rng(0))
    setting = _cure.Augmentation(clean_share=0.0)
    out = _cure.augment(pictures, tokens, torch.Generator().manual_seed(1), setting)
    again = _cure.augment(pictures, tokens, torch.Generator().manual_seed(1), setting)
    assert out.shape == pictures.shape and 0 <= float(out.min()) and float(out.max()) <= 1
    assert torch.equal(out, again)
    assert not torch.equal(out, pictures), "with no clean share every canvas is distorted"
    clean = _cure.augment(pictures, tokens, torch.Generator().manual_seed(1), _cure.Augmentation(clean_share=1.0))
    assert torch.equal(clean, pictures), "a clean share of one leaves every canvas as it came"


def test_augment_leaves_empty_canvases_empty_and_ink_no_further_than_the_next_box():
    tokens = torch.tensor([[END, PAD, PAD, PAD]] * 4 + [[1, END, PAD, PAD]] * 4)
    pictures = torch.zeros(8, 1, TILE, DIGITS * TILE)
    pictures[4:, 0, 4:24, 8:20] = 1.0  # ink in the first box only
    out = _cure.augment(pictures, tokens, torch.Generator().manual_seed(2),
                        _cure.Augmentation(clean_share=0.0, edge_crossing_share=1.0))
    assert (out[:4] == 0).all(), "a blank canvas stays blank"
    assert (out[4:, :, :, 2 * TILE:] == 0).all(), "ink crosses at most into the neighbouring box"
    assert (out[4:, :, :, :TILE].amax(dim=(1, 2, 3)) > 0).all()
