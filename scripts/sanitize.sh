#!/usr/bin/env bash
# Runs compute-sanitizer's memcheck, racecheck and synccheck over small graphs
# (tools/dev-sanitize.rs). Rerun after every change to device code:
#   cargo build --release --features dev-tools --bin dev-sanitize && bash scripts/sanitize.sh
# On the GPU machine, after scripts/gpu-stage.sh: bash scripts/sanitize.sh .gpu/bin/sanitize
set -uo pipefail
bin=${1:-target/release/dev-sanitize}
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
fail=0
for tool in memcheck racecheck synccheck; do
  echo "=== compute-sanitizer --tool $tool"
  if ! "$cs" --tool "$tool" --error-exitcode 99 "$bin"; then
    echo "sanitize: $tool FAILED"
    fail=1
  fi
done
echo "sanitize: $([ $fail = 0 ] && echo CLEAN || echo ERRORS)"
exit $fail
