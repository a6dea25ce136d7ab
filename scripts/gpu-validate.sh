#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, after
# `scripts/gpu-stage.sh --features fault-injection` staged the test
# binaries and benches in .gpu/: every test binary under a time limit of its
# own (a hang then costs minutes, not the whole session's GPU time), one
# summary line per binary, then the quick benches if asked.
#
#   bash scripts/gpu-validate.sh            # tests only
#   bash scripts/gpu-validate.sh --bench    # tests, then dispatch and jacobi --quick
#
# AUTARKY_TEST_LIMIT_S (default 150) is the limit per test binary. Logs go to
# $OUT/tests.log and $OUT/bench.log (few files: the device tool returns at
# most eight).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export AUTARKY_REQUIRE_GPU=1 RUST_BACKTRACE=1
export AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
# Never NVLink multicast on shared machines.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
limit=${AUTARKY_TEST_LIMIT_S:-150}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
fail=0
for t in .gpu/tests/*; do
  name=$(basename "$t")
  start=$(date +%s)
  echo "=== $name" >> "$OUT/tests.log"
  timeout -k 5 "$limit" "$t" --test-threads=1 >> "$OUT/tests.log" 2>&1
  rc=$?
  took=$(( $(date +%s) - start ))
  summary=$(grep -a "^test result" "$OUT/tests.log" | tail -n 1)
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "TIMEOUT $name after ${limit}s (last test started: $(grep -a '^test ' "$OUT/tests.log" | tail -n 1))"
    fail=1
  elif [ $rc -ne 0 ]; then
    echo "FAIL    $name (${took}s): $summary"
    grep -a -E "panicked|FAILED" "$OUT/tests.log" | tail -n 5
    fail=1
  else
    echo "ok      $name (${took}s): $summary"
  fi
done
if [ "${1:-}" = "--bench" ]; then
  for b in dispatch jacobi; do
    echo "=== $b --quick" | tee -a "$OUT/bench.log"
    timeout -k 5 300 ".gpu/bin/$b" --quick >> "$OUT/bench.log" 2>&1 || { echo "bench $b failed or timed out"; fail=1; }
    grep -a -E "^h200|^case|µs|G tasks" "$OUT/bench.log" | tail -n 30
  done
fi
echo "gpu-validate: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
