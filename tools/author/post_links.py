"""Write each post's links (Colab, source on GitHub, notebook download) into its front matter.

Every post links to its own notebook in Colab and on GitHub. Those URLs hold the
repository's address and the post's folder, and Quarto cannot compute them: a
shared `posts/_metadata.yml` entry would give every post the same URL. So the
address is kept in one place, `website.repo-url` in `_quarto.yml`, and this tool
writes the links into each post's front matter (`code-links`, `other-links`, and
`index.ipynb` in `resources`, which the download link needs). `--check` reports
posts whose links are missing or out of date; `make check` runs it.

A shared post shows a picture the post itself made: one stored figure (the label in
the notebook metadata `blog.thumbnail`, else the first figure) is copied to
`thumbnail.png` beside the notebook, and the front matter gets `image` and
`image-alt` (the figure's fig-alt). Quarto uses them for the Open Graph and Twitter
cards and for the listing's thumbnails. A whole figure shrunk to a listing's
thumbnail is rarely readable, so `blog.thumbnail` may also name a part of it:
`{"figure": "fig-misreads", "crop": [left, top, right, bottom], "alt": "…"}`, the
box as fractions of the figure's width and height, and the alt text of that part
(the figure's own describes all of it); the thumbnail is then that part (byte for
byte what Pillow writes, the same on every run).

The listing shows each thumbnail whole in a small box (LISTING_BOX), so a large one is
shrunk until its text is too small to read. `thumbnail_problem` says so from the PNG's
own size, with the `blog.thumbnail` crop that fits, and `duplicate_thumbnail` names a
post that shows the same picture; `make check` runs both (the rule is the one
tests/test_rendered_site.py measures in Chromium).

It also writes each post's place in the series (tools/author/series.py): its part number and
the links to the previous and next post, from the order in posts/_series.yml.
"""
import argparse
import base64
import io
import json
import math
import re
import struct
import sys
from pathlib import Path

import yaml

from tools.core.notebooks import (
    FRONT_MATTER, POSTS_DIR, REPO_ROOT, NotebookError, blog_metadata, cell_options, front_matter, site_config,
    sync_posts,
)
from tools.author.series import series_drift, write_series

THUMBNAIL = "thumbnail.png"
# The home page's listing (index.qmd) shows each thumbnail whole (object-fit: contain, assets/theme.scss) in a
# box LISTING_BOX CSS px wide and tall: its height is index.qmd's `image-height`; its width, 30 % of the
# listing's row at the 1280 px desktop tests/test_rendered_site.py uses (259 px in Quarto 1.7's grid), less a
# margin. Figures are drawn at FIGURE_DPI (_style.py) with text of SMALLEST_TEXT_PT or more; shown at `scale`
# of its size (the smaller of box / picture, across and down), that text is SMALLEST_TEXT_PT * FIGURE_DPI / 72
# * scale CSS px, and under SMALLEST_TEXT_PX nobody reads it.
LISTING_BOX = (250, 120)
FIGURE_DPI, SMALLEST_TEXT_PT, SMALLEST_TEXT_PX = 110, 8, 8
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def website_setting(name, root=REPO_ROOT):
    """One of _quarto.yml's `website` settings, the one place the site's addresses are written."""
    return (site_config(root).get("website") or {}).get(name) or ""


def repository_url(root=REPO_ROOT):
    url = website_setting("repo-url", root)
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url):
        raise NotebookError(f"_quarto.yml website.repo-url must be https://github.com/<owner>/<repo>, not {url!r}")
    return url


def expected_links(folder, repo_url):
    """The front matter entries a post in `posts/<folder>/` should carry."""
    owner_repo = repo_url.removeprefix("https://github.com/")
    notebook = f"blob/main/posts/{folder}/index.ipynb"
    return {
        "code-links": [
            {"text": "Open in Colab", "icon": "play-circle",
             "href": f"https://colab.research.google.com/github/{owner_repo}/{notebook}"},
            {"text": "Notebook on GitHub", "icon": "github", "href": f"{repo_url}/{notebook}"},
        ],
        "other-links": [{"text": "Download the notebook", "icon": "file-code", "href": "index.ipynb"}],
    }


