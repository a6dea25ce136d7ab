#!/usr/bin/env bash
# Session 6 sweep experiments (JACOBI_PREFETCH was removed after them) (docs/performance.md, "Session 6"): the
# Jacobi tile sweep's compile-time knobs and tile shapes, by the CLI (one
# run each, device events), then the Jacobi bench --quick with the
# defaults, and CG SpMV lanes. Run on one GPU from the repository root
# after scripts/gpu-stage.sh staged .gpu/.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=.gpu/bin
us() { # LABEL EXTRA ARGS...: prints "LABEL  µs/iteration"
  local label=$1 extra=$2
  shift 2
  local line
  # `cg --tol 0` ends with "error: not converged" (status 4) by design:
  # keep its timing line instead.
  line=$(AUTARKY_NVRTC_EXTRA="$extra" timeout -k 5 120 $B/autarky "$@" 2>&1 | grep -a -E "µs per iteration|rror" | grep -av "not converged" | tail -n 1)
  printf '%-44s %s\n' "$label" "$line"
}
for v in "" "-DJACOBI_PREFETCH=1" "-DJACOBI_RY=16" "-DJACOBI_RY=16 -DJACOBI_PREFETCH=1"; do
  us "2d 1024 [$v]" "$v" jacobi2d --size 1024 --iters 5000 --check-every 0
  us "2d 4096 [$v]" "$v" jacobi2d --size 4096 --iters 1000 --check-every 0
  us "2d 16384 [$v]" "$v" jacobi2d --size 16384 --iters 100 --check-every 0
done
us "2d 4096 32x1024 RY16" "-DJACOBI_RY=16" jacobi2d --size 4096 --iters 1000 --check-every 0 --tile 32x1024
us "2d 16384 32x1024 RY16" "-DJACOBI_RY=16" jacobi2d --size 16384 --iters 100 --check-every 0 --tile 32x1024
us "3d 256 1x64x256 (y-march)" "" jacobi3d --size 256 --iters 1000 --check-every 0 --tile 1x64x256
for t in 8x8x256 16x4x256 4x16x256 8x16x128 16x8x128 8x4x512; do
  us "3d 256 $t" "" jacobi3d --size 256 --iters 1000 --check-every 0 --tile $t
done
us "3d 256 16x4x256 RY16" "-DJACOBI_RY=16" jacobi3d --size 256 --iters 1000 --check-every 0 --tile 16x4x256
us "3d 256 8x8x256 PREFETCH" "-DJACOBI_PREFETCH=1" jacobi3d --size 256 --iters 1000 --check-every 0 --tile 8x8x256
us "3d 64 default" "" jacobi3d --size 64 --iters 5000 --check-every 0
us "3d 64 1x64x64 (y-march)" "" jacobi3d --size 64 --iters 5000 --check-every 0 --tile 1x64x64
for l in 1 2 4; do
  us "cg 3d 128 lanes $l" "" cg --poisson3d 128 --tol 0 --max-iters 300 --spmv-lanes $l
  us "cg 2d 1024 lanes $l" "" cg --poisson2d 1024 --tol 0 --max-iters 300 --spmv-lanes $l
done
echo "=== jacobi bench --quick (defaults)"
timeout -k 5 300 $B/jacobi --quick --two-gpu=none --weak=none 2>&1 | grep -a -E "^case|^h200|MISS|ok$|rror" | tail -n 20
