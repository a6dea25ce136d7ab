#!/usr/bin/env bash
# The GPU runs owed (docs/performance.md, "Next"; written in session 5,
# updated in session 6), in stages that each fit one device command (10
# minutes). Run on the GPU machine from the
# repository root, after `scripts/gpu-stage.sh --features
# fault-injection,mpi` and `scripts/gpu-trim.sh` staged .gpu/:
#
#   bash scripts/gpu-owed.sh one-tests   # 1 GPU: every test binary + dispatch/jacobi quick
#   bash scripts/gpu-owed.sh one-exp     # 1 GPU: the timed experiments below
#   bash scripts/gpu-owed.sh two         # 2 GPUs: tests, two-GPU benches, halo waits, MPI
#   bash scripts/gpu-owed.sh mpi-tests   # 2 GPUs: MPI/NVSHMEM trials (nvshmem bundle)
#   bash scripts/gpu-owed.sh mpi-bench   # 2 GPUs: full jacobi_mpi, CG two-GPU, 3D two-GPU
#   bash scripts/gpu-owed.sh mpi-kill    # 2 GPUs: issue 12's killed-rank trial (mpi bundle)
#   bash scripts/gpu-owed.sh mpi-jacobi  # 2 GPUs: the full jacobi_mpi, NVSHMEM through puts
#   bash scripts/gpu-owed.sh s9-bench    # 2 GPUs: jacobi_mpi (NVSHMEM default path), dispatch, CLI rows
#   bash scripts/gpu-owed.sh s10-next    # 1 GPU: jacobi bench at the head, pinned-args test, 256-thread S = 4
#   bash scripts/gpu-owed.sh s10-next-two  # 2 GPUs: temporal blocking across GPUs (1024², 16384²)
#   bash scripts/gpu-owed.sh s12-one     # 1 GPU: dispatch, CG traces by phase, CG quick
#   bash scripts/gpu-owed.sh s13-one     # 1 GPU: chain fusion A/B (dispatch), CG and dag points
#   bash scripts/gpu-owed.sh s13-ab      # 1 GPU: dispatch of 735e0bc against the head; tests of dynamic tasks
#   bash scripts/gpu-owed.sh s13-two     # 2 GPUs: gpu_multigpu, nvshmem_mpi (forced puts), mpi_ipc
#   bash scripts/gpu-owed.sh s14-mpi     # 2 GPUs: nvshmem_mpi (forced puts) and mpi_ipc under mpirun
#   bash scripts/gpu-owed.sh s14-one     # 1 GPU: counted pinned joins A/B, the 3D register-window sweep, ncu 3D
#   bash scripts/gpu-owed.sh s14-pj      # 1 GPU: counted pinned joins (fixed) A/B
#   bash scripts/gpu-owed.sh s14-pf      # 1 GPU: L2 prefetch in the 3D sweep, the 3D bench rows
#   bash scripts/gpu-owed.sh s14-3d      # 1 GPU: the 3D sweep's rows × planes × tile shapes, a trace
#   bash scripts/gpu-owed.sh s15-t3d     # 1 GPU: 3D temporal blocking (S = 2): its tests, A/B, shapes, bench
#   bash scripts/gpu-owed.sh s15-prof    # 1 GPU: ncu stall reasons of the 3D bodies and the baseline; register caps
#   bash scripts/gpu-owed.sh s15-lean    # 1 GPU: the lean 3D S = 2 body: its test, G × prefetch × tiles, ncu, bench
#   bash scripts/gpu-owed.sh s15-lean2   # 1 GPU: per-plane exact division fallback: tiles at 64³–512³, ncu, bench
#   bash scripts/gpu-owed.sh s27-mini    # 1 GPU: after .gpu/run in the same call: the head's CLI against c202a87's, CG 64³ and checked Jacobi, A/B
#   bash scripts/gpu-owed.sh s29-next    # 1 GPU: (written in session 29, not yet run; the s29 patch applied) deferred arrivals: tests, dispatch A/B against main, the patch's fan-in traced
#   bash scripts/gpu-owed.sh s39-v       # 1 GPU: (run in session 39 with docs/experiments/s39-verdict-shared.patch applied) the verdict through shared memory against bar.red: stencil rows, Jacobi 2D 256² S = 4, twice
#   bash scripts/gpu-owed.sh s39-final   # 1 GPU: after .gpu/run in the same call: the soak (with patched graphs), the stencil rows against -DAUTARKY_NO_PIN_ROUND
#   bash scripts/gpu-owed.sh s39-d       # 1 GPU: the round's bodies with only their barriers between them (-DAUTARKY_EXP_ROUND_SPLIT) A/B, by phase with the sums in shared memory
#   bash scripts/gpu-owed.sh s39-c       # 1 GPU: unchecked dispatch on the solo and round paths (+ the round's failure flag once, cached store addresses): by phase; A/B against -DAUTARKY_EXP_CHECKED_DISPATCH (stencil, Jacobi 2D/3D); the patch trials
#   bash scripts/gpu-owed.sh s39-b       # 1 GPU: the round's bodies by phase; the next task's fields before each barrier (-DAUTARKY_EXP_ROUND_PREFETCH) A/B
#   bash scripts/gpu-owed.sh s39-a       # 1 GPU: the round path by phase (thread 0's cycles: the floor's patches, the runtime's stencil one a block and 2 x 2), the round's stores from cached addresses (-DAUTARKY_EXP_ROUND_OWN) A/B
#   bash scripts/gpu-owed.sh s38-e       # 1 GPU: the round path inlined: stencil one a block and in 2 x 2 patches (default runtime and 256 compute blocks) against -DAUTARKY_NO_PIN_ROUND, twice; the patched-stencil trials
#   bash scripts/gpu-owed.sh s38-d       # 1 GPU: the round path: stencil rows (one a block, 2 x 2 and 4 x 4 patches) against -DAUTARKY_NO_PIN_ROUND, twice; the patched-stencil GPU trials
#   bash scripts/gpu-owed.sh s38-c       # 1 GPU: the floor's patches with their addresses in registers, batched release against a release a tile
#   bash scripts/gpu-owed.sh s38-b       # 1 GPU: s38-a's floor patches and stencil rows redone (both failed there: the patch kernel's occupancy, the rows' declaration); pointers against indices on the stencil, twice
#   bash scripts/gpu-owed.sh s38-a       # 1 GPU: the floor with the solo path's pre-release pieces (pinned_hop r) and with fewer blocks (pinned_hop g: smaller grids, patches); the solo path with its words' addresses held (-DAUTARKY_EXP_SOLO_POINTERS) against indices: stencil rows (+ pinned in 2 x 2, 4 x 4 patches), Jacobi 2D 256² S = 1, 4, 3D 256³ S = 1, twice
#   bash scripts/gpu-owed.sh s37-soak    # 1 GPU: (run in session 37 on 4677539: PASS) after .gpu/run in the same call: the opt-in soak (1000 random graphs, each checked) on the solo path, narrow and wide
#   bash scripts/gpu-owed.sh s37-c       # 1 GPU: (run in session 37; the backoff flag is gone) fewer polls: the floor's spin after a failed poll or before the first (pinned_hop b); the solo path with -DAUTARKY_EXP_SOLO_BACKOFF=64/256 against none: stencil, Jacobi 2D 256² S = 1, twice
#   bash scripts/gpu-owed.sh s37-b       # 1 GPU: (run in session 37 on an uncommitted loop; its flag is gone) the solo path's early poll (the first poll before the last instance's bookkeeping) against -DAUTARKY_NO_SOLO_EARLY_POLL and -DAUTARKY_NO_PIN_SOLO: stencil rows (500 and 5000 iterations), Jacobi 2D 256² S = 1, 4, twice
#   bash scripts/gpu-owed.sh s37-a       # 1 GPU: (run in session 37 on cea1f17's device code) the floor's hop in parts and with pipelined polls (pinned_hop p); the solo path at eight predecessors (-DAUTARKY_SOLO_WIDE where a list has 5-8) against -DAUTARKY_NO_PIN_SOLO: stencil, Jacobi 2D/3D, CG 2D/3D, twice, each kernel's flags logged
#   bash scripts/gpu-owed.sh s36-cg      # 1 GPU: (written in session 36, not yet run) CG 2D 1024² and 3D 64³ with the solo path against -DAUTARKY_NO_PIN_SOLO, twice; the opt-in soak
#   bash scripts/gpu-owed.sh s36-b       # 1 GPU: (run in session 36 on 9af4c9f's tree, then .gpu/run: PASS) before .gpu/run in the same call: the solo path's third form (a function of its own, one instantiation, compiled in only where a list qualifies) against -DAUTARKY_NO_PIN_SOLO, short
#   bash scripts/gpu-owed.sh s36-a       # 1 GPU: (run in session 36 on two uncommitted forms; on later trees it A/Bs the landed one) the pinned solo path (one lean task a block, its state in registers) against -DAUTARKY_NO_PIN_SOLO: the stencil rows, Jacobi 2D/3D and CG CLI, A/B twice
#   bash scripts/gpu-owed.sh s35-final   # 1 GPU: (run in session 35) after .gpu/run: the dispatch rows at dc155ce against its controls (NO_LATE_SELF, NO_POP_DESC)
#   bash scripts/gpu-owed.sh s35-b       # 1 GPU: (run in session 35 on 5ccdaa6's bundle; its EXP_ flags are gone since dc155ce) the loop by phase and the four cuts' A/B
#   bash scripts/gpu-owed.sh s35-a       # 1 GPU: (run in session 35) the compute ring's floor (benches/floor/ring.cu: 1-132 rings, 132-1056 blocks); the dynamic stencil with 33-528 compute blocks
#   bash scripts/gpu-owed.sh s34-multi   # 1 GPU: (run in session 34: the dynamic stencil 12.24 µs against the control's 5.92; reverted) after .gpu/run: thread 0 completing tasks of 2-8 successors (complete_fast_multi) against -DAUTARKY_NO_MULTI_FAST, dispatch A/B; the new trials under the control
#   bash scripts/gpu-owed.sh s34-bench   # 1 GPU: the closing tables: the full dispatch bench, the Jacobi bench's one-GPU rows (2D 256²–16384², 3D 64³ and 256³)
#   bash scripts/gpu-owed.sh s34-a       # 1 GPU: the floor's two-role hop (pinned_hop s); gpu_jacobi compiled ahead on a cold machine, compiles counted; the soak; gpu's prepare trial
#   bash scripts/gpu-owed.sh s34-jacobi  # 1 GPU: (written in session 33, not yet run) gpu_jacobi on a cold machine with NVRTC's compiles logged and counted; the opt-in soak
#   bash scripts/gpu-owed.sh s33-pack    # 1 GPU: arrival slots four to a word (ABI 12): fan-in A/B against the batch-16 binary (.gpu/ab/dispatch-main), full dispatch bench, join tests
#   bash scripts/gpu-owed.sh s33-batch   # 1 GPU: inputs' arrivals 16 a batch with the progress counter in the batch's fence: fan-in A/B against main's binary (.gpu/ab/dispatch-main), batch 8/32, join read-ahead 16; full dispatch bench; join tests
#   bash scripts/gpu-owed.sh s33-prep    # 1 GPU: gpu_cg with its kernels compiled ahead in parallel (cold cache), timed, compiles counted; gpu; fan-in's arrival batch 4/8/16 A/B
#   bash scripts/gpu-owed.sh s33-lanes   # 1 GPU: (run in session 33: /1000 -3.6 %, /10 and /100 +3-4 %; not landed) docs/experiments/s32-slot-lanes.patch: fan-in A/B against main's binary (.gpu/ab/dispatch-main), join tests
#   bash scripts/gpu-owed.sh s32-fine    # 1 GPU: (docs/experiments/s32-stats.patch, third form) the inputs' flush and tick in parts; flush_report out of line A/B
#   bash scripts/gpu-owed.sh s32-ncu     # 1 GPU: ncu source counters of the pinned 32 x 32 stencil, with its cubin
#   bash scripts/gpu-owed.sh s32-stats2  # 1 GPU: (docs/experiments/s32-stats.patch) the same counters kept in registers: join loop, inputs' flushes, pinned tile
#   bash scripts/gpu-owed.sh s32-spin    # 1 GPU: the join's spin in its loop A/B, the automatic state layout against packed, full dispatch bench, CG/Jacobi rows, join tests
#   bash scripts/gpu-owed.sh s32-stats   # 1 GPU: (docs/experiments/s32-stats.patch) the join's loop, its inputs' flushes and a pinned tile's cycles; packed state words against a line each
#   bash scripts/gpu-owed.sh s31-knobs   # 1 GPU: the slots' batch size and read-ahead at 200 iterations (fan-in 10, 1000), once each
#   bash scripts/gpu-owed.sh s31-slots   # 1 GPU: arrival slots as the protocol: fan-in A/B against main's binary (.gpu/ab/dispatch-main) and the loops off, the full dispatch bench
#   bash scripts/gpu-owed.sh s30-slots5  # 1 GPU: (written in session 30, not yet run) (slots experiment) a join's inputs in the self loop, the join in a loop of its own, A/B at 200 iterations, quick
#   bash scripts/gpu-owed.sh s30-slots4  # 1 GPU: (slots experiment) the join reads K slots ahead and folds through the full ones, A/B, quick, traced
#   bash scripts/gpu-owed.sh s30-slots3  # 1 GPU: (slots experiment) the inputs' batches aligned to the join's instances, A/B at 200 iterations, quick, traced
#   bash scripts/gpu-owed.sh s30-slots2  # 1 GPU: (the s30-slots bundle) the slots experiment's deferral limits and batch sizes at 200 iterations; traced with batches that fill
#   bash scripts/gpu-owed.sh s30-slots   # 1 GPU: (experiment: the s29 patch + exact per-instance arrival slots) fan-in A/B against the patch and main, traced
#   bash scripts/gpu-owed.sh s30-idle    # 1 GPU: idle pollers and the busy blocks' fences: the floor with sleeping pollers; idle waits' spin and backoff, A/B
#   bash scripts/gpu-owed.sh s29-floor   # 1 GPU: (written in session 29, not yet run) the ordering instructions' costs (benches/floor/ordering.cu), the fan-in rows traced
#   bash scripts/gpu-owed.sh s29-trace   # 1 GPU: the dispatch bench's small cases traced to Chrome JSON (--trace-dir), then gpu_cg
#   bash scripts/gpu-owed.sh s29-wide    # 1 GPU: (docs/experiments/s29-counted-rmw.patch) a wide task folds its next instance while its known-done inputs cover it: tests, dispatch A/B against c8fd28f
#   bash scripts/gpu-owed.sh s29-fan     # 1 GPU: (docs/experiments/s29-counted-rmw.patch) counted arrivals as RMWs, the join's inputs on the fast path: tests, fan-in A/B
#   bash scripts/gpu-owed.sh s28-owed    # 1 GPU: (owed by session 28) gpu_cg's trial of several tiles a compute block, never run on a GPU
#   bash scripts/gpu-owed.sh s28-order   # 1 GPU: x steps after the block's last SpMV (several tiles a block: 2 virtual PEs), A/B against 89acaff's CLI
#   bash scripts/gpu-owed.sh s28-pc      # 1 GPU: the single reduction's defaults with the Jacobi preconditioner and on 2 virtual PEs, A/B
#   bash scripts/gpu-owed.sh s28-x       # 1 GPU: separate single reduction (one copy of z): x's step apart against in the axpy; merged, Standard, A/B
#   bash scripts/gpu-owed.sh s28-sr      # 1 GPU: separate single reduction with one copy of z against two halves, merged and Standard, A/B
#   bash scripts/gpu-owed.sh s27-ab3     # 1 GPU: three builds' CLIs (.gpu/ab/autarky-REV, built here) side by side: CG, Jacobi, A/B
#   bash scripts/gpu-owed.sh s27-carry   # 1 GPU: carried limits against the read after every acquire (-DAUTARKY_EXP_LIMIT_REREAD) and none (-DAUTARKY_EXP_LIMIT_STATIC), A/B; early stops both ways
#   bash scripts/gpu-owed.sh s27-wide    # 1 GPU: comm blocks' pinned polls (wide: only the words, several rounds; narrow: a cached list) against each control, A/B
#   bash scripts/gpu-owed.sh s27-limit   # 1 GPU: run_limit() reads against none (-DAUTARKY_EXP_LIMIT_STATIC) in runs that may stop: CG, Jacobi with a tolerance, A/B
#   bash scripts/gpu-owed.sh s26-floor   # 1 GPU: the neighbour-hop floor (benches/floor/pinned_hop.cu, nvcc), ncu of Jacobi 256² S = 1 with its cubin
#   bash scripts/gpu-owed.sh s26-lean    # 1 GPU: the lean pinned path against the generic one (-DAUTARKY_EXP_PINNED_GENERIC), packed and spread state words: dispatch, Jacobi, CG, A/B
#   bash scripts/gpu-owed.sh s26-spread  # 1 GPU: state words a line each (AUTARKY_STATE_SPACING=128) against packed (8): dispatch, Jacobi, CG, A/B
#   bash scripts/gpu-owed.sh s19-final   # 1 GPU: after .gpu/run: the reduce's scalars loaded before the sum, A/B; CG and dispatch benches
#   bash scripts/gpu-owed.sh s24-ab1     # 1 GPU: gpu_cg (merged SR trial); CG Standard: role dispatch, kind sets, fewer spills, A/B
#   bash scripts/gpu-owed.sh s24-ab2     # 1 GPU: CG single reduction merged/separate, A/B; Jacobi under the role dispatch
#   bash scripts/gpu-owed.sh s24-final   # 1 GPU: after .gpu/run: CG bench, the lane tree inlined against out of line, CG 2D 1024² traced
#   bash scripts/gpu-owed.sh s24-spills  # 1 GPU: (branch exp/fewer-spills) CG partials in registers, the lane tree out of line, its last levels by shuffles: gpu_cg, A/B against each control
#   bash scripts/gpu-owed.sh s23-ab      # 1 GPU: lean CG updates (alpha read in the loop) against alpha held and full updates, A/B
#   bash scripts/gpu-owed.sh s23-final   # 1 GPU: CG bench, the direction fused/separate with lean updates at 1448², 2048², 160³, CG 2D 1024² traced
#   bash scripts/gpu-owed.sh s23-dir     # 1 GPU: the direction fused/separate with lean updates at 200³, 256³, 4096², A/B; CG bench 256³
#   bash scripts/gpu-owed.sh s22-l2      # 1 GPU: with row patterns, CG's L2 head window beyond 1.4x the set-aside (AUTARKY_L2_HEAD_MAX_SHARE=4) against none, A/B
#   bash scripts/gpu-owed.sh s22-comm    # 1 GPU: CG on 1 / 2 comm blocks (the reduces off the progress publisher's block), A/B
#   bash scripts/gpu-owed.sh s22-final   # 1 GPU: after .gpu/run: CG bench (row patterns), CG 2D 1024² traced by phase, dispatch bench
#   bash scripts/gpu-owed.sh s22-unroll  # 1 GPU: row-pattern rows' vector loads 1 / 2 / 4 / 8 in flight (-DCG_PAT_UNROLL), A/B
#   bash scripts/gpu-owed.sh s22-dir     # 1 GPU: with row patterns, the CG direction fused against separate over sizes, A/B
#   bash scripts/gpu-owed.sh s22-pat     # 1 GPU: CG's packed rows as patterns (a byte a row) against packed rows and plain: gpu_cg, A/B
#   bash scripts/gpu-owed.sh s22-ab      # 1 GPU: residual report after the publish, CG scalars read early, comm args in shared memory; each against its control, A/B
#   bash scripts/gpu-owed.sh s21-comm    # 1 GPU: comm blocks with only pinned work poll a wide task every round, limit read every 64 polls: tests, A/B
#   bash scripts/gpu-owed.sh s21-l2head  # 1 GPU: after .gpu/run: CG's L2 window as landed (head up to 1.4x) against none; CG bench
#   bash scripts/gpu-owed.sh s21-final   # 1 GPU: after .gpu/run: CG bench, CG 2D 1024² traced by phase, dispatch bench
#   bash scripts/gpu-owed.sh s21-compact # 1 GPU: CG's matrix packed (4 bytes a nonzero) against plain CSR: gpu_cg, A/B, ncu DRAM bytes
#   bash scripts/gpu-owed.sh s20-l2b     # 1 GPU: L2-kept CG vectors (RunOptions::l2_persist, the default on one PE): tests, A/B, CG bench
#   bash scripts/gpu-owed.sh s20-l2      # 1 GPU: (an uncommitted hook; see s20-l2b) CG vectors as an L2 persisting window, A/B
#   bash scripts/gpu-owed.sh s20-final   # 1 GPU: the CLI's automatic direction form on the bench's cases; CG bench
#   bash scripts/gpu-owed.sh s20-sizes   # 1 GPU: CG direction fused against separate over sizes (2D 512²…2048², 3D 48³…160³), A/B
#   bash scripts/gpu-owed.sh s20-stream  # 1 GPU: CG SpMV's matrix loads evict-first (ld.global.cs) against plain, with the direction fused and separate, A/B; ncu of 2D 1024²
#   bash scripts/gpu-owed.sh s20-dir2    # 1 GPU: CG direction: separate / fused / fused with a coalesced pre-pass (-DCG_DIR_PREPASS), A/B; ncu of 2D 1024²
#   bash scripts/gpu-owed.sh s20-dir     # 1 GPU: CG's direction formed where it is read (fused) against direction tiles, A/B; gpu_cg; CG bench
#   bash scripts/gpu-owed.sh s19-fuse    # 1 GPU: one-PE allreduces as one task (fused) against two tasks, A/B; gpu_cg; CG bench
#   bash scripts/gpu-owed.sh s19-cg      # 1 GPU: (branch exp/cg-staged-spmv) CG bodies' loads in flight (SpMV entries, vector elements), out of line, A/B
#   bash scripts/gpu-owed.sh s19-cg3     # 1 GPU: (branch exp/cg-staged-spmv) traces and ncu of the former, staged and padded-shared-memory CG bodies
#   bash scripts/gpu-owed.sh s19-cg2     # 1 GPU: (branch exp/cg-staged-spmv) the staged SpMV (cp.async) and unrolled vector bodies, inlined, A/B; traces
#   bash scripts/gpu-owed.sh s25-final   # 1 GPU: x's step auto / in the SpMV / apart A/B; the CG bench
#   bash scripts/gpu-owed.sh s25-xstep   # 1 GPU: gpu_cg; x's step as a task of its own (rows 1/2/4 a round) against in the SpMV, A/B
#   bash scripts/gpu-owed.sh s25-prof    # 1 GPU: ncu of CG 2D 1024² (Standard and merged single reduction), per-instruction samples; pattern entries unrolled A/B
#   bash scripts/gpu-owed.sh s19-ncu     # 1 GPU: (branch exp/cg-staged-spmv) ncu of CG 2D 1024² (memory, stalls, per-instruction samples), former and unrolled bodies
#   bash scripts/gpu-owed.sh s18-arrive  # 1 GPU: relaxed arrivals after the arriving thread's SC fence, A/B
#   bash scripts/gpu-owed.sh s18-final   # 1 GPU: dispatch and CG benches at the final head
#   bash scripts/gpu-owed.sh s18-wide    # 1 GPU: (branch exp/wide-fold) wide tasks' self check folded into the publish, A/B
#   bash scripts/gpu-owed.sh s18-ab      # 1 GPU: predecessor scans' loads in flight, A/B (dispatch, CG, Jacobi)
#   bash scripts/gpu-owed.sh s17-one     # 1 GPU: chain loop and wake words: tests, dispatch A/B
#   bash scripts/gpu-owed.sh s17-vpe     # 1 GPU: virtual PEs' comm blocks; wake words A/B on Jacobi, CG
#   bash scripts/gpu-owed.sh s17-b       # 1 GPU: held-link fix, virtual PEs' new default, CG wake A/B
#   bash scripts/gpu-owed.sh s17-final   # 1 GPU: every test binary, dispatch, CLI rows (bundle with mpi,nvshmem)
#   bash scripts/gpu-owed.sh s17-four    # 4 GPUs: tests, 4 GPUs = 4 virtual PEs, scaling 1/2/4, MPI/NVSHMEM
#   bash scripts/gpu-owed.sh s17-grid    # 4 GPUs: slab PE grids against the least-halo split
#   bash scripts/gpu-owed.sh s17-check   # 4 GPUs: the slab default: gpu_jacobi, gpu_multigpu, bitwise, timings
#   bash scripts/gpu-owed.sh s17-two     # 2 GPUs: multi-GPU/fault tests, MPI/NVSHMEM trials, 3D on two GPUs
#   bash scripts/gpu-owed.sh s16-two     # 2 GPUs: every test binary, autarky info, MPI/NVSHMEM trials
#   bash scripts/gpu-owed.sh s16-two-bench  # 2 GPUs: strong/weak scaling tables, 3D 256³ on 1 and 2 GPUs, halo waits, CG
#   bash scripts/gpu-owed.sh s15-final   # 1 GPU: the f64 fallback and S = 2 default tiles timed; the bench; every test binary
#   bash scripts/gpu-owed.sh s12-shapes  # 1 GPU: threads × tile for S = 4 at 256² and 1024²
#   bash scripts/gpu-owed.sh s12-check   # 1 GPU: new defaults' tests, CG bodies A/B, benches
#   bash scripts/gpu-owed.sh s12-two     # 2 GPUs: two-GPU trials, S = 4 across GPUs, MPI/NVSHMEM trials
#   bash scripts/gpu-owed.sh s12-comm    # 1 GPU: comm blocks' cached pinned descriptor, A/B and tests
#   bash scripts/gpu-owed.sh one-s8      # 1 GPU: session 8's A/B, CG trace, cg + dispatch quick
#   bash scripts/gpu-owed.sh two-s8      # 2 GPUs: session 8's A/B, CG trace, two-GPU benches
#
# Every command runs under its own time limit, so a hang costs that
# command only. Output: a few lines per command here; the full logs (not
# the traces) in one archive, $OUT/owed-STAGE.tar.gz (the device tool
# returns at most 8 files from $OUT).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
OUT=${OUT:-/tmp/out}
LOGS=/tmp/owed-logs
mkdir -p "$OUT" "$LOGS"
B=.gpu/bin
fail=0

# The logs so far, packed after every command: a stage cut short by the
# device tool's limit still returns what it ran.
pack() { tar -czf "$OUT/owed-${STAGE}.tar.gz" -C "$LOGS" . 2>/dev/null; }
STAGE=${1:-none}

# run NAME LIMIT_S COMMAND...: logs to $OUT/NAME.log, prints the last lines
# matching the filter in $FILTER (default: everything's last 5 lines).
# OK_RC=4 also counts status 4 as success: `autarky cg --tol 0` timing runs
# stop at --max-iters by design, which cg reports as not converged (4).
run() {
  local name=$1 limit=$2
  shift 2
  local start=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$? took=$(( $(date +%s) - start ))
  echo "--- $name: rc=$rc (${took}s)"
  if [ -n "${FILTER:-}" ]; then
    grep -a -E "$FILTER" "$LOGS/$name.log" | tail -n "${LINES_SHOWN:-20}"
  else
    tail -n 5 "$LOGS/$name.log"
  fi
  [ $rc -eq 0 ] || [ $rc -eq "${OK_RC:-0}" ] || fail=1
  pack
}

# counted_join_tests: the test binaries that run counted joins (session 29's
# fan-in stages), GPU tests required.
counted_join_tests() {
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  local F='^test result|FAILED|panicked'
  FILTER="$F" run gpu 200 .gpu/tests/gpu-* --test-threads=1
  FILTER="$F" run gpu-multipe 200 .gpu/tests/gpu_multipe-* --test-threads=1
  FILTER="$F" run gpu-trace 100 .gpu/tests/gpu_trace-* --test-threads=1
}

# fan_traces: the dispatch bench's small cases (the fan-in joins among
# them) traced, each case's last trace as Chrome JSON (--trace-dir; read
# with scripts/trace-gaps.py), packed into $OUT/traces.tar.gz.
fan_traces() {
  mkdir -p /tmp/tr
  FILTER='^h200/dispatch|autarky  |traced|independent \(' LINES_SHOWN=30 run dispatch-trace 150 \
    $B/dispatch --quick --n=100 --instances=20000 --fan-in=10,1000 --trace-records=1024 --trace-dir=/tmp/tr
  tar -czf "$OUT/traces.tar.gz" -C /tmp/tr .
}

