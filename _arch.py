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
from matplotlib.patches import Patch
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
