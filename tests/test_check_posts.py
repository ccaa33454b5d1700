"""Each publishing check refuses the failure it exists for, and accepts the fixed version."""
import nbformat
import pytest

from tests.factory import FRONT_MATTER, error, image, md, never_ran, publishable, ran, recorded, reseal, save_post, stream
from tools.check.check_posts import check_notebook, main
from tools.core.notebooks import INJECTED_TAG, REPO_ROOT, blog_metadata

FIGURE = '#| label: fig-loss\n#| fig-cap: "Loss falls."\n#| fig-alt: "A falling line."\nplot()'


def problems_of(nb, tmp_path):
    return [str(problem) for problem in check_notebook(save_post(nb, tmp_path / "posts"))]


def assert_refused(nb, tmp_path, *fragments):
    problems = problems_of(nb, tmp_path)
    assert len(problems) == 1, problems
    assert "posts/2026-01-01-example" in problems[0]
    for fragment in fragments:
        assert fragment in problems[0], problems[0]


def test_publishable_notebook_passes(tmp_path):
    nb = publishable(ran("result('accuracy', accuracy, '{:.1%}')", recorded("accuracy", "87.3%", 87.3)),
                     md("The reader's accuracy is 87.3 %<!--=accuracy-->."), ran(FIGURE, image()),
                     helpers=["_style.py"])
    assert problems_of(nb, tmp_path) == []


def test_cell_that_never_ran_is_refused(tmp_path):
    assert_refused(publishable(ran("x = 1"), never_ran("print(x)")), tmp_path, "cell 3 (code)", "never ran")


def test_error_output_is_refused(tmp_path):
    assert_refused(publishable(ran("1/0", error("ZeroDivisionError", "division by zero"))), tmp_path,
                   "cell 2", "ZeroDivisionError")


def test_stale_cell_is_refused(tmp_path):
    nb = publishable(ran("print(1)", stream("1\n")))
    nb.cells[1].source = "print(2)"
    assert_refused(nb, tmp_path, "cell 2", "stale")


def test_notebook_without_seal_is_refused(tmp_path):
    nb = publishable(ran("print(1)", stream("1\n")))
    del blog_metadata(nb)["seal"]
    assert_refused(nb, tmp_path, "notebook", "no seal", "make execute")


def test_drifted_setup_cell_is_refused(tmp_path):
    nb = publishable(helpers=["_style.py"])
    nb.cells[1].source = nb.cells[1].source.replace("#2a78d6", "#000000")
    problems = problems_of(nb, tmp_path)
    assert any("setup cell differs from the current _style.py" in problem for problem in problems), problems


@pytest.mark.parametrize("source", [
    "import _style", "from _arch import diagram", "from tools.core.notebooks import read_notebook",
    "from . import helpers", "import sys\nsys.path.append('..')", "import sys\nsys.path.insert(0, '..')",
    "import sys\nsys.path += ['..']", "%run ../other.py",
    # aliases, importlib and IPython syntax must not hide them
    "import sys as s\ns.path.append('..')", "from sys import path\npath.insert(0, '..')",
    "import sys\np = sys.path\np.append('..')", "import importlib\nimportlib.import_module('_style')",
    "from importlib import import_module as load\nload('_arch')", "__import__('_style')",
    "x = !ls\nimport _style", "%run -i ../sibling.py", "%load _style.py", "%matplotlib inline\nimport sys\nsys.path[0:0] = ['..']",
    "import site\nsite.addsitedir('..')", "import importlib\nname = '_st' + 'yle'\nimportlib.import_module(name)",
    # a sibling run by its file name, or sys.path reached through getattr
    "exec(open('../../_style.py').read())", "import runpy\nrunpy.run_path('_arch.py')", "import runpy as r\nr.run_module('_style')",
    "!python _style.py", "import sys\ngetattr(sys, 'path').append('..')",
])
def test_sibling_import_or_sys_path_edit_is_refused(tmp_path, source):
    problems = problems_of(publishable(ran(source)), tmp_path)
    assert problems and all("cell 2" in problem for problem in problems), problems


def test_cell_that_does_not_parse_even_for_ipython_is_refused(tmp_path):
    assert_refused(publishable(ran("def f(:\n    pass")), tmp_path, "cell 2", "does not parse as Python", "line 1")