# Session 30's slots stages (s30-slots … s30-slots5) need
# docs/experiments/s30-slots.patch applied before the bundle, on bd6e258
# or earlier (06bdab1 merged it, its macros renamed or gone): the
# experiment and its macros are not in main (s30-slots also needs
# .gpu/ab/dispatch-main, main's own dispatch bench, stripped).
#
# slots_ab NAME=MACROS...: the 200-iteration fan-in rows (10 and 1000
# inputs, 5 reps) of each variant — the slots experiment
# (-DAUTARKY_EXP_SLOTS, AUTARKY_EXP_SLOTS=1) with its own macros —
# interleaved, REPS times (default 2).
slots_ab() {
  local F='^h200/dispatch/fan|^ +autarky |independent \(' r v
  for r in $(seq 1 "${REPS:-2}"); do
    for v in "$@"; do
      AUTARKY_EXP_SLOTS=1 AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_SLOTS ${v#*=}" FILTER="$F" LINES_SHOWN=20 \
        run "dispatch-200-${v%%=*}-$r" 120 $B/dispatch --n=1000 --instances=1000000 --reps=5 --fan-in=10,1000
    done
  done
}

# slots_quick NAME MACROS: the quick dispatch bench of one slots variant.
slots_quick() {
  AUTARKY_EXP_SLOTS=1 AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_SLOTS $2" \
    FILTER='^h200/dispatch|^ +autarky  |independent \(' LINES_SHOWN=60 \
    run "dispatch-$1-quick" 120 $B/dispatch --quick --fan-in=10,100,1000,3000
}

# halo LABEL ARGS...: a traced jacobi2d run (--json on stdout, kept apart
# from stderr) and its trace facts: the share of the compute blocks' time
# spent waiting for predecessors (neighbours and halos).
halo() {
  local label=$1
  shift
  local f="$LOGS/halo-$label"
  timeout -k 5 120 $B/autarky --json ${HALO_CMD:-jacobi2d} "$@" --trace "/tmp/halo-$label.trace.json" > "$f.json" 2> "$f.err"
  local rc=$?
  echo "--- halo $label: rc=$rc"
  [ $rc -eq 0 ] || { tail -n 5 "$f.err"; fail=1; return; }
  python3 - "$f.json" "$label" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d.get("trace") or {}
ns = t.get("compute_block_ns") or 0
w = (t.get("compute_waits_ns") or {}).get("predecessors of", 0)
share = 100.0 * w / ns if ns else 0.0
print(f"{sys.argv[2]}: {d.get('us_per_iteration')} us/iteration; compute blocks waiting for "
      f"predecessors {share:.1f}% of their time; overlap {t.get('overlap_fraction')}")
PY
  pack
}

# mpi_env FORCE_REMOTE: the environment of a two-rank run over NVSHMEM
# (its libraries in the torch venv, NVRTC and nvJitLink beside them, GPU
# tests required on every GPU) and M, the mpirun command passing it on;
# AUTARKY_NVSHMEM_FORCE_REMOTE=FORCE_REMOTE (1: through puts, as between
# nodes; 0: NVSHMEM's choice, its P2P mapping on one node).
mpi_env() {
  T=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
  export AUTARKY_NVSHMEM_DIR=$T/nvshmem AUTARKY_NVJITLINK_DIR=$T/cu13/lib \
    AUTARKY_CUDA_INCLUDE_DIR=$T/cu13/include AUTARKY_NVRTC_DIR=$T/cu13/lib \
    LD_LIBRARY_PATH=/usr/local/cuda/lib64:$T/nvshmem/lib:$T/cu13/lib \
    AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l) \
    AUTARKY_NVSHMEM_FORCE_REMOTE=$1
  X="-x AUTARKY_NVSHMEM_DIR -x AUTARKY_NVJITLINK_DIR -x AUTARKY_CUDA_INCLUDE_DIR -x AUTARKY_NVRTC_DIR"
  X="$X -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x AUTARKY_REQUIRE_GPU -x AUTARKY_REQUIRE_GPUS -x AUTARKY_NVSHMEM_FORCE_REMOTE"
  M="mpirun --allow-run-as-root --oversubscribe -n 2 $X"
}

case "${1:-}" in
s18-arrive)
  # Session 18 (1 GPU), after `bash .gpu/run`: a counted arrival by the
  # thread that made the SC fence is a relaxed RMW (and the successor's
  # word read relaxed), against -DAUTARKY_ARRIVE_ACQ_REL, one binary,
  # interleaved, twice: the dispatch bench at join widths 10 (scanned)
  # and 1000 (counted).
  F='^h200/dispatch/fan|^ +autarky |independent \(|uncounted'
  for r in 1 2; do
    for x in new acqrel; do
      case $x in new) e=;; acqrel) e=-DAUTARKY_ARRIVE_ACQ_REL;; esac
      AUTARKY_NVRTC_EXTRA="$e" FILTER="$F" LINES_SHOWN=40 run "dispatch-$x-$r" 150 $B/dispatch --quick --fan-in=10,1000
    done
  done
  pack
  ;;
s18-final)
  # Session 18 (1 GPU), after `bash .gpu/run` of the final head: the
  # dispatch bench and the CG bench once more (the closing note's rows).
  F='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted|span'
  FILTER="$F" LINES_SHOWN=40 run dispatch-final 150 $B/dispatch --quick
  FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met' LINES_SHOWN=40 run cg-bench-final 200 $B/cg --quick
  pack
  ;;
s18-wide)
  # Session 18 (1 GPU), after `bash .gpu/run`, on branch exp/wide-fold
  # (lost; not on main): a wide task's own next instance checked by the
  # block before the publish (the claim folded into it), against
  # -DAUTARKY_NO_WIDE_FOLD, one binary, interleaved:
  # the dispatch bench twice (fan-in's sink; the other rows for the cost
  # of the new call site's spills), CG 64³ once.
  F='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted|span'
  for r in 1 2; do
    for x in new nowide; do
      case $x in new) e=;; nowide) e=-DAUTARKY_NO_WIDE_FOLD;; esac
      export AUTARKY_NVRTC_EXTRA="$e"
      FILTER="$F" LINES_SHOWN=40 run "dispatch-$x-$r" 150 $B/dispatch --quick
      [ $r = 1 ] && OK_RC=4 FILTER='µs per|per iteration|rror' run "cg64-$x" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 2000
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  FILTER='^h200|autarky|cusparse|host-sync|dev-ptr|rror' LINES_SHOWN=40 run cg-bench 200 $B/cg --quick
  pack
  ;;
s19-final)
  # Session 19 (1 GPU), after `bash .gpu/run` of the final head: the
  # reduce's previous scalars loaded by thread 0 before the sum (default)
  # against after it (-DCG_SCALARS_AFTER_SUM), one binary, interleaved;
  # then the CG and dispatch benches (the closing note's rows).
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in pre after; do
      case $x in pre) e=;; after) e=-DCG_SCALARS_AFTER_SUM;; esac
      export AUTARKY_NVRTC_EXTRA="$e"
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER="$F" run "cg64-sr-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --variant single-reduction
      OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met' LINES_SHOWN=40 run cg-bench-final 300 $B/cg --quick
  F='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted|span'
  FILTER="$F" LINES_SHOWN=40 run dispatch-final 200 $B/dispatch --quick
  pack
  ;;
s22-l2)
  # Session 22 (1 GPU; $B/autarky-s22d): with the rows as patterns the
  # matrix streams ~1 MB an iteration, so spans of vectors longer than 1.4x
  # the set-aside may now gain from a window over their head: the head up
  # to 4x (AUTARKY_L2_HEAD_MAX_SHARE=4) against the default (none there),
  # interleaved.
  X=${X:-$B/autarky-s22d}
  F='"us_per_iteration"|"l2_persist_bytes"|rror'
  for r in 1 2; do
    for h in 1.4 4; do
      AUTARKY_L2_HEAD_MAX_SHARE=$h OK_RC=4 FILTER="$F" run "cg128-h$h-$r" 60 $X --json cg --poisson3d 128 --tol 0 --max-iters 300
      AUTARKY_L2_HEAD_MAX_SHARE=$h OK_RC=4 FILTER="$F" run "cg2d1024-sr-h$h-$r" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction
      AUTARKY_L2_HEAD_MAX_SHARE=$h OK_RC=4 FILTER="$F" run "cg2d1448-h$h-$r" 60 $X --json cg --poisson2d 1448 --tol 0 --max-iters 300
      [ $r = 1 ] && AUTARKY_L2_HEAD_MAX_SHARE=$h OK_RC=4 FILTER="$F" run "cg128-sr-h$h" 60 $X --json cg --poisson3d 128 --tol 0 --max-iters 300 --variant single-reduction
      [ $r = 1 ] && AUTARKY_L2_HEAD_MAX_SHARE=$h OK_RC=4 FILTER="$F" run "cg128-pj-h$h" 60 $X --json cg --poisson3d 128 --tol 0 --max-iters 300 --precond jacobi
    done
  done
  pack
  ;;
s22-comm)
  # Session 22 (1 GPU; the bundle's autarky): CG's reduces share comm block
  # 0 with the progress publisher (every 50 µs: stores to host memory, a
  # sweep of done words) on one comm block; on two they run on block 1.
  # --comm-blocks 1 against 2, interleaved.
  F='"us_per_iteration"|rror'
  for r in 1 2; do
    for c in 1 2; do
      OK_RC=4 FILTER="$F" run "cg2d1024-c$c-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --comm-blocks $c
      OK_RC=4 FILTER="$F" run "cg64-c$c-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --comm-blocks $c
      OK_RC=4 FILTER="$F" run "cg32-c$c-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 --comm-blocks $c
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg128-c$c" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 --comm-blocks $c
    done
  done
  pack
  ;;
s24-ab1)
  # Session 24 (1 GPU): gpu_cg first (the merged single reduction's bitwise
  # trial), then CG Standard, interleaved, two reps: new (the role-split
  # dispatch, each recurrence's own kinds, fewer spills) against each
  # control: acc (-DAUTARKY_EXP_ACC_LOCAL), role (every loop dispatches
  # every kind and the graph registers every CG kind: the dispatch before),
  # old (role and every fewer-spills control: about main's device code);
  # inl and bar once.
  f=$(ls .gpu/tests/gpu_cg-* 2>/dev/null | head -1)
  [ -n "$f" ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 240 "$f" --test-threads=1
  F='"us_per_iteration"|"rel_residual"|rror'
  SP="-DAUTARKY_EXP_ACC_LOCAL -DAUTARKY_EXP_SUM_INLINE -DAUTARKY_EXP_SUM_BARRIER_TREE"
  cgrun() { # NAME EXTRA ALLKINDS ARGS...
    local name=$1 e=$2 k=$3; shift 3
    AUTARKY_EXP_CG_ALL_KINDS=$k AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "$name" 60 $B/autarky --json cg "$@" --tol 0
  }
  for r in 1 2; do
    for x in new acc role old; do
      case $x in new) e=; k=0 ;; acc) e=-DAUTARKY_EXP_ACC_LOCAL; k=0 ;;
        role) e=-DAUTARKY_EXP_DISPATCH_ANY_ROLE; k=1 ;; old) e="-DAUTARKY_EXP_DISPATCH_ANY_ROLE $SP"; k=1 ;; esac
      cgrun "cg2d1024-$x-$r" "$e" $k --poisson2d 1024 --max-iters 500
      cgrun "cg128-$x-$r" "$e" $k --poisson3d 128 --max-iters 300
      cgrun "cg64-$x-$r" "$e" $k --poisson3d 64 --max-iters 2000
      cgrun "cg32-$x-$r" "$e" $k --poisson3d 32 --max-iters 2000
    done
  done
  for x in inl bar; do
    case $x in inl) e=-DAUTARKY_EXP_SUM_INLINE ;; bar) e=-DAUTARKY_EXP_SUM_BARRIER_TREE ;; esac
    cgrun "cg2d1024-$x" "$e" 0 --poisson2d 1024 --max-iters 500
    cgrun "cg64-$x" "$e" 0 --poisson3d 64 --max-iters 2000
  done
  pack
  ;;
s24-ab2)
  # Session 24 (1 GPU): the single reduction with its updates merged into
  # the SpMV tiles against axpy tiles (--separate-updates), and merged with
  # acc[] local, interleaved, two reps; Jacobi 2D 256² and 3D 256³ under
  # the role-split dispatch against every loop dispatching every kind.
  F='"us_per_iteration"|"rel_residual"|"iterations"|rror'
  for r in 1 2; do
    for x in merged sep acc; do
      case $x in merged) e=; a= ;; sep) e=; a=--separate-updates ;; acc) e=-DAUTARKY_EXP_ACC_LOCAL; a= ;; esac
      for c in "2d1024 --poisson2d 1024 --max-iters 500" "128 --poisson3d 128 --max-iters 300" \
               "64 --poisson3d 64 --max-iters 2000" "32 --poisson3d 32 --max-iters 2000"; do
        read -r n args <<< "$c"
        # shellcheck disable=SC2086
        AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "sr$n-$x-$r" 60 $B/autarky --json cg --variant single-reduction $args --tol 0 $a
      done
    done
  done
  # Iterations to 1e-8 (merged; separate gives bitwise the same run).
  FILTER="$F" run sr2d1024-conv 60 $B/autarky --json cg --variant single-reduction --poisson2d 1024 --tol 1e-8 --max-iters 5000
  FILTER="$F" run std2d1024-conv 60 $B/autarky --json cg --poisson2d 1024 --tol 1e-8 --max-iters 5000
  for r in 1 2; do
    for x in new role; do
      case $x in new) e= ;; role) e=-DAUTARKY_EXP_DISPATCH_ANY_ROLE ;; esac
      AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "j2d256-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 20000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "j2d256n-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 20000 --check-every 1
      AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "j3d256-$x-$r" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2
    done
  done
  pack
  ;;
s26-floor)
  # Session 26 (1 GPU): the floor of a pinned neighbour hop without the
  # runtime (every variant; the flags' spacing; the runtime's additions),
  # then ncu source counters of Jacobi 2D 256² S = 1 with the run's own
  # cubin kept (AUTARKY_CACHE_DIR under $OUT: disassemble it with
  # `nvdisasm -g -c` to map the samples to source lines).
  /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/pinned_hop benches/floor/pinned_hop.cu
  run floor-all 200 /tmp/pinned_hop
  run floor-strides 100 /tmp/pinned_hop strides
  run floor-additions 100 /tmp/pinned_hop x
  mkdir -p "$OUT/cache"
  AUTARKY_CACHE_DIR="$OUT/cache" AUTARKY_NVRTC_EXTRA=-lineinfo run ncu-j256 200 /usr/local/cuda/bin/ncu --clock-control none --section SourceCounters --section WarpStateStats -k autarky_megakernel -c 1 -f -o /tmp/j256 $B/autarky jacobi2d --size 256 --iters 3000 --check-every 0
  /usr/local/cuda/bin/ncu -i /tmp/j256.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > "$OUT/sass-j256.csv.gz"
  pack
  ;;
s27-mini)
  # Session 27 (1 GPU): what fits after the suite in one call: the head's
  # CLI (6ee77a0's device code) against c202a87's (before carried limits),
  # interleaved, two reps: CG 3D 64³ and checked Jacobi 256².
  for r in 1 2; do
    for b in c202a87 6ee77a0; do
      A=.gpu/ab/autarky-$b
      OK_RC=4 FILTER='"us_per_iteration"|rror' run "cg64-$b-$r" 40 $A --json cg --poisson3d 64 --tol 0 --max-iters 2000
      FILTER='µs per|rror' run "j256-n100-$b-$r" 40 $A jacobi2d --size 256 --iters 6000 --check-every 100
    done
  done
  pack
  ;;
s39-v)
  # Session 39 (1 GPU; apply docs/experiments/s39-verdict-shared.patch
  # first): the verdict through shared memory and a plain barrier
  # (-DAUTARKY_EXP_VERDICT_SHARED) against bar.red, on the solo and round
  # paths: stencil rows and Jacobi 2D 256² S = 4, twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in red shared; do
      X=""; [ $v = shared ] && X=-DAUTARKY_EXP_VERDICT_SHARED
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
    done
  done
  pack
  ;;
s40-a)
  # Session 40 (1 GPU): the round path's verdict through a shared word
  # (landed: the stencil rows as they are now), and the round's progress
  # published every 16 rounds instead of every 16 tasks
  # (-DAUTARKY_EXP_ROUND_TICK_ROUNDS) against every 16 tasks; one binary,
  # interleaved, twice; Jacobi 2D 256² S = 4 as a control. (Equal: the flag
  # was not kept, so both halves now run the same kernel.)
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in tasks rounds; do
      X=""; [ $v = rounds ] && X=-DAUTARKY_EXP_ROUND_TICK_ROUNDS
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  FILTER="$J" LINES_SHOWN=3 run "j256-s4" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
  pack
  ;;
s40-b)
  # Session 40 (1 GPU): the round path's pieces the floor's patch kernel
  # lacks, priced by removing each (-DAUTARKY_EXP_ROUND_BARE=<bits>, timing
  # only: 1 tick, 2 flush_report, 4 failure flag, 8 verdict, 16 wait_until,
  # 32 limit fold; 63 all), one binary, interleaved, twice; then thread 0's
  # phase cycles with none and all removed.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|2×2 a block +[0-9]|cuda-graph'
  for r in 1 2; do
    for b in 0 1 2 4 8 16 32 63; do
      AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_ROUND_BARE=$b" FILTER="$F" LINES_SHOWN=12 run "stencil-bare$b-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  for b in 0 63; do
    AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_ROUND_BARE=$b -DAUTARKY_EXP_PHASE_CLOCK" FILTER='round block|2×2 a block +[0-9]' LINES_SHOWN=12 run "phase-bare$b" 100 $B/dispatch --reps=1 --only=stencil --stencil-iters=2000 --stencil-patches=2
  done
  pack
  ;;
s42-e)
  # Session 42 (1 GPU): the round path's cuts tried on the solo path
  # (-DAUTARKY_EXP_SOLO_FAST: the failure flag by held address, thread 0
  # alone testing it after issuing the release fence where the task has no
  # remote successors, the spin's success straight to the acquire) against
  # the default, one binary, interleaved, twice: the stencil one tile a
  # block (2000 iterations), Jacobi 2D 256² S = 1 and S = 4 (CLI).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in ctl solo; do
      X=""; [ $v = solo ] && X=-DAUTARKY_EXP_SOLO_FAST
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000
      for S in 1 4; do
        AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s$S-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync $S
      done
    done
  done
  pack
  ;;
s42-d)
  # Session 42 (1 GPU): the closing tables on 25245e1's device code — the
  # whole dispatch bench, the Jacobi bench's one-GPU rows (owed since
  # session 41) — the opt-in soak, and the round path priced again on the
  # new default (-DAUTARKY_EXP_ROUND_BARE: 1 the tick, 2 the report, 8 the
  # verdict, 16 the wait's fallback, 63 all), the default first and last.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for v in ctl b1 b2 b8 b16 b63 ctl2; do
    X=""; case $v in b*) X=-DAUTARKY_EXP_ROUND_BARE=${v#b} ;; esac
    AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
  done
  FILTER='^h200/dispatch|^ +autarky|cuda-graph|independent|launch per' LINES_SHOWN=60 run dispatch-full 240 $B/dispatch
  FILTER='^test |^test result|FAILED|panicked|soak:' run soak 200 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  FILTER='^h200|^case|µs per|3D|target' LINES_SHOWN=40 run jacobi-bench 330 $B/jacobi --2d=256,1024,4096,16384 --3d=64,256 --pes=none --two-gpu=none --weak=none --reps=5
  pack
  ;;
s42-c)
  # (Ran in session 42; 25245e1 made FAST + FAIL_LATE the round's code and
  # dropped VERDICT_FIRST (lost): a record, not rerunnable.)
  # Session 42 (1 GPU): after s42-b (the round's held addresses, FAST:
  # 1.018 -> 0.982), two more cuts on top of FAST, one binary, interleaved,
  # twice: thread 0 alone reads the failure flag and tests it after issuing
  # the release fence (-DAUTARKY_EXP_ROUND_FAIL_LATE; the next verdict stops
  # a failed block), the verdict's store before the acquire's invalidation
  # (-DAUTARKY_EXP_ROUND_VERDICT_FIRST), both; the default and BARE=63 as
  # references.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for r in 1 2; do
    for v in ctl fast late first both b63; do
      case $v in
        ctl) X="" ;;
        fast) X=-DAUTARKY_EXP_ROUND_FAST ;;
        late) X="-DAUTARKY_EXP_ROUND_FAST -DAUTARKY_EXP_ROUND_FAIL_LATE" ;;
        first) X="-DAUTARKY_EXP_ROUND_FAST -DAUTARKY_EXP_ROUND_VERDICT_FIRST" ;;
        both) X="-DAUTARKY_EXP_ROUND_FAST -DAUTARKY_EXP_ROUND_FAIL_LATE -DAUTARKY_EXP_ROUND_VERDICT_FIRST" ;;
        b63) X=-DAUTARKY_EXP_ROUND_BARE=63 ;;
      esac
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  pack
  ;;
s42-b)
  # (Ran in session 42; 25245e1 made the .global red the default and
  # FAST's held addresses the round's code, the flags gone: a record, not
  # rerunnable.)
  # Session 42 (1 GPU): the round path's pieces priced on the floor's 2 x 2
  # patch (pinned_hop q: each piece added to the floor alone, all six, a
  # line a block, one body barrier), then in the runtime, one binary,
  # interleaved, twice: the default (progress as a .global red, no limit
  # reread after the acquire without stopping kinds), its generic-red
  # control (-DAUTARKY_EXP_RED_GENERIC), the round's shared addresses held
  # and the spin's success straight to the verdict (-DAUTARKY_EXP_ROUND_FAST),
  # and the round pieces removed (-DAUTARKY_EXP_ROUND_BARE=8, 63); chain and
  # self-chain rows for the red. The floor binary is built where the tree
  # is (nvcc, pinned_hop.cu) and carried as .gpu/bin/pinned_hop.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  [ -x $B/pinned_hop ] || /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o $B/pinned_hop benches/floor/pinned_hop.cu
  FILTER='^patch' LINES_SHOWN=40 run floor-q 150 $B/pinned_hop q
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for r in 1 2; do
    for v in ctl gen fast b8 b63 fastb63; do
      case $v in
        ctl) X="" ;;
        gen) X=-DAUTARKY_EXP_RED_GENERIC ;;
        fast) X=-DAUTARKY_EXP_ROUND_FAST ;;
        b8) X=-DAUTARKY_EXP_ROUND_BARE=8 ;;
        b63) X=-DAUTARKY_EXP_ROUND_BARE=63 ;;
        fastb63) X="-DAUTARKY_EXP_ROUND_FAST -DAUTARKY_EXP_ROUND_BARE=63" ;;
      esac
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
    for v in ctl gen; do
      X=""; [ $v = gen ] && X=-DAUTARKY_EXP_RED_GENERIC
      AUTARKY_NVRTC_EXTRA="$X" FILTER='^h200/dispatch/(chain|self)' LINES_SHOWN=12 run "chain-$v-$r" 100 $B/dispatch --reps=5 --only=chain,self-chain
    done
  done
  pack
  ;;
s42-a)
  # (Not run: session 42's s42-d ran its Jacobi rows and priced the round
  # on 25245e1's default instead. Still runnable.)
  # Written in session 41 (1 GPU): what session 41 could not
  # fit — the Jacobi bench's one-GPU rows (the closing table's; cut off
  # by the device budget) and the round path priced piece by piece again
  # on 73f5e14's default (-DAUTARKY_EXP_ROUND_BARE: 8 the verdict, 3 the
  # tick and report, 4 the failure flag, 16 the wait's fallback, 63 all),
  # interleaved, twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='^h200|^case|µs per|3D|target' LINES_SHOWN=40 run jacobi-bench 330 $B/jacobi --2d=256,1024,4096,16384 --3d=64,256 --pes=none --two-gpu=none --weak=none --reps=5
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for r in 1 2; do
    for v in ctl b8 b3 b4 b16 b63; do
      X=""; [ $v != ctl ] && X=-DAUTARKY_EXP_ROUND_BARE=${v#b}
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  pack
  ;;
s41-a)
  # (Ran in session 41; 73f5e14 made three of its flags the default and
  # removed the fourth: a record, not rerunnable.)
  # Session 41 (1 GPU): with the inline spin now the default (s40-c: 2 x 2
  # 1.129 -> 1.076), four cuts on the pinned paths' release, one binary,
  # interleaved, twice — only thread 0 reads the failure flag, before the
  # fence (-DAUTARKY_EXP_FAIL_T0; round and solo), the round's release
  # fence without its acquire half (-DAUTARKY_EXP_REL_FENCE), the thread
  # index held (-DAUTARKY_EXP_T0_REG), the round's store addresses loaded
  # before the fence (-DAUTARKY_EXP_OWN_EARLY), all four — and the spin's
  # control (-DAUTARKY_EXP_NO_INLINE_SPIN); then thread 0's cycles by
  # phase for the default and all four.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  ALL="-DAUTARKY_EXP_FAIL_T0 -DAUTARKY_EXP_REL_FENCE -DAUTARKY_EXP_T0_REG -DAUTARKY_EXP_OWN_EARLY"
  for r in 1 2; do
    for v in ctl nospin fail rel t0 own all; do
      case $v in
        ctl) X="" ;;
        nospin) X=-DAUTARKY_EXP_NO_INLINE_SPIN ;;
        fail) X=-DAUTARKY_EXP_FAIL_T0 ;;
        rel) X=-DAUTARKY_EXP_REL_FENCE ;;
        t0) X=-DAUTARKY_EXP_T0_REG ;;
        own) X=-DAUTARKY_EXP_OWN_EARLY ;;
        all) X="$ALL" ;;
      esac
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
      case $v in ctl|fail|all)
        AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4 ;;
      esac
    done
  done
  for v in ctl all; do
    X="-DAUTARKY_EXP_PHASE_CLOCK"; [ $v = all ] && X="$X $ALL"
    AUTARKY_NVRTC_EXTRA="$X" FILTER="$F|^phase" LINES_SHOWN=40 run "clock-$v" 100 $B/dispatch --reps=1 --only=stencil --stencil-iters=2000 --stencil-patches=2
  done
  pack
  ;;
s40-c)
  # (Ran in session 41 on 66aa8e0; its flags are gone since 73f5e14 — the
  # spin is the default, the other two lost: a record, not rerunnable.)
  # Session 40 (1 GPU; written, not run: the device was taken back): three
  # opt-in experiments against the default, one binary, interleaved, twice
  # — a pinned wait spins inline up to INLINE_POLLS polls before
  # wait_until (-DAUTARKY_EXP_INLINE_SPIN; solo and round paths), the
  # round's tick every fourth round (-DAUTARKY_EXP_ROUND_TICK4), the
  # round's failure flag carried by its last barrier
  # (-DAUTARKY_EXP_ROUND_FAIL_OR), and all three: the stencil rows (solo
  # and 2 x 2 rounds) and Jacobi 2D 256² S = 4 (solo).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in ctl spin tick4 failor all; do
      case $v in
        ctl) X="" ;;
        spin) X=-DAUTARKY_EXP_INLINE_SPIN ;;
        tick4) X=-DAUTARKY_EXP_ROUND_TICK4 ;;
        failor) X=-DAUTARKY_EXP_ROUND_FAIL_OR ;;
        all) X="-DAUTARKY_EXP_INLINE_SPIN -DAUTARKY_EXP_ROUND_TICK4 -DAUTARKY_EXP_ROUND_FAIL_OR" ;;
      esac
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
    done
  done
  # Then (S40C_TESTS=1): the GPU tests that wait, fail, abort and time out
  # (not gpu_cg, gpu_jacobi: device time), and the soak — of the kernel as
  # built by default, so run them after making the winners the default.
  if [ "${S40C_TESTS:-0}" = 1 ]; then
    T='^test |^test result|FAILED|panicked|soak:'
    for t in gpu gpu_faults gpu_multipe gpu_trace gpu_unstoppable; do
      FILTER="$T" LINES_SHOWN=60 run "tests-$t" 200 .gpu/tests/$t-* --test-threads=1
    done
    FILTER="$T" run soak 200 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  fi
  pack
  ;;
s39-final)
  # Session 39 (1 GPU), after `bash .gpu/run` in the same call: the opt-in
  # soak (1000 random graphs, every sixth patches of tiles run as rounds),
  # then the stencil rows once more on the landed round path against
  # -DAUTARKY_NO_PIN_ROUND.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='^test |^test result|FAILED|panicked|soak:' run soak 200 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for v in round cached; do
    X=""; [ $v = cached ] && X=-DAUTARKY_NO_PIN_ROUND
    AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
  done
  pack
  ;;
