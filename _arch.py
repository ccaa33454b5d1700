"""Architecture diagrams for every post: visualtorch in the blog's colours.

An encoder–decoder drawn as one visualtorch flow is a long strip of small boxes
that no column can hold, with the two stacks run together. So `diagram()` draws
each stack as its own visualtorch picture, at one common scale, one above the
other under its own title, with a single legend in plain words. The colours are
the palette of the chart style that comes before this code.
"""
import functools

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import visualtorch
from matplotlib.patches import FancyBboxPatch, Patch
from visualtorch.backend import extract_architecture
from visualtorch.utils.layer_utils import Input

# One colour and one name per kind of layer, so the same part looks the same in every
# post. Inputs are white with an ink outline (data, not computation), which shows on
# a light page and a dark one. Layer norm takes the ink, as a light grey would vanish.
LAYER_LOOKS = [
    (Input, "white", "input"),
    (nn.Embedding, PURPLE, "embedding"),
    (nn.Linear, BLUE, "linear"),
    ("Attention", ORANGE, "attention"),  # nn.MultiheadAttention or a post's own class
    (nn.LayerNorm, INK, "layer norm"),
    (nn.GELU, AQUA, "activation"),
    (nn.ReLU, AQUA, "activation"),
]
# Dropout is off when drawn (eval mode); its boxes would only lengthen the strip.
HIDDEN_LAYERS = [nn.Dropout]
# Sizes in visualtorch's pixels: boxes thick enough to see once the picture is
# scaled to a column, residual lines in a light grey so the boxes lead.
FLOW_OPTIONS = dict(scale_z=0.3, min_z=14, min_xy=24, spacing=16, padding=16,
                    level_gap=28, connector_fill="#aab2b9", connector_width=2)


def look_of(kind):
    """(fill, legend name) for a module class; attention is matched by class name."""
    for match, fill, name in LAYER_LOOKS:
        if kind is match or (isinstance(match, str) and kind.__name__.endswith(match)):
            return fill, name
    return "#9aa3ab", kind.__name__  # a mid grey that still shows on white


class _Silenced:
    """A child module run without nn.Module.__call__, so visualtorch does not see it."""

    def __init__(self, module):
        self.module = module

    def __call__(self, *args, **kwargs):
        return self.module.forward(*args, **kwargs)

    def __getattr__(self, name):  # weights and the like, which the parent reads
        return getattr(self.module, name)


class _Stack(nn.Module):
    """Hands visualtorch one stack (e.g. `model.encode`) as a module it can trace.

    Each attention module is drawn as one box: its own children (a post's query, key
    and value projections) are hidden for the trace and put back afterwards.
    """

    def __init__(self, forward, examples):
        super().__init__()
        owner = forward.func if isinstance(forward, functools.partial) else forward
        if not isinstance(owner, nn.Module):
            owner = getattr(owner, "__self__", None)
        if not isinstance(owner, nn.Module):
            raise TypeError("diagram() draws a module, a bound method of one "
                            "(model.encode) or a functools.partial of either; "
                            f"got {forward!r}")
        # a registered child, so visualtorch draws the layers inside, not this wrapper
        self.owner = owner.eval()
        self.run, self.examples = forward, examples

    def forward(self, *traced):
        # visualtorch traces integer inputs as zeros; adding the examples keeps its
        # bookkeeping and passes real token ids (so a padding mask means something)
        inputs = (t if e.is_floating_point() else t + e
                  for t, e in zip(traced, self.examples))
        return self.run(*inputs)

    def __enter__(self):
        self.hidden = []
        for module in self.owner.modules():
            if look_of(type(module))[1] == "attention":
                for name, child in list(module._modules.items()):
                    del module._modules[name]
                    object.__setattr__(module, name, _Silenced(child))
                    self.hidden.append((module, name, child))
        return self

    def __exit__(self, *_):
        for module, name, child in self.hidden:
            object.__delattr__(module, name)
            module._modules[name] = child