def stored_figures(nb):
    """[(label, png bytes, alt text)] for each figure cell (`#| label: fig-…`) that holds a stored PNG."""
    figures = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        options = cell_options(cell)
        label = str(options.get("label", ""))
        pngs = [output.data["image/png"] for output in cell.get("outputs", [])
                if "image/png" in output.get("data", {})]
        if label.startswith("fig-") and pngs:
            png = pngs[0] if isinstance(pngs[0], str) else "".join(pngs[0])
            figures.append((label, base64.b64decode(png), str(options.get("fig-alt", "")).strip()))
    return figures


def figure_labels(nb):
    """The label of every figure cell (`#| label: fig-…`), whether it holds an image or not."""
    labels = (str(cell_options(cell).get("label", "")) for cell in nb.cells if cell.cell_type == "code")
    return [label for label in labels if label.startswith("fig-")]


def thumbnail_choice(nb):
    """(label or None, crop box or None, alt or None) from metadata blog.thumbnail: a label, or
    {"figure", "crop", "alt"}."""
    chosen = blog_metadata(nb).get("thumbnail")
    if chosen is None or isinstance(chosen, str):
        return chosen or None, None, None
    if (not isinstance(chosen, dict) or not isinstance(chosen.get("figure"), str)
            or set(chosen) - {"figure", "crop", "alt"} or not isinstance(chosen.get("alt", ""), str)):
        raise NotebookError(f'metadata blog.thumbnail must be a figure label or {{"figure": label, "crop": '
                            f'[left, top, right, bottom], "alt": text}}, not {chosen!r}')
    crop = chosen.get("crop")
    if crop is not None:
        if not (isinstance(crop, list) and len(crop) == 4 and all(type(x) in (int, float) for x in crop)
                and 0 <= crop[0] < crop[2] <= 1 and 0 <= crop[1] < crop[3] <= 1):
            raise NotebookError(f"metadata blog.thumbnail crop must be [left, top, right, bottom], fractions "
                                f"from 0 to 1 with left < right and top < bottom, not {crop!r}")
    if crop is not None and not str(chosen.get("alt", "")).strip():
        raise NotebookError('metadata blog.thumbnail crops its figure, so it needs its own "alt": the '
                            "figure's alt text describes the whole figure, not the part shown")
    return chosen["figure"], crop, chosen.get("alt")


def cropped_png(png, crop):
    """The part of a PNG inside `crop` (fractions of its size), as PNG bytes."""
    from PIL import Image
    picture = Image.open(io.BytesIO(png))
    left, top, right, bottom = crop
    box = (round(left * picture.width), round(top * picture.height),
           round(right * picture.width), round(bottom * picture.height))
    out = io.BytesIO()
    picture.crop(box).save(out, format="PNG", optimize=True)
    return out.getvalue()


def thumbnail_figure(nb):
    """(label, png bytes, alt text) of the figure that stands for the post, or None when it has none yet."""
    figures = stored_figures(nb)
    chosen, crop, crop_alt = thumbnail_choice(nb)
    if chosen:
        match = [figure for figure in figures if figure[0] == chosen]
        if not match and chosen in figure_labels(nb):
            return None  # its cell has not run yet (a new post): no thumbnail until it has
        if not match:
            raise NotebookError(f"metadata blog.thumbnail names {chosen!r}, but no figure cell with that label "
                                f"holds a stored image (figures with images: {[f[0] for f in figures]})")
        label, png, alt = match[0]
        return (label, cropped_png(png, crop), crop_alt.strip()) if crop else match[0]
    return figures[0] if figures else None


def png_size(png):
    """(width, height) in pixels from a PNG's header (no image library needed), or None for bytes that are no PNG."""
    if len(png) >= 24 and png[:8] == PNG_SIGNATURE and png[12:16] == b"IHDR":
        return struct.unpack(">II", png[16:24])
    return None


