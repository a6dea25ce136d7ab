#!/usr/bin/env bash
# Session 6: why the Jacobi sweep runs at ~0.5-0.75x the CUDA-graph
# kernel. Block shape (threads per block x min blocks per SM) by the CLI,
# then Nsight Compute on one megakernel and one baseline sweep kernel.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=.gpu/bin
us() { # LABEL THREADS EXTRA ARGS...
  local label=$1 th=$2 extra=$3
  shift 3
  local line
  line=$(AUTARKY_THREADS_PER_BLOCK=$th AUTARKY_NVRTC_EXTRA="$extra" timeout -k 5 120 $B/autarky "$@" 2>&1 | grep -a -E "µs per iteration|rror" | tail -n 1)
  printf '%-40s %s\n' "$label" "$line"
}
for cfg in "128 -DAUTARKY_MIN_BLOCKS=8" "256 -DAUTARKY_MIN_BLOCKS=4" "256 -DAUTARKY_MIN_BLOCKS=6" "512 -DAUTARKY_MIN_BLOCKS=2" "128 -DAUTARKY_MIN_BLOCKS=12"; do
  set -- $cfg
  us "2d 4096 t=$1 $2" "$1" "$2" jacobi2d --size 4096 --iters 1000 --check-every 0
  us "2d 16384 t=$1 $2" "$1" "$2" jacobi2d --size 16384 --iters 100 --check-every 0
  us "3d 256 t=$1 $2" "$1" "$2" jacobi3d --size 256 --iters 1000 --check-every 0
done
NCU=$(ls /usr/local/cuda/bin/ncu /usr/local/cuda/nsight-compute*/ncu 2>/dev/null | head -n 1)
echo "ncu: ${NCU:-none}"
if [ -n "$NCU" ]; then
  S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
  timeout -k 5 150 $NCU $S -k regex:megakernel --launch-count 1 $B/autarky jacobi2d --size 4096 --iters 100 --check-every 0 > "$OUT/ncu-autarky.txt" 2>&1
  echo "ncu autarky rc=$?"
  timeout -k 5 150 $NCU $S -k regex:jacobi2d_step --launch-skip 5 --launch-count 1 $B/jacobi --2d=4096 --3d=none --pes=none --two-gpu=none --weak=none --iters=20 --reps=1 > "$OUT/ncu-graph.txt" 2>&1
  echo "ncu baseline rc=$?"
  grep -a -E "Memory Throughput|DRAM Throughput|Duration|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|No Eligible|Issued Warp|Mem Busy|Max Bandwidth" "$OUT/ncu-autarky.txt" | head -30
  echo "--- baseline"
  grep -a -E "Memory Throughput|DRAM Throughput|Duration|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|No Eligible|Issued Warp|Mem Busy|Max Bandwidth" "$OUT/ncu-graph.txt" | head -30
fi
