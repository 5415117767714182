#!/usr/bin/env bash
# Every GPU check of one short lease, as one command: what a lent GPU machine should run.
#
#   OUT=DIR [KP_DEADLINE=420] [JOBS=14] bash scripts/gpu_session.sh
#
# A lease is minutes long and returns only a few files, so this installs the wheels carried in
# .whl/ (libcst; the GPU image has torch, networkx and click), records the machine, runs
# scripts/gpu_check.sh under a deadline, and leaves in $OUT: env.txt (GPU, driver, versions),
# gpu_check.log (each fixture file's exit status and seconds), observed.json (what ran, to commit
# as fixtures/observed/<device>-<torch>.json) and raw.tgz (every verify answer and its stderr).
# Files that did not finish by the deadline are simply missing from observed.json.
set -uo pipefail
out="${OUT:?set OUT to the folder that comes back}"
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "gpu_session: wheel install failed" >&2; exit 2; }
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  python3 - <<'EOF'
import platform, torch
print("python", platform.python_version())
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(), "capability", torch.cuda.get_device_capability())
for name in ("triton", "libcst", "networkx", "click"):
    try:
        mod = __import__(name)
        print(name, getattr(mod, "__version__", "?"), mod.__file__)
    except Exception as e:  # noqa: BLE001 - a record of what is missing
        print(name, "missing:", e)
EOF
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
# Many verify processes at once: one compile thread each avoids starting a worker pool per process.
export TORCHINDUCTOR_COMPILE_THREADS="${TORCHINDUCTOR_COMPILE_THREADS:-1}"
raw=/tmp/kp_gpu_check
rm -rf "$raw"
start=$(date +%s)
KP_FILE_TIMEOUT="${KP_FILE_TIMEOUT:-300}" timeout -k 5 "${KP_DEADLINE:-420}" \
  bash scripts/gpu_check.sh "$raw" "${JOBS:-14}" > "$out/gpu_check.log" 2>&1
echo "gpu_check: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/gpu_check.log"
python3 scripts/collect_observed.py "$raw" "$out/observed.json" 2>&1 | tee -a "$out/gpu_check.log"
tar czf "$out/raw.tgz" -C /tmp "$(basename "$raw")"