s39-d)
  # Session 39 (1 GPU): the round's bodies with nothing but their barriers
  # between them when no task of the round waits for another
  # (-DAUTARKY_EXP_ROUND_SPLIT) against the loop that tests the mask after
  # each: by phase (sums in shared memory now: s39-a..c's clocked builds
  # reloaded spilled sums from L2 after each acquire), then A/B, twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for v in mask split; do
    X=-DAUTARKY_EXP_PHASE_CLOCK; [ $v = split ] && X="$X -DAUTARKY_EXP_ROUND_SPLIT"
    AUTARKY_NVRTC_EXTRA="$X" FILTER="$F|^phase" LINES_SHOWN=18 run "clock-$v" 100 $B/dispatch --reps=1 --only=stencil --stencil-iters=2000 --stencil-patches=2
  done
  for r in 1 2; do
    for v in mask split; do
      X=""; [ $v = split ] && X=-DAUTARKY_EXP_ROUND_SPLIT
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  pack
  ;;
s39-c)
  # Session 39 (1 GPU): the solo and round paths dispatch unchecked (kinds
  # checked when the list is cached; a round reads the failure flag once
  # unless a task waits for an earlier one of the round), the round's
  # stores from cached addresses: by phase, then A/B against
  # -DAUTARKY_EXP_CHECKED_DISPATCH on the stencil and Jacobi 2D/3D, twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_PHASE_CLOCK FILTER="$F|^phase" LINES_SHOWN=14 run clock 100 $B/dispatch --reps=1 --only=stencil --stencil-iters=2000 --stencil-patches=2
  for r in 1 2; do
    for v in new chk; do
      X=""; [ $v = chk ] && X=-DAUTARKY_EXP_CHECKED_DISPATCH
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s1-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j3d256-s1-$v-$r" 90 $B/autarky jacobi3d --size 256 --iters 1000 --check-every 0 --steps-per-sync 1
    done
  done
  FILTER='^test |^test result|FAILED|panicked' run gpu-patches 200 .gpu/tests/gpu-* --test-threads=1 patch
  pack
  ;;
s39-b)
  # Session 39 (1 GPU): the round's bodies (1110 cycles for four empty
  # tasks against the floor's 111 in s39-a): the next task's fields read
  # before each barrier and the failure flag read only where needed
  # (-DAUTARKY_EXP_ROUND_PREFETCH), with the cached store addresses
  # (-DAUTARKY_EXP_ROUND_OWN, -0.13 µs in s39-a) — by phase (the bodies
  # split into work, barrier and check), then A/B unclocked, twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  O=-DAUTARKY_EXP_ROUND_OWN
  for v in own pre; do
    X="-DAUTARKY_EXP_PHASE_CLOCK $O"; [ $v = pre ] && X="$X -DAUTARKY_EXP_ROUND_PREFETCH"
    AUTARKY_NVRTC_EXTRA="$X" FILTER="$F|^phase round" LINES_SHOWN=16 run "clock-$v" 100 $B/dispatch --reps=1 --only=stencil --stencil-iters=2000 --stencil-patches=2
  done
  for r in 1 2; do
    for v in own pre; do
      X="$O"; [ $v = pre ] && X="$X -DAUTARKY_EXP_ROUND_PREFETCH"
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  pack
  ;;
s39-a)
  # Session 39 (1 GPU): where the round path's 0.8 µs over the floor goes.
  # Thread 0's cycles an iteration by phase (-DAUTARKY_EXP_PHASE_CLOCK:
  # wait, acquire + verdict barrier, bodies, release fence, stores + tail),
  # printed for every 61st block, on the floor's 1 x 1 and 2 x 2 patches
  # (pinned_hop c) and the runtime's stencil one tile a block and in 2 x 2
  # patches, with the round's store addresses from the cache
  # (-DAUTARKY_EXP_ROUND_OWN) and without; then that flag's A/B unclocked,
  # twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='error|warning' run floor-build 120 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$LOGS/pinned_hop" benches/floor/pinned_hop.cu
  FILTER='.' LINES_SHOWN=30 run floor-c 120 "$LOGS/pinned_hop" c
  rm -f "$LOGS/pinned_hop"
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for v in base own; do
    X=-DAUTARKY_EXP_PHASE_CLOCK; [ $v = own ] && X="$X -DAUTARKY_EXP_ROUND_OWN"
    AUTARKY_NVRTC_EXTRA="$X" FILTER="$F|^phase" LINES_SHOWN=40 run "clock-$v" 100 $B/dispatch --reps=1 --only=stencil --stencil-iters=2000 --stencil-patches=2
  done
  for r in 1 2; do
    for v in base own; do
      X=""; [ $v = own ] && X=-DAUTARKY_EXP_ROUND_OWN
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  pack
  ;;
s38-e)
  # Session 38 (1 GPU): the round path inlined (s38-d's ran as a call: its
  # reads of the run's parameters were generic loads, four of them after
  # the release fence's L1 invalidation, in series with the stores): the
  # stencil one a block and in 2 x 2 patches (on the default runtime and
  # on one of 256 compute blocks) against -DAUTARKY_NO_PIN_ROUND, twice;
  # the patched-stencil GPU trials.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for r in 1 2; do
    for v in round cached; do
      X=""; [ $v = cached ] && X=-DAUTARKY_NO_PIN_ROUND
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2
    done
  done
  FILTER='^test |^test result|FAILED|panicked' run gpu-patches 200 .gpu/tests/gpu-* --test-threads=1 patch
  pack
  ;;
s38-d)
  # Session 38 (1 GPU): the round path (a patch of tiles on one block: one
  # poll of the outside words, the bodies, one release fence) — the
  # stencil pinned one a block, in 2 x 2 and 4 x 4 patches, against
  # -DAUTARKY_NO_PIN_ROUND (the cached path for a patch), one binary,
  # interleaved, twice; then the patched-stencil GPU trials. First the
  # floor's patches (s38-c's, not run there).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='error|warning' run floor-build 180 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$LOGS/pinned_hop" benches/floor/pinned_hop.cu
  FILTER='.' LINES_SHOWN=30 run floor-g 120 "$LOGS/pinned_hop" g
  rm -f "$LOGS/pinned_hop"
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for r in 1 2; do
    for v in round cached; do
      X=""; [ $v = cached ] && X=-DAUTARKY_NO_PIN_ROUND
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2,4
    done
  done
  FILTER='^test |^test result|FAILED|panicked|pinned graphs' run gpu-patches 200 .gpu/tests/gpu-* --test-threads=1 patch random_graphs_of_pinned
  pack
  ;;
s38-c)
  # Session 38 (1 GPU): the floor's patches again, the kernel's addresses
  # in registers (s38-b's patch rows spent ~1.2 µs on a local array), the
  # release batched behind one fence against a st.release a tile.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='error|warning' run floor-build 180 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$LOGS/pinned_hop" benches/floor/pinned_hop.cu
  FILTER='.' LINES_SHOWN=30 run floor-g 120 "$LOGS/pinned_hop" g
  rm -f "$LOGS/pinned_hop"
  pack
  ;;
s38-b)
  # Session 38 (1 GPU): s38-a's two failures redone — the floor's patches
  # (the kernel now bounded to 8 blocks an SM) and the stencil rows (the
  # patched rows declared in the case) — the solo path's pointers against
  # indices on the stencil, interleaved, twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='error|warning' run floor-build 120 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$LOGS/pinned_hop" benches/floor/pinned_hop.cu
  FILTER='.' LINES_SHOWN=30 run floor-g 120 "$LOGS/pinned_hop" g
  rm -f "$LOGS/pinned_hop"
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  for r in 1 2; do
    for v in ptr idx; do
      X=""; [ $v = ptr ] && X=-DAUTARKY_EXP_SOLO_POINTERS
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2,4
    done
  done
  pack
  ;;
s38-a)
  # Written in session 37, not yet run (1 GPU): (1) the floor's hop with
  # the runtime solo path's pre-release pieces one at a time — the verdict
  # through the barrier (bar.red + B2R), the failure flag after the body's
  # barrier, the kind's switch (pinned_hop r); (2) the solo path holding
  # its words' addresses (-DAUTARKY_EXP_SOLO_POINTERS: the poll issues its
  # four loads in 8 instructions instead of ~24, a constant-bank load and
  # two adds a word fewer; no stack growth in the stencil's or Jacobi's
  # kernels) against indices, one binary, interleaved, twice. Added in
  # session 38: fewer blocks (pinned_hop g: smaller grids; the 32 x 32
  # tiles in patches of 2-16 a block, one release fence a patch) and the
  # stencil row pinned in 2 x 2 and 4 x 4 patches (--stencil-patches).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='error|warning' run floor-build 120 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$LOGS/pinned_hop" benches/floor/pinned_hop.cu
  FILTER='.' LINES_SHOWN=20 run floor-r 120 "$LOGS/pinned_hop" r
  FILTER='.' LINES_SHOWN=30 run floor-g 120 "$LOGS/pinned_hop" g
  rm -f "$LOGS/pinned_hop"
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in ptr idx; do
      X=""; [ $v = ptr ] && X=-DAUTARKY_EXP_SOLO_POINTERS
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil --stencil-iters=2000 --stencil-patches=2,4
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s1-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j3d256-s1-$v-$r" 90 $B/autarky jacobi3d --size 256 --iters 1000 --check-every 0 --steps-per-sync 1
    done
  done
  pack
  ;;
s37-soak)
  # Session 37 (1 GPU; after `bash .gpu/run` in the same call): the opt-in
  # soak — 1000 random graphs, each checked — which had not run since the
  # solo path (session 36) and its eight-predecessor form.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='^test |^test result|FAILED|panicked|soak:' run soak 150 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  pack
  ;;
s37-c)
  # Session 37 (1 GPU): fewer polls. (1) The floor: a spin of 32-1024
  # cycles after each failed poll, or before an instance's first, and how
  # many polls an instance takes (pinned_hop b). (2) The solo path with
  # the same spin after a failed poll (-DAUTARKY_EXP_SOLO_BACKOFF=cycles)
  # against none, one binary, interleaved, twice: the stencil rows,
  # Jacobi 2D 256² S = 1.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='error|warning' run floor-build 120 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$LOGS/pinned_hop" benches/floor/pinned_hop.cu
  FILTER='.' LINES_SHOWN=70 run floor-b 120 "$LOGS/pinned_hop" b
  rm -f "$LOGS/pinned_hop"
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in 0 64 256; do
      X=""; [ $v != 0 ] && X=-DAUTARKY_EXP_SOLO_BACKOFF=$v
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-b$v-$r" 100 $B/dispatch --reps=5 --only=stencil
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s1-b$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
    done
  done
  pack
  ;;
s37-b)
  # Session 37 (1 GPU): the solo path's early poll — an instance's first
  # poll issued before the previous instance's bookkeeping (count, tick,
  # residual), which runs while the loads are in flight — against its
  # control (-DAUTARKY_NO_SOLO_EARLY_POLL) and the cached path
  # (-DAUTARKY_NO_PIN_SOLO), one binary, interleaved, twice: the stencil
  # rows at 500 iterations and at 5000 (the slope: a run's fixed cost
  # spread ten times thinner), Jacobi 2D 256² S = 1 and 4.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in early late ctl; do
      X=""; [ $v = late ] && X=-DAUTARKY_NO_SOLO_EARLY_POLL; [ $v = ctl ] && X=-DAUTARKY_NO_PIN_SOLO
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil5k-$v-$r" 100 $B/dispatch --reps=3 --only=stencil --stencil-iters=5000
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s1-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
    done
  done
  pack
  ;;
s37-a)
  # Session 37 (1 GPU): (1) the floor's hop in parts — the release's
  # MEMBAR alone, a poll's round trip under the stencil's load — and polls
  # pipelined two or four batches deep (benches/floor/pinned_hop.cu, `p`);
  # (2) the solo path for lists of five to eight predecessors
  # (-DAUTARKY_SOLO_WIDE, passed by the host where such a list exists)
  # against -DAUTARKY_NO_PIN_SOLO, one binary, interleaved, twice: the
  # stencil rows, Jacobi 2D 256² S = 1, 4, 1024² S = 4, 3D 256³ S = 1, 2,
  # CG 2D 1024² and 3D 64³; each run logs its kernel's -D flags
  # (RUST_LOG=autarky=debug: "kernel ... for sm_90: ...").
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='error|warning' run floor-build 120 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$LOGS/pinned_hop" benches/floor/pinned_hop.cu
  FILTER='.' LINES_SHOWN=60 run floor-p 120 "$LOGS/pinned_hop" p
  rm -f "$LOGS/pinned_hop"
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph|kernel .* for sm_'
  J='µs per|rror|kernel .* for sm_'
  export RUST_LOG=autarky=debug
  for r in 1 2; do
    for v in solo ctl; do
      X=""; [ $v = ctl ] && X=-DAUTARKY_NO_PIN_SOLO
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=12 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s1-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j1024-s4-$v-$r" 60 $B/autarky jacobi2d --size 1024 --iters 8000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j3d256-s1-$v-$r" 90 $B/autarky jacobi3d --size 256 --iters 1000 --check-every 0 --steps-per-sync 1
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" LINES_SHOWN=3 run "j3d256-s2-$v-$r" 90 $B/autarky jacobi3d --size 256 --iters 2000 --check-every 0 --steps-per-sync 2
      AUTARKY_NVRTC_EXTRA="$X" OK_RC=4 FILTER='"us_per_iteration"|rror|kernel .* for sm_' LINES_SHOWN=3 run "cg2d1024-$v-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$X" OK_RC=4 FILTER='"us_per_iteration"|rror|kernel .* for sm_' LINES_SHOWN=3 run "cg64-$v-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
    done
  done
  unset RUST_LOG
  pack
  ;;
s36-cg)
  # Written in session 36, not yet run: does the solo path cost CG (36.93
  # against 35.82 in one run each)? CG 2D 1024² and 3D 64³ with and
  # without it (-DAUTARKY_NO_PIN_SOLO), interleaved, twice; then the
  # opt-in soak (1000 random graphs, each checked) on the solo path.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  for r in 1 2; do
    for v in solo ctl; do
      X=""; [ $v = ctl ] && X=-DAUTARKY_NO_PIN_SOLO
      AUTARKY_NVRTC_EXTRA="$X" OK_RC=4 FILTER='"us_per_iteration"|rror' run "cg2d1024-$v-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$X" OK_RC=4 FILTER='"us_per_iteration"|rror' run "cg64-$v-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
    done
  done
  FILTER='^test |^test result|FAILED|panicked|soak:' run soak 100 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  pack
  ;;
s36-b)
  # Session 36 (1 GPU; then `bash .gpu/run` in the same call): the solo
  # path's third form against -DAUTARKY_NO_PIN_SOLO, one binary, short
  # (the compiles are most of it): the stencil rows twice, Jacobi 256²
  # S = 1 and 4 and CG 2D 1024² (no solo list: the same kernel both ways)
  # once each.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in solo ctl; do
      X=""; [ $v = ctl ] && X=-DAUTARKY_NO_PIN_SOLO
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=20 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil
      [ $r = 2 ] && continue
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" run "j256-s1-$v" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" run "j256-s4-$v" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$X" OK_RC=4 FILTER='"us_per_iteration"|rror' run "cg2d1024-$v" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
    done
  done
  pack
  ;;
s36-a)
  # Session 36 (1 GPU): the pinned solo path — a pinned block whose list is
  # one lean task keeps the instance's needs, word addresses and
  # descriptor fields in registers and passes its verdict in the
  # loop-top barrier — against the generic lean path
  # (-DAUTARKY_NO_PIN_SOLO), one binary, interleaved, twice: the dispatch
  # bench's stencil rows (pinned, dynamic, the CUDA graph), Jacobi 2D 256²
  # (S = 1 and 4), 1024² S = 4, 3D 256³ S = 2 and CG 2D 1024².
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/stencil|^ +autarky|cuda-graph'
  J='µs per|rror'
  for r in 1 2; do
    for v in solo ctl; do
      X=""; [ $v = ctl ] && X=-DAUTARKY_NO_PIN_SOLO
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$F" LINES_SHOWN=20 run "stencil-$v-$r" 100 $B/dispatch --reps=5 --only=stencil
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" run "j256-s1-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" run "j256-s4-$v-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" run "j1024-s4-$v-$r" 60 $B/autarky jacobi2d --size 1024 --iters 8000 --check-every 0 --steps-per-sync 4
      AUTARKY_NVRTC_EXTRA="$X" FILTER="$J" run "j3d256-$v-$r" 90 $B/autarky jacobi3d --size 256 --iters 2000 --check-every 0 --steps-per-sync 2
      AUTARKY_NVRTC_EXTRA="$X" OK_RC=4 FILTER='"us_per_iteration"|rror' run "cg2d1024-$v-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
    done
  done
  pack
  ;;
s35-final)
  # Session 35 (1 GPU, after .gpu/run in the same call): the closing
  # dispatch rows at dc155ce's device code against its controls
  # (-DAUTARKY_NO_LATE_SELF -DAUTARKY_NO_POP_DESC: the device code before
  # it), in one binary; then the opt-in soak.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch|^ +autarky|cuda-graph|independent|atomic'
  A="--reps=5 --only=stencil,chain,fan-in,independent --n=1000 --instances=10000000 --stencil-blocks=132"
  FILTER="$F" LINES_SHOWN=40 run final-new 150 $B/dispatch $A
  AUTARKY_NVRTC_EXTRA="-DAUTARKY_NO_LATE_SELF -DAUTARKY_NO_POP_DESC" FILTER="$F" LINES_SHOWN=40 run final-ctl 150 $B/dispatch $A
  # The opt-in soak: 1000 random graphs, each checked (the dynamic path changed).
  FILTER='^test |^test result|FAILED|panicked|soak:' run soak 100 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  pack
  ;;
s35-b)
  # Session 35 (1 GPU; bundle built with docs/experiments/s35-loop-stats.patch
  # applied on 5ccdaa6's tree — its queue_pop line merged by hand — which
  # has the four cuts behind flags; run in session 35): (1) the
  # compute loop's cycles by phase in the dynamic stencil (and counted
  # from 2), control against cuts 1+2; (2) the A/B, interleaved, twice:
  # control, -DAUTARKY_EXP_LATE_SELF, it with -DAUTARKY_EXP_POP_DESC — the
  # stencil (default grid and 132 blocks), its tiles counted, fan-in, chains;
  # then all four cuts (with EXP_PRED_AHEAD, EXP_KEPT_DESC), with the
  # counters and in the A/B.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  F='^h200/dispatch/(stencil|chain|fan)|^ +autarky|cuda-graph'
  A1="--reps=1 --only=stencil --stencil-blocks=132 --stencil-counted=2"
  AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_STATS" FILTER="$F|^EXP" LINES_SHOWN=40 run stats-ctl 200 $B/dispatch $A1
  AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_STATS -DAUTARKY_EXP_LATE_SELF -DAUTARKY_EXP_POP_DESC" FILTER="$F|^EXP" LINES_SHOWN=40 \
    run stats-both 200 $B/dispatch $A1
  A="--reps=5 --only=stencil,fan-in,chain --n=1000 --stencil-blocks=132 --stencil-counted=2"
  ALL="-DAUTARKY_EXP_LATE_SELF -DAUTARKY_EXP_POP_DESC -DAUTARKY_EXP_PRED_AHEAD -DAUTARKY_EXP_KEPT_DESC"
  AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_STATS $ALL" FILTER="$F|^EXP" LINES_SHOWN=40 run stats-all 200 $B/dispatch $A1
  for r in 1 2; do
    FILTER="$F" LINES_SHOWN=30 run "ab-ctl-$r" 150 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_LATE_SELF" FILTER="$F" LINES_SHOWN=30 run "ab-late-$r" 150 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_LATE_SELF -DAUTARKY_EXP_POP_DESC" FILTER="$F" LINES_SHOWN=30 run "ab-both-$r" 150 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA="$ALL" FILTER="$F" LINES_SHOWN=30 run "ab-all-$r" 150 $B/dispatch $A
  done
  pack
  ;;
s35-a)
  # Session 35 (1 GPU): is the one compute ring the pace of the dynamic
  # stencil (5.9 µs an iteration of 1024 tiles, ~5.8 ns a tile)? (1) the
  # ring's floor (benches/floor/ring.cu): pop + push pairs with 132 to
  # 1056 blocks on 1 to 132 rings; (2) the dispatch bench's stencil with
  # fewer compute blocks (fewer contenders at the ring, fewer tiles run
  # at once).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  run nvcc-ring 120 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/ring benches/floor/ring.cu
  FILTER='ns a pair|skipped|rror|ring floor' LINES_SHOWN=100 run floor-ring 200 /tmp/ring
  FILTER='^h200/dispatch/stencil|^ +autarky|cuda-graph' LINES_SHOWN=30 run stencil-blocks 200 \
    $B/dispatch --reps=5 --only=stencil --stencil-blocks=33,66,132,264,528
  pack
  ;;
s34-multi)
  # Session 34 (1 GPU, after .gpu/run in the same call): the multi-
  # successor fast path (7c5bdf0) against its control in one binary,
  # interleaved, twice: the dynamic stencil (the row it is for), chains
  # and fan-in (the compute loop's barrier is now a vote); then the
  # dynamic-stencil and random-DAG trials under the control (the
  # block-wide path they took before). Needs 7c5bdf0's bundle: 421e833
  # backed the path out, and on later trees both sides run the same code.
  A="--reps=5 --only=stencil,chain,fan-in"
  F='^h200/dispatch/(stencil|chain|fan)|^ +autarky|cuda-graph'
  for r in 1 2; do
    FILTER="$F" LINES_SHOWN=30 run "multi-new-$r" 120 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA=-DAUTARKY_NO_MULTI_FAST FILTER="$F" LINES_SHOWN=30 run "multi-off-$r" 120 $B/dispatch $A
  done
  AUTARKY_NVRTC_EXTRA=-DAUTARKY_NO_MULTI_FAST FILTER='^test |^test result|FAILED|panicked' \
    run multi-off-tests 120 .gpu/tests/gpu-* --test-threads=1 random
  pack
  ;;
s34-bench)
  # Session 34 (1 GPU): the closing tables for issues 8 and 10 at the
  # session's device code (1db0447's): the whole dispatch bench, then the
  # Jacobi bench's one-GPU rows, 2D and 3D, against a launch an iteration,
  # a CUDA graph and a persistent grid-barrier kernel.
  FILTER='^h200/dispatch|^ +autarky|cuda-graph|independent|launch per' LINES_SHOWN=60 run dispatch-full 240 $B/dispatch
  FILTER='^h200|^case|µs per|3D|target' LINES_SHOWN=40 run jacobi-bench 330 $B/jacobi --2d=256,1024,4096,16384 --3d=64,256 --pes=none --two-gpu=none --weak=none --reps=5
  pack
  ;;
s34-a)
  # Session 34 (1 GPU): (1) the floor of a hop with two roles — warp 1
  # polls for instance n while thread 0 releases n - 1 — against one
  # thread doing both (benches/floor/pinned_hop.cu, `s`); (2) gpu_jacobi
  # with every trial's kernels compiled ahead in parallel, on a cold
  # machine, NVRTC's compiles logged and counted (264 s at 15b7f17);
  # (3) the opt-in soak (issue 8's Done; last run in session 2); (4) gpu's
  # trial of prepared graphs compiling in parallel (b3aea7f's form, not
  # yet run on a GPU).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  run nvcc-floor 120 /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/pinned_hop benches/floor/pinned_hop.cu
  FILTER='us/iter|rror' LINES_SHOWN=40 run floor-split 120 /tmp/pinned_hop s
  RUST_LOG=autarky::runtime::nvrtc=debug FILTER='^test |^test result|FAILED|panicked' LINES_SHOWN=20 \
    run gpu-jacobi 400 .gpu/tests/gpu_jacobi-* --test-threads=1
  echo "NVRTC compiles: $(grep -a -c 'NVRTC compiled' "$LOGS/gpu-jacobi.log")," \
    "$(grep -a -o 'NVRTC compiled [^ ]* for sm_90 in [0-9.]*s' "$LOGS/gpu-jacobi.log" | awk '{s+=$NF+0} END {printf "%.0f s of compile in all", s}')"
  FILTER='^test |^test result|FAILED|panicked|soak:' run soak 200 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  FILTER='^test |^test result|FAILED|panicked' run prepare 120 .gpu/tests/gpu-* --test-threads=1 prepared
  pack
  ;;
s34-jacobi)
  # (Written in session 33, not yet run.) Where gpu_jacobi's 264 s go on a
  # fresh machine (the longest binary of .gpu/run since gpu_cg compiles
  # ahead): its trials with NVRTC's compiles logged, counted and summed,
  # as s33-prep did for gpu_cg; then the opt-in soak (issue 8's Done; last
  # run in session 2).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  RUST_LOG=autarky::runtime::nvrtc=debug FILTER='^test |^test result|FAILED|panicked' LINES_SHOWN=20 \
    run gpu-jacobi 400 .gpu/tests/gpu_jacobi-* --test-threads=1
  echo "NVRTC compiles: $(grep -a -c 'NVRTC compiled' "$LOGS/gpu-jacobi.log")," \
    "$(grep -a -o 'NVRTC compiled [^ ]* for sm_90 in [0-9.]*s' "$LOGS/gpu-jacobi.log" | awk '{s+=$NF+0} END {printf "%.0f s of compile in all", s}')"
  FILTER='^test |^test result|FAILED|panicked' run soak 200 .gpu/tests/gpu-* --test-threads=1 --ignored soak
  pack
  ;;
s33-pack)
  # Session 33 (1 GPU): arrival slots packed four to a word (16-bit
  # counts; ABI 12): an input's batch of 16 arrivals is 4 or 5 RMWs, and
  # 1000 inputs queue a quarter as many RMWs at each word. The fan-in rows
  # against the batch-16 build without packing (.gpu/ab/dispatch-main =
  # 22cd9df's bench), interleaved, three times; the whole dispatch bench;
  # the tests that run joins.
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,100,1000,3000 --only=fan-in"
  F='^h200/dispatch/fan|^ +autarky |independent \('
  for r in 1 2 3; do
    [ -x .gpu/ab/dispatch-main ] && FILTER="$F" run "fan-main-$r" 120 .gpu/ab/dispatch-main $A
    FILTER="$F" run "fan-pack-$r" 120 $B/dispatch $A
  done
  FILTER='^h200/dispatch|^ +autarky|cuda-graph|independent|launch per' LINES_SHOWN=60 run dispatch-full 240 $B/dispatch
  counted_join_tests
  pack
  ;;
s33-batch)
  # Session 33 (1 GPU): an input's arrivals made 16 at a time (was 8) and
  # its progress counter added after the batch's fence (was a flush and a
  # fence of its own every 16 instances): the fan-in rows against main's
  # binary (.gpu/ab/dispatch-main, stripped), against batches of 8 and 32
  # with the merged count, and the join reading 16 slots ahead;
  # interleaved, twice. Then the whole dispatch bench (the other rows must
  # not move) and the tests that run joins.
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,100,1000,3000 --only=fan-in"
  F='^h200/dispatch/fan|^ +autarky |independent \('
  for r in 1 2; do
    [ -x .gpu/ab/dispatch-main ] && FILTER="$F" run "fan-main-$r" 120 .gpu/ab/dispatch-main $A
    FILTER="$F" run "fan-new-$r" 120 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA="-DAUTARKY_ARRIVE_BATCH=8" FILTER="$F" run "fan-b8-$r" 120 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA="-DAUTARKY_ARRIVE_BATCH=32" FILTER="$F" run "fan-b32-$r" 120 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA="-DAUTARKY_SLOT_LOOK=16" FILTER="$F" run "fan-look16-$r" 120 $B/dispatch $A
  done
  FILTER='^h200/dispatch|^ +autarky|cuda-graph|independent|launch per' LINES_SHOWN=60 run dispatch-full 240 $B/dispatch
  counted_join_tests
  pack
  ;;
s33-prep)
  # Session 33 (1 GPU): gpu_cg with every trial's kernels compiled ahead
  # on the machine's cores (Runtime::prepare; the machine's cubin cache is
  # cold at start), timed, with NVRTC's compiles logged and counted; the
  # gpu binary (its new trial: prepared kernels compile in parallel and
  # their runs compile nothing); then the fan-in rows with inputs' arrival
  # batches of 4, 8 (default) and 16, interleaved, twice.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  RUST_LOG=autarky::runtime::nvrtc=debug FILTER='^test |^test result|FAILED|panicked' LINES_SHOWN=20 \
    run gpu-cg 400 .gpu/tests/gpu_cg-* --test-threads=1
  echo "NVRTC compiles: $(grep -a -c 'NVRTC compiled' "$LOGS/gpu-cg.log")," \
    "$(grep -a -o 'NVRTC compiled [^ ]* for sm_90 in [0-9.]*s' "$LOGS/gpu-cg.log" | awk '{s+=$NF+0} END {printf "%.0f s of compile in all", s}')"
  FILTER='^test result|FAILED|panicked|prepared in parallel' run gpu 200 .gpu/tests/gpu-* --test-threads=1
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,100,1000 --only=fan-in"
  F='^h200/dispatch/fan|^ +autarky |independent \('
  for r in 1 2; do
    for b in 4 8 16; do
      AUTARKY_NVRTC_EXTRA="-DAUTARKY_ARRIVE_BATCH=$b" FILTER="$F" run "fan-batch$b-$r" 120 $B/dispatch $A
    done
  done
  pack
  ;;
