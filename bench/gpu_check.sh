#!/usr/bin/env bash
# The GPU check, in one run (< 8 minutes on one H200):
#
#     PYTHONPATH=. bash bench/gpu_check.sh
#
#   1. environment: the GPU, cupy / numpy / torch versions
#   2. every fused CUDA kernel compiles with NVRTC (bench/check_kernels.py)
#   3. the GPU tests: tests/test_cuda.py (+ Module.to('cuda') in tests/nn/test_module.py)
#   4. CPU-vs-GPU parity of the GPT: logits, loss, every gradient, float32, atol 1e-4 (bench/gpu_parity.py)
#   5. minigrad.compile: fused chains, CUDA graph replay of the eval forward, compiled training = eager
#      (bench/compile_gpu_check.py)
#   6. training step, minigrad (cupy; generic ops and fused kernels) vs PyTorch CUDA eager fp32, same TF32
#      setting (off; GPU_CHECK_TF32=1 turns it on for both): shakespeare_char batch 64, gpt2-small batch 8
#      (bench/train_bench_gpu.py): tokens/s and peak GPU memory side by side
#   7. a summary table
#
# Every step has its own time limit, cut further so the whole run stays under GPU_CHECK_BUDGET seconds
# (default 465); a step that fails or times out is reported and the run goes on. Logs and JSON results go
# to $GPU_CHECK_LOG_DIR (default $OUT/gpu_check when $OUT is set, else /tmp/gpu_check). Exit status 0
# when every step passed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-$(command -v python || command -v python3)}"
BUDGET="${GPU_CHECK_BUDGET:-465}"
LOG_DIR="${GPU_CHECK_LOG_DIR:-${OUT:-/tmp}/gpu_check}"
mkdir -p "$LOG_DIR"
TF32_FLAG=""
if [[ "${GPU_CHECK_TF32:-0}" == "1" ]]; then TF32_FLAG="--tf32"; fi
export CUPY_TF32="${GPU_CHECK_TF32:-0}"
START=$(date +%s)
declare -a NAMES=() STATUS=() TIMES=()

# run_step NAME LIMIT_SECONDS COMMAND...: runs COMMAND under `timeout` (SIGINT first, so pytest still prints
# its summary; SIGKILL 10 s later), logs to $LOG_DIR/NAME.log, records PASS / FAIL / TIMEOUT / SKIPPED.
run_step() {
    local name="$1" limit="$2"
    shift 2
    local now left rc t0
    now=$(date +%s)
    left=$((BUDGET - (now - START) - 15))
    if ((left < limit)); then limit=$left; fi
    echo
    echo "==== [$name] (limit ${limit} s; $((now - START)) s into the run) ===="
    echo "\$ $*"
    NAMES+=("$name")
    if ((limit < 15)); then
        echo "SKIPPED: no time left in the ${BUDGET} s budget"
        STATUS+=("SKIPPED (no time left)")
        TIMES+=(0)
        return 0
    fi
    t0=$(date +%s)
    set +e
    timeout -s INT -k 10 "$limit" "$@" 2>&1 | tee "$LOG_DIR/$name.log"
    rc=${PIPESTATUS[0]}
    set -e
    local took=$(($(date +%s) - t0))
    TIMES+=("$took")
    if ((rc == 0)); then
        STATUS+=("PASS")
    elif ((rc == 124 || rc == 137 || took >= limit)); then
        STATUS+=("TIMEOUT (rc $rc, limit ${limit} s)")
    else
        STATUS+=("FAIL (rc $rc)")
    fi
}

run_step env 30 "$PY" - <<'EOF'
import platform, subprocess, sys
print("python", sys.version.split()[0], platform.platform())
try:
    print(subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=15).stdout.strip())
except Exception as e:
    print("nvidia-smi:", e)
import numpy
print("numpy", numpy.__version__)
import cupy
print("cupy", cupy.__version__, "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion(), "available", cupy.cuda.is_available())
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
except Exception as e:
    print("torch:", e)
import minigrad.cuda
print("minigrad sees", minigrad.cuda.device_count(), "GPU(s):", minigrad.cuda.get_device_name())
sys.exit(0 if minigrad.cuda.is_available() else 1)
EOF

run_step kernels_compile 45 "$PY" bench/check_kernels.py

run_step tests 210 "$PY" -m pytest tests/test_cuda.py tests/nn/test_module.py::test_to_cuda_and_back \
    -q -p no:cacheprovider -rfEs --durations=10 -o addopts=""

run_step parity 60 "$PY" bench/gpu_parity.py --atol 1e-4

run_step compile 60 "$PY" bench/compile_gpu_check.py

run_step bench_shakespeare_char 75 "$PY" bench/train_bench_gpu.py --preset shakespeare_char --batch_size 64 \
    --steps 20 --warmup 3 --chunk 5 $TF32_FLAG --json "$LOG_DIR/bench_shakespeare_char.json"

run_step bench_gpt2 110 "$PY" bench/train_bench_gpu.py --preset gpt2 --batch_size 8 \
    --steps 8 --warmup 2 --chunk 4 $TF32_FLAG --json "$LOG_DIR/bench_gpt2.json"

# ---- summary -------------------------------------------------------------------------------------------
echo
echo "==== summary ($(($(date +%s) - START)) s in all; logs in $LOG_DIR) ===="
fail=0
for i in "${!NAMES[@]}"; do
    printf '%-24s %-28s %5s s\n' "${NAMES[$i]}" "${STATUS[$i]}" "${TIMES[$i]}"
    [[ "${STATUS[$i]}" == PASS ]] || fail=1
done
"$PY" - "$LOG_DIR" <<'EOF' || true
import json, sys
from pathlib import Path
rows = []
for name in ("bench_shakespeare_char", "bench_gpt2"):
    p = Path(sys.argv[1]) / f"{name}.json"
    if not p.exists():
        print(f"{name}: no results")
        continue
    r = json.loads(p.read_text())
    cfg = r["config"]
    for fw, s in r["results"].items():
        rows.append((f"{r['preset']} b{cfg['batch_size']}", fw, s))
if rows:
    print()
    print(f"{'model':<22} {'framework':<15} {'tokens/s':>11} {'step ms':>9} {'peak GPU MiB':>13} {'tok/s vs torch':>15} {'mem vs torch':>13}")
    for model, fw, s in rows:
        if "tokens_per_s" not in s:
            print(f"{model:<22} {fw:<15} FAILED: {s.get('error')}")
            continue
        tr = f"{s['tokens_ratio']:.2f}" if "tokens_ratio" in s else "-"
        mr = f"{s['memory_ratio']:.2f}" if "memory_ratio" in s else "-"
        print(f"{model:<22} {fw:<15} {s['tokens_per_s']:>11,.0f} {s['step_ms']:>9.1f} {s['peak_mib']:>13,.0f} {tr:>15} {mr:>13}")
EOF
echo
if ((fail)); then echo "GPU CHECK: FAILED (see above)"; else echo "GPU CHECK: PASSED"; fi
exit "$fail"
