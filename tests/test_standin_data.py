"""The stand-in is standard MNIST, byte-stable, in the project's own cache, and bad files are named."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tools.run import standin_data
from tools.core.notebooks import REPO_ROOT
from tools.run.standin_data import DataError, read_npz, sha256_of, snapshot_path


@pytest.fixture(scope="module")
def standin():
    return standin_data.build()


def test_standin_is_standard_mnist(standin):
    full = read_npz(standin["mnist/mnist-full.npz"])
    assert full["y_train"][:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert full["x_train"].shape == (60_000, 28, 28) and full["x_test"].shape == (10_000, 28, 28)
    assert full["x_train"].dtype == np.uint8 and full["x_train"].max() == 255
    assert np.bincount(full["y_test"]).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_small_file_is_the_documented_prefix(standin):
    full, small = read_npz(standin["mnist/mnist-full.npz"]), read_npz(standin["mnist/mnist-small.npz"])
    for split, size in (("train", 30_000), ("test", 5_000)):
        assert np.array_equal(small[f"x_{split}"], full[f"x_{split}"][:size])
        assert np.array_equal(small[f"y_{split}"], full[f"y_{split}"][:size])


def test_inexact_pixels_are_refused():
    with pytest.raises(DataError, match="not exact multiples of 1/256"):
        standin_data.as_uint8_images(np.full((1, 784), 0.3, dtype=np.float32))


def test_rebuild_is_byte_identical(standin, tmp_path):
    rebuilt = standin_data.build(hf_home=tmp_path / "hf")
    for name, path in standin.items():
        assert sha256_of(rebuilt[name]) == sha256_of(path)


def test_standin_lives_only_in_the_project_cache(standin):
    for path in standin.values():
        assert path.is_relative_to(REPO_ROOT / ".cache" / "huggingface")
        assert "/snapshots/" in str(path) and len(path.parts[-3]) == 40


def test_hub_client_reads_the_standin_offline(standin):
    code = ("from huggingface_hub import hf_hub_download\n"
            "print(hf_hub_download('roshbeed/ai-residency-blog-data', 'mnist/mnist-full.npz', repo_type='dataset',"
            " revision='6bbb59474efaf5edfb62408686909305dbd45335'))")
    env = {**os.environ, **standin_data.offline_environment()}
    found = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == str(standin["mnist/mnist-full.npz"])


def test_missing_file_is_named(tmp_path):
    with pytest.raises(DataError, match=r"missing\.npz: not found; build the stand-in with `make standin`"):
        read_npz(tmp_path / "missing.npz")


def test_truncated_file_is_named(standin, tmp_path):
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(standin["mnist/mnist-small.npz"].read_bytes()[:100_000])
    with pytest.raises(DataError, match="truncated.npz: not a readable .npz"):
        read_npz(truncated)


@pytest.mark.parametrize("change, message", [
    (lambda arrays: arrays.pop("y_test"), r"missing arrays \['y_test'\]"),
    (lambda arrays: arrays.update(x_train=arrays["x_train"].reshape(-1, 784)), r"x_train has shape \(\d+, 784\)"),
    (lambda arrays: arrays.update(x_test=arrays["x_test"] / 255), "x_test is float64, expected uint8"),
    (lambda arrays: arrays.update(y_train=arrays["y_train"][::-1].copy()), "first training labels"),
])
def test_malformed_file_is_named(standin, tmp_path, change, message):
    arrays = read_npz(standin["mnist/mnist-small.npz"])
    change(arrays)
    path = tmp_path / "malformed.npz"
    standin_data.write_npz(arrays, path)
    with pytest.raises(DataError, match=message):
        read_npz(path)


def test_snapshot_path_follows_the_hub_cache_layout():
    path = snapshot_path("mnist/mnist-small.npz", "/x")
    assert str(path) == ("/x/hub/datasets--roshbeed--ai-residency-blog-data/snapshots/"
                         "f705fed08827ff6c36e3b5329495c943a5e544e8/mnist/mnist-small.npz")


def test_stale_standin_is_rebuilt(standin, tmp_path):
    rebuilt = standin_data.build(hf_home=tmp_path / "hf")
    small = rebuilt["mnist/mnist-small.npz"]
    arrays = read_npz(small)
    standin_data.write_npz({key: value[:100] for key, value in arrays.items()}, small)  # an older, smaller stand-in
    standin_data.build(hf_home=tmp_path / "hf")
    assert sha256_of(small) == standin_data.STAND_IN_SHA256["mnist/mnist-small.npz"]


def test_builders_writing_at_once_each_leave_the_whole_file(tmp_path):
    """The test suite's workers may build the stand-in at the same moment: each writes its own partial
    file and replaces the target whole, so none fails and no partial file is left (CI once lost one
    worker's `.partial` to another's rename)."""
    import multiprocessing
    path = tmp_path / "mnist" / "shared.npz"
    arrays = {"x": np.arange(200_000, dtype=np.uint8), "y": np.arange(10, dtype=np.uint8)}
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.starmap(standin_data.write_npz, [(arrays, path)] * 8)
    assert sorted(p.name for p in path.parent.iterdir()) == ["shared.npz"]
    assert np.array_equal(np.load(path)["x"], arrays["x"])
