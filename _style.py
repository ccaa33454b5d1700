"""Chart style for every post: one palette, quiet axes, one figure size rule.

Figures are drawn on a transparent background, so the same picture reads on the
site's light page and on its dark one: the ink is a mid grey with about 4:1
contrast on both, and the grid a translucent grey.
"""
import matplotlib.pyplot as plt

# Colour-blind-safe series colours, in the order a chart should use them.
BLUE, ORANGE, AQUA, PURPLE = "#2a78d6", "#eb6834", "#1baf7a", "#8a63d2"
PALETTE = (BLUE, ORANGE, AQUA, PURPLE)
# Ink for what only supports the data: labels, ticks, grid, the axis line. Each has to
# show on white and on the dark theme's #222 alike.
INK, GRID, AXIS = "#78818a", "#8a939c40", "#9aa1a8"

plt.rcParams.update({
    "axes.prop_cycle": plt.cycler(color=PALETTE),
    "axes.edgecolor": AXIS,
    "axes.labelcolor": INK,
    "axes.titlecolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "text.color": INK,
    "font.size": 10,
    "figure.dpi": 110,
    "savefig.bbox": "tight",
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.transparent": True,
    "legend.labelcolor": INK,
})


def style_axes(ax, xlabel=None, ylabel=None, grid=True):
    """Strip an axes down to the ink that carries information.

    Top and right spines go, ticks become short and muted, and an optional
    horizontal grid sits behind the data.
    """
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(AXIS)
    ax.tick_params(length=3, color=AXIS, labelcolor=INK)
    if xlabel is not None:
        ax.set_xlabel(xlabel, color=INK)
    if ylabel is not None:
        ax.set_ylabel(ylabel, color=INK)
    if grid:
        ax.grid(axis="y", color=GRID, linewidth=0.8)
        ax.set_axisbelow(True)
    return ax


def figure(width=6.0, height=3.5, **subplots):
    """A figure and its axes at a size that reads well in a post column (inches)."""
    return plt.subplots(figsize=(width, height), **subplots)
