#!/usr/bin/env bash
# After `scripts/gpu-stage.sh …`: drops from .gpu/ the test binaries
# that never touch a GPU (CI runs them) and the examples, so that what
# travels to the GPU machine stays small (a remote runner may cap what a
# command carries; ours took 64 MiB; a full bundle
# is ~76 MB). Prints what is left.
set -eu
cd "$(git rev-parse --show-toplevel)"
for t in emulator emulator_cg emulator_jacobi emulator_multipe emulator_trace \
         proptest_emulator cli cli_cg validate config bench_report cg_bench abi \
         jacobi_device_compile backends buffers jacobi_bench jacobi_mpi_bench \
         autarky_shared cg_device_compile device_compile nvrtc_compile \
         nvshmem_compile emulator_cuda_check; do
  rm -f .gpu/tests/"$t"-*
done
rm -f .gpu/bin/graph .gpu/bin/jacobi2d .gpu/bin/zz_*
du -sh .gpu
ls .gpu/tests .gpu/bin