s33-lanes)
  # (Written in session 32, run in session 33: not landed.) docs/experiments/s32-slot-lanes.patch
  # applied before the bundle (ABI 12: a counted task's arrival slots in
  # eight lanes, an aligned batch's slots on eight lines), and
  # .gpu/ab/dispatch-main = the dispatch bench of main without it
  # (stripped): the fan-in rows A/B at 200 iterations, interleaved, twice;
  # then the tests that run joins. Predicted: fan-in/1000 -10 to -20 %,
  # /10 unchanged.
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,100,1000,3000 --only=fan-in"
  F='^h200/dispatch/fan|^ +autarky |independent \('
  for r in 1 2; do
    [ -x .gpu/ab/dispatch-main ] && FILTER="$F" run "dispatch-main-$r" 120 .gpu/ab/dispatch-main $A
    FILTER="$F" run "dispatch-lanes-$r" 120 $B/dispatch $A
  done
  counted_join_tests
  pack
  ;;
s32-fine)
  # Session 32 (1 GPU; docs/experiments/s32-stats.patch applied, third
  # form): the inputs' flush in parts (fence, the slot RMWs, the filler's
  # check) and the tick in parts; then flush_report's publish out of line
  # (default) against inlined (-DAUTARKY_EXP_FLUSH_INLINE), interleaved.
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,1000"
  F='^h200/dispatch/(fan|stencil)|^ +autarky |independent \(|cuda-graph \(|autarky pinned'
  AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_STATS FILTER="$F" LINES_SHOWN=40 run "dispatch-stats" 120 $B/dispatch $A --only=fan-in
  grep -a '^EXP input' "$LOGS/dispatch-stats.log" | tail -n 40
  for r in 1 2; do
    FILTER="$F" LINES_SHOWN=40 run "dispatch-outline-$r" 120 $B/dispatch $A --only=fan-in,stencil
    AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_FLUSH_INLINE FILTER="$F" LINES_SHOWN=40 run "dispatch-inline-$r" 120 $B/dispatch $A --only=fan-in,stencil
  done
  pack
  ;;
s32-ncu)
  # Session 32 (1 GPU): where the pinned stencil's instance goes: ncu
  # source counters and warp states of one 500-iteration run of the 32 x 32
  # pinned stencil (dispatch --only=stencil: megakernel launches are the
  # sizing run, then per rep the dynamic stencil and the pinned one, so the
  # third is the pinned one), with the run's own cubin kept
  # ($OUT/cache; disassemble with `nvdisasm -g -c`).
  mkdir -p "$OUT/cache"
  AUTARKY_CACHE_DIR="$OUT/cache" run ncu-stencil 240 /usr/local/cuda/bin/ncu --clock-control none \
    --section SourceCounters --section WarpStateStats --section LaunchStats -k autarky_megakernel \
    --launch-skip 2 --launch-count 1 -f -o /tmp/stencil $B/dispatch --only=stencil --reps=1
  /usr/local/cuda/bin/ncu -i /tmp/stencil.ncu-rep --page details 2>/dev/null | head -n 80 > "$LOGS/ncu-details.txt"
  grep -a -E "Duration|Grid Size|Block Size|Registers|Stall|Warp Cycles" "$LOGS/ncu-details.txt" | head -n 30
  /usr/local/cuda/bin/ncu -i /tmp/stencil.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > "$OUT/sass-stencil.csv.gz"
  ls -la "$OUT/cache" | head
  pack
  ;;
s32-stats2)
  # Session 32 (1 GPU; docs/experiments/s32-stats.patch, its second form:
  # counters in registers, added up at loop exit): the join's loop, its
  # inputs' flushes and a pinned tile, at 200 iterations; the same binary
  # without the counters for the timing.
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,1000"
  F='^h200/dispatch/(fan|stencil)|^ +autarky |independent \(|cuda-graph \(|autarky pinned'
  AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_STATS FILTER="$F" LINES_SHOWN=40 run "dispatch-stats" 120 $B/dispatch $A
  grep -a '^EXP' "$LOGS/dispatch-stats.log" | tail -n 60
  FILTER="$F" LINES_SHOWN=40 run "dispatch-plain" 120 $B/dispatch $A
  pack
  ;;
s32-spin)
  # Session 32 (1 GPU): the join's spin in its loop (default) against
  # leaving at once (-DAUTARKY_NO_JOIN_SPIN) and a shorter idle bound, at
  # 200 iterations, interleaved, twice; the automatic state layout (the
  # stencil spread) against packed words; the full dispatch bench; Jacobi
  # and CG rows (their layout stays packed where a reduce scans); the GPU
  # tests that run joins and stencils.
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,1000"
  F='^h200/dispatch/(fan|stencil|chain|self)|^ +autarky |independent \(|cuda-graph \(|autarky pinned'
  for r in 1 2; do
    FILTER="$F" LINES_SHOWN=40 run "dispatch-spin-$r" 120 $B/dispatch $A
    AUTARKY_NVRTC_EXTRA=-DAUTARKY_NO_JOIN_SPIN FILTER="$F" LINES_SHOWN=40 run "dispatch-nospin-$r" 120 $B/dispatch $A
  done
  AUTARKY_NVRTC_EXTRA=-DAUTARKY_JOIN_SPIN_IDLE=2048 FILTER="$F" LINES_SHOWN=40 run "dispatch-spin2048" 120 $B/dispatch $A
  AUTARKY_STATE_SPACING=8 FILTER="$F" LINES_SHOWN=40 run "dispatch-packed" 120 $B/dispatch $A
  FILTER='^h200/dispatch|^ +autarky  |independent \(|cuda-graph|autarky pinned' LINES_SHOWN=60 run dispatch-full 240 \
    $B/dispatch --fan-in=10,100,1000,3000
  F2='"us_per_iteration"|"rel_residual"|rror'
  OK_RC=4 FILTER="$F2" run "cg2d1024" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
  OK_RC=4 FILTER="$F2" run "cg64" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
  FILTER='µs per|rror' run "j256-s1" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
  FILTER='µs per|rror' run "j256-s1-packed" 60 env AUTARKY_STATE_SPACING=8 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
  FILTER='µs per|rror' run "j256-s4" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
  FILTER='µs per|rror' run "j256-s4-norm" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 100 --steps-per-sync 4
  counted_join_tests
  pack
  ;;
s32-stats)
  # Session 32 (1 GPU; docs/experiments/s32-stats.patch applied before the
  # bundle): where the join's loop, its inputs' flushes and a pinned
  # stencil tile spend their cycles (-DAUTARKY_EXP_STATS: per-block
  # counters printed at block exit), packed state words and a line each;
  # then the same cases untimed-instrumented, packed against a line each,
  # twice; Jacobi and CG with both layouts.
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,1000"
  F='^h200/dispatch/(fan|stencil|chain|self)|^ +autarky |independent \(|cuda-graph \(|autarky pinned'
  for sp in 8 128; do
    AUTARKY_STATE_SPACING=$sp AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_STATS FILTER='^EXP' LINES_SHOWN=0 \
      run "dispatch-stats-$sp" 120 $B/dispatch $A
    grep -a '^EXP join' "$LOGS/dispatch-stats-$sp.log" | tail -n 8
    grep -a '^EXP input' "$LOGS/dispatch-stats-$sp.log" | tail -n 6
    grep -a '^EXP pinned' "$LOGS/dispatch-stats-$sp.log" | tail -n 6
  done
  for r in 1 2; do
    for sp in 8 128; do
      AUTARKY_STATE_SPACING=$sp FILTER="$F" LINES_SHOWN=40 run "dispatch-$sp-$r" 120 $B/dispatch $A
    done
  done
  F2='"us_per_iteration"|"rel_residual"|rror'
  for sp in 8 128; do
    export AUTARKY_STATE_SPACING=$sp
    FILTER='µs per|rror' run "j256-s1-$sp" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
    FILTER='µs per|rror' run "j256-s4-$sp" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
    OK_RC=4 FILTER="$F2" run "cg2d1024-$sp" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
    OK_RC=4 FILTER="$F2" run "cg64-$sp" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
  done
  unset AUTARKY_STATE_SPACING
  pack
  ;;
s31-knobs)
  # What paces the join's loop (a traced kernel has no loops, so the knobs
  # instead): the inputs' batch of arrivals (ARRIVE_BATCH, default 8) and
  # the join's read-ahead (SLOT_LOOK, default 8), 200 iterations, once.
  F='^h200/dispatch/fan|^ +autarky |independent \('
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,1000"
  for v in "default=" "b4=-DAUTARKY_ARRIVE_BATCH=4" "b16=-DAUTARKY_ARRIVE_BATCH=16" "b32=-DAUTARKY_ARRIVE_BATCH=32" \
    "l4=-DAUTARKY_SLOT_LOOK=4" "l16=-DAUTARKY_SLOT_LOOK=16" "b16l16=-DAUTARKY_ARRIVE_BATCH=16 -DAUTARKY_SLOT_LOOK=16"; do
    AUTARKY_NVRTC_EXTRA="${v#*=}" FILTER="$F" run "dispatch-200-${v%%=*}" 60 $B/dispatch $A
  done
  pack
  ;;
s31-slots)
  # Arrival slots with the inputs' and the join's loops (the default since
  # session 31) against slots alone (the loops compiled out) and main's own
  # binary before them (.gpu/ab/dispatch-main, the one-counter protocol):
  # the 200-iteration fan-in rows; then the whole dispatch bench.
  F='^h200/dispatch/fan|^ +autarky |independent \('
  A="--n=1000 --instances=1000000 --reps=5 --fan-in=10,1000"
  for r in 1 2; do
    [ -x .gpu/ab/dispatch-main ] && FILTER="$F" run "dispatch-200-main-$r" 120 .gpu/ab/dispatch-main $A
    AUTARKY_NVRTC_EXTRA="-DAUTARKY_NO_INPUT_LOOP -DAUTARKY_NO_JOIN_LOOP" FILTER="$F" \
      run "dispatch-200-noloops-$r" 120 $B/dispatch $A
    FILTER="$F" run "dispatch-200-slots-$r" 120 $B/dispatch $A
  done
  FILTER='^h200/dispatch|^ +autarky  |independent \(|cuda-graph' LINES_SHOWN=60 run dispatch-full 240 \
    $B/dispatch --fan-in=10,100,1000,3000
  pack
  ;;
s30-slots5)
  # (slots_ab) Written in session 30, not yet run (no device time was left).
  # The slots experiment with aligned batches and -DAUTARKY_EXP_INPUT_LOOP,
  # -DAUTARKY_EXP_JOIN_LOOP: a join's inputs run in the self loop, their
  # arrivals batched there; the join runs its known full slots in a loop of
  # its own (run_join_loop); each and both against the main loop's path;
  # 200 iterations, twice; quick.
  S="-DAUTARKY_ARRIVE_DEFER_CYCLES=65536 -DAUTARKY_EXP_ALIGNED -DAUTARKY_EXP_SLOT_LOOK=8"
  slots_ab "iljl=$S -DAUTARKY_EXP_INPUT_LOOP -DAUTARKY_EXP_JOIN_LOOP" "il=$S -DAUTARKY_EXP_INPUT_LOOP" \
    "jl=$S -DAUTARKY_EXP_JOIN_LOOP" "main8=$S"
  slots_quick iljl "$S -DAUTARKY_EXP_INPUT_LOOP -DAUTARKY_EXP_JOIN_LOOP"
  pack
  ;;
s30-slots4)
  # (slots_ab) The slots experiment with aligned batches: the join reads
  # its next K slots together and folds through the full ones
  # (-DAUTARKY_EXP_SLOT_LOOK=K), against K = 1; 200 iterations, twice;
  # quick; traced.
  S="-DAUTARKY_ARRIVE_DEFER_CYCLES=65536 -DAUTARKY_EXP_ALIGNED"
  slots_ab "k8=$S -DAUTARKY_EXP_SLOT_LOOK=8" "k16=$S -DAUTARKY_EXP_SLOT_LOOK=16 -DAUTARKY_ARRIVE_BATCH=16" "k1=$S"
  slots_quick k8 "$S -DAUTARKY_EXP_SLOT_LOOK=8"
  AUTARKY_EXP_SLOTS=1 AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_SLOTS $S -DAUTARKY_EXP_SLOT_LOOK=8" fan_traces
  pack
  ;;
s30-slots3)
  # (slots_ab) The slots experiment with -DAUTARKY_EXP_ALIGNED: the inputs'
  # batches aligned to the join's instances ([kB, kB + B) together), so its
  # slots fill B at a time; at 200 iterations against unaligned batches;
  # the quick bench; traced.
  S="-DAUTARKY_ARRIVE_DEFER_CYCLES=65536"
  slots_ab "a8=$S -DAUTARKY_EXP_ALIGNED" "a16=$S -DAUTARKY_EXP_ALIGNED -DAUTARKY_ARRIVE_BATCH=16" "u8=$S"
  slots_quick a8 "$S -DAUTARKY_EXP_ALIGNED"
  AUTARKY_EXP_SLOTS=1 AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_SLOTS $S -DAUTARKY_EXP_ALIGNED" fan_traces
  pack
  ;;
s30-slots2)
  # (slots_ab) Where the slots experiment's fan-in row goes untraced and
  # traced with batches that fill (older deferral limits and bigger
  # batches): the 200-iteration rows once, then the fan-in cases traced
  # with 65536 cycles.
  S="-DAUTARKY_ARRIVE_DEFER_CYCLES=65536"
  REPS=1 slots_ab "c16k=-DAUTARKY_ARRIVE_DEFER_CYCLES=16384" "c64k=$S" "c64kb16=$S -DAUTARKY_ARRIVE_BATCH=16" \
    "c64kb4=$S -DAUTARKY_ARRIVE_BATCH=4"
  AUTARKY_EXP_SLOTS=1 AUTARKY_NVRTC_EXTRA="-DAUTARKY_EXP_SLOTS $S" fan_traces
  pack
  ;;
s30-slots)
  # (See slots_ab: needs the s30-slots patch and .gpu/ab/dispatch-main.)
  # Session 30 (1 GPU; a gpu-bundle build of main with
  # docs/experiments/s29-counted-rmw.patch and the slots experiment applied,
  # and .gpu/ab/dispatch-main: main's dispatch bench): exact arrival counts,
  # a slot per counted task and instance (-DAUTARKY_EXP_SLOTS with
  # AUTARKY_EXP_SLOTS=1), the inputs' arrivals deferred and batched, against
  # the same without deferral, the patch's cumulative counter, and main.
  # Dispatch quick interleaved twice, the 200-iteration fan-in rows, slots
  # traced.
  F='^h200/dispatch|^ +autarky  |independent \(|uncounted|cuda-graph|atomic-claim '
  for r in 1 2; do
    for x in slots slotsnd patch main; do
      b=$B/dispatch; e=; unset AUTARKY_EXP_SLOTS
      case $x in
        slots) e=-DAUTARKY_EXP_SLOTS; export AUTARKY_EXP_SLOTS=1;;
        slotsnd) e="-DAUTARKY_EXP_SLOTS -DAUTARKY_NO_DEFER_ARRIVALS"; export AUTARKY_EXP_SLOTS=1;;
        main) b=.gpu/ab/dispatch-main;;
      esac
      AUTARKY_NVRTC_EXTRA="$e" FILTER="$F" LINES_SHOWN=60 run "dispatch-$x-$r" 120 $b --quick --fan-in=10,100,1000,3000
    done
  done
  F='^h200/dispatch/fan|^ +autarky |independent \('
  for x in slots slots16k slotsnd patch main; do
    b=$B/dispatch; e=; unset AUTARKY_EXP_SLOTS
    case $x in
      slots) e=-DAUTARKY_EXP_SLOTS; export AUTARKY_EXP_SLOTS=1;;
      slots16k) e="-DAUTARKY_EXP_SLOTS -DAUTARKY_ARRIVE_DEFER_CYCLES=16384"; export AUTARKY_EXP_SLOTS=1;;
      slotsnd) e="-DAUTARKY_EXP_SLOTS -DAUTARKY_NO_DEFER_ARRIVALS"; export AUTARKY_EXP_SLOTS=1;;
      main) b=.gpu/ab/dispatch-main;;
    esac
    AUTARKY_NVRTC_EXTRA="$e" FILTER="$F" LINES_SHOWN=20 run "dispatch-200-$x" 120 $b --n=1000 --instances=1000000 --reps=5 --fan-in=10,1000
  done
  export AUTARKY_EXP_SLOTS=1 AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_SLOTS
  fan_traces
  unset AUTARKY_EXP_SLOTS AUTARKY_NVRTC_EXTRA
  pack
  ;;
s30-idle)
  # (Needs docs/experiments/s30-idle-backoff.patch applied before the
  # bundle: the macros it names are not in main.)
  # Session 30 (1 GPU; a gpu-bundle build of main): do idle pollers make
  # the busy blocks' ordering instructions slower? The floor with pollers
  # that spin, sleep 128 ns, 1 µs, 4 µs; then idle compute blocks' waits
  # for work (AUTARKY_IDLE_SPIN_POLLS tight polls, then a sleep doubling
  # up to AUTARKY_IDLE_BACKOFF_MAX_NS) against main's (128 polls, 128 ns),
  # interleaved, twice: the dispatch bench, fan-in at 200 iterations,
  # Jacobi 256² S = 1 and S = 4, CG 2D 1024².
  /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/ordering benches/floor/ordering.cu
  run floor-ordering 200 /tmp/ordering
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in main s8b128 s8b1k s8b4k s128b2k; do
      case $x in
        main) e=;;
        s8b128) e="-DAUTARKY_IDLE_SPIN_POLLS=8";;
        s8b1k) e="-DAUTARKY_IDLE_SPIN_POLLS=8 -DAUTARKY_IDLE_BACKOFF_MAX_NS=1024";;
        s8b4k) e="-DAUTARKY_IDLE_SPIN_POLLS=8 -DAUTARKY_IDLE_BACKOFF_MAX_NS=4096";;
        s128b2k) e="-DAUTARKY_IDLE_BACKOFF_MAX_NS=2048";;
      esac
      export AUTARKY_NVRTC_EXTRA="$e"
      FILTER='^h200/dispatch|^ +autarky  |autarky pinned|cuda-graph|independent \(' LINES_SHOWN=60 run "dispatch-$x-$r" 120 $B/dispatch --quick --fan-in=10,1000
      FILTER='^h200/dispatch/fan|^ +autarky  |independent \(' LINES_SHOWN=20 run "dispatch-200-$x-$r" 120 $B/dispatch --n=1000 --instances=1000000 --reps=3 --fan-in=10,1000
      FILTER='µs per|rror' run "j256-s1-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      FILTER='µs per|rror' run "j256-s4-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  pack
  ;;
s29-next)
  # Written in session 29, not yet run. Needs a gpu-bundle build of main
  # with docs/experiments/s29-counted-rmw.patch applied (`git apply`), and
  # .gpu/ab/dispatch-main: main's own dispatch bench (built from a clean
  # worktree of main, stripped). The experiment's last state: counted
  # arrivals as RMWs, the join's inputs on the fast path, WideReady, the
  # new paths only in kernels with counted tasks, and deferred arrivals
  # (one fence and one RMW for up to 8 instances of an input that runs
  # ahead). Tests with counted joins, then the dispatch bench interleaved
  # twice: the patch; the patch with -DAUTARKY_NO_DEFER_ARRIVALS; main.
  # Then the 200-iteration fan-in rows and the patch's fan-in traced.
  counted_join_tests
  F='^h200/dispatch|^ +autarky |independent \(|uncounted|cuda-graph|atomic-claim '
  for r in 1 2; do
    for x in patch nodefer main; do
      case $x in main) b=.gpu/ab/dispatch-main;; *) b=$B/dispatch;; esac
      case $x in nodefer) e=-DAUTARKY_NO_DEFER_ARRIVALS;; *) e=;; esac
      AUTARKY_NVRTC_EXTRA="$e" FILTER="$F" LINES_SHOWN=60 run "dispatch-$x-$r" 150 $b --quick --fan-in=10,100,1000,3000
    done
  done
  F='^h200/dispatch/fan|^ +autarky |independent \('
  for x in patch main; do
    case $x in main) b=.gpu/ab/dispatch-main;; *) b=$B/dispatch;; esac
    FILTER="$F" LINES_SHOWN=20 run "dispatch-200-$x" 150 $b --n=1000 --instances=1000000 --reps=5 --fan-in=10,1000
  done
  fan_traces
  pack
  ;;
s29-floor)
  # Written in session 29, not yet run (no device time was left): what
  # each ordering instruction on a join input's completion costs on this
  # GPU, alone and with the fan-in row's load (benches/floor/ordering.cu),
  # then the fan-in rows traced (c8fd28f's device code) for the same call.
  /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/ordering benches/floor/ordering.cu
  run floor-ordering 200 /tmp/ordering
  fan_traces
  pack
  ;;
s29-trace)
  # Session 29 (1 GPU; a gpu-bundle build of main): the dispatch bench's
  # small cases traced, each case's last trace written as Chrome JSON
  # (--trace-dir; read with scripts/trace-gaps.py), then gpu_cg.
  fan_traces
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  FILTER='^test result|FAILED|panicked' run gpu-cg 560 .gpu/tests/gpu_cg-* --test-threads=1
  pack
  ;;
s29-wide)
  # (Needs docs/experiments/s29-counted-rmw.patch applied before the build:
  # the macros it names exist only there.)
  # Session 29 (1 GPU; a gpu-bundle build, and .gpu/ab/dispatch-old: the
  # dispatch bench built from c8fd28f): a wide task's completion keeps how
  # far its predecessors are done (WideReady) and folds its next instance
  # while that covers it. Tests with counted joins first, then the
  # dispatch bench in one call, interleaved, twice: new; new with
  # -DAUTARKY_NO_WIDE_READY; c8fd28f's binary. Then the issue's fan-in row
  # at 200 iterations (not --quick; fewer other cases, 5 reps), new and
  # c8fd28f.
  counted_join_tests
  F='^h200/dispatch|^ +autarky |independent \(|uncounted|cuda-graph|atomic-claim '
  for r in 1 2; do
    for x in new nowide old; do
      case $x in new|nowide) b=$B/dispatch;; old) b=.gpu/ab/dispatch-old;; esac
      case $x in nowide) e=-DAUTARKY_NO_WIDE_READY;; *) e=;; esac
      AUTARKY_NVRTC_EXTRA="$e" FILTER="$F" LINES_SHOWN=60 run "dispatch-$x-$r" 150 $b --quick --fan-in=10,100,1000,3000
    done
  done
  F='^h200/dispatch/fan|^ +autarky |independent \('
  for x in new old; do
    case $x in new) b=$B/dispatch;; old) b=.gpu/ab/dispatch-old;; esac
    FILTER="$F" LINES_SHOWN=20 run "dispatch-200-$x" 150 $b --n=1000 --instances=1000000 --reps=5 --fan-in=10,1000
  done
  pack
  ;;
s29-fan)
  # (Needs docs/experiments/s29-counted-rmw.patch applied before the build.)
  # Session 29 (1 GPU; a gpu-bundle build): counted arrivals as RMWs
  # without SC fences, and the inputs of a counted join on the fast path.
  # First the test binaries that run counted joins (gpu, gpu_multipe,
  # gpu_trace), then the dispatch bench's fan-in rows in one binary,
  # interleaved, twice: new; -DAUTARKY_NO_COUNTED_FAST (the new protocol
  # on the block-wide completion); -DAUTARKY_ARRIVE_SC
  # -DAUTARKY_NO_COUNTED_FAST (session 28's protocol and path).
  counted_join_tests
  F='^h200/dispatch/fan|^ +autarky |independent \(|uncounted'
  for r in 1 2; do
    for x in new slow old; do
      case $x in new) e=;; slow) e=-DAUTARKY_NO_COUNTED_FAST;; old) e="-DAUTARKY_ARRIVE_SC -DAUTARKY_NO_COUNTED_FAST";; esac
      AUTARKY_NVRTC_EXTRA="$e" FILTER="$F" LINES_SHOWN=40 run "dispatch-$x-$r" 150 $B/dispatch --quick --fan-in=10,100,1000,3000
    done
  done
  pack
  ;;
s28-owed)
  # Owed by session 28 (1 GPU; a gpu-bundle build): the gpu_cg trial of
  # tiles small enough that every compute block runs two or more (the x
  # steps' order edges of 3ca37c8), written after that session's device
  # time was spent. Then the rest of gpu_cg.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=${AUTARKY_REQUIRE_GPUS:-1}
  run gpu-cg-several-tiles 240 .gpu/tests/gpu_cg-* --test-threads=1 several_tiles
  run gpu-cg-rest 500 .gpu/tests/gpu_cg-* --test-threads=1 --skip several_tiles
  pack
  ;;