def test_ipython_syntax_that_is_harmless_is_accepted(tmp_path):
    assert problems_of(publishable(ran("%matplotlib inline\nfiles = !ls\nprint(len(files))")), tmp_path) == []


def test_library_imports_are_accepted(tmp_path):
    assert problems_of(publishable(ran("import numpy as np\nimport torch.nn as nn\nimport sys\nprint(sys.version)")),
                       tmp_path) == []


def test_a_file_name_in_text_is_not_a_sibling_import(tmp_path):
    assert problems_of(publishable(ran('"""Copied from _style.py by make inline."""\nprint("see _style.py")')), tmp_path) == []


def test_empty_code_cell_with_outputs_is_refused(tmp_path):
    """The seal leaves empty cells out (they run nothing), so their outputs could only be written by hand."""
    nb = publishable(ran("print('accuracy 85.1 %')", stream("accuracy 85.1 %\n")),
                     ran("", stream("held-out accuracy 99.9 %\n")), md("The held-out accuracy is 99.9 %."))
    problems = problems_of(nb, tmp_path)
    assert any("cell 3 (code): an empty code cell shows outputs" in problem for problem in problems), problems


@pytest.mark.parametrize("missing", ["title", "description", "date", "categories"])
def test_front_matter_field_missing_is_refused(tmp_path, missing):
    front = "\n".join(line for line in FRONT_MATTER.splitlines() if not line.startswith(f"{missing}:"))
    assert_refused(publishable(front=front), tmp_path, "front matter", f"missing {missing}")


def test_notebook_without_front_matter_is_refused(tmp_path):
    assert_refused(publishable(front="# Just a heading"), tmp_path, "no front matter")


@pytest.mark.parametrize("option", ["fig-alt", "fig-cap"])
def test_figure_without_caption_or_alt_text_is_refused(tmp_path, option):
    source = "\n".join(line for line in FIGURE.splitlines() if option not in line)
    assert_refused(publishable(ran(source, image())), tmp_path, "cell 2", f"figure without {option}")


def test_unlabelled_image_output_is_refused(tmp_path):
    assert_refused(publishable(ran("plot()", image())), tmp_path, "label: fig-")


def test_figure_cell_without_image_is_refused(tmp_path):
    assert_refused(publishable(ran(FIGURE, stream("no plot\n"))), tmp_path, "shows no image")


def test_markdown_image_without_alt_text_is_refused(tmp_path):
    assert_refused(publishable(md("![](diagram.png)")), tmp_path, "cell 2 (markdown)", "alt text")


PINNED = "f705fed08827ff6c36e3b5329495c943a5e544e8"


@pytest.mark.parametrize("source", [
    f'hf_hub_download("org/data", "a.npz", repo_type="dataset", revision="{PINNED}")',
    f'REVISION = "{PINNED}"\nhf_hub_download("org/data", "a.npz", revision=REVISION)',
])
def test_pinned_download_is_accepted(tmp_path, source):
    assert problems_of(publishable(ran(source)), tmp_path) == []


@pytest.mark.parametrize("source, reason", [
    ('hf_hub_download("org/data", "a.npz")', "has no revision"),
    ('hf_hub_download("org/data", "a.npz", revision="main")', "'main' is not a full 40-hex commit"),
    ('hf_hub_download("org/data", "a.npz", revision="f705fed")', "not a full 40-hex commit"),
    ('REVISION = "v1.0"\nhf_hub_download("org/data", "a.npz", revision=REVISION)', "'v1.0' is not"),
    ('url = "https://huggingface.co/datasets/org/data/resolve/main/a.npz"', "not pinned"),
])
def test_unpinned_download_is_refused(tmp_path, source, reason):
    assert_refused(publishable(ran(source)), tmp_path, "cell 2", reason)


def test_smoke_run_stored_as_post_is_refused(tmp_path):
    nb = publishable(ran("epochs = 8", tags=["parameters"]))
    blog_metadata(nb)["provenance"]["parameters_overridden"] = {"epochs": 1}
    assert_refused(reseal(nb), tmp_path, "notebook", "smoke run", "'epochs': 1")