def draw_stack(forward, examples, **overrides):
    """The flow picture of what `forward(*examples)` runs, and the layer kinds drawn."""
    examples = examples if isinstance(examples, tuple) else (examples,)
    shapes = tuple(tuple(example.shape) for example in examples)
    dtypes = tuple(example.dtype for example in examples)
    with _Stack(forward, examples) as stack, torch.no_grad():
        columns = extract_architecture(stack, shapes, dtypes).columns
        kinds = list(dict.fromkeys(type(layer.module) for column in columns
                                   for layer in column))
        options = dict(
            input_dtype=dtypes,
            color_map={kind: {"fill": look_of(kind)[0], "outline": INK}
                       for kind in kinds},
            type_ignore=HIDDEN_LAYERS,
            # transparent, so the page shows through, light or dark
            background_fill=(255, 255, 255, 0),
            legend=False,
            **FLOW_OPTIONS,
        )
        options.update(overrides)
        picture = visualtorch.render(stack, shapes, style="flow", **options)
    return picture, [kind for kind in kinds if kind not in HIDDEN_LAYERS]


def diagram(stacks, width=7.0, **overrides):
    """Draw each stack of a model with visualtorch, titled, one above the other.

    `stacks` maps a title to `(forward, examples)`. `forward` runs that stack: a
    module, or a bound method of one such as `model.encode`, or a `functools.partial`
    of either that fixes an argument not worth drawing as an input (the source tokens
    a decoder reads only for its padding mask). `examples` is the tensor, or tuple of
    tensors, it takes, batch dimension first: visualtorch traces the call with inputs
    of their shapes and dtypes (integer inputs keep their values). For an
    encoder–decoder give two stacks, the decoder with a stand-in for the encoder's
    output as its memory:

        model = Reader()
        diagram({
            "Encoder: reads the image": (model.encode, torch.zeros(1, 1, 28, 84)),
            "Decoder: writes the tokens": (model.decode, (
                torch.zeros(1, 4, dtype=torch.long), torch.zeros(1, 48, width))),
        })

    Every picture shares one scale, so the same layer is the same size in each; any
    module whose class name ends in "Attention" is drawn as one box. `width` is the
    figure's width in inches; keyword overrides go to visualtorch.render(style="flow").
    Returns the matplotlib figure; the cell shows it with `plt.show()`.
    """
    if isinstance(stacks, nn.Module):
        raise TypeError("diagram() takes {title: (forward, examples)}, e.g. diagram("
                        "{'Encoder': (model.encode, images), 'Decoder': (model.decode, "
                        "(tokens, memory))}); see its docstring in _arch.py")
    drawn = {title: draw_stack(forward, examples, **overrides)
             for title, (forward, examples) in stacks.items()}
    inches_per_pixel = width / max(picture.width for picture, _ in drawn.values())
    title_space, legend_space = 0.35, 0.4
    height = legend_space + sum(picture.height * inches_per_pixel + title_space
                                for picture, _ in drawn.values())
    fig = plt.figure(figsize=(width, height))
    top = height
    for title, (picture, _) in drawn.items():
        wide, high = picture.width * inches_per_pixel, picture.height * inches_per_pixel
        top -= title_space + high
        ax = fig.add_axes((0, top / height, wide / width, high / height))
        ax.imshow(np.asarray(picture.convert("RGBA")), interpolation="antialiased")
        ax.set_title(title, loc="left", color=INK, fontsize=11)
        ax.axis("off")
    legend = {}
    for _, kinds in drawn.values():
        for kind in kinds:
            fill, name = look_of(kind)
            legend.setdefault(name, Patch(facecolor=fill, edgecolor=INK))
    order = [name for _, _, name in LAYER_LOOKS]
    names = sorted(legend, key=lambda name: order.index(name) if name in order else 99)
    fig.legend([legend[name] for name in names], names, loc="lower left",
               ncol=len(names), frameon=False, handlelength=1.2, borderaxespad=0)
    return fig