s28-order)
  # Session 28 (1 GPU): a block's x steps after its last SpMV (edges in the
  # CG graph; .gpu/ab/autarky-new) against 89acaff's CLI ($B/autarky, the
  # bundle's), where blocks run two tiles (2 virtual PEs a GPU) and where
  # they run one (1 PE, the control: nothing should move). Interleaved,
  # two reps; x in the SpMV / axpy as the bound.
  F='"us_per_iteration"|rror'
  for r in 1 2; do
    for c in "pe2d1024:--poisson2d 1024 --max-iters 500 --pes 2" "pe64:--poisson3d 64 --max-iters 2000 --pes 2" "one2d1024:--poisson2d 1024 --max-iters 500"; do
      n=${c%%:*}; args=${c#*:}
      for v in "std:" "sr:--variant single-reduction"; do
        OK_RC=4 FILTER="$F" run "$n-${v%%:*}-new-$r" 60 .gpu/ab/autarky-new --json cg $args --tol 0 ${v#*:}
        OK_RC=4 FILTER="$F" run "$n-${v%%:*}-old-$r" 60 $B/autarky --json cg $args --tol 0 ${v#*:}
        OK_RC=4 FILTER="$F" run "$n-${v%%:*}-in-$r" 60 $B/autarky --json cg $args --tol 0 ${v#*:} --x-in-spmv
      done
    done
  done
  pack
  ;;
s28-pc)
  # Session 28 (1 GPU): the separate single reduction's new defaults (one
  # copy of z, x's step apart by the L2 rule) where they were not measured:
  # with the Jacobi preconditioner (z apart from r: 56 bytes a row with
  # dinv) and on 2 virtual PEs (gathers read the one copy); against
  # two halves, x in the axpy, and Standard. Interleaved, two reps.
  F='"us_per_iteration"|"x_step_apart"|"iterations"|rror'
  for r in 1 2; do
    for c in "pc2d1024:--poisson2d 1024 --max-iters 500 --precond jacobi" "pc64:--poisson3d 64 --max-iters 2000 --precond jacobi" "pe2d1024:--poisson2d 1024 --max-iters 500 --pes 2" "pe64:--poisson3d 64 --max-iters 2000 --pes 2"; do
      n=${c%%:*}; args=${c#*:}
      OK_RC=4 FILTER="$F" run "$n-std-$r" 60 $B/autarky --json cg $args --tol 0
      OK_RC=4 FILTER="$F" run "$n-sr-$r" 60 $B/autarky --json cg $args --tol 0 --variant single-reduction
      OK_RC=4 FILTER="$F" run "$n-inaxpy-$r" 60 $B/autarky --json cg $args --tol 0 --variant single-reduction --x-in-spmv
      OK_RC=4 FILTER="$F" run "$n-two-$r" 60 $B/autarky --json cg $args --tol 0 --variant single-reduction --double-buffer --x-in-spmv
    done
  done
  pack
  ;;
s28-x)
  # Session 28 (1 GPU): the separate single reduction (one copy of z) with
  # x's step a task after each SpMV tile (cg_xstep, in the reduce's
  # shadow) against x's step in the axpy tiles (--x-in-spmv), the merged
  # single reduction and Standard; 32³ too (where merged won before).
  A=${A:-.gpu/ab/autarky-new}
  [ -x "$A" ] || A=$B/autarky
  F='"us_per_iteration"|"x_step_apart"|rror'
  for r in 1 2 3; do
    for c in "cg2d1024:--poisson2d 1024 --max-iters 500" "cg64:--poisson3d 64 --max-iters 2000" "cg32:--poisson3d 32 --max-iters 2000" "cg128:--poisson3d 128 --max-iters 300"; do
      n=${c%%:*}; args=${c#*:}
      OK_RC=4 FILTER="$F" run "$n-std-$r" 60 $A --json cg $args --tol 0
      OK_RC=4 FILTER="$F" run "$n-apart-$r" 60 $A --json cg $args --tol 0 --variant single-reduction
      OK_RC=4 FILTER="$F" run "$n-inaxpy-$r" 60 $A --json cg $args --tol 0 --variant single-reduction --x-in-spmv
      OK_RC=4 FILTER="$F" run "$n-merged-$r" 60 $A --json cg $args --tol 0 --variant single-reduction --merged-updates
    done
  done
  pack
  ;;
s28-sr)
  # Session 28 (1 GPU): the separate single reduction with z in one copy of
  # v (r that copy: five vectors, 40 bytes a row — 2D 1024² fits in L2)
  # against two halves by parity (--double-buffer, 56 bytes a row), the
  # merged single reduction (80 bytes a row) and Standard. Interleaved,
  # three reps; the CLI of this build (A=.gpu/ab/autarky-new if present).
  # (Flags as after the default changed to separate updates: the run
  # itself used --separate-updates for these and no flag for merged, and
  # x's step was then always in the axpy tiles: add --x-in-spmv to repeat
  # it.)
  A=${A:-.gpu/ab/autarky-new}
  [ -x "$A" ] || A=$B/autarky
  F='"us_per_iteration"|"iterations"|"rel_residual"|rror'
  for r in 1 2 3; do
    for c in "cg2d1024:--poisson2d 1024 --max-iters 500" "cg64:--poisson3d 64 --max-iters 2000" "cg128:--poisson3d 128 --max-iters 300"; do
      n=${c%%:*}; args=${c#*:}
      OK_RC=4 FILTER="$F" run "$n-std-$r" 60 $A --json cg $args --tol 0
      OK_RC=4 FILTER="$F" run "$n-merged-$r" 60 $A --json cg $args --tol 0 --variant single-reduction --merged-updates
      OK_RC=4 FILTER="$F" run "$n-one-$r" 60 $A --json cg $args --tol 0 --variant single-reduction
      OK_RC=4 FILTER="$F" run "$n-two-$r" 60 $A --json cg $args --tol 0 --variant single-reduction --double-buffer
    done
  done
  # To 1e-8 (the iterations and residuals of each form).
  for v in "std:" "one:--variant single-reduction" "merged:--variant single-reduction --merged-updates"; do
    OK_RC=4 FILTER="$F" run "cg2d1024-tol-${v%%:*}" 60 $A --json cg --poisson2d 1024 --tol 1e-8 --max-iters 5000 ${v#*:}
  done
  pack
  ;;
s27-ab3)
  # Session 27 (1 GPU): three builds' CLIs side by side (.gpu/ab/autarky-REV,
  # built and stripped here: c202a87 = the comm polls, b4bd9b0 = + carried
  # limits, 25627c3 = + fewer registers held), interleaved, three reps:
  # machines differ by several per cent between device calls, so builds
  # are compared in one.
  F='"us_per_iteration"|rror'
  for r in 1 2 3; do
    for b in c202a87 b4bd9b0 6ee77a0; do
      A=.gpu/ab/autarky-$b
      OK_RC=4 FILTER="$F" run "cg2d1024-$b-$r" 60 $A --json cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER="$F" run "cg64-$b-$r" 60 $A --json cg --poisson3d 64 --tol 0 --max-iters 2000
      FILTER='µs per|rror' run "j256-n100-$b-$r" 60 $A jacobi2d --size 256 --iters 6000 --check-every 100
      FILTER='µs per|rror' run "j256-plain-$b-$r" 60 $A jacobi2d --size 256 --iters 6000 --check-every 0
    done
  done
  pack
  ;;
s27-carry)
  # Session 27 (1 GPU): carried limits (pinned words carry the limit their
  # block knew; no Status::limit read after a pinned acquire) against the
  # read after every acquire (-DAUTARKY_EXP_LIMIT_REREAD) and against no
  # limit reads at all (-DAUTARKY_EXP_LIMIT_STATIC, exact only for runs
  # that never stop early: the bound). Interleaved, three reps.
  F='"us_per_iteration"|"rel_residual"|"iterations"|rror'
  for r in 1 2 3; do
    for x in carry reread static; do
      e=; [ $x = reread ] && e=-DAUTARKY_EXP_LIMIT_REREAD
      [ $x = static ] && e=-DAUTARKY_EXP_LIMIT_STATIC
      export AUTARKY_NVRTC_EXTRA="$e"
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      FILTER='µs per|rror' run "j256-n100-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 100
    done
  done
  # Runs that do stop early, both ways: the same iteration counts.
  for x in carry reread; do
    e=; [ $x = reread ] && e=-DAUTARKY_EXP_LIMIT_REREAD
    export AUTARKY_NVRTC_EXTRA="$e"
    FILTER="$F" run "cg64-tol-$x" 60 $B/autarky --json cg --poisson3d 64 --tol 1e-8 --max-iters 2000
    OK_RC=4 FILTER='µs per|converged|rror|ran ' run "j256-tol-$x" 60 $B/autarky jacobi2d --size 256 --iters 200000 --check-every 100 --tol 1e-3
  done
  unset AUTARKY_NVRTC_EXTRA
  pack
  ;;
s27-wide)
  # Session 27 (1 GPU): comm blocks' pinned polls: wide waits polling only
  # the done words, up to 16 rounds (preds_wait_block), and narrow polls
  # from a cached list, against one comm-loop round a wide poll
  # (-DAUTARKY_EXP_WIDE_ONE_ROUND) and the tables (-DAUTARKY_EXP_COMM_UNCACHED);
  # with the limit reads gone (-DAUTARKY_EXP_LIMIT_STATIC) as a bound.
  # Interleaved, three reps: CG (two wide reduces an iteration), Jacobi
  # checked every 100 iterations (two narrow check instances an iteration).
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2 3; do
    for x in new one uncached static; do
      e=; [ $x = one ] && e=-DAUTARKY_EXP_WIDE_ONE_ROUND
      [ $x = uncached ] && e=-DAUTARKY_EXP_COMM_UNCACHED
      [ $x = static ] && e=-DAUTARKY_EXP_LIMIT_STATIC
      export AUTARKY_NVRTC_EXTRA="$e"
      if [ $x != uncached ]; then
        OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
        OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      fi
      [ $x = one ] && continue
      FILTER='µs per|rror' run "j256-n100-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 100
      FILTER='µs per|rror' run "j256-tol-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 100 --tol 0
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  FILTER='µs per|rror' run "j256-plain" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
  OK_RC=4 FILTER="$F" run "cg128-new" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
  pack
  ;;
s27-limit)
  # Session 27 (1 GPU): what the run's limit reads cost runs that may stop
  # (CG, Jacobi with a tolerance): run_limit() as the iteration count
  # (-DAUTARKY_EXP_LIMIT_STATIC; exact only for runs that never stop
  # early: tol 0) against the reads, interleaved, three reps.
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2 3; do
    for x in reads static; do
      e=; [ $x = static ] && e=-DAUTARKY_EXP_LIMIT_STATIC
      export AUTARKY_NVRTC_EXTRA="$e"
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      FILTER='µs per|rror' run "j256-s1-tol-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 100 --tol 0
      [ $r = 3 ] && continue
      FILTER='µs per|rror' run "j3d256-tol-$x-$r" 60 $B/autarky jacobi3d --size 256 --iters 300 --check-every 100 --tol 0 --steps-per-sync 2
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  pack
  ;;
s26-lean)
  # Session 26 (1 GPU): pinned blocks' lean path (the list, descriptors,
  # predecessor words and needs from the cache; no copy an instance)
  # against the generic one (-DAUTARKY_EXP_PINNED_GENERIC), with packed
  # state words and with a line each (AUTARKY_STATE_SPACING=128),
  # interleaved, two reps; most important first (the stage must leave
  # room for the suite).
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in lean generic spread; do
      e=; export AUTARKY_STATE_SPACING=8
      [ $x = generic ] && e=-DAUTARKY_EXP_PINNED_GENERIC
      [ $x = spread ] && export AUTARKY_STATE_SPACING=128
      export AUTARKY_NVRTC_EXTRA="$e"
      FILTER='autarky pinned|cuda-graph \(|fan-in/1000 +autarky|rror' LINES_SHOWN=10 run "dispatch-$x-$r" 100 $B/dispatch --quick
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      FILTER='µs per|rror' run "j256-s1-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      [ $x = spread ] && continue
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
    done
  done
  export AUTARKY_STATE_SPACING=8 AUTARKY_NVRTC_EXTRA=
  FILTER='µs per|rror' run "j256-s4-lean" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
  FILTER='µs per|rror' run "j3d256-lean" 60 $B/autarky jacobi3d --size 256 --iters 500 --check-every 0 --steps-per-sync 2
  OK_RC=4 FILTER="$F" run "cg128-lean" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
  unset AUTARKY_STATE_SPACING AUTARKY_NVRTC_EXTRA
  pack
  ;;
s26-spread)
  # Session 26 (1 GPU; ran on a bundle of e059920, where a line each was
  # the default up to 16384 tasks): every task's state word on a 128-byte
  # line of its own (AUTARKY_STATE_SPACING=128) against packed words (8),
  # same binary, interleaved, two reps: the dispatch bench, Jacobi's
  # pinned tiles, CG.
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in 128 8; do
      export AUTARKY_STATE_SPACING=$x
      FILTER='autarky  |autarky pinned|cuda-graph|independent|MISS|rror' LINES_SHOWN=40 run "dispatch-$x-$r" 120 $B/dispatch --quick
      FILTER='µs per|rror' run "j256-s1-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
      FILTER='µs per|rror' run "j256-s4-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4
      FILTER='µs per|rror' run "j1024-s4-$x-$r" 60 $B/autarky jacobi2d --size 1024 --iters 5000 --check-every 0 --steps-per-sync 4
      FILTER='µs per|rror' run "j3d256-$x-$r" 60 $B/autarky jacobi3d --size 256 --iters 500 --check-every 0 --steps-per-sync 2
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
    done
  done
  unset AUTARKY_STATE_SPACING
  pack
  ;;
s25-final)
  # Session 25 (1 GPU), after `bash .gpu/run`: x's step apart by default
  # where the vectors fit in L2 (auto) against in the SpMV (--x-in-spmv)
  # and forced apart (--x-step-apart), interleaved, two reps; then the CG
  # bench.
  F='"us_per_iteration"|"rel_residual"|"x_step_apart"|rror'
  for r in 1 2; do
    for x in auto in apart; do
      case $x in auto) o= ;; in) o=--x-in-spmv ;; apart) o=--x-step-apart ;; esac
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $o
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $o
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $o
    done
  done
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met|matrix' LINES_SHOWN=40 run cg-bench 300 $B/cg --quick
  pack
  ;;
s25-xstep)
  # Session 25 (1 GPU): x's step as a task of its own after each SpMV tile
  # (cg_xstep, CgConfig::x_step_apart, the default) against the SpMV's row
  # loop (--x-in-spmv), rows 1 / 2 / 4 at a time a thread
  # (-DCG_XSTEP_ROWS; ptxas spills 68/160, 138/236, 330/588 bytes),
  # interleaved, two reps; gpu_cg first (the new bitwise trial).
  f=$(ls .gpu/tests/gpu_cg-* 2>/dev/null | head -1)
  [ -n "$f" ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 240 "$f" --test-threads=1
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in in r1 r2 r4; do
      case $x in in) e= ; o=--x-in-spmv ;; r1) e= ; o= ;; r2) e=-DCG_XSTEP_ROWS=2 ; o= ;; r4) e=-DCG_XSTEP_ROWS=4 ; o= ;; esac
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $o
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $o
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $o
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $o
    done
  done
  pack
  ;;
s25-prof)
  # Session 25 (1 GPU): where CG 2D 1024² (Standard, 36.5-37.5 µs) and the
  # merged single reduction (59-62) go: ncu memory/stall metrics of 100
  # iterations each, per-instruction stall samples of Standard; then a
  # pattern row's entries two / four at a time (-DCG_PAT_UNROLL; ptxas: the
  # row loop spill-free, the scheduler's spills 68/160 -> 166/256 bytes at
  # 2) against one, interleaved, two reps (equal residuals required).
  st=""
  for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle lg_throttle mio_throttle not_selected selected no_instruction branch_resolving dispatch_stall membar sleeping drain imc_miss tex_throttle misc; do
    st="$st,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  M="gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum$st"
  T="gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__inst_executed_pipe_lsu.sum"
  NCU="/usr/local/cuda/bin/ncu --clock-control none"
  for v in std sr; do
    case $v in std) a= ;; sr) a="--variant single-reduction" ;; esac
    OK_RC=4 FILTER='\.(sum|pct|ratio)|rror' LINES_SHOWN=40 run "ncu-$v" 150 $NCU --metrics $M -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100 $a
    OK_RC=4 FILTER='\.(sum|pct|ratio)|rror' LINES_SHOWN=10 run "ncu-t-$v" 150 $NCU --metrics $T -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100 $a
  done
  AUTARKY_NVRTC_EXTRA=-lineinfo OK_RC=4 run ncu-src 200 $NCU --section SourceCounters --section WarpStateStats -k autarky_megakernel -c 1 -f -o /tmp/cg2d $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100
  /usr/local/cuda/bin/ncu -i /tmp/cg2d.ncu-rep --page source --csv --print-source sass > /tmp/sass.csv 2> "$LOGS/src.err" || /usr/local/cuda/bin/ncu -i /tmp/cg2d.ncu-rep --page source --csv > /tmp/sass.csv 2>> "$LOGS/src.err"
  gzip -c /tmp/sass.csv > "$OUT/sass-cg2d.csv.gz"; ls -la /tmp/sass.csv
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in u1 u2 u4; do
      case $x in u1) e= ;; u2) e=-DCG_PAT_UNROLL=2 ;; u4) e=-DCG_PAT_UNROLL=4 ;; esac
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
    done
  done
  pack
  ;;
s24-final)
  # Session 24 (1 GPU), after `bash .gpu/run`: the CG bench at the final
  # device code; the allreduce's lane tree inlined (the default since
  # s24-ab1's single run) against out of line (-DAUTARKY_EXP_SUM_NOINLINE),
  # three reps, interleaved; CG 2D 1024² traced by phase.
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met|matrix' LINES_SHOWN=40 run cg-bench 260 $B/cg --quick
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2 3; do
    for x in inl out; do
      case $x in inl) e= ;; out) e=-DAUTARKY_EXP_SUM_NOINLINE ;; esac
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
    done
  done
  OK_RC=4 FILTER='us_per|rror' run cg2d1024-trace 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 60 --trace /tmp/cg2d.trace.json
  python3 scripts/trace-phases.py /tmp/cg2d.trace.json > "$LOGS/cg2d-phases.txt" 2>&1; tail -n 12 "$LOGS/cg2d-phases.txt"
  pack
  ;;
s24-spills)
  # For session 24 (1 GPU; branch exp/fewer-spills, a bundle of it): three
  # changes that lower the CG megakernel's local-memory traffic, each with
  # its control: put_partials unrolled so acc[] stays in registers (every
  # SpMV and update row did a local load and store; -DAUTARKY_EXP_ACC_LOCAL),
  # the allreduce's lane tree out of line (-DAUTARKY_EXP_SUM_INLINE; ptxas
  # spills 158/236 -> 94/128 bytes), its last five levels by shuffles
  # (-DAUTARKY_EXP_SUM_BARRIER_TREE). All bitwise the same: gpu_cg first,
  # then the A/B (equal residuals required), interleaved, two reps.
  f=$(ls .gpu/tests/gpu_cg-* 2>/dev/null | head -1)
  [ -n "$f" ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 200 "$f" --test-threads=1
  F='"us_per_iteration"|"rel_residual"|rror'
  ALL="-DAUTARKY_EXP_ACC_LOCAL -DAUTARKY_EXP_SUM_INLINE -DAUTARKY_EXP_SUM_BARRIER_TREE"
  for r in 1 2; do
    for x in new acc inl bar all; do
      case $x in new) e= ;; acc) e=-DAUTARKY_EXP_ACC_LOCAL ;; inl) e=-DAUTARKY_EXP_SUM_INLINE ;;
        bar) e=-DAUTARKY_EXP_SUM_BARRIER_TREE ;; all) e="$ALL" ;; esac
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000
    done
  done
  pack
  ;;
s23-ab)
  # Session 23 (1 GPU), after `bash .gpu/run` in the same call: lean updates
  # as landed (x prefetched, alpha read where used) against alpha held
  # across the row loop (-DCG_LEAN_ALPHA_EARLY: ~60 more bytes of spills)
  # and against full updates (--full-update), interleaved, two reps.
  F='"us_per_iteration"|rror'
  for r in 1 2; do
    for x in lean early full; do
      e=; f=
      [ $x = early ] && e=-DCG_LEAN_ALPHA_EARLY
      [ $x = full ] && f=--full-update
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $f
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $f
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $f
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $f
    done
  done
  pack
  ;;
s23-final)
  # Session 23 (1 GPU): the CG bench with lean updates; the direction fused
  # against separate where Auto leaves it separate (lean updates make the
  # fused form's update phase lighter); CG 2D 1024² traced by phase.
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met|matrix' LINES_SHOWN=40 run cg-bench 240 $B/cg --quick
  F='"us_per_iteration"|"direction"|rror'
  for d in fused separate; do
    OK_RC=4 FILTER="$F" run "cg2d1448-$d" 60 $B/autarky --json cg --poisson2d 1448 --tol 0 --max-iters 300 --direction $d
    OK_RC=4 FILTER="$F" run "cg2d2048-$d" 60 $B/autarky --json cg --poisson2d 2048 --tol 0 --max-iters 200 --direction $d
    OK_RC=4 FILTER="$F" run "cg160-$d" 60 $B/autarky --json cg --poisson3d 160 --tol 0 --max-iters 200 --direction $d
  done
  OK_RC=4 FILTER='us_per|rror' run cg2d1024-trace 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 60 --trace /tmp/cg2d.trace.json
  python3 scripts/trace-phases.py /tmp/cg2d.trace.json > "$LOGS/cg2d-phases.txt" 2>&1; tail -n 12 "$LOGS/cg2d-phases.txt"
  pack
  ;;
s23-dir)
  # Session 23 (1 GPU): with lean updates fused won at 4.2 M rows (2048²,
  # 160³), beyond Auto's 2.6 M: where does it stop winning? Fused against
  # separate at 8 M and 16.7 M rows, two reps, interleaved; then the CG
  # bench's 256³ row (Auto: separate there today).
  F='"us_per_iteration"|"direction"|rror'
  for r in 1 2; do
    for d in fused separate; do
      OK_RC=4 FILTER="$F" run "cg200-$d-$r" 60 $B/autarky --json cg --poisson3d 200 --tol 0 --max-iters 100 --direction $d
      OK_RC=4 FILTER="$F" run "cg256-$d-$r" 60 $B/autarky --json cg --poisson3d 256 --tol 0 --max-iters 100 --direction $d
      OK_RC=4 FILTER="$F" run "cg2d4096-$d-$r" 60 $B/autarky --json cg --poisson2d 4096 --tol 0 --max-iters 100 --direction $d
    done
  done
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met|matrix' LINES_SHOWN=40 run cg-bench-256 240 $B/cg --3d=256 --2d=none --two-gpu=none --reps=5
  pack
  ;;
s22-final)
  # Session 22 (1 GPU), after `bash .gpu/run` in the same call: the CG bench
  # with the rows as patterns; 2D 1024² traced (where an iteration's time
  # goes now); the dispatch bench (the completion paths gained a residual
  # flush and comm blocks an argument copy: issue 8's table, unchanged?).
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met|matrix' LINES_SHOWN=40 run cg-bench 240 $B/cg --quick
  [ -x $B/dispatch ] && FILTER='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted|span|rror' LINES_SHOWN=40 run dispatch 150 $B/dispatch --quick
  OK_RC=4 FILTER='us_per|rror' run cg2d1024-trace 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 60 --trace /tmp/cg2d.trace.json
  python3 scripts/trace-phases.py /tmp/cg2d.trace.json > "$LOGS/cg2d-phases.txt" 2>&1; tail -n 12 "$LOGS/cg2d-phases.txt"
  pack
  ;;
s22-unroll)
  # Session 22 (1 GPU; $B/autarky-s22c): a row-pattern row's entries
  # CG_PAT_UNROLL at a time (their vector loads in flight together)
  # against one at a time; interleaved.
  X=${X:-$B/autarky-s22c}
  F='"us_per_iteration"|rror'
  for r in 1 2; do
    for u in 1 2 4 8; do
      e=-DCG_PAT_UNROLL=$u
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-u$u-$r" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-u$u-$r" 60 $X --json cg --poisson3d 64 --tol 0 --max-iters 2000
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg128-u$u-$r" 60 $X --json cg --poisson3d 128 --tol 0 --max-iters 300
      [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg32-u$u" 60 $X --json cg --poisson3d 32 --tol 0 --max-iters 2000
      [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-pj-u$u" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500 --precond jacobi
    done
  done
  pack
  ;;
s22-dir)
  # Session 22 (1 GPU; $B/autarky-s22b): with the rows as patterns the
  # SpMV reads far fewer matrix bytes; where does the fused direction
  # (two vectors read a nonzero) stop paying? Fused against separate,
  # interleaved, over 2D and 3D sizes around the packed matrix's crossover.
  X=${X:-$B/autarky-s22b}
  F='"us_per_iteration"|"direction"|rror'
  for r in 1 2; do
    for sz in "--poisson2d 724" "--poisson2d 1024" "--poisson2d 1448" "--poisson3d 64" "--poisson3d 96" "--poisson3d 128"; do
      for d in fused separate; do
        n=$(echo "$sz" | tr -d ' -')
        OK_RC=4 FILTER="$F" run "$n-$d-$r" 60 $X --json cg $sz --tol 0 --max-iters 300 --direction $d
      done
    done
  done
  pack
  ;;
s22-pat)
  # Session 22 (1 GPU; $B/autarky-s22b and .gpu/s22/gpu_cg built from the
  # working tree): the packed matrix's rows as patterns (a byte a row, the
  # patterns' words in L1) against the packed rows and offsets
  # (--no-row-patterns) and plain CSR, interleaved; gpu_cg first.
  X=${X:-$B/autarky-s22b}
  [ -x .gpu/s22/gpu_cg ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 200 .gpu/s22/gpu_cg --test-threads=1
  F='"us_per_iteration"|"row_patterns"|rror'
  for r in 1 2; do
    for x in pat packed; do
      e=
      [ $x = packed ] && e=--no-row-patterns
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $X --json cg --poisson3d 64 --tol 0 --max-iters 2000 $e
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $X --json cg --poisson3d 128 --tol 0 --max-iters 300 $e
      OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $X --json cg --poisson3d 32 --tol 0 --max-iters 2000 $e
      if [ $r = 1 ]; then
        OK_RC=4 FILTER="$F" run "cg256-$x" 120 $X --json cg --poisson3d 256 --tol 0 --max-iters 50 $e
        OK_RC=4 FILTER="$F" run "cg2d1024-pj-$x" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500 --precond jacobi $e
        OK_RC=4 FILTER="$F" run "cg2d1024-sr-$x" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction $e
      fi
    done
  done
  OK_RC=4 FILTER="$F" run "cg2d1024-plain" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500 --plain-matrix
  OK_RC=4 FILTER="$F" run "cg64-plain" 60 $X --json cg --poisson3d 64 --tol 0 --max-iters 2000 --plain-matrix
  pack
  ;;
s22-ab)
  # Session 22 (1 GPU; $B/autarky-s22 built from the working tree, beside a
  # bundle of 5cd2e36): three changes on the path from a reduce's last
  # input to its successors, each against its control, and all three
  # controls at once (the former code), interleaved: the residual's
  # host-memory stores after the completion's publish (control
  # -DAUTARKY_EXP_REPORT_INLINE), cg_reduce's scalars loaded before the
  # sums (-DAUTARKY_EXP_CG_SC_LATE), a comm block's pinned arguments in
  # shared memory (-DAUTARKY_EXP_COMM_ARGS_GLOBAL); and the progress
  # publish every 50 µs against none (-DAUTARKY_PROGRESS_PUBLISH_NS=1e9).
  X=${X:-$B/autarky-s22}
  F='"us_per_iteration"|rror'
  OLD="-DAUTARKY_EXP_REPORT_INLINE -DAUTARKY_EXP_CG_SC_LATE -DAUTARKY_EXP_COMM_ARGS_GLOBAL"
  for r in 1 2; do
    for x in new old inline sclate args nopub; do
      case $x in
        new) e= ;;
        old) e=$OLD ;;
        inline) e=-DAUTARKY_EXP_REPORT_INLINE ;;
        sclate) e=-DAUTARKY_EXP_CG_SC_LATE ;;
        args) e=-DAUTARKY_EXP_COMM_ARGS_GLOBAL ;;
        nopub) e=-DAUTARKY_PROGRESS_PUBLISH_NS=1000000000 ;;
      esac
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $X --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $X --json cg --poisson3d 64 --tol 0 --max-iters 2000
      if [ $x = new ] || [ $x = old ]; then
        AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $X --json cg --poisson3d 32 --tol 0 --max-iters 2000
        [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg128-$x" 60 $X --json cg --poisson3d 128 --tol 0 --max-iters 300
        [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-sr-$x" 60 $X --json cg --poisson3d 64 --tol 0 --max-iters 2000 --variant single-reduction
        [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "j1024-norm1-$x" 60 $X jacobi2d --size 1024 --iters 2000 --check-every 1
      fi
    done
  done
  pack
  ;;
s21-comm)
  # Session 21 (1 GPU; test binaries and autarky rebuilt from the working
  # tree into a bundle of 407080e): a comm block whose only work is its
  # pinned list polls a wide pinned task every round (not every other
  # one, no comm-ring pops) and reads the run's limit every 64 polls,
  # against -DAUTARKY_EXP_COMM_POLL_ALL (the former loop). The test
  # binaries that run comm blocks first, then the A/B, interleaved.
  for t in gpu_cg gpu_faults gpu gpu_unstoppable gpu_jacobi gpu_trace; do
    f=$(ls .gpu/tests/$t-* 2>/dev/null | head -1)
    [ -n "$f" ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run "test-$t" 120 "$f" --test-threads=1
  done
  F='"us_per_iteration"|rror'
  for r in 1 2; do
    for x in new all; do
      e=
      [ $x = all ] && e=-DAUTARKY_EXP_COMM_POLL_ALL
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000
      [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg128-$x" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
      [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" OK_RC=4 FILTER="$F" run "cg64-sr-$x" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --variant single-reduction
      [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "j1024-norm1-$x" 60 $B/autarky jacobi2d --size 1024 --iters 2000 --check-every 1
    done
  done
  pack
  ;;
s21-l2head)
  # Session 21 (1 GPU), after `bash .gpu/run`: the vectors' L2 window as
  # landed (407080e: laid out most reused first; the whole span up to 1.1x
  # the set-aside, its head up to 1.4x) against --no-l2-persist,
  # interleaved; then the CG bench.
  F='"us_per_iteration"|"l2_persist_bytes"|rror'
  for r in 1 2; do
    for x in kept none; do
      e=
      [ $x = none ] && e=--no-l2-persist
      OK_RC=4 FILTER="$F" run "cg2d1024-pj-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --precond jacobi $e
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg100-pj-$x" 60 $B/autarky --json cg --poisson3d 100 --tol 0 --max-iters 500 --precond jacobi $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1100-$x" 60 $B/autarky --json cg --poisson2d 1100 --tol 0 --max-iters 500 $e
    done
  done
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met|matrix' LINES_SHOWN=40 run cg-bench 300 $B/cg --quick
  pack
  ;;
s21-final)
  # Session 21 (1 GPU), after `bash .gpu/run`: the CG bench with the packed
  # matrix and the new Auto threshold; 2D 1024² traced (where an
  # iteration's time goes between the phases now that the matrix streams
  # in a third of the bytes); the dispatch bench (issue 8's table).
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met|matrix' LINES_SHOWN=40 run cg-bench 300 $B/cg --quick
  OK_RC=4 FILTER='us_per|rror' run cg2d1024-trace 90 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 60 --trace /tmp/cg2d.trace.json
  python3 scripts/trace-phases.py /tmp/cg2d.trace.json > "$LOGS/cg2d-phases.txt" 2>&1; tail -n 12 "$LOGS/cg2d-phases.txt"
  [ -x $B/dispatch ] && FILTER='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted|span|rror' LINES_SHOWN=40 run dispatch 200 $B/dispatch --quick
  pack
  ;;
s21-compact)
  # Session 21 (1 GPU): the SpMV reading the matrix packed (one u32 a
  # nonzero into a table of values, u32 row offsets; the default where it
  # fits) against plain CSR (--plain-matrix): gpu_cg (its bitwise test of
  # the two), the A/B (same binary, interleaved), ncu's DRAM bytes at 2D
  # 1024² for each.
  f=$(ls .gpu/tests/gpu_cg-* 2>/dev/null | head -1)
  [ -n "$f" ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked|packed' run test-gpu_cg 300 "$f" --test-threads=1
  F='"us_per_iteration"|"direction"|"compact_matrix"|rror'
  for r in 1 2; do
    for x in packed plain; do
      e=
      [ $x = plain ] && e=--plain-matrix
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $e
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg32-$x" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg256-$x" 120 $B/autarky --json cg --poisson3d 256 --tol 0 --max-iters 100 $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1024-sr-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction $e
      # With less matrix to stream, the direction's crossover may move.
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1024-fused-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --direction fused $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg128-fused-$x" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 --direction fused $e
    done
  done
  M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
  for x in packed plain; do
    e=
    [ $x = plain ] && e=--plain-matrix
    OK_RC=4 FILTER='\.(sum|pct)' LINES_SHOWN=10 run "ncu-cg2d-$x" 150 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100 $e
  done
  pack
  ;;
s20-l2b)
  # Session 20 (1 GPU): the CG vectors kept in L2 through
  # RunOptions::l2_persist (the default on a run of one PE when they fit
  # 1.1× the L2 the device sets aside) against --no-l2-persist: the test
  # binaries whose runs it changes or whose launch paths it touches, then
  # the A/B (same binary, interleaved), then the CG bench.
  for t in gpu_cg gpu gpu_unstoppable gpu_multipe; do
    f=$(ls .gpu/tests/$t-* 2>/dev/null | head -1)
    [ -n "$f" ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked|gpu_cg_vectors' run "test-$t" 240 "$f" --test-threads=1
  done
  F='"us_per_iteration"|"direction"|"l2_persist_bytes"|rror'
  for r in 1 2; do
    for x in kept plain; do
      e=
      [ $x = plain ] && e=--no-l2-persist
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $e
      OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg128-$x" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1024-sr-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction $e
    done
  done
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met' LINES_SHOWN=40 run cg-bench 300 $B/cg --quick
  pack
  ;;
s20-l2)
  # (Ran with an environment hook of the working tree, AUTARKY_CG_L2_PERSIST,
  # since replaced by RunOptions::l2_persist and never committed: on main
  # this stage runs without a window; s20-l2b is its successor.)
  # Session 20 (1 GPU; branch exp/l2-persist): the CG vectors (x, r, v,
  # y, p, s, z of the one PE) as an L2 access-policy window with
  # persisting hits (AUTARKY_CG_L2_PERSIST = the hit ratio), against none,
  # with the direction separate and fused, interleaved; ncu DRAM bytes.
  F='"us_per_iteration"|"direction"|rror|L2 window'
  for r in 1 2; do
    for w in none 1.0 0.7; do
      for d in separate fused; do
        if [ $w = none ]; then unset AUTARKY_CG_L2_PERSIST; else export AUTARKY_CG_L2_PERSIST=$w; fi
        OK_RC=4 FILTER="$F" run "cg2d1024-$w-$d-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --direction $d
        if [ $r = 1 ]; then
          OK_RC=4 FILTER="$F" run "cg128-$w-$d" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 --direction $d
          OK_RC=4 FILTER="$F" run "cg64-$w-$d" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --direction $d
        fi
      done
    done
  done
  unset AUTARKY_CG_L2_PERSIST
  M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
  for w in none 1.0; do
    if [ $w = none ]; then unset AUTARKY_CG_L2_PERSIST; else export AUTARKY_CG_L2_PERSIST=$w; fi
    OK_RC=4 FILTER='\.(sum|pct)|L2 window' LINES_SHOWN=10 run "ncu-cg2d-$w" 150 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100 --direction separate
  done
  unset AUTARKY_CG_L2_PERSIST
  pack
  ;;
s20-final)
  # Session 20 (1 GPU): the default (--direction auto) on the CG bench's
  # cases — which form it picked ("direction") and the time — then the
  # CG bench.
  F='"us_per_iteration"|"direction"|rror'
  OK_RC=4 FILTER="$F" run cg2d1024-auto 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
  OK_RC=4 FILTER="$F" run cg64-auto 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
  OK_RC=4 FILTER="$F" run cg128-auto 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
  OK_RC=4 FILTER="$F" run cg32-auto 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met' LINES_SHOWN=40 run cg-bench 300 $B/cg --quick
  pack
  ;;
s20-sizes)
  # Session 20 (1 GPU): where the fused direction wins and loses (64³,
  # 32³, 128³ faster; 2D 1024² slower): fused against separate over sizes,
  # interleaved, iteration counts for ~20-40 ms of run each.
  F='"us_per_iteration"|rror'
  for c in "poisson2d 512 1000" "poisson2d 724 1000" "poisson2d 1024 500" "poisson2d 1448 300" "poisson2d 2048 200" \
           "poisson3d 48 2000" "poisson3d 80 1000" "poisson3d 96 500" "poisson3d 112 400" "poisson3d 160 150"; do
    read -r kind size iters <<< "$c"
    for x in fused sep; do
      e="--direction fused"
      [ $x = sep ] && e="--direction separate"
      OK_RC=4 FILTER="$F" run "cg-$kind-$size-$x" 60 $B/autarky --json cg --$kind $size --tol 0 --max-iters $iters $e
    done
  done
  pack
  ;;
s20-stream)
  # Session 20 (1 GPU): the SpMV's matrix loads marked evict-first
  # (ld.global.cs; then the default) against plain loads (-DCG_SPMV_PLAIN_LOADS;
  # the evict-first loads lost and were backed out: both flags are gone,
  # the variants now run the same code), each with the direction fused and
  # separate, interleaved; then ncu of 2D 1024² for each. (Stages s20-dir,
  # s20-dir2 and s20-stream ran with --unfused-direction / the fused
  # default, which became --direction separate / fused.)
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in fused-cs sep-cs fused-plain sep-plain; do
      e='--direction fused'; x_=
      case $x in sep-*) e='--direction separate';; esac
      case $x in *-plain) x_=-DCG_SPMV_PLAIN_LOADS;; esac
      AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $e
      AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $e
      [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg32-$x" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $e
      case $x in sep-*) ;; *)
        [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg2d1024-sr-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction
        [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg64-sr-$x" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --variant single-reduction;;
      esac
    done
  done
  M="gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
  for x in fused-cs sep-cs fused-plain sep-plain; do
    e='--direction fused'; x_=
    case $x in sep-*) e='--direction separate';; esac
    case $x in *-plain) x_=-DCG_SPMV_PLAIN_LOADS;; esac
    AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER='\.(sum|pct)' LINES_SHOWN=10 run "ncu-cg2d-$x" 150 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100 $e
  done
  pack
  ;;