def test_injected_parameters_cell_is_refused(tmp_path):
    nb = publishable(ran("epochs = 8", tags=["parameters"]), ran("epochs = 1", tags=[INJECTED_TAG]))
    assert_refused(nb, tmp_path, "cell 3", "injected parameters")


def test_notebook_without_provenance_is_refused(tmp_path):
    assert_refused(publishable(provenance=None), tmp_path, "no provenance")


def test_command_exits_nonzero_and_names_each_problem(tmp_path, capsys):
    good = save_post(publishable(), tmp_path / "posts", "2026-01-01-good")
    bad = save_post(publishable(never_ran("print(1)")), tmp_path / "posts", "2026-01-02-bad")
    assert main([str(good)]) == 0
    assert main([str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "2026-01-02-bad: cell 2 (code): has no outputs" in out and "1 problem(s)" in out


def test_post_without_generated_links_is_refused(tmp_path):
    path = save_post(publishable(), tmp_path / "posts", links=False)
    problems = [str(problem) for problem in check_notebook(path)]
    assert len(problems) == 1 and "links out of date: code-links, other-links, resources" in problems[0], problems


def test_placeholder_left_by_make_new_is_refused(tmp_path):
    assert_refused(publishable(md("TODO: the opening paragraph.")), tmp_path, "cell 2 (markdown)", "placeholder TODO")
    caption = FIGURE.replace('"Loss falls."', '"TODO: what to see."')
    assert_refused(publishable(ran(caption, image())), tmp_path, "cell 2 (code)", "placeholder TODO left in fig-cap")


def test_draft_problems_are_listed_but_do_not_block(tmp_path, capsys):
    smoke = publishable(ran("epochs = 8", tags=["parameters"]))
    blog_metadata(smoke)["provenance"]["parameters_overridden"] = {"epochs": 1}
    reseal(smoke)
    smoke.cells[0].source = smoke.cells[0].source.replace("categories:", "draft: true\ncategories:")
    draft = save_post(smoke, tmp_path / "posts", "2026-01-03-draft")
    assert main([str(draft)]) == 0
    out = capsys.readouterr().out
    assert "(draft, not published) " in out and "2026-01-03-draft: notebook: outputs are from a smoke run" in out
    assert "1 draft(s) left out of the site, with 1 problem(s)" in out
    smoke.cells[0].source = smoke.cells[0].source.replace("draft: true\n", "")
    assert main([str(save_post(smoke, tmp_path / "posts", "2026-01-03-draft"))]) == 1


def test_thumbnail_that_is_not_the_posts_figure_is_refused(tmp_path):
    path = save_post(publishable(ran(FIGURE, image())), tmp_path / "posts")
    assert check_notebook(path) == []
    (path.parent / "thumbnail.png").write_bytes(b"another picture")
    problems = [str(problem) for problem in check_notebook(path)]
    assert len(problems) == 1 and "thumbnail.png (not the stored image of fig-loss)" in problems[0], problems


# ---- the outputs against the provenance, and the live reader's published files ----

PINNED_DOWNLOAD = 'path = hf_hub_download("org/data", "a.npz", repo_type="dataset", revision="' + "a" * 40 + '")'


def data_post(printed_digest, data, device="cpu"):
    from tools.core.data_sources import HUB_DATA, STAND_IN_DATA
    provenance = dict(blog_metadata(publishable())["provenance"], device=device,
                      data={"stand-in": STAND_IN_DATA, "hub": HUB_DATA}[data])
    return publishable(ran(PINNED_DOWNLOAD, stream(f"file  a.npz\nsha256    {printed_digest}\n")),
                       ran("print(f'device: {device}')", stream("device: cpu\n")), provenance=provenance)


def test_outputs_that_agree_with_the_provenance_pass(tmp_path):
    from tools.core.data_sources import STAND_IN_SHA256
    assert problems_of(data_post(STAND_IN_SHA256["mnist/mnist-small.npz"], "stand-in"), tmp_path) == []
    assert problems_of(data_post("b" * 64, "hub"), tmp_path / "hub") == []


@pytest.mark.parametrize("digest, data, device, said", [
    ("stand-in", "hub", "cpu", "provenance says the run read the Hugging Face Hub, but its data cell prints the "
                               "offline stand-in's sha256"),
    ("b" * 64, "stand-in", "cpu", "provenance says the run read the offline stand-in, but its data cell prints "
                                  "sha256 bbbbbbbbbbbb…, which is not the stand-in's"),
    ("stand-in", "stand-in", "cuda", "provenance says the run computed on cuda, but its outputs print device cpu"),
], ids=["hub-but-stand-in-digest", "stand-in-but-other-digest", "cuda-but-printed-cpu"])
def test_provenance_that_the_outputs_contradict_is_refused(tmp_path, digest, data, device, said):
    from tools.core.data_sources import STAND_IN_SHA256
    digest = STAND_IN_SHA256["mnist/mnist-small.npz"] if digest == "stand-in" else digest
    assert_refused(data_post(digest, data, device), tmp_path, "notebook", said, "run `make execute`")


def site_root(tmp_path):
    """A repository root holding the site's settings, for checks that read files beside the posts."""
    import shutil
    from tools.core.notebooks import REPO_ROOT
    shutil.copyfile(REPO_ROOT / "_quarto.yml", tmp_path / "_quarto.yml")
    return tmp_path


def exporting_post(tmp_path, files, folder=None):
    """A post that printed the digests of `files` ({name: bytes}): flagged as the live reader's source, or,
    in `folder`, the post of that folder (the numbers-aloud post feeds the decoding lab by its folder)."""
    import hashlib
    lines = "".join(f"  {name}  sha256 {hashlib.sha256(data).hexdigest()}\n" for name, data in files.items())
    nb = publishable(ran("export_the_model()", stream(lines)))
    if folder is None:
        blog_metadata(nb)["exports_reader"] = True
        return save_post(nb, tmp_path / "posts")
    return save_post(nb, tmp_path / "posts", folder, links=False)


def serve(folder, files):
    """Write `files` ({name: bytes}) where a page loads its model from."""
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)


@pytest.mark.parametrize("served, said", [
    ({"encoder.onnx": b"enc", "decoder.onnx": b"dec", "card.json": b'{"post": 1}'}, None),
    ({"encoder.onnx": b"enc", "decoder.onnx": b"dec", "card.json": b'{"post": 2}'},
     "reader/model/card.json (sha256 "),
    ({"encoder.onnx": b"enc", "decoder.onnx": b"dec"}, "reader/model/card.json is missing"),
], ids=["as-printed", "card-edited", "card-missing"])
def test_the_served_reader_model_must_be_what_its_post_printed(tmp_path, served, said):
    from tools.check.check_posts import check_notebook
    root = site_root(tmp_path)
    path = exporting_post(root, {"encoder.onnx": b"enc", "decoder.onnx": b"dec", "card.json": b'{"post": 1}'})
    serve(root / "reader" / "model", served)
    problems = [str(problem) for problem in check_notebook(path, root)]
    if said is None:
        assert problems == []
    else:
        assert len(problems) == 1 and said in problems[0] and "make reader-model" in problems[0], problems


@pytest.mark.parametrize("served, said", [
    ({"encoder.onnx": b"enc", "decoder.onnx": b"dec", "card.json": b'{"words": 1}'}, None),
    ({"encoder.onnx": b"enc", "decoder.onnx": b"other", "card.json": b'{"words": 1}'},
     "reader/aloud/model/decoder.onnx (sha256 "),
    ({"decoder.onnx": b"dec", "card.json": b'{"words": 1}'}, "reader/aloud/model/encoder.onnx is missing"),
], ids=["as-printed", "graph-swapped", "graph-missing"])
def test_the_decoding_lab_model_must_be_what_the_numbers_aloud_post_printed(tmp_path, served, said):
    from tools.check.check_posts import check_notebook
    from tools.live.reader_files import ALOUD_SLUG
    root = site_root(tmp_path)
    path = exporting_post(root, {"encoder.onnx": b"enc", "decoder.onnx": b"dec", "card.json": b'{"words": 1}'},
                          folder=ALOUD_SLUG)
    serve(root / "reader" / "aloud" / "model", served)
    # (a post in the real series' folder, outside the real series: its links are not what this test is about)
    problems = [str(problem) for problem in check_notebook(path, root) if "aloud/model" in str(problem)]
    if said is None:
        assert problems == []
    else:
        assert len(problems) == 1 and said in problems[0] and "make aloud-model" in problems[0], problems


@pytest.mark.parametrize("options, said", [
    ("#| code-fold: true\n", "folds its code without saying what it hides"),
    ('#| code-fold: true\n#| code-summary: "Show the code"\n', "folds its code without saying what it hides"),
    ('#| code-fold: true\n#| code-summary: "The code that draws the loss curve"\n', None),
    ('#| code-fold: true\n#| code-summary: "Mean P(<end>) at each step"\n', "which the page takes for an HTML tag"),
    ('#| code-fold: true\n#| code-summary: "Counting canvases with 3 < 4 digits"\n', None),
    ("", None),
], ids=["no-summary", "generic-summary", "named", "a-tag-in-the-summary", "a-lone-less-than", "shown"])
def test_a_folded_cell_names_what_it_hides(tmp_path, options, said):
    from tools.check.check_posts import check_notebook
    path = save_post(publishable(ran(options + "print(1)", stream("1\n"))), tmp_path / "posts")
    problems = [str(problem) for problem in check_notebook(path)
                if "folds its code" in str(problem) or "summary holds" in str(problem)]
    assert problems == ([] if said is None else [problems[0]]) and (said is None or said in problems[0]), problems


# ---- a result's record against the text it shows ---------------------------------------------------------

@pytest.mark.parametrize("text, number", [("87.3%", 87.34), ("10,992", 10992.0), ("1.0e-05", 1.04e-05),
                                          ("0.6508", 0.65083), ("15 min", 15), ("nan", None), ("2.9x", 2.94)])
def test_a_record_whose_number_is_its_shown_text_passes(tmp_path, text, number):
    assert problems_of(publishable(ran("result('accuracy', accuracy)", recorded("accuracy", text, number))),
                       tmp_path) == []


@pytest.mark.parametrize("text, number", [("87.3%", 88.1), ("10,992", 10993.0), ("1.0e-05", 1.2e-05),
                                          ("nan", 87.3)])
def test_a_record_whose_number_is_not_its_shown_text_is_refused(tmp_path, text, number):
    nb = publishable(ran("result('accuracy', accuracy)", recorded("accuracy", text, number)))
    assert_refused(nb, tmp_path, "cell 2 (code)", "result accuracy", f"records the number {number}",
                   f"shows {text}", "make execute")


# ---- the data digest each real post prints -----------------------------------------------------------------

REAL_POSTS = sorted((REPO_ROOT / "posts").glob("*/index.ipynb"))


@pytest.mark.parametrize("path", REAL_POSTS, ids=lambda path: path.parent.name)
def test_the_data_digest_each_real_post_prints_is_found(path):
    from tools.core.data_sources import STAND_IN_SHA256
    from tools.core.notebooks import download_calls, read_notebook
    from tools.core.printed import data_digests
    nb = read_notebook(path)
    read = {"three-digits": "mnist/mnist-small.npz", "when-to-stop": "mnist/mnist-full.npz",
            "handwriting": "mnist/mnist-full.npz"}
    expected = [STAND_IN_SHA256[file] for part, file in read.items() if part in path.parent.name]
    assert bool(download_calls(nb)) == bool(expected)
    assert data_digests(nb) == set(expected)


@pytest.mark.parametrize("path", [path for path in REAL_POSTS if "numbers-aloud" not in path.parent.name],
                         ids=lambda path: path.parent.name)
def test_a_real_post_whose_provenance_contradicts_its_printed_digest_is_refused(path):
    from tools.check.check_posts import check_outputs_against_provenance
    from tools.core.data_sources import HUB_DATA
    from tools.core.notebooks import read_notebook
    nb = read_notebook(path)
    assert list(check_outputs_against_provenance(nb, path, REPO_ROOT)) == []
    blog_metadata(nb)["provenance"]["data"] = HUB_DATA
    [(where, problem)] = check_outputs_against_provenance(nb, path, REPO_ROOT)
    assert "provenance says the run read the Hugging Face Hub, but its data cell prints the offline stand-in's" \
        in problem


# ---- a result is what the run computed, not a number typed into the cell ------------------------------------

@pytest.mark.parametrize("source, text, number", [
    ("result('acc', 97.2, '{:.1f}%')", "97.2%", 97.2),
    ("result('acc', value=-0.5)", "-0.5", -0.5),
    ("if True:\n    result(name='acc', value=97, template='{}')", "97", 97),
], ids=["number", "keyword", "nested"])
def test_a_result_recorded_from_a_literal_is_refused(tmp_path, source, text, number):
    nb = publishable(ran(source, recorded("acc", text, number)))
    assert_refused(nb, tmp_path, "cell 2 (code)", "result acc", "literal", "compute it")


@pytest.mark.parametrize("source", ["result('acc', accuracy, '{:.1f}%')", "result('acc', len(seen))",
                                    "result('acc', 87.3, '{:.1f}%', 'original run', reference=True)",
                                    "result('acc', 10 ** 3)"])  # worked out in the cell, as post 1's guessing odds
def test_a_computed_result_or_a_reference_is_accepted(tmp_path, source):
    assert problems_of(publishable(ran(source, recorded("acc", "87.3%", 87.3, reference="reference" in source))),
                       tmp_path) == []
def test_a_thumbnail_too_small_to_read_is_refused_naming_the_setting_that_fixes_it(tmp_path):
    """What the browser test (test_thumbnails_are_distinct_legible_and_shown_whole) would find minutes later."""
    import json
    import re
    from tests.test_post_links import figure_cell, png_of
    nb = publishable(figure_cell("fig-loss", png_of(660, 352), "A falling line."))
    problems = problems_of(nb, tmp_path)
    assert len(problems) == 1, problems
    assert "2026-01-01-example: thumbnail.png: all of fig-loss, the first figure, 660\u00d7352 px" in problems[0]
    assert "text reads at 4.2 px (under 8)" in problems[0] and "set notebook metadata blog.thumbnail to" in problems[0]
    blog_metadata(nb)["thumbnail"] = json.loads(re.search(r"blog\.thumbnail to (\{.*?\}) \(", problems[0]).group(1))
    blog_metadata(nb)["thumbnail"]["alt"] = "The start of the falling line."
    assert problems_of(nb, tmp_path / "fixed") == []


def test_a_placeholder_left_in_the_thumbnails_alt_is_refused(tmp_path):
    from tests.test_post_links import figure_cell, png_of
    nb = publishable(figure_cell("fig-loss", png_of(300, 150), "A falling line."))
    blog_metadata(nb)["thumbnail"] = {"figure": "fig-loss", "crop": [0, 0, 0.5, 0.5], "alt": "TODO: the part."}
    problems = problems_of(nb, tmp_path)  # the front matter's image-alt, made from it, says TODO too
    assert any(problem.endswith("notebook metadata: placeholder TODO left in blog.thumbnail's alt, the thumbnail's "
                                "alt text; write it (what the part of the figure it shows holds), then `make inline`")
               for problem in problems), problems


# ---- fenced divs across cells ----------------------------------------------------------------------------

FOLD = '::::: {.callout-note .secondary collapse="true"}\n## How it was measured\n\nThe cells below.'


@pytest.mark.parametrize("cells, said", [
    ((md(FOLD), ran("print(1)", stream("1\n")), md(":::::\n\n## Next\n\nText.")), None),
    ((md(FOLD), ran("print(1)", stream("1\n")), md("More words.\n\n## Next\n\nText.")),
     "the heading 'Next' lies inside"),
    ((md(FOLD), ran("print(1)", stream("1\n")), md("More words.")), "nothing closes it"),
    ((md(":::: {.question kind=\"choice\"}\nWhich?\n\n```md\n:::\n## not a heading\n```\n\n- [x] this\n::::"),), None),
    ((md("::: {.callout-tip}\nA tip.\n:::\n\n::: {.callout-note}\nText first.\n\n# Title late\n:::"),),
     "the heading 'Title late' lies inside"),
], ids=["closed-below-the-code", "a-heading-swallowed", "never-closed", "fences-in-code-ignored",
        "a-heading-after-text"])
def test_a_fenced_div_left_open_or_hiding_a_heading_is_refused(tmp_path, cells, said):
    problems = [problem for problem in problems_of(publishable(*cells), tmp_path)
                if "lies inside" in problem or "nothing closes it" in problem]
    if said is None:
        assert problems == []
    else:
        assert any(said in problem for problem in problems), problems