def largest_legible_thumbnail():
    """(width, height) in pixels of the largest thumbnail whose smallest text the listing shows at
    SMALLEST_TEXT_PX or more: (381, 183)."""
    most = SMALLEST_TEXT_PT * FIGURE_DPI / 72 / SMALLEST_TEXT_PX  # picture pixels per box pixel at the limit
    return tuple(math.floor(side * most + 1e-9) for side in LISTING_BOX)


def shown_text_px(size):
    """How tall, in CSS px, the listing draws a SMALLEST_TEXT_PT text of a picture `size` pixels large."""
    scale = min(box / side for box, side in zip(LISTING_BOX, size))
    return SMALLEST_TEXT_PT * FIGURE_DPI / 72 * scale


def fitting_crop(crop, figure_size, most):
    """`crop` (fractions of the figure; None: all of it) narrowed from its right and bottom edges until the
    part it cuts is at most `most` pixels across and down."""
    crop = list(crop or [0, 0, 1, 1])
    for start, end, side, limit in ((0, 2, figure_size[0], most[0]), (1, 3, figure_size[1], most[1])):
        if (crop[end] - crop[start]) * side > limit - 1:
            crop[end] = round(crop[start] + math.floor((limit - 1) / side * 1000) / 1000, 3)
    return [int(x) if float(x).is_integer() else x for x in crop]


def thumbnail_problem(nb):
    """Why the post's thumbnail (thumbnail.png) would be too small to read in the listing, naming the setting
    that fixes it (metadata blog.thumbnail, with a crop that fits); None when it reads, or there is no figure yet.

    Bytes that are no PNG are left alone: no run stores them, and the seal names outputs edited by hand."""
    figure = thumbnail_figure(nb)
    size = png_size(figure[1]) if figure else None
    most = largest_legible_thumbnail()
    if size is None or (size[0] <= most[0] and size[1] <= most[1]):
        return None
    label, crop, alt = thumbnail_choice(nb)
    whole = next((png_size(png) for name, png, _ in stored_figures(nb) if name == figure[0]), None) or size
    setting = {"figure": figure[0], "crop": fitting_crop(crop, whole, most),
               "alt": alt or "what that part shows, for someone who cannot see it"}
    what = f"a part of {figure[0]}" if crop else f"all of {figure[0]}" + ("" if label else ", the first figure")
    return (f"{what}, {size[0]}\u00d7{size[1]} px: the home page's listing shrinks it into a "
            f"{LISTING_BOX[0]}\u00d7{LISTING_BOX[1]} px box, where its {SMALLEST_TEXT_PT} pt text reads at "
            f"{shown_text_px(size):.1f} px (under {SMALLEST_TEXT_PX}); a thumbnail must be at most "
            f"{most[0]}\u00d7{most[1]} px. Show a part of the figure: set notebook metadata blog.thumbnail to "
            f"{json.dumps(setting, ensure_ascii=False)} (crop: left, top, right, bottom, fractions of the "
            "figure; move it onto the part worth showing), then `make inline`")


def duplicate_thumbnail(nb, post_dir):
    """What says which other post's thumbnail.png is the same picture as this post's, or None (the listing
    would show two posts alike)."""
    figure = thumbnail_figure(nb)
    if not figure or png_size(figure[1]) is None:
        return None
    post_dir = post_folder(post_dir)
    same = sorted(other.parent.name for other in post_dir.parent.glob(f"*/{THUMBNAIL}")
                  if other.parent.name != post_dir.name and other.read_bytes() == figure[1])
    if not same:
        return None
    return (f"the same picture as {same[0]}'s {THUMBNAIL}, so the home page's listing would show two posts "
            "alike; choose another figure, or another part of one, in notebook metadata blog.thumbnail, then "
            "`make inline`")


