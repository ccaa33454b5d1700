"""The training augmentation: seeded, shape-preserving, each distortion doing what it says."""
from dataclasses import replace

import pytest
import torch

from tools.augment import Augmentation, augment

NOTHING = Augmentation(clean_share=0.0, scale=(1.0, 1.0), aspect=0.0, rotation_degrees=0.0, shear=0.0, shift=0.0,
                       edge_crossing_share=0.0, elastic=0.0, thicken=0.0, thin=0.0)


@pytest.fixture(scope="module")
def canvases():
    """Sixteen canvases: a 3-pixel-wide bar in box 1, a ring in box 2 on even rows, box 3 empty."""
    images = torch.zeros(16, 1, 28, 84)
    images[:, 0, 6:22, 12:15] = 1.0
    ys, xs = torch.meshgrid(torch.arange(28.0), torch.arange(28.0), indexing="ij")
    ring = (((ys - 13.5) ** 2 + (xs - 13.5) ** 2).sqrt() - 7).abs() < 1.5
    images[::2, 0, :, 28:56] = ring.float()
    return images


def seeded(images, seed, setting=Augmentation()):
    return augment(images, torch.Generator().manual_seed(seed), setting)


def test_same_seed_same_canvases_and_shapes_kept(canvases):
    first, again, other = seeded(canvases, 1), seeded(canvases, 1), seeded(canvases, 2)
    assert torch.equal(first, again) and not torch.equal(first, other)
    assert first.shape == canvases.shape and first.dtype == canvases.dtype
    assert first.min() >= 0 and first.max() <= 1


def test_clean_share_leaves_canvases_as_they_are(canvases):
    assert torch.equal(seeded(canvases, 3, replace(Augmentation(), clean_share=1.0)), canvases)


def test_no_distortion_is_the_identity(canvases):
    assert torch.allclose(seeded(canvases, 4, NOTHING), canvases, atol=1e-5)


def test_thickening_adds_ink_and_thinning_removes_it(canvases):
    thicker = seeded(canvases, 5, replace(NOTHING, thicken=1.0))
    thinner = seeded(canvases, 5, replace(NOTHING, thin=1.0))
    bar = (slice(None), 0, slice(None), slice(0, 28))
    assert (thicker[bar].sum(dim=(1, 2)) >= canvases[bar].sum(dim=(1, 2)) - 1e-4).all()
    assert thicker[bar].sum() > 1.3 * canvases[bar].sum()
    assert thinner[bar].sum() < 0.9 * canvases[bar].sum()


def test_geometry_moves_ink_and_keeps_it_near_its_box(canvases):
    moved = seeded(canvases, 6, replace(Augmentation(), clean_share=0.0, edge_crossing_share=0.0))
    assert not torch.allclose(moved, canvases, atol=0.1)
    assert moved[:, :, :, 56:].sum() < 0.01 * moved[:, :, :, 28:56].sum(), "ink strayed far into an empty box"
    assert moved[1::2, :, :, 28:].sum() < 0.01 * moved[1::2].sum()


def test_edge_crossing_puts_ink_over_a_box_edge():
    near_edge = torch.zeros(8, 1, 28, 84)
    near_edge[:, 0, 6:22, 23:26] = 1.0  # a bar 2 pixels from box 1's right edge
    crossed = seeded(near_edge, 7, replace(NOTHING, edge_crossing_share=1.0, edge_crossing=(6.0, 6.0)))
    in_box_2 = crossed[:, :, :, 28:56].sum(dim=(1, 2, 3)) > 1
    moved_left = crossed[:, :, :, 17:20].sum(dim=(1, 2, 3)) > 1
    assert in_box_2.any() and moved_left.any()
    assert (in_box_2 ^ moved_left).all(), "each bar moves 6 pixels, left or right"


def test_flagging_adds_a_stroke_to_ones_only(canvases):
    from tools.augment import flag_ones
    tiles = canvases[:4].reshape(4, 1, 28, 3, 28).permute(0, 3, 1, 2, 4).reshape(12, 1, 28, 28)
    is_one = torch.zeros(12, dtype=torch.bool)
    is_one[0] = is_one[3] = True  # the bars in box 1 of canvases 0 and 1
    flagged = flag_ones(tiles, is_one, torch.Generator().manual_seed(8), replace(Augmentation(), flag_ones=1.0))
    added = flagged - tiles
    assert added.min() >= 0
    assert torch.equal(flagged[~is_one], tiles[~is_one]), "only tiles labelled 1 change"
    for i in (0, 3):
        rows, columns = torch.nonzero(added[i, 0] > 0.5, as_tuple=True)
        flag = rows < 14
        assert flag.any() and columns[flag].float().mean() < 12, "the flag runs left of the bar (columns 12-14)"
        assert rows[flag].min() <= 7, "from the bar's top (row 6)"