s20-dir2)
  # Session 20 (1 GPU; -DCG_DIR_PREPASS was a variant of the working tree,
  # not committed: it lost): why the fused direction is slower at 2D 1024²
  # (79.0 against 77.6 µs) and faster in 3D: separate direction tiles
  # (sep), the fused default (fused), and the fused SpMV writing its own
  # rows of p first in a coalesced pass, forming only other tiles' entries
  # (pre), interleaved; then ncu of 2D 1024² for each (DRAM bytes,
  # instructions, duration).
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in sep fused pre; do
      e='--direction fused'; x_=
      case $x in sep) e='--direction separate';; pre) x_=-DCG_DIR_PREPASS;; esac
      AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $e
      AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $e
      [ $r = 1 ] && AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER="$F" run "cg32-$x" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $e
    done
  done
  M="gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
  for x in sep fused pre; do
    e='--direction fused'; x_=
    case $x in sep) e='--direction separate';; pre) x_=-DCG_DIR_PREPASS;; esac
    AUTARKY_NVRTC_EXTRA="$x_" OK_RC=4 FILTER='\.(sum|pct)' LINES_SHOWN=10 run "ncu-cg2d-$x" 150 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100 $e
  done
  pack
  ;;
s20-dir)
  # Session 20 (1 GPU): the Standard recurrence's next direction formed
  # where it is read (SpMV column loads, the update, the gathers; default)
  # against direction tiles (--direction separate), one binary, interleaved;
  # rel_residual after a fixed count must be bitwise the same. gpu_cg (its
  # new fused-against-separate test) first, the CG bench last.
  [ -x .gpu/tests/gpu_cg ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 200 .gpu/tests/gpu_cg --test-threads=1
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in fused sep; do
      case $x in fused) e='--direction fused';; sep) e='--direction separate';; esac
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $e
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $e
      OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg64-pj-$x" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --precond jacobi $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg128-pes2-$x" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 --pes 2 $e
    done
  done
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met' LINES_SHOWN=40 run cg-bench 300 $B/cg --quick
  pack
  ;;
s19-fuse)
  # Session 19 (1 GPU): on one PE each allreduce as one task (the reduce
  # sums the tiles' partials block-wide; default) against a local sum then
  # the reduce (--unfused-allreduce), one binary, interleaved;
  # rel_residual after a fixed count must be bitwise the same. gpu_cg
  # (its new fused-against-two-task test) first, the CG bench last.
  [ -x .gpu/tests/gpu_cg ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 200 .gpu/tests/gpu_cg --test-threads=1
  F='"us_per_iteration"|"rel_residual"|rror'
  for r in 1 2; do
    for x in fused two; do
      case $x in fused) e=;; two) e=--unfused-allreduce;; esac
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 $e
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 $e
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300 $e
      OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000 $e
      OK_RC=4 FILTER="$F" run "cg64-sr-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --variant single-reduction $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1024-sr-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction $e
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg64-pj-$x" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000 --precond jacobi $e
    done
  done
  OK_RC=4 FILTER='us_per|rror' run cg64-trace 90 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 100 --trace /tmp/cg64.trace.json
  python3 scripts/trace-phases.py /tmp/cg64.trace.json > "$LOGS/cg64-phases.txt" 2>&1; tail -n 7 "$LOGS/cg64-phases.txt"
  [ -x $B/cg ] && FILTER='^h200/[a-z0-9/]+ +[0-9]|rror|MISS|met' LINES_SHOWN=40 run cg-bench 300 $B/cg --quick
  pack
  ;;
s19-cg3)
  # (Flags of branch exp/cg-staged-spmv, bf3d5d6; main kept the former bodies.)
  # Session 19 (1 GPU): why the staged SpMV's faster tiles (traced) do
  # not make a faster iteration (untraced): traces and ncu of the former
  # bodies, the staged ones (chunks of 128 and 256) and the former with the
  # staged path's shared memory reserved but unused (pad).
  M="gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,launch__occupancy_limit_shared_mem,launch__grid_size,launch__shared_mem_config_size,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
  for x in ctl new ch256 pad; do
    case $x in
      ctl) e="-DCG_SPMV_PLAIN -DCG_VEC_UNROLL=1";;
      new) e=;;
      ch256) e="-DCG_SPMV_CHUNK=256";;
      pad) e="-DCG_SPMV_PLAIN -DCG_VEC_UNROLL=1 -DCG_SMEM_PAD=1024";;
    esac
    export AUTARKY_NVRTC_EXTRA="$e"
    for c in "2d1024:--poisson2d 1024:500" "64:--poisson3d 64:2000"; do
      IFS=: read tag m it <<< "$c"
      OK_RC=4 FILTER='us_per_iteration|rror' run "cg$tag-$x" 60 $B/autarky --json cg $m --tol 0 --max-iters $it
      OK_RC=4 FILTER='us_per|rror' run "cg$tag-trace-$x" 90 $B/autarky cg $m --tol 0 --max-iters 100 --trace /tmp/t.json
      python3 scripts/trace-phases.py /tmp/t.json > "$LOGS/cg$tag-phases-$x.txt" 2>&1; tail -n 8 "$LOGS/cg$tag-phases-$x.txt"
    done
    OK_RC=4 FILTER='\.(sum|pct|ratio)|launch' LINES_SHOWN=20 run "ncu-cg2d-$x" 200 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100
  done
  unset AUTARKY_NVRTC_EXTRA
  pack
  ;;
s19-cg2)
  # (Flags of branch exp/cg-staged-spmv, bf3d5d6; main kept the former bodies.)
  # Session 19 (1 GPU): the staged SpMV (a warp's CSR range and its v
  # gathers copied to shared memory with cp.async) and the vector bodies
  # two elements at a time, all inlined, against the former bodies
  # (-DCG_SPMV_PLAIN -DCG_VEC_UNROLL=1), one binary, interleaved;
  # rel_residual after a fixed count must be bitwise the same in all.
  [ -x .gpu/tests/gpu_cg ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 200 .gpu/tests/gpu_cg --test-threads=1
  for r in 1 2; do
    for x in new ctl ch256 v1 plain; do
      case $x in
        new) e=;;
        ctl) e="-DCG_SPMV_PLAIN -DCG_VEC_UNROLL=1";;
        ch256) e="-DCG_SPMV_CHUNK=256";;
        v1) e="-DCG_VEC_UNROLL=1";;
        plain) e="-DCG_SPMV_PLAIN";;
      esac
      [ $r = 2 ] && case $x in v1|plain) continue;; esac
      export AUTARKY_NVRTC_EXTRA="$e"
      F='"us_per_iteration"|"rel_residual"|rror'
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
      OK_RC=4 FILTER="$F" run "cg32-$x-$r" 60 $B/autarky --json cg --poisson3d 32 --tol 0 --max-iters 2000
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1024-sr-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1024-pj-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --precond jacobi
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  OK_RC=4 FILTER='us_per|rror' run cg2d1024-trace 90 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 60 --trace /tmp/cg2d.trace.json
  python3 scripts/trace-phases.py /tmp/cg2d.trace.json > "$LOGS/cg2d-phases.txt" 2>&1; tail -n 9 "$LOGS/cg2d-phases.txt"
  OK_RC=4 FILTER='us_per|rror' run cg64-trace 90 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 100 --trace /tmp/cg64.trace.json
  python3 scripts/trace-phases.py /tmp/cg64.trace.json > "$LOGS/cg64-phases.txt" 2>&1; tail -n 9 "$LOGS/cg64-phases.txt"
  pack
  ;;
s19-ncu)
  # Session 19 (1 GPU): where CG 2D 1024²'s SpMV goes (1.7 TB/s): ncu
  # memory metrics and stall reasons of 100 iterations, former bodies
  # (ctl) and unrolled (u4), then per-instruction stall samples of ctl.
  st=""
  for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle lg_throttle mio_throttle not_selected selected no_instruction branch_resolving dispatch_stall membar sleeping drain imc_miss tex_throttle misc; do
    st="$st,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  M="gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum$st"
  NCU="/usr/local/cuda/bin/ncu --clock-control none --metrics $M"
  for x in ctl u4; do
    case $x in ctl) e="-DCG_INLINE_BODIES -DCG_SPMV_UNROLL=1 -DCG_VEC_UNROLL=1";; u4) e="-DCG_SPMV_UNROLL=4";; esac
    OK_RC=4 FILTER='\.(sum|pct|ratio)' LINES_SHOWN=60 AUTARKY_NVRTC_EXTRA="$e" run "ncu-cg2d-$x" 200 $NCU -k autarky_megakernel -c 1 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100
  done
  OK_RC=4 AUTARKY_NVRTC_EXTRA="-DCG_INLINE_BODIES -DCG_SPMV_UNROLL=1 -DCG_VEC_UNROLL=1" run ncu-cg2d-src 200 /usr/local/cuda/bin/ncu --clock-control none --section SourceCounters --section WarpStateStats -k autarky_megakernel -c 1 -f -o /tmp/cg2d $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 100
  /usr/local/cuda/bin/ncu -i /tmp/cg2d.ncu-rep --page source --csv --print-source sass > /tmp/sass.csv 2> "$LOGS/src.err" || /usr/local/cuda/bin/ncu -i /tmp/cg2d.ncu-rep --page source --csv > /tmp/sass.csv 2>> "$LOGS/src.err"
  gzip -c /tmp/sass.csv > "$OUT/sass-cg2d.csv.gz"; ls -la /tmp/sass.csv
  pack
  ;;
s19-cg)
  # (Flags of branch exp/cg-staged-spmv, bf3d5d6; main kept the former bodies.)
  # Session 19 (1 GPU): the CG bodies with loads in flight (SpMV entries
  # CG_SPMV_UNROLL at a time, vector elements CG_VEC_UNROLL at a time, out
  # of line) against the former bodies (inlined, one at a time), one
  # binary, interleaved; then register budgets (fewer blocks an SM). Every
  # run prints its JSON: rel_residual after a fixed count must be
  # bitwise the same wherever the tiles are (same blocks an SM).
  [ -x .gpu/tests/gpu_cg ] && AUTARKY_REQUIRE_GPU=1 FILTER='test result|FAILED|panicked' run test-gpu_cg 200 .gpu/tests/gpu_cg --test-threads=1
  for r in 1 2; do
    for x in new ctl noinl u4 v1 mb6 mb4; do
      case $x in
        new) e=;;
        ctl) e="-DCG_INLINE_BODIES -DCG_SPMV_UNROLL=1 -DCG_VEC_UNROLL=1";;
        noinl) e="-DCG_SPMV_UNROLL=1 -DCG_VEC_UNROLL=1";;
        u4) e="-DCG_SPMV_UNROLL=4";;
        v1) e="-DCG_VEC_UNROLL=1";;
        mb6) e="-DAUTARKY_MIN_BLOCKS=6";;
        mb4) e="-DAUTARKY_MIN_BLOCKS=4 -DCG_VEC_UNROLL=4";;
      esac
      [ $r = 2 ] && case $x in u4|v1|noinl) continue;; esac
      export AUTARKY_NVRTC_EXTRA="$e"
      F='"us_per_iteration"|"rel_residual"|"tiles_per_pe"|rror'
      OK_RC=4 FILTER="$F" run "cg2d1024-$x-$r" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER="$F" run "cg64-$x-$r" 60 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 2000
      OK_RC=4 FILTER="$F" run "cg128-$x-$r" 60 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 300
      [ $r = 1 ] && OK_RC=4 FILTER="$F" run "cg2d1024-sr-$x" 60 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  # Where an iteration goes now (phases), default bodies.
  OK_RC=4 FILTER='us_per|rror' run cg2d1024-trace 90 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 60 --trace /tmp/cg2d.trace.json
  python3 scripts/trace-phases.py /tmp/cg2d.trace.json > "$LOGS/cg2d-phases.txt" 2>&1; cat "$LOGS/cg2d-phases.txt" | tail -n 12
  OK_RC=4 FILTER='us_per|rror' run cg64-trace 90 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 100 --trace /tmp/cg64.trace.json
  python3 scripts/trace-phases.py /tmp/cg64.trace.json > "$LOGS/cg64-phases.txt" 2>&1; cat "$LOGS/cg64-phases.txt" | tail -n 12
  pack
  ;;
s18-ab)
  # Session 18 (1 GPU), after `bash .gpu/run` (every test binary of a
  # gpu-bundle): predecessor scans with every load in flight (new) against
  # -DAUTARKY_SERIAL_PRED_LOADS (each done word loaded right after its
  # edge, as before), one binary, interleaved: the dispatch bench (fan-in's
  # sink scans 1000 predecessors), CG (wide joins polled by comm blocks),
  # Jacobi (pinned tiles' polls).
  F='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted|span'
  for r in 1 2; do
    for x in new serial; do
      case $x in new) e=;; serial) e=-DAUTARKY_SERIAL_PRED_LOADS;; esac
      export AUTARKY_NVRTC_EXTRA="$e"
      [ $r = 1 ] && FILTER="$F" LINES_SHOWN=40 run "dispatch-$x" 150 $B/dispatch --quick
      OK_RC=4 FILTER='µs per|per iteration|rror' run "cg2d1024-$x-$r" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 500
      OK_RC=4 FILTER='µs per|per iteration|rror' run "cg64-$x-$r" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 2000
      [ $r = 1 ] && OK_RC=4 FILTER='µs per|per iteration|rror' run "cg2d1024-sr-$x" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 500 --variant single-reduction
      FILTER='µs per|rror' run "j2d1024-$x-$r" 60 $B/autarky jacobi2d --size 1024 --iters 4000 --check-every 0 --steps-per-sync 4
      FILTER='µs per|rror' run "j2d256-$x-$r" 60 $B/autarky jacobi2d --size 256 --iters 20000 --check-every 0 --steps-per-sync 4
      FILTER='µs per|rror' run "j3d256-$x-$r" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  pack
  ;;
s17-one)
  # Session 17 (1 GPU): the chain loop and the wake words. GPU tests of
  # dynamic tasks, aborts and failures (new: one-shot chains of every
  # shape, a failing and a held link); then the dispatch bench A/B in one
  # binary: new; -DAUTARKY_NO_CHAIN_LOOP; that and -DAUTARKY_NO_WAKE (the
  # former end of a run).
  export AUTARKY_REQUIRE_GPU=1
  for t in gpu gpu_faults gpu_unstoppable; do
    FILTER='test result|FAILED|panicked|per hand-off' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  F='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted|span'
  for x in new nochain control; do
    case $x in new) e=;; nochain) e=-DAUTARKY_NO_CHAIN_LOOP;; control) e="-DAUTARKY_NO_CHAIN_LOOP -DAUTARKY_NO_WAKE";; esac
    AUTARKY_NVRTC_EXTRA="$e" FILTER="$F" LINES_SHOWN=40 run "dispatch-$x" 150 $B/dispatch --quick
  done
  pack
  ;;
s17-final)
  # Session 17 (1 GPU): every test binary at the head, then the dispatch
  # bench and the CLI rows this session changed.
  AUTARKY_TEST_LIMIT_S=200 OUT=$LOGS bash scripts/gpu-validate.sh 2>&1 | tail -n 20
  pack
  F='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted'
  FILTER="$F" LINES_SHOWN=40 run dispatch-final 150 $B/dispatch --quick
  FILTER='µs per|rror' run j3d256-pes2-final 60 $B/autarky jacobi3d --size 256 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror' run j3d256-final 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror|compiling' run j2d1024-final 60 $B/autarky jacobi2d --size 1024 --iters 2000 --check-every 0 --steps-per-sync 4
  pack
  ;;
s17-two)
  # Session 17 (2 GPUs): the ABI 9 kernel (wake words, chain loop) across
  # GPUs and ranks: gpu_multigpu, gpu_faults, gpu, mpi_ipc and nvshmem_mpi
  # (forced through puts) under mpirun, 3D 256³ on two GPUs.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  for t in gpu_multigpu gpu_faults gpu; do
    FILTER='test result|FAILED|panicked' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  FILTER='µs per|rror' run j3d256-2gpu 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2
  mpi_env 1
  FILTER='test result|FAILED|panicked' run mpi-ipc 150 $M .gpu/tests/mpi_ipc-* --test-threads=1
  FILTER='test result|FAILED|panicked' run nvshmem-mpi 200 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
  pack
  ;;
s17-four)
  # Session 17 (4 GPUs, lent for the first time): the ABI 9 kernel across
  # GPUs (the multi-GPU and fault tests run on 2 of them), autarky info;
  # correctness on 4 real GPUs against 4 virtual PEs (the CLI's JSON norms,
  # CG's iterations and residuals); Jacobi scaling on 1, 2, 4 GPUs (strong:
  # 1024², 16384², 3D 256³; weak: 256² and 4096² a GPU, square on 1 and 4
  # GPUs); halo-wait shares; MPI and NVSHMEM ranks (2).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  run info 60 $B/autarky info
  for t in gpu_multigpu gpu_faults; do
    FILTER='test result|FAILED|panicked' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  same() {  # same LABEL ARGS...: norms of --gpus 4 --pes 4 against --pes 4, bitwise
    local l=$1; shift
    timeout -k 5 120 $B/autarky --json "$@" --gpus 4 --pes 4 > "$LOGS/same-$l-gpus.json" 2> "$LOGS/same-$l-gpus.err"
    timeout -k 5 120 $B/autarky --json "$@" --pes 4 > "$LOGS/same-$l-vpes.json" 2> "$LOGS/same-$l-vpes.err"
    python3 - "$LOGS/same-$l-gpus.json" "$LOGS/same-$l-vpes.json" "$l" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
keys = ["norms", "iterations", "rel_residual", "true_rel_residual"]
pa = {k: a.get(k) for k in keys}; pb = {k: b.get(k) for k in keys}
print(f"{sys.argv[3]}: 4 GPUs {'==' if pa == pb else '!='} 4 virtual PEs ({a.get('backend')}; {len(a.get('norms') or [])} norms; {a.get('us_per_iteration')} vs {b.get('us_per_iteration')} us/iteration)")
sys.exit(0 if pa == pb and a.get('iterations') else 1)
PY
    [ $? -eq 0 ] || fail=1
    pack
  }
  same j2d5 jacobi2d --size 1024 --iters 200 --check-every 10
  same j2d9 jacobi2d --size 1000 --iters 100 --check-every 10 --stencil 9
  same j2d5s4 jacobi2d --size 2048 --iters 200 --check-every 20 --steps-per-sync 4
  same j3d7 jacobi3d --size 128 --iters 100 --check-every 10 --steps-per-sync 2
  same j3d27 jacobi3d --size 96 --iters 50 --check-every 10 --stencil 27
  same cg3d cg --poisson3d 64 --tol 1e-10
  for g in 1 2 4; do
    FILTER='µs per|rror' run "j2d16384-s4-g$g" 60 $B/autarky jacobi2d --size 16384 --gpus $g --pes $g --iters 200 --check-every 0 --steps-per-sync 4
    FILTER='µs per|rror' run "j2d1024-s4-g$g" 60 $B/autarky jacobi2d --size 1024 --gpus $g --pes $g --iters 2000 --check-every 0 --steps-per-sync 4
    FILTER='µs per|rror' run "j3d256-s2-g$g" 60 $B/autarky jacobi3d --size 256 --gpus $g --pes $g --iters 400 --check-every 0 --steps-per-sync 2
  done
  for n in 256 4096; do
    FILTER='µs per|rror' run "weak$n-g1" 60 $B/autarky jacobi2d --size $n --iters 2000 --check-every 0 --steps-per-sync 4
    FILTER='µs per|rror' run "weak$n-g4" 60 $B/autarky jacobi2d --size $((2 * n)) --gpus 4 --pes 4 --iters 2000 --check-every 0 --steps-per-sync 4
  done
  HALO_CMD=jacobi2d halo g4-1024 --size 1024 --gpus 4 --pes 4 --iters 400 --check-every 0 --steps-per-sync 4
  HALO_CMD=jacobi2d halo g4-16384 --size 16384 --gpus 4 --pes 4 --iters 40 --check-every 0 --steps-per-sync 4
  mpi_env 1
  FILTER='test result|FAILED|panicked' run mpi-ipc 150 $M .gpu/tests/mpi_ipc-* --test-threads=1
  FILTER='test result|FAILED|panicked' run nvshmem-mpi 200 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
  pack
  ;;
s17-grid)
  # Session 17 (4 GPUs): the PE grid across 4 GPUs (--pe-grid, new):
  # slabs (4x1, 4x1x1: one pulse a direction, nothing forwarded) against
  # the default least-halo split (2x2, 2x2x1: two pulse rounds, the second
  # forwarding the first's corners).
  export AUTARKY_REQUIRE_GPU=1
  for g in 2x2x1 4x1x1; do
    FILTER='µs per|rror' run "j3d256-s2-$g" 60 $B/autarky jacobi3d --size 256 --gpus 4 --pes 4 --pe-grid $g --iters 400 --check-every 0 --steps-per-sync 2
    FILTER='µs per|rror' run "j3d256-s1-$g" 60 $B/autarky jacobi3d --size 256 --gpus 4 --pes 4 --pe-grid $g --iters 400 --check-every 0
    FILTER='µs per|rror' run "j3d512-s2-$g" 60 $B/autarky jacobi3d --size 512 --gpus 4 --pes 4 --pe-grid $g --iters 100 --check-every 0 --steps-per-sync 2
  done
  for g in 2x2 4x1; do
    for n in 512 1024 8192 16384; do
      k=2000; [ $n -ge 8192 ] && k=200
      FILTER='µs per|rror' run "j2d$n-s4-$g" 60 $B/autarky jacobi2d --size $n --gpus 4 --pes 4 --pe-grid $g --iters $k --check-every 0 --steps-per-sync 4
    done
  done
  FILTER='µs per|rror' run "j3d512-s2-g1" 60 $B/autarky jacobi3d --size 512 --iters 100 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror' run "j2d8192-s4-g1" 60 $B/autarky jacobi2d --size 8192 --iters 200 --check-every 0 --steps-per-sync 4
  pack
  ;;
