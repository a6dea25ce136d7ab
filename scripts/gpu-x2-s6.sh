#!/usr/bin/env bash
# Session 6's batch on two H200s (nvidia-h200-x2), in priority order, each
# step under its own limit: the NVSHMEM checklist of branch nvshmem-wire
# (its bundle, staged with --features fault-injection,mpi,nvshmem, travels
# compressed as .gpu-pack/gpu.tar.xz), the two-GPU CG bench, the GPU
# suite, the CG ILP A/B, then block-shape experiments and Nsight Compute
# on GPU 0 (scripts/gpu-exp-shape.sh).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -xJf .gpu-pack/gpu.tar.xz
B=.gpu/bin
T=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export AUTARKY_NVSHMEM_DIR=$T/nvshmem AUTARKY_NVJITLINK_DIR=$T/cu13/lib \
       AUTARKY_CUDA_INCLUDE_DIR=$T/cu13/include AUTARKY_NVRTC_DIR=$T/cu13/lib
X="-x AUTARKY_NVSHMEM_DIR -x AUTARKY_NVJITLINK_DIR -x AUTARKY_CUDA_INCLUDE_DIR -x AUTARKY_NVRTC_DIR -x AUTARKY_NVSHMEM_FORCE_REMOTE -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x AUTARKY_REQUIRE_GPU"
MPI="mpirun --allow-run-as-root --oversubscribe -n 2"
step() { # NAME LIMIT CMD...: full log to $OUT/NAME.log, tail here
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "--- $name rc=$? ($(( $(date +%s) - t0 ))s)"
  grep -a -E "${FILTER:-.}" "$OUT/$name.log" | tail -n "${N:-8}"
}
ls -d $T/cu13/include/cccl > /dev/null 2>&1 || echo "no cccl under $T/cu13/include"
FILTER="test result|FAILED|panicked|SKIP|ignored" step nvshmem-compile 90 env AUTARKY_REQUIRE_NVSHMEM=1 AUTARKY_REQUIRE_NVRTC=1 .gpu/tests/nvshmem_compile-* --test-threads=1
for f in 1 0; do
  FILTER="test result|FAILED|panicked|ignored|rror" step nvshmem-mpi-remote$f 150 env AUTARKY_NVSHMEM_FORCE_REMOTE=$f AUTARKY_REQUIRE_GPU=1 $MPI $X .gpu/tests/nvshmem_mpi-* --test-threads=1
done
N=30 step nvshmem-info 60 env AUTARKY_NVSHMEM_FORCE_REMOTE=1 $MPI $X $B/autarky info --transport nvshmem
for f in 1 0; do
  FILTER="^case|^h200|^-|target|checked|rror|FAIL|skipped|µs per" N=14 step jacobi-mpi-remote$f 200 env AUTARKY_NVSHMEM_FORCE_REMOTE=$f $MPI $X $B/jacobi_mpi --quick
done
FILTER="cg-2gpu|^case|rror|µs|×" N=16 step cg-two-gpu 200 $B/cg --3d=none --2d=none --two-gpu=128,256
AUTARKY_TEST_LIMIT_S=100 N=25 step suite 330 bash -c 'for t in device_compile cg_device_compile nvshmem_compile nvshmem_mpi; do rm -f .gpu/tests/$t-*; done; bash scripts/gpu-validate.sh'
for v in autarky autarky-ilp; do
  for m in "--poisson3d 128" "--poisson2d 1024" "--poisson3d 64"; do
    FILTER="µs per" N=1 step "cg-$v-${m// /}" 60 $B/$v cg $m --tol 0 --max-iters 300
  done
done
N=40 step shape 240 bash scripts/gpu-exp-shape.sh
