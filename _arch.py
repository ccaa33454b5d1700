"""Architecture diagrams for every post: visualtorch in the blog's colours.

The single source for `diagram()`. It is inlined after `_style.py` (whose palette
it uses) into the generated setup cell of each notebook that declares it; edit it
here, then run `make inline`.
"""
import torch.nn as nn
import visualtorch

# One colour per kind of layer, so the same part looks the same in every post.
LAYER_COLOURS = {
    nn.Linear: BLUE,
    nn.MultiheadAttention: ORANGE,
    nn.Embedding: PURPLE,
    nn.LayerNorm: AXIS,
    nn.GELU: AQUA,
    nn.ReLU: AQUA,
    nn.Flatten: GRID,
}
# Our models build Dropout at p=0; drawing it would only add empty boxes.
HIDDEN_LAYERS = [nn.Dropout]


def diagram(model, input_shape, style="graph", **overrides):
    """Draw `model` with visualtorch and return the PIL image.

    `input_shape` includes the batch dimension; for a model with several inputs
    pass one shape per input, e.g. ((1, 1, 28, 84), (1, 4)), and give their dtypes
    with `input_dtype=(torch.float32, torch.long)`. Any visualtorch option can be
    overridden by keyword.
    """
    if style not in ("graph", "flow"):
        raise ValueError(f"diagram style must be 'graph' or 'flow', not {style!r}")
    options = dict(
        color_map={layer: {"fill": colour, "outline": INK} for layer, colour in LAYER_COLOURS.items()},
        type_ignore=HIDDEN_LAYERS,
        background_fill="white",
        font_color=INK,
        legend=True,
    )
    options.update(overrides)
    model.eval()
    return visualtorch.render(model, input_shape, style=style, **options)
