"""The helpers are written once and inlined, verbatim (less their imports from one another), into the
posts that declare them, after a block that installs the pinned packages the post needs when they are missing."""
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factory import never_ran, publishable, ran, save_post
from tools.author import inline_helpers
from tools.check.check_posts import check_notebook
from tools.author.inline_helpers import (
    HELPERS, SECTION, declared_helpers, helper_source, inline, needed_packages, packages_block, pinned_versions,
    setup_drift, setup_source,
)
from tools.core.notebooks import HELPER_TAG, REPO_ROOT, SETUP_TAG, NotebookError, blog_metadata, find_posts, read_notebook
from tools.author.post_links import repository_url


def test_setup_cell_holds_current_helper_text_folded_and_marked_generated():
    nb = publishable(helpers=["_arch.py", "_style.py"])
    setup = nb.cells[1]
    assert SETUP_TAG in setup.metadata["tags"]
    assert setup.source.startswith("#| code-fold: true\n#| code-summary: ")
    assert setup.source.splitlines()[2] == (
        f"# Generated from _style.py and _arch.py of {repository_url()}; edit those files, not this cell.")
    style, arch = (REPO_ROOT / "_style.py").read_text(), (REPO_ROOT / "_arch.py").read_text()
    assert style.strip() in setup.source and arch.strip() in setup.source
    assert setup.source.index(style.strip()) < setup.source.index(arch.strip()), "_arch.py uses _style.py's palette"


def test_setup_summary_says_what_the_cell_gives():
    assert setup_source(["_style.py"]).splitlines()[1] == '#| code-summary: "Setup: charts"'
    summary = setup_source(["_style.py", "_arch.py"], packages=[("visualtorch", "1.4.1")]).splitlines()[1]
    assert "Setup: missing packages, charts and diagrams" in summary
    header = setup_source(list(HELPERS), packages=[("numpy", "2.0.0")]).splitlines()[1:3]
    assert header[0] == '#| code-summary: "Setup: missing packages, recording, checks, re-run table, charts and diagrams"'
    assert header[1].startswith("# Generated from _results.py, _seal.py, _spread.py, _style.py and _arch.py of ")
    assert "_reader.py" not in setup_source(list(HELPERS)), "lesson code never sits in the setup cell"


def test_a_reused_helper_is_shown_in_a_cell_of_its_own_named_and_linked_to_where_it_is_taught():
    reader = helper_source("_reader.py").splitlines()
    assert reader[:2] == ["#| code-fold: true", "#| code-summary: \"Part 2's training, reused: the end and pad tokens, "
                          "the canvases, the training and the greedy reading (generated from _reader.py)\""]
    model = helper_source("_encoder_decoder.py").splitlines()
    assert model[1].startswith("#| code-summary: \"Part 1's reader, reused: attention written out")
    assert "posts/2026-06-18-reading-three-digits" in model[2], "it names the post that teaches it"
    assert "posts/2026-06-25-reading-when-to-stop" in reader[2], "it names the post that teaches it"
    assert (REPO_ROOT / "_reader.py").read_text().strip().splitlines()[-1] == reader[-1]
    pen = helper_source("_pen.py")
    assert "from _handwriting import" not in pen, "its names come from the handwriting cell above it"
    nb = publishable(ran("print(1)"), helpers=["_style.py", "_handwriting.py", "_pen.py"])
    assert [tags(cell) for cell in nb.cells[1:4]] == [[SETUP_TAG], [HELPER_TAG], [HELPER_TAG]]
    assert "# ---- _handwriting.py ----" in nb.cells[2].source and "# ---- _pen.py ----" in nb.cells[3].source
    assert "_handwriting.py" not in nb.cells[1].source


def tags(cell):
    return cell.metadata.get("tags", [])


def test_a_helper_cell_the_author_moved_stays_where_it_is_and_a_helper_left_in_the_setup_cell_moves_out():
    nb = publishable(ran("print(1)"), ran("print(2)"), helpers=["_style.py", "_handwriting.py"])
    helper = nb.cells[2]
    nb.cells.remove(helper)
    nb.cells.insert(3, helper)  # after the first cell of the post's own
    assert setup_drift(nb) is None, "where it is shown is the author's choice"
    nb.cells[1].source += "\n" + SECTION.format("_handwriting.py") + "\nSEED = 1"
    helper.source = helper.source.replace("SEED = 2026_13", "SEED = 2026_14")
    drift = setup_drift(nb)
    assert "still holds _handwriting.py, which computes and belongs in a cell of its own" in drift
    assert "its cell that shows _handwriting.py differs from the current _handwriting.py" in drift
    assert inline(nb) and setup_drift(nb) is None
    assert nb.cells[3] is helper and "SEED = 2026_13" in helper.source and "_handwriting" not in nb.cells[1].source
    blog_metadata(nb)["helpers"] = ["_style.py"]
    assert "still shows _handwriting.py in a generated cell" in setup_drift(nb)
    inline(nb)
    assert not any(HELPER_TAG in tags(cell) for cell in nb.cells)


