#!/usr/bin/env bash
# Runs some of the GPU suite's test binaries on the GPU machine, each
# timed and under its own limit, as `.gpu/run` would (same environment):
# the whole suite no longer fits one device call's 600 s, so it runs in
# parts, e.g.
#   bash scripts/suite-part.sh .gpu/tests/gpu_jacobi-* .gpu/tests/gpu_multipe-*
# Each binary's log goes to $OUT/<binary>.log; the summary lines print here.
set -o pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export AUTARKY_REQUIRE_GPU=1 RUST_BACKTRACE=1
export AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
fail=0
for t in "$@"; do
  s=$(date +%s)
  echo "=== $t"
  log="$OUT/$(basename "$t").log"
  if ! timeout -k 5 "${LIM:-560}" "$t" --test-threads=1 > "$log" 2>&1; then fail=1; echo "FAILED (rc != 0)"; fi
  grep -a -E "^test result|FAILED|panicked|SKIP|ignored" "$log" | tail -8
  echo "took $(( $(date +%s) - s )) s"
done
echo "suite part: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
