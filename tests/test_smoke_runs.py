"""Every post runs end to end with its smoke parameters on the CPU, deterministically, off a copy.

A small training notebook built here stands in for a post, so these promises are
tested even before (and independently of) the real posts; each real post in
posts/ gets its own smoke run too.
"""
import re

import pytest

from tests.factory import md, never_ran, publishable, save_post
from tools.check.check_posts import check_notebook
from tools.run.execute_posts import ExecutionFailed
from tools.core.notebooks import blog_metadata, find_posts, post_name
from tools.run.smoke_run import smoke_run

pytestmark = pytest.mark.slow

TRAINING = '''import numpy as np, torch
from huggingface_hub import hf_hub_download
REVISION = "f705fed08827ff6c36e3b5329495c943a5e544e8"
path = hf_hub_download("roshbeed/ai-residency-blog-data", "mnist/mnist-small.npz", repo_type="dataset",
                       revision=REVISION)
with np.load(path) as data:
    x = torch.tensor(data["x_train"][:train_size].reshape(-1, 784) / 255, dtype=torch.float32)
    y = torch.tensor(data["y_train"][:train_size], dtype=torch.long)
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(784, 32), torch.nn.GELU(), torch.nn.Linear(32, 10))
optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(1, epochs + 1):
    for batch in torch.randperm(train_size, generator=torch.Generator().manual_seed(epoch)).split(50):
        loss = torch.nn.functional.cross_entropy(model(x[batch]), y[batch])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    print(f"epoch {epoch}: loss {loss.item():.6f} on {device}")
print("final weight sum", model[0].weight.sum().item())'''


@pytest.fixture
def training_post(tmp_path):
    nb = publishable(never_ran("epochs = 5\ntrain_size = 10_000\ndevice = 'auto'"), md("Train."),
                     never_ran(TRAINING), provenance=None)
    nb.cells[1].metadata["tags"] = ["parameters"]
    blog_metadata(nb)["smoke_parameters"] = {"epochs": 2, "train_size": 500}
    return save_post(nb, tmp_path / "posts")


def printed_record(nb):
    """What the run printed, cell by cell, with wall-clock times and timestamps masked (they differ between runs).

    A cell's printed text is joined without separators: how the kernel splits it into output chunks
    depends on timing, not on the numbers.
    """
    text = "\n".join("".join(output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
                             for output in cell.outputs)
                     for cell in nb.cells if cell.cell_type == "code")
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?\S*", "<time>", text)
    return re.sub(r"\d+(\.\d+)?\s*(s|ms|min|seconds)\b", "<duration>", text)


def test_smoke_run_uses_small_values_on_cpu_and_leaves_the_post_alone(training_post):
    before = training_post.read_bytes()
    executed = smoke_run(training_post, echo=lambda line: None)
    record = printed_record(executed)
    assert "epoch 2: loss" in record and "epoch 3" not in record and "on cpu" in record
    assert blog_metadata(executed)["provenance"]["parameters_overridden"] == {
        "epochs": 2, "train_size": 500, "device": "cpu"}
    assert blog_metadata(executed)["provenance"]["data"].startswith("stand-in")
    assert training_post.read_bytes() == before
    assert list(training_post.parent.iterdir()) == [training_post], "the run wrote nothing beside the post"


def test_smoke_run_is_deterministic(training_post):
    first, second = (printed_record(smoke_run(training_post, echo=lambda line: None)) for _ in range(2))
    assert "final weight sum" in first
    assert first == second


def test_smoke_output_saved_as_post_is_refused(training_post):
    from tools.core.notebooks import write_notebook_atomically
    write_notebook_atomically(smoke_run(training_post, echo=lambda line: None), training_post)
    assert any("smoke run" in str(problem) for problem in check_notebook(training_post))


def test_smoke_run_past_its_time_limit_fails(tmp_path):
    nb = publishable(never_ran("seconds = 60"), never_ran("import time\ntime.sleep(seconds)"), provenance=None)
    nb.cells[1].metadata["tags"] = ["parameters"]
    blog_metadata(nb)["smoke_parameters"] = {"seconds": 30}
    with pytest.raises(ExecutionFailed, match="time limit of 3 s"):
        smoke_run(save_post(nb, tmp_path / "posts"), time_limit=3, echo=lambda line: None)


# a worker per post (tests/conftest.py): a post's two runs take up to two minutes
@pytest.mark.parametrize("post", [pytest.param(path, marks=pytest.mark.xdist_group(f"smoke-{path.parent.name}"))
                                  for path in find_posts()], ids=lambda path: path.parent.name)
def test_post_smoke_run_is_deterministic(post):
    """Each real post: runs clean twice with its smoke parameters, and prints the same numbers both times."""
    runs = [smoke_run(post, echo=lambda line: None) for _ in range(2)]
    for run in runs:
        errors = [out for cell in run.cells if cell.cell_type == "code" for out in cell.outputs
                  if out.output_type == "error"]
        assert not errors, f"{post_name(post)}: {errors}"
    assert printed_record(runs[0]) == printed_record(runs[1])