def test_handwriting_helper_is_inlined_on_its_own_with_numpy_pinned():
    nb = publishable(ran("print(1)"), helpers=["_handwriting.py"])
    setup, shown = nb.cells[1].source, nb.cells[2].source
    assert (REPO_ROOT / "_handwriting.py").read_text().strip() in shown
    assert "# ---- _style.py ----" not in setup + shown, "_handwriting.py needs no other helper"
    assert f'"numpy": "{pinned_versions()["numpy"][1]}"' in setup, "_handwriting.py imports numpy"
    namespace = {}
    exec((setup + "\n" + shown).replace("#|", "#"), namespace)
    canvases, labels = namespace["handwriting_set"](per_length=1)
    assert canvases.shape == (3, 28, 84) and [len(label) for label in labels] == [1, 2, 3]


def test_helpers_are_inlined_in_their_order_whatever_the_declaration_says():
    nb = publishable(helpers=["_handwriting.py", "_arch.py", "_style.py"])
    assert declared_helpers(nb) == ["_style.py", "_arch.py", "_handwriting.py"]
    markers = [nb.cells[1].source.index(f"# ---- {name} ----") for name in ("_style.py", "_arch.py")]
    assert markers == sorted(markers)
    assert "# ---- _handwriting.py ----" in nb.cells[2].source


def test_a_post_with_every_helper_passes_the_publishing_checks(tmp_path):
    """The inlined text itself must not trip a check: the sibling-import rule reads the setup cell too."""
    path = save_post(publishable(ran("print(1)"), helpers=list(HELPERS)), tmp_path / "posts")
    assert [str(problem) for problem in check_notebook(path)] == []


def test_a_drifted_handwriting_copy_is_reported(tmp_path):
    nb = publishable(helpers=["_handwriting.py"])
    nb.cells[2].source = nb.cells[2].source.replace("SEED = 2026_13", "SEED = 2026_14")
    path = save_post(nb, tmp_path / "posts")
    problems = [str(problem) for problem in check_notebook(path)]
    assert any("its cell that shows _handwriting.py differs from the current _handwriting.py" in problem
               for problem in problems), problems


def test_helpers_fit_the_page_column():
    """The setup cell is shown, folded, on the page: a helper's lines fit its 88-character column."""
    for name in HELPERS:
        long = [number for number, line in enumerate((REPO_ROOT / name).read_text().splitlines(), 1)
                if len(line) > 88]
        assert long == [], f"{name}: lines {long} are over 88 characters; wrap them"


def test_packages_are_what_the_post_and_its_helpers_import_at_their_pins():
    nb = publishable(ran("import os\nimport torch.nn as nn\nfrom PIL import Image\n%matplotlib inline"),
                     helpers=["_style.py", "_arch.py"])
    pins = pinned_versions()
    expected = {pins[key] for key in ("torch", "pillow", "matplotlib", "visualtorch")}
    needed = needed_packages(nb, ["_style.py", "_arch.py"])
    assert expected <= set(needed), "the cell imports torch and PIL (pillow); _arch.py needs visualtorch"
    assert needed == [pin for pin in pins.values() if pin in needed], "in requirements.txt order"
    assert not {name for name, _ in needed} & {"nbclient", "pytest", "ipykernel"}, "only what the code imports"
    assert f'"visualtorch": "{pins["visualtorch"][1]}"' in nb.cells[1].source


