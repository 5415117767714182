#!/usr/bin/env bash
# Run every fixture under `kpredict verify --device cuda` and write what the GPU showed.
#
#   scripts/gpu_check.sh OUTDIR [JOBS]
#
# Installs nothing (the machine must have torch with CUDA and kpredict importable, e.g. via
# PYTHONPATH=$PWD). Files are verified in parallel (JOBS, default 8); each writes OUTDIR/<name>.json
# in the kpredict/verify/v1 format, then scripts/collect_observed.py merges them into
# OUTDIR/observed.json, which is committed as fixtures/observed/<device>-<torch>.json so that
# tests/test_observed.py holds --target cuda predictions against it on every CI run.
#
# Environment: KP_DEVICE (default cuda; cpu is a dry run that times the script on a machine without
# a GPU), KP_FILE_TIMEOUT (seconds per fixture file, default 800: a lease is short, so a file that
# hangs must not eat it).
set -uo pipefail
out="${1:?usage: scripts/gpu_check.sh OUTDIR [JOBS]}"
jobs="${2:-8}"
device="${KP_DEVICE:-cuda}"
limit="${KP_FILE_TIMEOUT:-800}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ "$device" = cuda ]; then
  python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)" || {
    echo "gpu_check: no CUDA device visible to torch" >&2; exit 3; }
fi
cd "$here"
grep -rl --include='*.py' '# kpredict: example' fixtures | sort |
  xargs -P "$jobs" -I{} sh -c '
    name=$(echo "{}" | tr "/" "_" | sed "s/\.py$//")
    start=$(date +%s)
    timeout '"$((limit + 60))"' python3 -m kpredict verify --device '"$device"' --format json \
      --timeout '"$limit"' "{}::*" > "'"$out"'/$name.json" 2> "'"$out"'/$name.err"
    echo "{}: exit $? in $(( $(date +%s) - start )) s"'
# the model fixtures whose figures differ in train mode (fixtures/models/train_mode.txt), again with
# `--mode train`: written as <name>.train.json, kept apart by collect_observed.py
grep -v '^#' fixtures/models/train_mode.txt | sed '/^$/d; s|^|fixtures/models/|' |
  xargs -P "$jobs" -I{} sh -c '
    name=$(echo "{}" | tr "/" "_" | sed "s/\.py$//")
    timeout '"$((limit + 60))"' python3 -m kpredict verify --device '"$device"' --mode train --format json \
      --timeout '"$limit"' "{}::*" > "'"$out"'/$name.train.json" 2> "'"$out"'/$name.train.err"
    echo "{} (train): exit $?"'
if [ "$device" = cuda ]; then
  # the seed script itself, as a script (it creates CUDA tensors at module level); kept for reading
  # (.script, not .json): the script runs its own profiler, under which script mode measures nothing
  timeout "$((limit + 60))" python3 -m kpredict verify --device cuda --format json --timeout "$limit" \
    fixtures/seed/seed.py > "$out/fixtures_seed_seed.script" 2> "$out/fixtures_seed_seed.script.err"
  echo "fixtures/seed/seed.py: exit $?"
fi
python3 scripts/collect_observed.py "$out" "$out/observed.json"