s17-check)
  # Session 17 (4 GPUs): the slab default (c077dfe): gpu_jacobi and
  # gpu_multigpu; 3D 256³ and 2D 1024²/512² on 4 GPUs with the default
  # grid; 4 GPUs against 4 virtual PEs, bitwise.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  for t in gpu_jacobi gpu_multigpu; do
    FILTER='test result|FAILED|panicked' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  FILTER='µs per|rror|PE grid' run j3d256-s2-g4-default 60 $B/autarky jacobi3d --size 256 --gpus 4 --pes 4 --iters 400 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror|PE grid' run j2d1024-s4-g4-default 60 $B/autarky jacobi2d --size 1024 --gpus 4 --pes 4 --iters 2000 --check-every 0 --steps-per-sync 4
  for pe in 4; do
    for l in j3d7 j2d5s4; do
      case $l in j3d7) a="jacobi3d --size 128 --iters 100 --check-every 10 --steps-per-sync 2";; j2d5s4) a="jacobi2d --size 2048 --iters 200 --check-every 20 --steps-per-sync 4";; esac
      timeout -k 5 60 $B/autarky --json $a --gpus 4 --pes 4 > "$LOGS/c-$l-g.json" 2>/dev/null
      timeout -k 5 60 $B/autarky --json $a --pes 4 > "$LOGS/c-$l-v.json" 2>/dev/null
      python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:3]); ok=a['norms']==b['norms'] and a['norms']; print(sys.argv[3], a['pe_grid'], '4 GPUs', '==' if ok else '!=', '4 virtual PEs'); sys.exit(0 if ok else 1)" "$LOGS/c-$l-g.json" "$LOGS/c-$l-v.json" $l || fail=1
    done
  done
  pack
  ;;
s17-b)
  # Session 17 (1 GPU), after s17-one/s17-vpe: gpu_faults with the held
  # link fixed; virtual PEs with the CLI's new default comm blocks (one
  # per pulse chunk, ≤ 16) and the counts around it; CG with the comm
  # blocks' wake check every 4 polls (new), every poll, not at all, and no
  # wake words, twice, interleaved; the Jacobi bench's virtual-PE rows.
  export AUTARKY_REQUIRE_GPU=1
  FILTER='test result|FAILED|panicked' run test-gpu_faults 170 .gpu/tests/gpu_faults-* --test-threads=1
  for pe in 2 4; do
    FILTER='µs per|rror|comm' run "j3d256-pes$pe-default" 60 $B/autarky jacobi3d --size 256 --pes $pe --iters 400 --check-every 0 --steps-per-sync 2
  done
  for cb in default 2 4; do
    a=; [ $cb = default ] || a="--comm-blocks $cb"
    FILTER='µs per|rror' run "j2d4096-pes4-$cb" 60 $B/autarky jacobi2d --size 4096 --pes 4 --iters 1000 --check-every 0 --steps-per-sync 4 $a
  done
  for cb in default 1; do
    a=; [ $cb = default ] || a="--comm-blocks $cb"
    FILTER='µs per|rror' run "j2d1024-pes4-$cb" 60 $B/autarky jacobi2d --size 1024 --pes 4 --iters 2000 --check-every 0 --steps-per-sync 4 $a
    FILTER='µs per|rror' run "j2d1024-pes4-s1-$cb" 60 $B/autarky jacobi2d --size 1024 --pes 4 --iters 2000 --check-every 0 $a
  done
  for r in 1 2; do
    for x in new every1 nocomm nowake; do
      case $x in new) e=;; every1) e=-DCOMM_WAKE_EVERY=1;; nocomm) e=-DAUTARKY_NO_COMM_WAKE;; nowake) e=-DAUTARKY_NO_WAKE;; esac
      export AUTARKY_NVRTC_EXTRA="$e"
      OK_RC=4 FILTER='µs per|per iteration|rror' run "cg64-$x-$r" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 2000
      OK_RC=4 FILTER='µs per|per iteration|rror' run "cg2d1024-$x-$r" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 500
    done
  done
  unset AUTARKY_NVRTC_EXTRA
  FILTER='^h200|rror|P=4|comm block' LINES_SHOWN=20 run jacobi-bench-pes 200 $B/jacobi --2d=none --3d=none --pes=1024,4096 --two-gpu=none --weak=none --reps=3
  pack
  ;;
s17-vpe)
  # Session 17 (1 GPU): virtual PEs' comm blocks (default 1), Jacobi 3D
  # 256³ S = 2 and 2D 4096² S = 4 on 2 and 4 virtual PEs; the wake words'
  # A/B on Jacobi and CG (their comm loops poll one more word); gpu_multipe
  # and gpu_trace.
  export AUTARKY_REQUIRE_GPU=1
  for t in gpu_multipe gpu_trace; do
    FILTER='test result|FAILED|panicked' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  for cb in 1 4 8 16 32; do
    FILTER='µs per|rror' run "j3d256-pes2-cb$cb" 60 $B/autarky jacobi3d --size 256 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2 --comm-blocks $cb
  done
  for cb in 1 8 16; do
    FILTER='µs per|rror' run "j3d256-pes4-cb$cb" 60 $B/autarky jacobi3d --size 256 --pes 4 --iters 400 --check-every 0 --steps-per-sync 2 --comm-blocks $cb
    FILTER='µs per|rror' run "j2d4096-pes4-cb$cb" 60 $B/autarky jacobi2d --size 4096 --pes 4 --iters 1000 --check-every 0 --steps-per-sync 4 --comm-blocks $cb
    FILTER='µs per|rror' run "j2d1024-pes4-cb$cb" 60 $B/autarky jacobi2d --size 1024 --pes 4 --iters 2000 --check-every 0 --steps-per-sync 4 --comm-blocks $cb
  done
  for x in new nowake; do
    case $x in new) e=;; nowake) e=-DAUTARKY_NO_WAKE;; esac
    export AUTARKY_NVRTC_EXTRA="$e"
    FILTER='µs per|rror' run "j2d256-s4-$x" 60 $B/autarky jacobi2d --size 256 --iters 2000 --check-every 0 --steps-per-sync 4
    FILTER='µs per|rror' run "j2d1024-s4-$x" 60 $B/autarky jacobi2d --size 1024 --iters 2000 --check-every 0 --steps-per-sync 4
    FILTER='µs per|rror' run "j3d256-s2-$x" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2
    OK_RC=4 FILTER='µs per|per iteration|rror' run "cg64-$x" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 1000
    OK_RC=4 FILTER='µs per|per iteration|rror' run "cg2d1024-$x" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 300
  done
  unset AUTARKY_NVRTC_EXTRA
  pack
  ;;
one-tests)
  bash scripts/gpu-validate.sh --bench || fail=1
  ;;
one-exp)
  # Temporal blocking (session 6, untimed): S sweeps per synchronisation.
  for n in 256 1024 4096 16384; do
    k=$([ $n -ge 16384 ] && echo 200 || ([ $n -ge 4096 ] && echo 1200 || echo 6000))
    for st in 1 2 4; do
      FILTER='µs per|rror' run temporal-$n-s$st 60 $B/autarky jacobi2d --size $n --iters $k --check-every 0 --steps-per-sync $st
    done
  done
  for n in 1024 16384; do
    halo "1gpu-$n" --size $n --iters 200 --check-every 0
  done
  # Last (the longest): CG against the cuSPARSE/cuBLAS baseline (targets:
  # 2x at 64³, no slower at 256³; 2D 1024² ≤ 35 µs) with the 1-lane default.
  FILTER='^h200|^case|MISS|ok$|rror' LINES_SHOWN=30 run cg-bench 300 $B/cg --quick
  ;;
two)
  AUTARKY_TEST_LIMIT_S=150 bash scripts/gpu-validate.sh || fail=1
  for n in 1024 16384; do
    halo "2gpu-$n" --size $n --gpus 2 --pes 2 --iters 200 --check-every 0
  done
  # Split pulses (session 6, untimed): whole on 1 comm block against
  # chunks over 2 and 4 (the 1024-cell 2D halo row in chunks of >= 256;
  # the 3D 65536-cell plane in chunks of >= 1024, the default).
  for cb in 1 2 4; do
    FILTER='µs per' run split-2d-1024-cb$cb 60 $B/autarky jacobi2d --size 1024 --gpus 2 --pes 2 --iters 5000 --check-every 0 --comm-blocks $cb --pulse-chunk 256
    FILTER='µs per' run split-3d-256-cb$cb 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 500 --check-every 0 --comm-blocks $cb
  done
  # Where a two-GPU CG iteration goes (trace facts in the JSON).
  for n in 128 256; do
    OK_RC=4 FILTER='us_per|compute_waits|rror' run cg-trace-2gpu-$n 120 $B/autarky --json cg --poisson3d $n --gpus 2 --pes 2 --tol 0 --max-iters 50 --trace /tmp/cg-$n.trace.json
  done
  FILTER='two|GPU|µs' run cg-two-gpu 300 $B/cg --3d=none --2d=none --two-gpu=128,256
  FILTER='two|GPU|µs|weak' run jacobi-two-gpu 300 $B/jacobi --2d=none --3d=none --pes=none --two-gpu=1024,4096 --weak=256 --reps=5
  FILTER='ipc|IPC|one process|µs|SKIP' run jacobi-mpi 300 \
    mpirun --allow-run-as-root --oversubscribe -n 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS \
    $B/jacobi_mpi --quick
  ;;
mpi-tests|mpi-bench|mpi-kill|mpi-jacobi)
  # The multi-process runs (2 GPUs; bundle built with --features
  # fault-injection,mpi,nvshmem), in stages that each fit one device
  # command: mpi-tests, the MPI/NVSHMEM trials (forced remote and not);
  # mpi-bench, the full jacobi_mpi bench (16384²) over NVSHMEM puts, the
  # two-GPU CG bench and 3D Jacobi on two GPUs with the default comm blocks
  # (4 across GPUs; gathers and pulses split over them); mpi-jacobi, that
  # jacobi_mpi alone; mpi-kill, the killed-rank trial.
  mpi_env 1
  if [ "$1" = mpi-kill ]; then
    # Issue 12's last trial (written in session 8, passed on two H200s in
    # session 9): rank 1 killed mid-run; rank 0 must end with an error
    # (RankLost, with its own PE's record) within its bounds.
    # mpirun must not kill rank 0 itself when rank 1 dies (Open MPI:
    # orte_abort_on_non_zero_status 0), and the job ends with MPI_Abort at
    # exit by design, so the verdict is rank 0's own result line.
    FILTER='test result|FAILED|panicked|rank 0 after' run mpi-kill 120 $M --mca orte_abort_on_non_zero_status 0 \
      .gpu/tests/mpi_ipc-* --ignored a_rank_killed_mid_run --test-threads=1
    # (libtest colours "ok" even when piped: strip the escapes first.)
    if sed 's/\x1b\[[0-9;]*m//g' "$LOGS/mpi-kill.log" | grep -a -q "test result: ok. 1 passed"; then fail=0; else fail=1; fi
  elif [ "$1" = mpi-tests ]; then
    # Limits: 3 × 170 s (the trials' rank timeout is 60 s).
    FILTER='test result|FAILED|panicked' run mpi-ipc 170 $M .gpu/tests/mpi_ipc-* --test-threads=1
    FILTER='test result|FAILED|panicked' run nvshmem-mpi-remote 170 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
    AUTARKY_NVSHMEM_FORCE_REMOTE=0 FILTER='test result|FAILED|panicked' run nvshmem-mpi-p2p 170 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
  else
    # Limits: 270 + 240 + 60 s.
    FILTER='^h200|target|SKIP' LINES_SHOWN=12 run jacobi-mpi-full 270 $M $B/jacobi_mpi
    if [ "$1" = mpi-bench ]; then
      FILTER='two|µs' run cg-two-gpu 240 $B/cg --3d=none --2d=none --two-gpu=128,256
      FILTER='µs per' run jacobi3d-256-2gpu 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 500 --check-every 0
    fi
  fi
  ;;
s9-bench)
  # Session 9, after gpu-validate.sh and the mpi stages: the full jacobi_mpi
  # through NVSHMEM's default per-peer choice (its P2P mapping on one node),
  # then the one-GPU dispatch bench (GPU 0) and the CLI cases of the
  # Jacobi and CG tables. (The forced-put rows: `mpi-jacobi`.)
  T=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
  ( export AUTARKY_NVSHMEM_DIR=$T/nvshmem AUTARKY_NVJITLINK_DIR=$T/cu13/lib \
      AUTARKY_CUDA_INCLUDE_DIR=$T/cu13/include AUTARKY_NVRTC_DIR=$T/cu13/lib \
      LD_LIBRARY_PATH=/usr/local/cuda/lib64:$T/nvshmem/lib:$T/cu13/lib AUTARKY_NVSHMEM_FORCE_REMOTE=0
    X="-x AUTARKY_NVSHMEM_DIR -x AUTARKY_NVJITLINK_DIR -x AUTARKY_CUDA_INCLUDE_DIR -x AUTARKY_NVRTC_DIR"
    X="$X -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x AUTARKY_NVSHMEM_FORCE_REMOTE"
    FILTER='^h200|target|SKIP' LINES_SHOWN=8 run jacobi-mpi-p2p 240 \
      mpirun --allow-run-as-root --oversubscribe -n 2 $X $B/jacobi_mpi
    exit $fail ) || fail=1
  CUDA_VISIBLE_DEVICES=0 FILTER='^dispatch bench|^h200|autarky in-kernel' LINES_SHOWN=30 run dispatch 120 $B/dispatch --quick
  OK_RC=4 FILTER='µs per|rror' run cg64 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 3000
  FILTER='µs per|rror' run j256 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
  FILTER='µs per|rror' run j1024 60 $B/autarky jacobi2d --size 1024 --iters 5000 --check-every 0
  ;;
s10-next-two)
  # Owed after session 10 (2 GPUs): temporal blocking across GPUs has not
  # been timed — its pulses carry S layers once per S sweeps, which is
  # what 1024² on two GPUs (12.3 µs against 4.9 on one) and the weak
  # case (8.47 µs at 256² a GPU) lack.
  for s in 1 4; do
    FILTER='µs per|rror' run "j1024-2gpu-s$s" 60 $B/autarky jacobi2d --size 1024 --gpus 2 --pes 2 --iters 4000 --check-every 0 --steps-per-sync $s
    FILTER='µs per|rror' run "j16384-2gpu-s$s" 120 $B/autarky jacobi2d --size 16384 --gpus 2 --pes 2 --iters 40 --check-every 0 --steps-per-sync $s
  done
  FILTER='^h200|^two-GPU|^jacobi2d|µs per' LINES_SHOWN=12 run jacobi-bench-two 300 $B/jacobi --2d=none --3d=none --pes=none --two-gpu=1024,4096,16384 --weak=256 --reps=7
  ;;
s10-next)
  # Owed after session 10 (1 GPU; run gpu-validate.sh first, a command of
  # its own): the Jacobi bench at the head (its S = 4 column now runs at
  # 4096² and 16384² too), the strengthened pinned-arguments test, and
  # the first experiment of "Next": two warps per scheduler for the S = 4
  # body at 256² — 256-thread blocks with 8-item tiles (16 × 96) against
  # the default 128 threads with 4-item tiles (8 × 96).
  FILTER='test result|FAILED|panicked' run pinned-args 120 .gpu/tests/gpu_multipe-* pinned_tasks_read_their_whole_arguments --test-threads=1
  for t in 128:8x96 256:16x96 256:8x192 128:16x96; do
    AUTARKY_THREADS_PER_BLOCK=${t%%:*} FILTER='µs per|rror' run "j256-s4-${t%%:*}-${t#*:}" 60 \
      $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4 --tile "${t#*:}"
  done
  FILTER='^h200|^case|µs per' LINES_SHOWN=12 run jacobi-bench 380 $B/jacobi --2d=256,1024,4096,16384 --3d=none --pes=none --two-gpu=none --weak=none --reps=7
  ;;
s12-one)
  # Session 12 (1 GPU, after gpu-validate.sh and s10-next): dispatch at the
  # head (issue 7's no-regression table), where a CG iteration's time goes
  # at 2D 1024² and 3D 64³ (traced, phases by scripts/trace-phases.py), and
  # the CG bench's quick table.
  FILTER='^h200|^case|µs|G tasks' LINES_SHOWN=30 run dispatch 150 $B/dispatch --quick
  OK_RC=4 FILTER='µs per|rror' run cg2d-1024 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 1000
  OK_RC=4 FILTER='us_per|rror' run cg2d-1024-trace 90 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 30 --trace /tmp/cg2d.trace.json
  LINES_SHOWN=20 FILTER='.' run cg2d-phases 60 python3 scripts/trace-phases.py /tmp/cg2d.trace.json
  OK_RC=4 FILTER='us_per|rror' run cg3d-64-trace 90 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 30 --trace /tmp/cg3d.trace.json
  LINES_SHOWN=20 FILTER='.' run cg3d-phases 60 python3 scripts/trace-phases.py /tmp/cg3d.trace.json
  FILTER='^h200|^case|MISS|ok$|rror|µs' LINES_SHOWN=30 run cg-bench 200 $B/cg --quick
  ;;
s12-shapes)
  # Session 12 (1 GPU): block shape for the S = 4 body on small grids —
  # s10-next found 256 threads with 8 × 192 tiles at 0.869 µs (128 threads,
  # 8 × 96: 1.071). THREADS:TILE at 256² and 1024².
  for c in 256:8x192 256:8x128 256:16x128 256:8x240 512:16x192 512:8x240 512:8x256 1024:16x240; do
    AUTARKY_THREADS_PER_BLOCK=${c%%:*} FILTER='µs per|rror' run "j256-s4-${c%%:*}-${c#*:}" 60 \
      $B/autarky jacobi2d --size 256 --iters 8000 --check-every 0 --steps-per-sync 4 --tile "${c#*:}"
  done
  for c in 128:16x96 256:16x192 256:8x192 256:32x96 512:16x192 512:32x192; do
    AUTARKY_THREADS_PER_BLOCK=${c%%:*} FILTER='µs per|rror' run "j1024-s4-${c%%:*}-${c#*:}" 60 \
      $B/autarky jacobi2d --size 1024 --iters 5000 --check-every 0 --steps-per-sync 4 --tile "${c#*:}"
  done
  ;;
s12-check)
  # Session 12 (1 GPU): the new defaults under test — every GPU test of
  # Jacobi, CG and the block shape — then the CG bodies A/B in one binary
  # (AUTARKY_NVRTC_EXTRA: new, -DCG_EXP_PLAIN the former loops,
  # -DCG_EXP_NOINLINE, fewer registers), a trace by phase, the benches.
  for t in gpu gpu_cg gpu_jacobi; do
    FILTER='test result|FAILED|panicked' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  for x in new plain noinline lean; do  # (branch cg-stage-experiment: the bodies this A/B timed)
    case $x in new) e=;; plain) e=-DCG_EXP_PLAIN;; noinline) e=-DCG_EXP_NOINLINE;;
      lean) e="-DCG_SPMV_STAGE=512 -DCG_SPMV_ROW_MAX=4 -DCG_VEC_UNROLL=1";; esac
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-2d1024" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 1000
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d64" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 3000
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d128" 60 $B/autarky cg --poisson3d 128 --tol 0 --max-iters 300
  done
  OK_RC=4 FILTER='us_per|rror' run cg2d-1024-trace 90 $B/autarky --json cg --poisson2d 1024 --tol 0 --max-iters 30 --trace /tmp/cg2d.trace.json
  LINES_SHOWN=20 FILTER='.' run cg2d-phases 60 python3 scripts/trace-phases.py /tmp/cg2d.trace.json
  FILTER='^h200|^case|MISS|ok$|rror|µs' LINES_SHOWN=30 run cg-bench 200 $B/cg --quick
  FILTER='^h200|^case|µs per' LINES_SHOWN=12 run jacobi-bench 200 $B/jacobi --2d=256,512,1024 --3d=none --pes=none --two-gpu=none --weak=none --reps=7
  ;;
s13-one)
  # Session 13 (1 GPU, after gpu-validate.sh): chain fusion — deferred
  # publishes and the first-instance claim by store — A/B in one binary
  # (AUTARKY_NVRTC_EXTRA: new; -DAUTARKY_NO_FIRST_CLAIM_STORE deferral
  # only; both off, the former protocol), then CG's CLI points.
  for x in new defer control; do
    case $x in new) e=;; defer) e=-DAUTARKY_NO_FIRST_CLAIM_STORE;;
      control) e="-DAUTARKY_NO_DEFER -DAUTARKY_NO_FIRST_CLAIM_STORE";; esac
    AUTARKY_NVRTC_EXTRA="$e" FILTER='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted' LINES_SHOWN=40 run "dispatch-$x" 200 $B/dispatch --quick
  done
  for x in new control; do
    case $x in new) e=;; control) e="-DAUTARKY_NO_DEFER -DAUTARKY_NO_FIRST_CLAIM_STORE";; esac
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d64" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 3000
    FILTER=. LINES_SHOWN=4 run "dag-$x" 60 $B/autarky dag 20000 100
  done
  ;;
s13-ab)
  # Session 13 (1 GPU): the dispatch bench of 735e0bc (issue 7's
  # reference, with session 9's fixed T; staged by hand as
  # .gpu/bin/dispatch-735e0bc) against the head, interleaved, in one
  # session; the head without the self loop (-DAUTARKY_NO_SELF_LOOP) and
  # built without the fault-injection feature (.gpu/bin/dispatch-nofeat,
  # what a user's build runs); then the GPU tests of dynamic tasks, aborts
  # and failures.
  F='^h200|^ +autarky |cuda-graph|atomic-claim |independent \(|uncounted'
  for r in 1 2; do
    FILTER="$F" LINES_SHOWN=40 run "dispatch-old-$r" 200 .gpu/bin/dispatch-735e0bc --quick
    FILTER="$F" LINES_SHOWN=40 run "dispatch-new-$r" 200 $B/dispatch --quick
  done
  AUTARKY_NVRTC_EXTRA=-DAUTARKY_NO_SELF_LOOP FILTER="$F" LINES_SHOWN=40 run dispatch-noself 200 $B/dispatch --quick
  FILTER="$F" LINES_SHOWN=40 run dispatch-nofeat 200 .gpu/bin/dispatch-nofeat --quick
  export AUTARKY_REQUIRE_GPU=1
  for t in gpu gpu_faults gpu_multipe gpu_trace gpu_unstoppable; do
    FILTER='test result|FAILED|panicked' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  ;;
s13-two)
  # Session 13 (2 GPUs): the two-GPU and multi-process trials at the head
  # (chain fusion and the self loop changed the dynamic path every backend
  # runs; producers with remote successors never defer).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  FILTER='test result|FAILED|panicked' run test-gpu_multigpu 170 .gpu/tests/gpu_multigpu-* --test-threads=1
  mpi_env 1
  FILTER='test result|FAILED|panicked' run nvshmem-mpi-remote 170 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
  FILTER='test result|FAILED|panicked' run mpi-ipc 150 $M .gpu/tests/mpi_ipc-* --test-threads=1
  ;;
s14-mpi)
  # Session 14 (2 GPUs): the multi-process trials at the head (their Jacobi
  # 3D runs take the new sweep and default tiles), NVSHMEM forced through
  # puts and CUDA IPC.
  mpi_env 1
  FILTER='test result|FAILED|panicked' run nvshmem-mpi-remote 170 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
  FILTER='test result|FAILED|panicked' run mpi-ipc 150 $M .gpu/tests/mpi_ipc-* --test-threads=1
  ;;
s14-one)
  # Session 14 (1 GPU; ran on 58cf8ed, which merged the first counted
  # pinned joins): (1) those joins against -DAUTARKY_NO_PINNED_COUNT
  # (measured 10x slower: every completion walked all its pinned edges;
  # fixed on the branch, timed by s14-pj); (2) the 3D 7-point sweep with a
  # register window (JACOBI_Z2 = G rows an item; 0: the former sweep_z),
  # 256³ f32, and tile shapes; (3) ncu memory sections of one megakernel
  # run and one baseline step at 256³.
  for x in new control; do
    case $x in new) e=;; control) e=-DAUTARKY_NO_PINNED_COUNT;; esac
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d64" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 3000
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-2d1024" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 1000
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="$e" run "j1024-norm1-$x" 60 $B/autarky jacobi2d --size 1024 --iters 2000 --check-every 1
  done
  for v in 4:8x8x256 0:8x8x256 2:8x8x256 8:8x8x256 4:16x4x256 4:32x4x128 2:32x2x256 4:8x16x128 0:16x4x256; do
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="-DJACOBI_Z2=${v%%:*}" run "j3d256-z${v%%:*}-${v#*:}" 60 \
      $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --tile "${v#*:}"
  done
  FILTER='µs per|rror' run j3d256-norm100 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 100
  FILTER='µs per|rror' run j3d256-f64 60 $B/autarky jacobi3d --size 256 --iters 200 --check-every 0 --precision f64
  FILTER='µs per|rror' run j3d64 60 $B/autarky jacobi3d --size 64 --iters 4000 --check-every 0
  FILTER='^h200|^case|µs per|3D' LINES_SHOWN=12 run jacobi-bench-3d 200 $B/jacobi --2d=none --3d=64,256 --pes=none --two-gpu=none --weak=none --reps=7
  S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats"
  for z in 4 0; do
    AUTARKY_NVRTC_EXTRA="-DJACOBI_Z2=$z" FILTER='Throughput|Duration|Hit|Occupancy|Registers|Eligible|Issued|dram|DRAM|Mem' LINES_SHOWN=40 \
      run "ncu-3d-z$z" 150 /usr/local/cuda/bin/ncu --clock-control none -k autarky_megakernel -c 1 $S $B/autarky jacobi3d --size 256 --iters 50 --check-every 0
  done
  FILTER='Throughput|Duration|Hit|Occupancy|Registers|Eligible|Issued|dram|DRAM|Mem' LINES_SHOWN=40 \
    run ncu-3d-graph 150 /usr/local/cuda/bin/ncu --clock-control none -k jacobi3d_step -s 5 -c 1 $S $B/jacobi --2d=none --3d=256 --pes=none --two-gpu=none --weak=none --reps=1
  ;;
s14-pj)
  # (Ran on da9ff21, main with the branch merged: counting was 1-5 %
  # slower than its control, and gpu_jacobi's split-pulse test hung on a
  # counted tile; the merge was dropped. Run it on the branch.)
  # Session 14 (1 GPU): counted pinned joins as fixed on the branch (only
  # edges to counted pinned tasks walked; pinned tasks counted from 17
  # predecessors) against -DAUTARKY_NO_PINNED_COUNT, then every test binary
  # (scripts/gpu-validate.sh). Prediction: CG 64³ ~44 → ~38 µs, 2D 1024²
  # ~92 → ~85; Jacobi with a check every iteration unchanged (17.5: nothing
  # counted there now).
  for x in new control; do
    case $x in new) e=;; control) e=-DAUTARKY_NO_PINNED_COUNT;; esac
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d64" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 3000
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-2d1024" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 1000
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d128" 60 $B/autarky cg --poisson3d 128 --tol 0 --max-iters 300
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="$e" run "j1024-norm1-$x" 60 $B/autarky jacobi2d --size 1024 --iters 2000 --check-every 1
  done
  OK_RC=4 FILTER='us_per|rror' run cg3d-64-trace 90 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 30 --trace /tmp/cg3d.trace.json
  LINES_SHOWN=20 FILTER='.' run cg3d-phases 60 python3 scripts/trace-phases.py /tmp/cg3d.trace.json
  ;;
s14-pf)
  # Session 14 (1 GPU): L2 prefetches JACOBI_Z2_PF planes ahead in the 3D
  # sweep (0: none, the default), 256³ f32 default tiles; then the Jacobi
  # bench's 3D rows at the head (default tiles and sweep). Ran on d6bcbe2:
  # prefetching was slower at every distance (95.6 → 102-105 µs) and its
  # code is gone, so the pf runs now all time the same kernel.
  for pf in 0 2 4 8 0; do
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="-DJACOBI_Z2_PF=$pf" run "j3d256-pf$pf" 60 \
      $B/autarky jacobi3d --size 256 --iters 400 --check-every 0
  done
  FILTER='µs per|rror' run j3d128 60 $B/autarky jacobi3d --size 128 --iters 2000 --check-every 0
  FILTER='µs per|rror' run j3d256-f64 60 $B/autarky jacobi3d --size 256 --iters 200 --check-every 0 --precision f64
  FILTER='^h200|^case|µs per|3D' LINES_SHOWN=12 run jacobi-bench-3d 200 $B/jacobi --2d=none --3d=64,128,256 --pes=none --two-gpu=none --weak=none --reps=7
  ;;