def test_setup_follows_a_new_pin(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text((REPO_ROOT / "requirements.txt").read_text().replace("numpy==", "numpy==0.0.1+was-"))
    nb = publishable(ran("import numpy"))
    assert ("numpy", "0.0.1+was-" + pinned_versions()["numpy"][1]) in needed_packages(nb, [], requirements=requirements)


def test_packages_block_installs_only_what_is_missing_and_nothing_in_the_project_venv(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: calls.append(command))
    installed = [("numpy", importlib.metadata.version("numpy")), ("nbformat", "0.0.0")]  # present, any version
    exec(packages_block(installed), {})
    assert calls == []
    exec(packages_block([*installed, ("no-such-package-here", "1.2.3")]), {})
    assert len(calls) == 1 and calls[0][-2:] == ["--quiet", "no-such-package-here==1.2.3"]
    assert calls[0][1:4] == ["-m", "pip", "install"]


def test_real_posts_install_nothing_in_the_project_venv(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: calls.append(command))
    for path in find_posts():
        nb = read_notebook(path)
        helpers = declared_helpers(nb)
        exec(packages_block(needed_packages(nb, helpers)), {})
    assert calls == [], f"the project venv lacks {calls}"


def test_inlined_helpers_run_on_their_own():
    namespace = {}
    exec(setup_source(["_style.py", "_arch.py"]).replace("#|", "#"), namespace)
    fig, ax = namespace["figure"](4, 3)
    namespace["style_axes"](ax, "epoch", "accuracy")
    assert not ax.spines["top"].get_visible() and ax.get_xlabel() == "epoch"
    assert namespace["PALETTE"] == ("#2a78d6", "#eb6834", "#1baf7a", "#8a63d2")


def test_diagram_draws_each_stack_of_a_model():
    import torch
    import torch.nn as nn
    namespace = {}
    exec(setup_source(["_style.py", "_arch.py"]), namespace)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.GELU(), nn.Dropout(0.0), nn.Linear(32, 10))
    figure = namespace["diagram"]({"Classifier": (model, torch.zeros(1, 1, 28, 28))})
    assert figure.axes and figure.get_size_inches()[0] == pytest.approx(7.0)
    with pytest.raises(TypeError, match=r"diagram\(\) takes \{title: \(forward, examples\)\}"):
        namespace["diagram"](model)


