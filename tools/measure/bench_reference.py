"""The image posts' models and training steps as they are today: a FROZEN copy, on purpose.

`tools/measure/bench.py` times these against `tools/measure/bench_candidate.py`. The point of a reference is
that it does not move: when the posts change (issue #20 is about making them train faster),
this file keeps the code they started from, so the benchmark keeps measuring against the
same thing. Do not "fix" or speed up anything here; change the candidate instead.

Copied at commit e3aaf49 from the notebooks' code cells (cell numbers count every cell from 0, as
`nbformat.read(...).cells[n]` does; the ids are the cells' `id` fields):

- post 1, `posts/2026-06-18-reading-three-digits`: parameters cell 3 (494fc3df), tokens
  cell 6 (c9304cf9, `VOCAB`, `causal_mask`), the model cell 9 (bab248e4), the training
  step in cell 20 (c7b2e453, `train_one_epoch`) and the optimiser in cell 24 (5137ddc2).
- post 2, `posts/2026-06-25-reading-when-to-stop`: parameters cell 3 (53db1018), tokens
  cell 11 (cde10106), the model cell 15 (80dc8896), the schedule and training step in
  cell 22 (e33acfa2) and the optimiser and scheduler in cell 28 (2b4ed501).
- post 4, `posts/2026-07-09-reading-handwriting`: parameters cell 3 (480850e2), tokens
  cell 10 (06d40224), the model cell 18 (7e10e5f5: the same code as post 2's cell 15 bar
  the parameter printout), the schedule, optimiser and training step in cell 20
  (facb97c9). Post 4 trains twice (4 epochs on MNIST canvases, 6 on augmented ones); the
  augmentation runs on the batch before the model sees it and is not part of the step
  timed here.

The notebooks read their knobs (`width`, `heads`, `encoder_blocks`, `decoder_blocks`) and
`VOCAB` as globals. Here each post's model cell sits, unchanged but indented, inside a
function whose arguments are those globals, so that one module can hold all three posts
(post 1 has 12 tokens, posts 2 and 4 have 13). Everything inside is the cells' text.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# The posts' own settings (their parameters cells).
POSTS = {
    1: dict(slug="2026-06-18-reading-three-digits", batch_size=128, learning_rate=1e-3,
            weight_decay=0.01, width=96, heads=4, encoder_blocks=2, decoder_blocks=2,
            vocab=12, label_smoothing=0.0, clip_norm=None, schedule="constant",
            train_size=20_000, epochs=8),
    2: dict(slug="2026-06-25-reading-when-to-stop", batch_size=128, learning_rate=2e-3,
            weight_decay=0.01, width=96, heads=4, encoder_blocks=2, decoder_blocks=2,
            vocab=13, label_smoothing=0.1, clip_norm=1.0, schedule="warmup-cosine",
            warmup_epochs=0.5, train_size=60_000, epochs=4),
    4: dict(slug="2026-07-09-reading-handwriting", batch_size=128, learning_rate=2e-3,
            weight_decay=0.01, width=96, heads=4, encoder_blocks=2, decoder_blocks=2,
            vocab=13, label_smoothing=0.1, clip_norm=1.0, schedule="warmup-cosine",
            warmup_epochs=0.5, train_size=60_000, epochs=4 + 6),
}
CANVAS = (1, 28, 84)  # every image post: three 28×28 boxes side by side
TOKENS = 4            # decoder positions: <start> d1 d2 d3 in, d1 d2 d3 <end> out
START, END, PAD = 10, 11, 12  # post 1 has no PAD


# --- post 1, cells 6 and 9 -----------------------------------------------------------------

def post_1_reader(width=96, heads=4, encoder_blocks=2, decoder_blocks=2):
    """Post 1's `Reader` class (cell 9, with `causal_mask` from cell 6)."""
    VOCAB = 12

    def causal_mask(length):
        """True where attention is blocked: position i may not look at positions after i."""
        return torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)

    def feed_forward():
        return nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                             nn.Linear(4 * width, width))

    class EncoderBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
            self.feed_forward = feed_forward()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)

        def forward(self, x):
            x = self.norm1(x + self.attention(x, x, x, need_weights=False)[0])
            return self.norm2(x + self.feed_forward(x))

    class DecoderBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attention = nn.MultiheadAttention(width, heads, batch_first=True)
            self.cross_attention = nn.MultiheadAttention(width, heads, batch_first=True)
            self.feed_forward = feed_forward()
            self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(width) for _ in range(3))

        def forward(self, y, memory, keep_attention=False):
            mask = causal_mask(y.shape[1]).to(y.device)  # True = blocked
            attended = self.self_attention(y, y, y, attn_mask=mask, need_weights=False)[0]
            y = self.norm1(y + attended)
            # weights: (B, T, 48), averaged over heads; computed only when asked for
            attended, weights = self.cross_attention(y, memory, memory,
                                                     need_weights=keep_attention)
            y = self.norm2(y + attended)
            return self.norm3(y + self.feed_forward(y)), weights

    def patchify(images):
        """(B, 1, 28, 84) canvases to (B, 48, 49): 7×7 patches, row by row, 4×12 grid."""
        patches = images.unfold(2, 7, 7).unfold(3, 7, 7)  # (B, 1, 4, 12, 7, 7)
        return patches.reshape(images.shape[0], 48, 49)

    class Reader(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch_projection = nn.Linear(49, width)
            self.patch_positions = nn.Parameter(torch.randn(1, 48, width) * 0.02)
            self.token_embedding = nn.Embedding(VOCAB, width)
            self.token_positions = nn.Parameter(torch.randn(1, 4, width) * 0.02)
            self.encoder = nn.ModuleList(EncoderBlock() for _ in range(encoder_blocks))
            self.decoder = nn.ModuleList(DecoderBlock() for _ in range(decoder_blocks))
            self.head = nn.Linear(width, VOCAB)

        def encode(self, images):
            x = self.patch_projection(patchify(images))  # (B, 48, width)
            x = x + self.patch_positions
            for block in self.encoder:
                x = block(x)
            return x

        def decode(self, tokens, memory, keep_attention=False):
            positions = self.token_positions[:, :tokens.shape[1]]
            y = self.token_embedding(tokens) + positions  # (B, T, width)
            for block in self.decoder:
                y, weights = block(y, memory, keep_attention)
            logits = self.head(y)  # (B, T, VOCAB)
            return (logits, weights) if keep_attention else logits

        def forward(self, images, tokens):
            return self.decode(tokens, self.encode(images))

    return Reader


# --- posts 2 and 4, post 2's cell 15 = post 4's cell 18 -----------------------------------

def post_2_reader(width=96, heads=4, encoder_blocks=2, decoder_blocks=2):
    """Post 2's `Reader` class (cell 15); post 4's cell 18 is the same code."""
    VOCAB = 13

    def causal_mask(length):
        """True = blocked: position i may not attend to positions after i."""
        return torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)

    def feed_forward():
        return nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    class EncoderBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
            self.feed_forward = feed_forward()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)

        def forward(self, x):
            x = self.norm1(x + self.attention(x, x, x, need_weights=False)[0])
            return self.norm2(x + self.feed_forward(x))

    class DecoderBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attention = nn.MultiheadAttention(width, heads, batch_first=True)
            self.cross_attention = nn.MultiheadAttention(width, heads, batch_first=True)
            self.feed_forward = feed_forward()
            self.norm1, self.norm2, self.norm3 = nn.LayerNorm(width), nn.LayerNorm(width), nn.LayerNorm(width)

        def forward(self, y, memory, keep_attention=False):
            mask = causal_mask(y.shape[1]).to(y.device)
            y = self.norm1(y + self.self_attention(y, y, y, attn_mask=mask, need_weights=False)[0])
            # weights: (B, T, 48), averaged over heads; computed only when asked for
            attended, weights = self.cross_attention(y, memory, memory, need_weights=keep_attention)
            y = self.norm2(y + attended)
            return self.norm3(y + self.feed_forward(y)), weights

    def patchify(images):
        """(B, 1, 28, 84) canvases to (B, 48, 49): 7×7 patches, row by row over the 4×12 grid."""
        patches = images.unfold(2, 7, 7).unfold(3, 7, 7)  # (B, 1, 4, 12, 7, 7)
        return patches.reshape(images.shape[0], 48, 49)

    class Reader(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch_projection = nn.Linear(49, width)
            self.patch_positions = nn.Parameter(torch.randn(1, 48, width) * 0.02)
            self.token_embedding = nn.Embedding(VOCAB, width)
            self.token_positions = nn.Parameter(torch.randn(1, 4, width) * 0.02)
            self.encoder = nn.ModuleList(EncoderBlock() for _ in range(encoder_blocks))
            self.decoder = nn.ModuleList(DecoderBlock() for _ in range(decoder_blocks))
            self.head = nn.Linear(width, VOCAB)

        def encode(self, images):
            x = self.patch_projection(patchify(images)) + self.patch_positions  # (B, 48, width)
            for block in self.encoder:
                x = block(x)
            return x

        def decode(self, tokens, memory, keep_attention=False):
            y = self.token_embedding(tokens) + self.token_positions[:, :tokens.shape[1]]  # (B, T, width)
            for block in self.decoder:
                y, weights = block(y, memory, keep_attention)
            return (self.head(y), weights) if keep_attention else self.head(y)  # logits (B, T, VOCAB)

        def forward(self, images, tokens):
            return self.decode(tokens, self.encode(images))

    return Reader


post_4_reader = post_2_reader  # post 4's cell 18 is post 2's cell 15


def reader_class(post, **sizes):
    """The `Reader` class of post 1, 2 or 4, at the post's sizes unless `sizes` says otherwise."""
    settings = POSTS[post]
    sizes = {name: sizes.get(name, settings[name])
             for name in ("width", "heads", "encoder_blocks", "decoder_blocks")}
    return {1: post_1_reader, 2: post_2_reader, 4: post_4_reader}[post](**sizes)


# --- the recipes: optimiser, schedule, one training step ----------------------------------

def warmup_cosine(total_steps, warmup_steps):
    """Post 4's cell 20 (post 2's `learning_rate_factor` in cell 22 is the same for
    schedule = "warmup-cosine"): a linear warm-up, then a cosine decay to zero."""
    def factor(step):
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        return 0.5 * (1 + math.cos(math.pi * (step - warmup_steps) / (total_steps - warmup_steps)))
    return factor


def optimiser_and_schedule(post, model):
    """Post 1's cell 24: AdamW, no scheduler. Posts 2 (cell 28) and 4 (cell 20): AdamW and
    a LambdaLR warm-up and cosine decay over the first training run (4 epochs of
    ceil(60,000 / 128) = 469 steps; the warm-up half an epoch)."""
    settings = POSTS[post]
    optimiser = torch.optim.AdamW(model.parameters(), lr=settings["learning_rate"],
                                  weight_decay=settings["weight_decay"])
    return optimiser, schedule(post, optimiser)


def schedule(post, optimiser):
    """The post's learning-rate scheduler on `optimiser` (None for post 1)."""
    settings = POSTS[post]
    if settings["schedule"] == "constant":
        return None
    steps_per_epoch = math.ceil(settings["train_size"] / settings["batch_size"])
    total, warmup_steps = 4 * steps_per_epoch, max(1, round(settings["warmup_epochs"] * steps_per_epoch))
    return torch.optim.lr_scheduler.LambdaLR(optimiser, warmup_cosine(total, warmup_steps))


def loss_of(post, logits, targets):
    """Post 1 (cell 20): plain cross-entropy over 12 tokens. Posts 2 and 4: PAD ignored,
    label smoothing 0.1 over 13 tokens."""
    settings = POSTS[post]
    vocab = settings["vocab"]
    if post == 1:
        return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1), ignore_index=PAD,
                           label_smoothing=settings["label_smoothing"])