s14-3d)
  # Session 14 (1 GPU): the register-window 3D sweep's knobs — rows an
  # item G (JACOBI_Z2) × planes a batch U (JACOBI_Z2_U) × tile shape at
  # 256³ f32 (s14-one: G = 4 on 8 × 8 × 256 103.1 µs, G = 2 on 32 × 2 × 256
  # 95.7, the former sweep 116.6); 64³; one traced run (where a tile's
  # time goes: its body or waiting for its neighbours).
  for v in 2:1:32x2x256 2:2:32x2x256 2:4:32x2x256 1:4:64x1x256 1:2:64x1x256 4:1:16x4x256 4:2:16x4x256 2:2:64x2x128 2:2:16x2x256 2:2:64x2x256 4:2:32x4x128; do
    IFS=: read g u t <<< "$v"
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="-DJACOBI_Z2=$g -DJACOBI_Z2_U=$u" run "j3d256-g$g-u$u-$t" 60 \
      $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --tile "$t"
  done
  for t in 8x4x64 16x2x64 32x2x64 8x8x64; do
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="-DJACOBI_Z2=2 -DJACOBI_Z2_U=2" run "j3d64-g2-u2-$t" 60 \
      $B/autarky jacobi3d --size 64 --iters 4000 --check-every 0 --tile "$t"
  done
  for t in 32x2x256 8x8x256; do
    timeout -k 5 120 $B/autarky --json jacobi3d --size 256 --iters 100 --check-every 0 --tile $t --trace /tmp/j3d-$t.trace.json > "$LOGS/j3d-trace-$t.json" 2> "$LOGS/j3d-trace-$t.err"
    echo "--- j3d trace $t: rc=$?"
    python3 - "$LOGS/j3d-trace-$t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d.get("trace") or {}
ns = t.get("compute_block_ns") or 0
w = t.get("compute_waits_ns") or {}
print(d.get("us_per_iteration"), "us/it traced; compute-block waits (% of their time):",
      {k: round(100.0 * v / ns, 1) for k, v in w.items()} if ns else w)
PY
    pack
  done
  ;;
s15-t3d)
  # Session 15 (1 GPU): 3D 7-point temporal blocking, S = 2 (sweep_steps3).
  # Its GPU test first (bitwise against S = 1), then 256³ S = 1 against
  # S = 2 over tile shapes, rows an item (JACOBI_T3_G) and the plane
  # prefetch (JACOBI_T3_PF); other sizes; the bench's 3D rows.
  export AUTARKY_REQUIRE_GPU=1
  FILTER='test result|FAILED|panicked|cells differ' run test-gpu_jacobi-temporal 150 .gpu/tests/gpu_jacobi-* temporal --test-threads=1
  FILTER='µs per|rror' run "j3d256-s1" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0
  for v in 2:1:32x2x256 2:1:16x2x256 2:1:64x2x256 2:1:64x2x128 2:1:32x2x128 2:0:32x2x256 4:1:16x4x256 4:1:32x4x128 4:0:16x4x256; do
    IFS=: read g pf t <<< "$v"
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="-DJACOBI_T3_G=$g -DJACOBI_T3_PF=$pf" run "j3d256-s2-g$g-pf$pf-$t" 60 \
      $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2 --tile "$t"
  done
  for n in 64 128 512; do
    it=$(( n == 512 ? 100 : (n == 64 ? 4000 : 1000) ))
    for s in 1 2; do
      FILTER='µs per|rror' run "j3d$n-s$s" 60 $B/autarky jacobi3d --size $n --iters $it --check-every 0 --steps-per-sync $s
    done
  done
  FILTER='µs per|rror' run "j3d256-s2-f64" 60 $B/autarky jacobi3d --size 256 --iters 200 --check-every 0 --steps-per-sync 2 --precision f64
  FILTER='µs per|rror' run "j3d256-s1-f64" 60 $B/autarky jacobi3d --size 256 --iters 200 --check-every 0 --precision f64
  FILTER='^jacobi3d|^ |rror|best' LINES_SHOWN=14 run jacobi-bench-3d 200 $B/jacobi --2d=none --3d=64,128,256 --pes=none --two-gpu=none --weak=none --reps=5
  pack
  ;;
s15-prof)
  # Session 15 (1 GPU): why the 3D bodies run at half the baseline's rate.
  # ncu warp-stall reasons, instructions and DRAM bytes of 50 sweeps of
  # the megakernel (S = 1 default; S = 2, 4-row items) and one baseline
  # step; then the register cap (AUTARKY_MIN_BLOCKS: 8 blocks of 128
  # threads = 64 registers) against deeper register windows.
  st=""
  for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle lg_throttle mio_throttle not_selected selected no_instruction branch_resolving dispatch_stall membar sleeping drain imc_miss tex_throttle misc; do
    st="$st,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  M="gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,smsp__average_warp_latency_per_inst_issued.ratio,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum$st"
  NCU="/usr/local/cuda/bin/ncu --clock-control none --metrics $M"
  FILTER='\.(sum|pct|ratio)' LINES_SHOWN=40 run ncu-s1 150 $NCU -k autarky_megakernel -c 1 $B/autarky jacobi3d --size 256 --iters 50 --check-every 0
  FILTER='\.(sum|pct|ratio)' LINES_SHOWN=40 AUTARKY_NVRTC_EXTRA="-DJACOBI_T3_G=4" run ncu-s2g4 150 $NCU -k autarky_megakernel -c 1 $B/autarky jacobi3d --size 256 --iters 50 --check-every 0 --steps-per-sync 2 --tile 16x4x256
  FILTER='\.(sum|pct|ratio)' LINES_SHOWN=40 run ncu-graph 150 $NCU -k jacobi3d_step -s 5 -c 1 $B/jacobi --2d=none --3d=256 --pes=none --two-gpu=none --weak=none --reps=1
  for v in "8::-DJACOBI_Z2=2:32x2x256" "6::-DJACOBI_Z2=2:32x2x256" "6::-DJACOBI_Z2=4 -DJACOBI_Z2_U=2:16x4x256" "6::-DJACOBI_Z2=2 -DJACOBI_Z2_U=4:32x2x256" "4::-DJACOBI_Z2=4 -DJACOBI_Z2_U=2:16x4x256" \
           "6:2:-DJACOBI_T3_G=4:16x4x256" "4:2:-DJACOBI_T3_G=4:16x4x256" "4:2:-DJACOBI_T3_G=4:32x4x256" "4:2:-DJACOBI_T3_G=8:16x8x256" "4:2:-DJACOBI_T3_G=8:32x8x256"; do
    IFS=: read mb s d t <<< "$v"
    s=${s:-1}
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="-DAUTARKY_MIN_BLOCKS=$mb $d" run "j3d256-mb$mb-s$s-$(echo $d | tr -d ' =-' )-$t" 60 \
      $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync $s --tile "$t"
  done
  $B/autarky info 2>&1 | tail -5
  pack
  ;;
s15-lean)
  # Session 15 (1 GPU): the 3D S = 2 body with global loads, the division
  # in three operations and no masks away from Dirichlet sides: its GPU
  # test, rows an item × plane prefetch × tiles (whole warps' worth of
  # items: 10 chunks of 28 columns at 256), ncu, the bench's 3D rows.
  export AUTARKY_REQUIRE_GPU=1
  FILTER='test result|FAILED|panicked|differ' run test-gpu_jacobi-temporal 150 .gpu/tests/gpu_jacobi-* temporal --test-threads=1
  FILTER='µs per|rror' run "j3d256-s1" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0
  for v in 2:1:32x2x256 2:1:16x4x256 2:1:32x4x256 2:1:8x8x256 2:0:16x4x256 4:0:16x8x256 4:0:32x4x256 4:1:16x8x256 2:1:64x4x128 2:1:16x4x128; do
    IFS=: read g pf t <<< "$v"
    FILTER='µs per|rror' AUTARKY_NVRTC_EXTRA="-DJACOBI_T3_G=$g -DJACOBI_T3_PF=$pf" run "j3d256-s2-g$g-pf$pf-$t" 60 \
      $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2 --tile "$t"
  done
  st=""
  for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle not_selected selected no_instruction branch_resolving; do
    st="$st,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  M="gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum$st"
  FILTER='\.(sum|pct|ratio)' LINES_SHOWN=40 run ncu-s2 150 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky jacobi3d --size 256 --iters 50 --check-every 0 --steps-per-sync 2 --tile 16x4x256
  for n in 64 128 512; do
    it=$(( n == 512 ? 100 : (n == 64 ? 4000 : 1000) ))
    FILTER='µs per|rror' run "j3d$n-s2" 60 $B/autarky jacobi3d --size $n --iters $it --check-every 0 --steps-per-sync 2
  done
  FILTER='µs per|rror' run "j3d256-s2-norm100" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 100 --steps-per-sync 2
  FILTER='^h200|rror|best' LINES_SHOWN=14 run jacobi-bench-3d 200 $B/jacobi --2d=none --3d=64,128,256 --pes=none --two-gpu=none --weak=none --reps=5
  pack
  ;;
s15-lean2)
  # Session 15 (1 GPU): the S = 2 body redoing only a plane with IEEE
  # division (s15-lean redid the whole item: 83 µs at 256³ over 400
  # sweeps, 62 under ncu's 50 from zero); tile shapes at 64³-512³; ncu
  # over 50 and over 400 sweeps; the bench's 3D rows.
  for t in 8x8x256 16x4x256 4x16x256 8x16x128 16x8x128 8x4x256; do
    FILTER='µs per|rror' run "j3d256-s2-$t" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2 --tile "$t"
  done
  for t in 8x4x64 4x8x64 8x8x64 16x2x64 4x4x64; do
    FILTER='µs per|rror' run "j3d64-s2-$t" 60 $B/autarky jacobi3d --size 64 --iters 4000 --check-every 0 --steps-per-sync 2 --tile "$t"
  done
  for t in 8x4x128 8x8x128 16x4x128; do
    FILTER='µs per|rror' run "j3d128-s2-$t" 60 $B/autarky jacobi3d --size 128 --iters 1000 --check-every 0 --steps-per-sync 2 --tile "$t"
  done
  for t in 16x4x512 8x8x512 32x4x512; do
    FILTER='µs per|rror' run "j3d512-s2-$t" 60 $B/autarky jacobi3d --size 512 --iters 100 --check-every 0 --steps-per-sync 2 --tile "$t"
  done
  M="gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
  for it in 50 400; do
    FILTER='\.(sum|pct|ratio)' LINES_SHOWN=10 run ncu-s2-$it 150 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky jacobi3d --size 256 --iters $it --check-every 0 --steps-per-sync 2 --tile 8x8x256
  done
  FILTER='^h200|rror|best' LINES_SHOWN=14 run jacobi-bench-3d 200 $B/jacobi --2d=none --3d=64,128,256,512 --pes=none --two-gpu=none --weak=none --reps=5
  pack
  ;;
s16-two)
  # Session 16 (2 GPUs), first command: every test binary on two H200s
  # (gpu_multigpu's two-GPU trials included), `autarky info` (the P2P
  # matrix), then the multi-process trials: CUDA IPC and NVSHMEM forced
  # through puts (bundle built with --features fault-injection,mpi,nvshmem).
  AUTARKY_TEST_LIMIT_S=200 OUT=$LOGS bash scripts/gpu-validate.sh 2>&1 | tail -n 20
  pack
  FILTER='.' LINES_SHOWN=30 run info 60 $B/autarky info
  mpi_env 1
  FILTER='test result|FAILED|panicked' run mpi-ipc 120 $M .gpu/tests/mpi_ipc-* --test-threads=1
  FILTER='test result|FAILED|panicked' run nvshmem-mpi-remote 120 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
  ;;
s16-two-bench)
  # Session 16 (2 GPUs), second command: issue 13's two-GPU tables —
  # strong scaling 1024², 4096², 16384² and weak scaling 256², 4096² a GPU
  # against the CPU-driven two-GPU baseline (S = 1 and S = 4 columns);
  # Jacobi 3D 256³ on one and two GPUs with S = 1 and S = 2; the share of
  # compute blocks' time spent waiting for halos (traces, 1 and 2 GPUs).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  FILTER='^two-GPU|^jacobi2d|^ |rror|best|weak' LINES_SHOWN=30 run jacobi-bench-two 300 $B/jacobi --2d=none --3d=none --pes=none --two-gpu=1024,4096,16384 --weak=256,4096 --reps=3
  for g in 1 2; do
    for st in 1 2; do
      FILTER='µs per|rror' run "j3d256-${g}gpu-s$st" 60 $B/autarky jacobi3d --size 256 --gpus $g --pes $g --iters 400 --check-every 0 --steps-per-sync $st
    done
  done
  for n in 1024 16384; do
    halo "1gpu-$n" --size $n --iters 200 --check-every 0
    halo "2gpu-$n" --size $n --gpus 2 --pes 2 --iters 200 --check-every 0
  done
  pack
  ;;
s16-two-3d)
  # Session 16 (2 GPUs), third command: why Jacobi 3D 256³ is slower on two
  # GPUs than on one (S = 1 131 against 96 µs, S = 2 110 against 56): the
  # compute blocks' halo waits from traces, and the comm blocks per PE.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  for st in 1 2; do
    HALO_CMD=jacobi3d halo "3d-1gpu-s$st" --size 256 --iters 100 --check-every 0 --steps-per-sync $st
    HALO_CMD=jacobi3d halo "3d-2gpu-s$st" --size 256 --gpus 2 --pes 2 --iters 100 --check-every 0 --steps-per-sync $st
  done
  for cb in 1 2 8; do
    FILTER='µs per|rror' run "j3d256-2gpu-s2-cb$cb" 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2 --comm-blocks $cb
  done
  FILTER='µs per|rror' run "j3d256-2vpe-s2" 60 $B/autarky jacobi3d --size 256 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2
  pack
  ;;
s16-two-cb)
  # Session 16 (2 GPUs), fourth command: comm blocks per PE for Jacobi 3D
  # 256³ across two GPUs (s16-two-3d: 1 → 373, 2 → 196, 4 (default) → 110,
  # 8 → 69.5 µs with S = 2), further up, and for S = 1 and 2 virtual PEs.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  for cb in 12 16 24 32; do
    FILTER='µs per|rror' run "j3d256-2gpu-s2-cb$cb" 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2 --comm-blocks $cb
  done
  for cb in 8 16; do
    FILTER='µs per|rror' run "j3d256-2gpu-s1-cb$cb" 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 400 --check-every 0 --comm-blocks $cb
    FILTER='µs per|rror' run "j3d256-2vpe-s2-cb$cb" 60 $B/autarky jacobi3d --size 256 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2 --comm-blocks $cb
    FILTER='µs per|rror' run "j2d1024-2gpu-s4-cb$cb" 60 $B/autarky jacobi2d --size 1024 --gpus 2 --pes 2 --iters 4000 --check-every 0 --steps-per-sync 4 --comm-blocks $cb
  done
  FILTER='µs per|rror' run "j2d1024-2gpu-s4" 60 $B/autarky jacobi2d --size 1024 --gpus 2 --pes 2 --iters 4000 --check-every 0 --steps-per-sync 4
  pack
  ;;
s16-two-cb2)
  # Session 16 (2 GPUs), fifth command: comm blocks further up (s16-two-cb:
  # 3D 256³ S = 2 across two GPUs 12 → 58.2, 16 → 52.1, 24 → 43.7, 32 →
  # 39.2 µs), for S = 1, virtual PEs and the 2D two-GPU cases.
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  J3="jacobi3d --size 256 --iters 400 --check-every 0"
  for cb in 48 64 96; do
    FILTER='µs per|rror' run "j3d256-2gpu-s2-cb$cb" 60 $B/autarky $J3 --gpus 2 --pes 2 --steps-per-sync 2 --comm-blocks $cb
  done
  for cb in 32 64; do
    FILTER='µs per|rror' run "j3d256-2gpu-s1-cb$cb" 60 $B/autarky $J3 --gpus 2 --pes 2 --comm-blocks $cb
    FILTER='µs per|rror' run "j3d256-2vpe-s2-cb$cb" 60 $B/autarky $J3 --pes 2 --steps-per-sync 2 --comm-blocks $cb
  done
  for cb in 4 16 32; do
    FILTER='µs per|rror' run "j2d16384-2gpu-s4-cb$cb" 60 $B/autarky jacobi2d --size 16384 --gpus 2 --pes 2 --iters 100 --check-every 0 --steps-per-sync 4 --comm-blocks $cb
    FILTER='µs per|rror' run "j2d4096-2gpu-s4-cb$cb" 60 $B/autarky jacobi2d --size 4096 --gpus 2 --pes 2 --iters 1000 --check-every 0 --steps-per-sync 4 --comm-blocks $cb
    FILTER='µs per|rror' run "j3d128-2gpu-s2-cb$cb" 60 $B/autarky jacobi3d --size 128 --gpus 2 --pes 2 --iters 1000 --check-every 0 --steps-per-sync 2 --comm-blocks $cb
  done
  FILTER='µs per|rror' run "j3d128-1gpu-s2" 60 $B/autarky jacobi3d --size 128 --iters 1000 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror' run "j3d512-2gpu-s2-cb32" 60 $B/autarky jacobi3d --size 512 --gpus 2 --pes 2 --iters 100 --check-every 0 --steps-per-sync 2 --comm-blocks 32
  FILTER='µs per|rror' run "j3d512-2gpu-s2" 60 $B/autarky jacobi3d --size 512 --gpus 2 --pes 2 --iters 100 --check-every 0 --steps-per-sync 2
  pack
  ;;
s16-two-cb32)
  # Session 16 (2 GPUs), sixth command: MULTI_GPU_COMM_BLOCKS 4 → 32 (the
  # bundle's autarky, jacobi, gpu_multigpu and mpi_ipc rebuilt with it;
  # .gpu/bin/autarky-cb4 is the binary before): the two-GPU trials, the
  # two-GPU bench (bitwise checks and issue 13's tables with the new
  # default), CG on two GPUs A/B (CG takes the runtime's default).
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  FILTER='test result|FAILED|panicked' run test-gpu_multigpu 120 .gpu/tests/gpu_multigpu-* --test-threads=1
  for n in 128 256; do
    for b in autarky-cb4 autarky; do
      OK_RC=4 FILTER='µs per|per iteration|rror' run "cg-2gpu-$n-$b" 60 $B/$b cg --poisson3d $n --gpus 2 --pes 2 --tol 0 --max-iters 200
    done
  done
  FILTER='µs per|rror' run "j3d256-2gpu-s2-default" 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 400 --check-every 0 --steps-per-sync 2
  FILTER='^two-GPU|^jacobi2d|^ |rror|best|weak' LINES_SHOWN=30 run jacobi-bench-two 300 $B/jacobi --2d=none --3d=none --pes=none --two-gpu=1024,4096,16384 --weak=256,4096 --reps=3
  mpi_env 1
  FILTER='test result|FAILED|panicked' run mpi-ipc 120 $M .gpu/tests/mpi_ipc-* --test-threads=1
  pack
  ;;
s15-final)
  # Session 15 (1 GPU): div6's exact variant in the fallback (f64, no
  # slow path) and the S = 2 default tiles, timed against alternatives;
  # ncu over 400 sweeps; the bench's 3D rows; then every test binary.
  FILTER='µs per|rror' run "j3d256-s1" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0
  FILTER='µs per|rror|tiles' run "j3d256-s2" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror' run "j3d256-s2-8x8x256" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2 --tile 8x8x256
  FILTER='µs per|rror' run "j3d256-s2-norm100" 60 $B/autarky jacobi3d --size 256 --iters 400 --check-every 100 --steps-per-sync 2
  FILTER='µs per|rror' run "j3d256-s2-f64" 60 $B/autarky jacobi3d --size 256 --iters 200 --check-every 0 --steps-per-sync 2 --precision f64
  FILTER='µs per|rror|tiles' run "j3d64-s2" 60 $B/autarky jacobi3d --size 64 --iters 4000 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror|tiles' run "j3d128-s2" 60 $B/autarky jacobi3d --size 128 --iters 1000 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror' run "j3d128-s2-8x2x128" 60 $B/autarky jacobi3d --size 128 --iters 1000 --check-every 0 --steps-per-sync 2 --tile 8x2x128
  FILTER='µs per|rror|tiles' run "j3d512-s2" 60 $B/autarky jacobi3d --size 512 --iters 100 --check-every 0 --steps-per-sync 2
  FILTER='µs per|rror' run "j3d512-s2-16x4x512" 60 $B/autarky jacobi3d --size 512 --iters 100 --check-every 0 --steps-per-sync 2 --tile 16x4x512
  M="gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
  FILTER='\.(sum|pct|ratio)' LINES_SHOWN=10 run ncu-s2-400 150 /usr/local/cuda/bin/ncu --clock-control none --metrics $M -k autarky_megakernel -c 1 $B/autarky jacobi3d --size 256 --iters 400 --check-every 0 --steps-per-sync 2
  FILTER='^h200|rror|best' LINES_SHOWN=14 run jacobi-bench-3d 200 $B/jacobi --2d=none --3d=64,128,256,512 --pes=none --two-gpu=none --weak=none --reps=5
  pack
  AUTARKY_TEST_LIMIT_S=240 OUT=$LOGS bash scripts/gpu-validate.sh 2>&1 | tail -n 20
  pack
  ;;
s12-two)
  # Session 12 (2 GPUs): the two-GPU trials at the head, the MPI/NVSHMEM
  # trials (NVSHMEM forced through puts: the unpinned producers' signals
  # are new), and temporal blocking across GPUs, never timed before: the
  # bench's new S = 4 columns (strong 1024², weak 256² a GPU) and 16384².
  export AUTARKY_REQUIRE_GPU=1 AUTARKY_REQUIRE_GPUS=$(nvidia-smi -L | wc -l)
  FILTER='test result|FAILED|panicked' run test-gpu_multigpu 170 .gpu/tests/gpu_multigpu-* --test-threads=1
  FILTER='^two-GPU|^jacobi2d|^ |rror|best' LINES_SHOWN=12 run jacobi-bench-two 200 $B/jacobi --2d=none --3d=none --pes=none --two-gpu=1024 --weak=256 --reps=5
  CUDA_VISIBLE_DEVICES=0 FILTER='^h200/|MISS|ok$|rror' LINES_SHOWN=12 run cg-bench 150 $B/cg --quick
  for s in 1 4; do
    FILTER='µs per|rror' run "j16384-2gpu-s$s" 60 $B/autarky jacobi2d --size 16384 --gpus 2 --pes 2 --iters 40 --check-every 0 --steps-per-sync $s
  done
  mpi_env 1
  FILTER='test result|FAILED|panicked' run nvshmem-mpi-remote 170 $M .gpu/tests/nvshmem_mpi-* --test-threads=1
  FILTER='test result|FAILED|panicked' run mpi-ipc 150 $M .gpu/tests/mpi_ipc-* --test-threads=1
  ;;
s12-comm)  # (measured the comm-block descriptor cache of 4d8c99a, reverted: the switch below is gone)
  # Session 12 (1 GPU): comm blocks cache their pinned cursor's task and
  # descriptor (A/B: -DAUTARKY_EXP_COMM_NO_DESC_CACHE reads them at every
  # poll, as before) on the joins that pinned comm tasks run: CG's local and
  # global sums, Jacobi's checks. Then the GPU tests that run them.
  XP=-DAUTARKY_EXP_COMM_NO_DESC_CACHE
  for x in new old; do
    e=$([ $x = old ] && echo $XP || true)
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d64" 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 3000
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-2d1024" 60 $B/autarky cg --poisson2d 1024 --tol 0 --max-iters 1000
    OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "cg-$x-3d32" 60 $B/autarky cg --poisson3d 32 --tol 0 --max-iters 3000
    AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "j1024-norm1-$x" 60 $B/autarky jacobi2d --size 1024 --iters 4000 --check-every 1
    AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run "j256-s4-norm4-$x" 60 $B/autarky jacobi2d --size 256 --iters 8000 --check-every 4 --steps-per-sync 4
  done
  OK_RC=4 FILTER='us_per|rror' run cg3d64-trace 90 $B/autarky --json cg --poisson3d 64 --tol 0 --max-iters 30 --trace /tmp/cg3d.trace.json
  LINES_SHOWN=20 FILTER='.' run cg3d-phases 60 python3 scripts/trace-phases.py /tmp/cg3d.trace.json
  for t in gpu_cg gpu_faults gpu_multipe gpu_jacobi; do
    FILTER='test result|FAILED|panicked' run "test-$t" 170 .gpu/tests/$t-* --test-threads=1
  done
  ;;
one-s8|two-s8)
  # Session 8: ABI 7's progress counter (A/B against the old per-block sum,
  # AUTARKY_NVRTC_EXTRA=-DAUTARKY_EXP_PROGRESS_SCAN, same binary) and the
  # lane-tree local sum (traced: the local-sum tasks' durations), after the
  # test suites ran (gpu-validate.sh, a command of its own).
  XP=-DAUTARKY_EXP_PROGRESS_SCAN
  if [ "$1" = one-s8 ]; then
    for x in new old; do
      e=$([ $x = old ] && echo $XP || true)
      OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run ab-$x-cg64 60 $B/autarky cg --poisson3d 64 --tol 0 --max-iters 3000
      OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run ab-$x-cg128 60 $B/autarky cg --poisson3d 128 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run ab-$x-j256 60 $B/autarky jacobi2d --size 256 --iters 6000 --check-every 0
    done
    OK_RC=4 FILTER='us_per|compute_waits|rror' run cg-trace-1gpu-128 120 $B/autarky --json cg --poisson3d 128 --tol 0 --max-iters 50 --trace /tmp/cg1-128.trace.json
    gzip -c /tmp/cg1-128.trace.json > "$OUT/cg1-128.trace.json.gz"
    FILTER='^h200|^case|MISS|ok$|rror' LINES_SHOWN=30 run cg-bench 300 $B/cg --quick
    FILTER='^h200|^case|µs|G tasks' LINES_SHOWN=30 run dispatch 200 $B/dispatch --quick
  else
    for x in new old; do
      e=$([ $x = old ] && echo $XP || true)
      OK_RC=4 AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run ab-$x-cg128-2gpu 60 $B/autarky cg --poisson3d 128 --gpus 2 --pes 2 --tol 0 --max-iters 500
      AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run ab-$x-j1024-2gpu 60 $B/autarky jacobi2d --size 1024 --gpus 2 --pes 2 --iters 5000 --check-every 0
      AUTARKY_NVRTC_EXTRA="$e" FILTER='µs per|rror' run ab-$x-j3d256-2gpu 60 $B/autarky jacobi3d --size 256 --gpus 2 --pes 2 --iters 500 --check-every 0
    done
    # Dispatch with and without the old progress sum (GPU 0; one-GPU cases).
    FILTER='^h200|autarky pinned|independent \(|cuda-graph \(' LINES_SHOWN=30 run dispatch-new 120 $B/dispatch --quick
    AUTARKY_NVRTC_EXTRA=$XP FILTER='^h200|autarky pinned|independent \(|cuda-graph \(' LINES_SHOWN=30 run dispatch-old 120 $B/dispatch --quick
    OK_RC=4 FILTER='us_per|compute_waits|rror' run cg-trace-2gpu-128 120 $B/autarky --json cg --poisson3d 128 --gpus 2 --pes 2 --tol 0 --max-iters 50 --trace /tmp/cg2-128.trace.json
    gzip -c /tmp/cg2-128.trace.json > "$OUT/cg2-128.trace.json.gz"
    FILTER='two|µs' run cg-two-gpu 240 $B/cg --3d=none --2d=none --two-gpu=128,256
    FILTER='two|GPU|µs|weak' run jacobi-two-gpu 200 $B/jacobi --2d=none --3d=none --pes=none --two-gpu=1024,4096 --weak=256 --reps=5
    # The 16384² NVSHMEM miss (1.46× one process, forced through puts):
    # the same case through NVSHMEM's P2P mapping. Near 1.0: the puts are
    # the cost; near 1.46: the symmetric heap's memory is.
    T=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
    export AUTARKY_NVSHMEM_DIR=$T/nvshmem AUTARKY_NVJITLINK_DIR=$T/cu13/lib \
      AUTARKY_CUDA_INCLUDE_DIR=$T/cu13/include AUTARKY_NVRTC_DIR=$T/cu13/lib \
      LD_LIBRARY_PATH=/usr/local/cuda/lib64:$T/nvshmem/lib:$T/cu13/lib AUTARKY_NVSHMEM_FORCE_REMOTE=0
    X="-x AUTARKY_NVSHMEM_DIR -x AUTARKY_NVJITLINK_DIR -x AUTARKY_CUDA_INCLUDE_DIR -x AUTARKY_NVRTC_DIR"
    X="$X -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x AUTARKY_NVSHMEM_FORCE_REMOTE"
    FILTER='^h200|target|SKIP' LINES_SHOWN=8 run jacobi-mpi-16384-p2p 150 \
      mpirun --allow-run-as-root --oversubscribe -n 2 $X $B/jacobi_mpi --strong=16384 --weak=none
  fi
  ;;
*)
  echo "usage: bash scripts/gpu-owed.sh one-tests|one-exp|two|mpi-tests|mpi-bench|mpi-kill|mpi-jacobi|one-s8|two-s8|s9-bench|s10-next|s10-next-two|s12-one|s12-shapes|s12-check|s12-two|s12-comm" >&2
  exit 2
  ;;
esac
tar -czf "$OUT/owed-$1.tar.gz" -C "$LOGS" . 2>/dev/null
echo "gpu-owed $1: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