def test_diagram_draws_each_stack_under_its_title_with_one_legend():
    import torch
    import torch.nn as nn

    namespace = {}
    exec(setup_source(["_style.py", "_arch.py"]), namespace)

    class OwnAttention(nn.Module):  # a post's own attention class, with child projections
        def __init__(self):
            super().__init__()
            self.query, self.output = nn.Linear(16, 16), nn.Linear(16, 16)

        def forward(self, x, memory):
            weights = (self.query(x) @ memory.transpose(1, 2)).softmax(-1)
            return self.output(weights @ memory)

    class Toy(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding, self.norm = nn.Embedding(12, 16), nn.LayerNorm(16)
            self.cross, self.head = OwnAttention(), nn.Linear(16, 12)

        def encode(self, tokens):
            return self.norm(self.embedding(tokens))

        def decode(self, tokens, memory):
            return self.head(self.cross(self.embedding(tokens), memory))

    toy = Toy()
    fig = namespace["diagram"]({
        "Encoder": (toy.encode, torch.zeros(1, 5, dtype=torch.long)),
        "Decoder": (toy.decode, (torch.zeros(1, 3, dtype=torch.long), torch.zeros(1, 5, 16))),
    })
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles == ["Encoder", "Decoder"]
    legend = [text.get_text() for text in fig.legends[0].texts]
    assert legend == ["input", "embedding", "linear", "attention", "layer norm"]
    assert [name for name, _ in toy.cross.named_children()] == ["query", "output"], \
        "the attention's children are put back after drawing"
    with pytest.raises(TypeError, match="title: \\(forward, examples\\)"):
        namespace["diagram"](toy, (1, 5))



@pytest.mark.parametrize("helper, before, after", [
    ("_style.py", "#2a78d6", "#1f5fb0"),
    ("_handwriting.py", "SEED = 2026_13", "SEED = 2026_14"),
])
def test_edited_helper_is_detected_and_reinlined(tmp_path, helper, before, after):
    root = tmp_path / "repo"
    root.mkdir()
    for name in HELPERS:
        (root / name).write_text((REPO_ROOT / name).read_text())
    nb = publishable(helpers=[helper])
    assert setup_drift(nb, root) is None
    (root / helper).write_text((root / helper).read_text().replace(before, after))
    assert f"differs from the current {helper}" in setup_drift(nb, root)
    assert inline(nb, root) is True
    assert setup_drift(nb, root) is None and after in "".join(cell.source for cell in nb.cells)


def test_missing_setup_cell_is_added_after_front_matter():
    nb = publishable(ran("print(1)"))
    blog_metadata(nb)["helpers"] = ["_style.py"]
    assert "0 generated setup cells" in setup_drift(nb)
    inline(nb)
    assert nb.cells[0].cell_type == "markdown" and SETUP_TAG in nb.cells[1].metadata["tags"]


def test_helper_without_its_dependency_is_refused():
    nb = publishable()
    blog_metadata(nb)["helpers"] = ["_arch.py"]
    with pytest.raises(NotebookError, match=r"_arch.py needs \['_style.py'\]"):
        declared_helpers(nb)


def test_check_mode_reports_and_writes_nothing(tmp_path, monkeypatch, capsys):
    nb = publishable(helpers=["_style.py"])
    nb.cells[1].source += "\n# a hand edit"
    path = save_post(nb, tmp_path / "posts")
    before = path.read_bytes()
    monkeypatch.setattr("tools.core.notebooks.find_posts", lambda substring=None: [path])
    assert inline_helpers.main(["--check"]) == 1
    assert "setup cell differs" in capsys.readouterr().out and path.read_bytes() == before
    assert inline_helpers.main([]) == 0
    assert setup_drift(read_notebook(path)) is None
    assert inline_helpers.main(["--check"]) == 0


# ---- a helper that is not Python is refused, naming it and its line; nothing is written -------------------

@pytest.fixture
def helpers_copy(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    for name in [*HELPERS, "_quarto.yml", "requirements.txt"]:
        (root / name).write_bytes((REPO_ROOT / name).read_bytes())
    return root


BROKEN_HELPERS = [
    (b"def palette(:\n    pass\n", "helper _style.py does not parse as Python (line 1, column 13: invalid syntax)"),
    (b"INK = '#777'\nif True:\nprint(INK)\n", "helper _style.py does not parse as Python (line 3"),
    (b"INK = 1\x00\n", "helper _style.py is not Python text"),
    (b"# caf\xe9\n", "helper _style.py is not UTF-8 text (byte 5"),
]


@pytest.mark.parametrize("broken, said", BROKEN_HELPERS)
@pytest.mark.parametrize("mode", [[], ["--check"]])
def test_make_inline_refuses_a_broken_helper_and_writes_nothing(tmp_path, helpers_copy, monkeypatch, capsys,
                                                               broken, said, mode):
    paths = [save_post(publishable(helpers=helpers), tmp_path / "posts", folder)
             for folder, helpers in (("2026-01-01-styled", ["_style.py"]), ("2026-01-02-written", ["_handwriting.py"]))]
    before = {path: path.read_bytes() for path in paths}
    (helpers_copy / "_style.py").write_bytes(broken)
    monkeypatch.setattr(inline_helpers, "REPO_ROOT", helpers_copy)
    monkeypatch.setattr("tools.core.notebooks.find_posts", lambda substring=None: paths)
    assert inline_helpers.main(mode) == 2
    out = capsys.readouterr()
    assert said in out.err and "_style.py" in out.err and "Traceback" not in out.err + out.out, out
    assert out.err.count("\n") == 1 and out.out == ""
    assert {path: path.read_bytes() for path in paths} == before, "a broken helper must stop every post's inlining"


def test_check_blames_the_broken_helper_not_a_cell_line(tmp_path, helpers_copy):
    path = save_post(publishable(helpers=["_style.py"]), tmp_path / "posts")
    (helpers_copy / "_style.py").write_text("def palette(:\n")
    problems = [str(problem) for problem in check_notebook(path, helpers_copy)]
    assert any("helper _style.py does not parse as Python (line 1" in problem for problem in problems), problems


# ---- a helper that needs another imports from it by name; inlined, the import is dropped -------------------

def test_a_helper_s_import_from_another_is_dropped_where_it_is_inlined(tmp_path, monkeypatch):
    source = helper_source("_handwriting.py") + "\n" + helper_source("_pen.py")
    assert "from _handwriting import" in (REPO_ROOT / "_pen.py").read_text(), "_pen.py works as a module"
    assert "from _handwriting import" not in source and "import _handwriting" not in source
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [path for path in sys.path if Path(path or ".").resolve() != REPO_ROOT])
    namespace = {}
    exec(source.replace("#|", "#"), namespace)  # no _handwriting module to import: the names are above
    assert namespace["pen_set"].__globals__["page_input"] is namespace["page_input"]


@pytest.mark.parametrize("pen_text, said", [
    ("import _handwriting\n", "helper _pen.py imports _handwriting as a module, which an inlined cell cannot"),
    ("from _style import INK\n", "helper _pen.py imports from _style.py, which HELPERS does not list"),
])
def test_a_helper_that_imports_another_wrongly_is_refused(helpers_copy, pen_text, said):
    (helpers_copy / "_pen.py").write_text(pen_text + (REPO_ROOT / "_pen.py").read_text())
    assert any(said in problem for problem in inline_helpers.helper_problems(helpers_copy)), \
        inline_helpers.helper_problems(helpers_copy)


# ---- `make inline` runs `make export` first: a broken helper is one line there too ----------------------------

@pytest.fixture
def export_copy(helpers_copy):
    """helpers_copy with the exported helpers and the posts they are made from."""
    from tools.author.export_cells import EXPORTS
    for name, post in EXPORTS.items():
        (helpers_copy / name).write_bytes((REPO_ROOT / name).read_bytes())
        (helpers_copy / "posts" / post).mkdir(parents=True, exist_ok=True)
        (helpers_copy / "posts" / post / "index.ipynb").write_bytes((REPO_ROOT / "posts" / post / "index.ipynb").read_bytes())
    return helpers_copy


@pytest.mark.parametrize("helper", ["_style.py", "_handwriting.py"])
@pytest.mark.parametrize("broken, said", [(b"# caf\xe9\n", "is not UTF-8 text (byte 5"),
                                          (b"def palette(:\n    pass\n", "does not parse as Python (line 1")],
                         ids=["not-utf8", "not-python"])
@pytest.mark.parametrize("mode", [[], ["--check"]])
def test_make_export_names_a_broken_helper_in_one_line(export_copy, monkeypatch, capsys, helper, broken, said, mode):
    from tools.author import export_cells
    before = {name: (export_copy / name).read_bytes() for name in export_cells.EXPORTS}
    (export_copy / helper).write_bytes(broken)
    monkeypatch.setattr(export_cells, "REPO_ROOT", export_copy)
    assert export_cells.main(mode) == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err and f"helper {helper} {said}" in out.err, out
    assert all(line.endswith("(nothing was exported)") for line in out.err.splitlines()), out.err
    assert {name: (export_copy / name).read_bytes() for name in export_cells.EXPORTS} == before


def test_make_export_rewrites_an_exported_helper_that_is_not_utf8_and_keeps_its_bytes(export_copy, monkeypatch, capsys):
    from tools.author import export_cells
    (export_copy / "_reader.py").write_bytes(b"# caf\xe9\n")
    monkeypatch.setattr(export_cells, "REPO_ROOT", export_copy)
    assert export_cells.main(["--check"]) == 2
    said = capsys.readouterr()
    assert "_reader.py is not UTF-8 text; run `make export`" in said.out and "Traceback" not in said.out + said.err
    assert export_cells.main([]) == 0
    assert (export_copy / "_reader.py").read_bytes() == (REPO_ROOT / "_reader.py").read_bytes()
    assert (export_copy / ".cache" / "export" / "_reader.py.replaced").read_bytes() == b"# caf\xe9\n"
# ---- a stale setup cell says what made it stale: `make execute` and `make smoke` refuse with that ----------

def test_a_stale_setup_cell_names_the_import_or_helper_that_made_it_so():
    nb = publishable(ran("import numpy as np\nprint(np.pi)"), helpers=["_results.py", "_style.py"])
    assert setup_drift(nb) is None
    pin = {key: f"{name}=={version}" for key, (name, version) in pinned_versions().items()}
    nb.cells.append(never_ran("import yaml\nfrom PIL import Image"))
    assert setup_drift(nb) == (f"setup cell does not install {pin['pyyaml']} (cell 4 (code) imports yaml), and does "
                               f"not install {pin['pillow']} (cell 4 (code) imports PIL)")
    nb.cells[-1].source = "x = 1"
    nb.cells[2].source = "print(3.14)"  # numpy no longer imported: the cell installs what nothing needs
    assert setup_drift(nb) == f"setup cell still installs {pin['numpy']}, which no cell or helper imports any more"
    inline(nb)
    blog_metadata(nb)["helpers"] = ["_results.py"]
    assert setup_drift(nb).startswith("setup cell still holds _style.py, which metadata blog.helpers no longer "
                                      "declares")
    blog_metadata(nb)["helpers"] = ["_results.py", "_style.py", "_arch.py"]
    assert "setup cell lacks _arch.py, which metadata blog.helpers declares" in setup_drift(nb)
    assert f"does not install {pin['visualtorch']} (_arch.py imports visualtorch)" in setup_drift(nb)