# ---- the encoder–decoder as a lesson draws it ------------------------------------
# Each kind of sub-layer keeps one colour in every post: attention orange, feed-forward
# aqua, embeddings purple, the output layer blue; add & norm is outlined only.
PART_COLOURS = {"attention": ORANGE, "feed-forward": AQUA, "embedding": PURPLE,
                "output": BLUE, "norm": None}
ENCODER_PARTS = [("self-attention", "attention"), ("add & norm", "norm"),
                 ("feed-forward", "feed-forward"), ("add & norm", "norm")]
DECODER_PARTS = [("masked self-attention", "attention"), ("add & norm", "norm"),
                 ("cross-attention", "attention"), ("add & norm", "norm"),
                 ("feed-forward", "feed-forward"), ("add & norm", "norm")]
# In the figure's data units. The whole figure is 4.9 in wide so that a phone shows it
# whole with its text at 8 pt or more (assets/layout.html widens a figure shrunk
# further, into a sideways scroll).
BOX_W, BOX_H, GAP = 3.6, 0.55, 0.3
# the two stacks' centres, and the memory's way between them
LEFT, RIGHT, MIDDLE = 1.9, 6.6, 4.25
SMALLEST_PT = 8
EMBEDDING_H = 0.8  # room for a label on two lines


def _box(ax, x, y, text, kind, highlighted, height=BOX_H):
    """One labelled sub-layer box centred on (x, y); a highlighted one is filled."""
    colour = PART_COLOURS[kind] or INK
    fill = colour if highlighted and PART_COLOURS[kind] else "none"
    ax.add_patch(FancyBboxPatch(
        (x - BOX_W / 2, y - height / 2), BOX_W, height,
        boxstyle="round,pad=0.02,rounding_size=0.12", facecolor=fill,
        alpha=0.9 if fill != "none" else 1, edgecolor=colour,
        linewidth=2.4 if highlighted else 1.3))
    label = ax.text(x, y, text, ha="center", va="center", fontsize=9,
                    color="white" if fill != "none" else INK,
                    fontweight="bold" if highlighted else "normal")
    # a long label is set smaller until it fits inside its box, measured as drawn,
    # never under SMALLEST_PT; one still too long goes on two lines, split at the
    # space nearest its middle
    (left, _), (right, _) = ax.transData.transform([(0, 0), (BOX_W - 0.25, 0)])
    inside = right - left
    renderer = ax.figure.canvas.get_renderer()
    while (label.get_window_extent(renderer).width > inside
           and label.get_fontsize() > SMALLEST_PT):
        label.set_fontsize(label.get_fontsize() - 0.5)
    if label.get_window_extent(renderer).width > inside and " " in text:
        spaces = [i for i, c in enumerate(text) if c == " "]
        cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
        label.set_text(text[:cut] + "\n" + text[cut + 1:])


def _arrow(ax, points, label=None, label_at=0.5, side="right"):
    """A line through `points` ending in an arrowhead, a shape written beside it."""
    xs, ys = zip(*points)
    ax.plot(xs[:-1], ys[:-1], color=AXIS, linewidth=1.3, solid_capstyle="butt")
    ax.annotate("", xy=points[-1], xytext=points[-2],
                arrowprops=dict(arrowstyle="-|>", color=AXIS, linewidth=1.3,
                                shrinkA=0, shrinkB=0))
    if label:
        (x0, y0), (x1, y1) = points[-2], points[-1]
        x, y = x0 + (x1 - x0) * label_at, y0 + (y1 - y0) * label_at
        ax.text(x + (0.12 if side == "right" else -0.12), y, label,
                fontsize=SMALLEST_PT,
                color=INK, ha="left" if side == "right" else "right",
                va="center", family="monospace")