def card_alt(alt):
    """The figure's alt text for the listing and the cards. Quarto's listing escapes markup characters
    twice (a screen reader says "set&#039;s", "&lt;end>"), so straight apostrophes become typographic
    ones, a token such as `<end>` loses its brackets, and any other <, > or & is said in words."""
    alt = re.sub(r"<([\w-]+)>", r"\1", alt.replace("'", "\u2019"))
    return alt.replace("&", "and").replace("<", "less than").replace(">", "greater than")


def expected_front_matter(nb, folder, repo_url):
    """Everything this tool writes into the front matter: the links, and the image when the post has a figure."""
    expected = expected_links(folder, repo_url)
    figure = thumbnail_figure(nb)
    if figure:
        expected["image"] = THUMBNAIL
        expected["image-alt"] = card_alt(figure[2])
    return expected


def expected_resources(nb):
    return ["index.ipynb"] + ([THUMBNAIL] if thumbnail_figure(nb) else [])


def post_folder(folder):
    """The post's directory: `folder` itself when it is a path, else posts/<folder> in this repository."""
    return Path(folder) if isinstance(folder, Path) else POSTS_DIR / folder


def links_drift(nb, folder, repo_url):
    """What is wrong with the post's links and thumbnail, or None when they are right.

    `folder` is the post's directory, or its name under posts/; the thumbnail file is compared
    byte for byte with the chosen figure whenever that directory exists."""
    matter = front_matter(nb)
    if matter is None:
        return "no front matter to hold the links"
    post_dir = post_folder(folder)
    expected = expected_front_matter(nb, post_dir.name, repo_url)
    wrong = [key for key, value in expected.items() if matter.get(key) != value]
    wrong += [key for key in ("image", "image-alt") if key not in expected and matter.get(key) == THUMBNAIL]
    missing = [name for name in expected_resources(nb) if name not in (matter.get("resources") or [])]
    if missing:
        wrong.append(f"resources ({', '.join(missing)})")
    figure = thumbnail_figure(nb)
    if figure and post_dir.is_dir():
        thumbnail = post_dir / THUMBNAIL
        if not thumbnail.exists() or thumbnail.read_bytes() != figure[1]:
            wrong.append(f"{THUMBNAIL} (not the stored image of {figure[0]})")
    drifts = [f"links out of date: {', '.join(wrong)}" if wrong else None, series_drift(nb, post_dir)]
    return "; ".join(drift for drift in drifts if drift) or None


def write_links(nb, folder, repo_url):
    """Rewrite the front matter with the expected links, keeping every other key and the prose below it."""
    matter = front_matter(nb)
    if matter is None:
        raise NotebookError("no front matter to hold the links: the first cell must be markdown with a --- block")
    matter.update(expected_front_matter(nb, Path(folder).name, repo_url))
    write_series(nb, post_folder(folder), matter)
    resources = list(matter.get("resources") or [])
    matter["resources"] = [name for name in expected_resources(nb) if name not in resources] + resources
    block = yaml.safe_dump(matter, sort_keys=False, allow_unicode=True, width=100).strip()
    first = nb.cells[0]
    first.source = FRONT_MATTER.sub(lambda _: f"---\n{block}\n---\n", first.source, count=1).rstrip("\n")


def write_thumbnail(nb, post_dir):
    """Copy the chosen figure's stored PNG to thumbnail.png in `post_dir`; returns its label, or None."""
    figure = thumbnail_figure(nb)
    if figure:
        (Path(post_dir) / THUMBNAIL).write_bytes(figure[1])
    return figure[0] if figure else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report posts whose links are out of date; write nothing")
    args = parser.parse_args(argv)
    try:
        repo_url = repository_url()
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 2

    def drift_of(nb, path):
        drift = links_drift(nb, path.parent, repo_url)
        return f"cell 1 (front matter): {drift}" if drift else None

    def bring_in_line(nb, path):
        write_links(nb, path.parent.name, repo_url)
        figure = thumbnail_figure(nb)  # written with the notebook, all or nothing
        return ("links written" + (f"; {THUMBNAIL} from {figure[0]}" if figure else ""),
                [(path.parent / THUMBNAIL, figure[1])] if figure else [])

    return sync_posts(drift_of, bring_in_line, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