def training_step(post, model, optimiser, scheduler, images, inputs, targets):
    """The body of the posts' `train_one_epoch` loop for one batch; returns the loss tensor."""
    logits = model(images, inputs)  # (B, 4, VOCAB)
    loss = loss_of(post, logits, targets)
    optimiser.zero_grad()
    loss.backward()
    if POSTS[post]["clip_norm"] is not None:  # posts 2 and 4
        nn.utils.clip_grad_norm_(model.parameters(), POSTS[post]["clip_norm"])
    optimiser.step()
    if scheduler is not None:  # posts 2 and 4
        scheduler.step()
    return loss


def random_batch(post, batch_size, generator):
    """Random canvases (B, 1, 28, 84) in [0, 1] and decoder inputs and targets (B, 4) shaped
    and spelled like the post's: `<start> d1 d2 d3` -> `d1 d2 d3 <end>` for post 1,
    1 to 3 digits with `<end>` and `<pad>` for posts 2 and 4."""
    images = torch.rand(batch_size, *CANVAS, generator=generator)
    digits = torch.randint(0, 10, (batch_size, 3), generator=generator)
    start = torch.full((batch_size, 1), START)
    if post == 1:
        end = torch.full((batch_size, 1), END)
        return images, torch.cat([start, digits], 1), torch.cat([digits, end], 1)
    lengths = torch.randint(1, 4, (batch_size,), generator=generator)
    present = torch.arange(3)[None, :] < lengths[:, None]
    images = images * present.repeat_interleave(28, 1)[:, None, None, :]  # absent boxes blank
    targets = torch.full((batch_size, 4), PAD)
    targets[:, :3] = torch.where(present, digits, PAD)
    targets[torch.arange(batch_size), lengths] = END
    inputs = torch.cat([start, targets[:, :3]], 1)
    return images, inputs.masked_fill(inputs == END, PAD), targets