def _stack(ax, x, bottom, parts, blocks, highlight, side):
    """A stack's sub-layers in a frame marked ×blocks on its `side` ("left" or
    "right"); returns (centres, top)."""
    centres = [bottom + GAP + BOX_H / 2 + i * (BOX_H + GAP)
               for i in range(len(parts))]
    top = centres[-1] + BOX_H / 2 + GAP
    ax.add_patch(FancyBboxPatch(
        (x - BOX_W / 2 - 0.25, bottom), BOX_W + 0.5, top - bottom,
        boxstyle="round,pad=0,rounding_size=0.2", facecolor="none",
        edgecolor=AXIS, linewidth=1.2, linestyle=(0, (4, 3))))
    edge = x - BOX_W / 2 - 0.4 if side == "left" else x + BOX_W / 2 + 0.4
    ax.text(edge, (bottom + top) / 2, f"×{blocks}", fontsize=10, color=INK,
            ha="right" if side == "left" else "left", va="center", fontweight="bold")
    for (name, kind), y in zip(parts, centres):
        _box(ax, x, y, name, kind, name in highlight)
    for below, above in zip(centres, centres[1:]):
        _arrow(ax, [(x, below + BOX_H / 2), (x, above - BOX_H / 2)])
    return centres, top


def encoder_decoder(*, source, source_embedding, target, target_embedding, memory,
                    target_vectors, scores, encoder_blocks, decoder_blocks,
                    highlight=()):
    """The encoder–decoder as labelled boxes, with the tensor shapes between them.

    Each argument is what the post's own model has: `source` and `target` are what
    enters each stack with its shape ("canvas B×1×28×84", "tokens so far B×T"),
    `source_embedding` and `target_embedding` say how they become vectors, `memory`
    is the shape of the encoder's vectors (in and out: "B×48×96"), `target_vectors`
    the decoder's ("B×T×96"), `scores` the output layer's ("B×T×13"), and the
    block counts are the two stacks' depths. The memory arrow runs from the
    encoder's top into every decoder block's cross-attention. `highlight` names the
    boxes the post is about ("cross-attention", "masked self-attention", "output",
    "embedding"): they are filled.
    Returns the figure.
    """
    highlight = set(highlight)
    fig, ax = plt.subplots(figsize=(4.9, 5.3))
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1)
    ax.set_xlim(-1.2, 9.1)
    ax.set_ylim(-0.2, 10.9)
    ax.axis("off")
    left, right = LEFT, RIGHT
    for x, title in ((left, "Encoder"), (right, "Decoder")):
        ax.text(x, 10.4, title, ha="center", fontsize=11, color=INK,
                fontweight="bold")
    for x, given, embedding in ((left, source, source_embedding),
                                (right, target, target_embedding)):
        ax.text(x, 0.15, given, ha="center", fontsize=SMALLEST_PT, color=INK,
                family="monospace")
        _box(ax, x, 1.2, embedding, "embedding", "embedding" in highlight,
             height=EMBEDDING_H)
        _arrow(ax, [(x, 0.45), (x, 1.2 - EMBEDDING_H / 2)])
    bottom = 2.4  # of the two stacks' frames
    _, encoder_top = _stack(ax, left, bottom, ENCODER_PARTS, encoder_blocks,
                            highlight, "left")
    centres, decoder_top = _stack(ax, right, bottom, DECODER_PARTS, decoder_blocks,
                                  highlight, "right")
    for x, shape in ((left, memory), (right, target_vectors)):
        _arrow(ax, [(x, 1.2 + EMBEDDING_H / 2), (x, bottom + GAP)], shape,
               label_at=0.4)
    # the memory: out of the encoder's top, across, into cross-attention's side
    cross = centres[2]
    turn = encoder_top + 0.9
    _arrow(ax, [(left, encoder_top), (left, turn), (MIDDLE, turn), (MIDDLE, cross),
                (right - BOX_W / 2, cross)])
    ax.text(left, turn + 0.3, f"memory  {memory}", ha="center",
            fontsize=SMALLEST_PT,
            color=INK, family="monospace")
    output = decoder_top + 0.75
    _arrow(ax, [(right, decoder_top), (right, output - BOX_H / 2)])
    _box(ax, right, output, "linear: a score per token", "output",
         "output" in highlight)
    _arrow(ax, [(right, output + BOX_H / 2), (right, output + 0.9)])
    ax.text(right, output + 1.05, f"scores  {scores}", ha="center",
            fontsize=SMALLEST_PT,
            color=INK, family="monospace")
    return fig
