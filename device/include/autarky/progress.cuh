// Progress words the host reads without a CUDA call: HostControl's
// iterations_done (below) and last_residual / residual_iteration
// (TaskCtx::report_residual in task.cuh). HostControl's doc in abi.h says
// who writes each word and how the host reads it.
//
// iterations_done: comm block 0's thread 0 sweeps the PE's tasks,
// PROGRESS_SWEEP_TASKS of them per progress publish (every
// PROGRESS_PUBLISH_NS), keeping the minimum `done` it saw; at the end of a
// sweep it publishes that minimum (relaxed, system scope). `done` words
// only increase, so a sweep's minimum is at most the true minimum when the
// sweep ends (a lower bound, never ahead of the run) and at least the
// previous sweep's (it only increases). It lags by one sweep: num_tasks /
// PROGRESS_SWEEP_TASKS publishes. The last block out publishes the exact
// value when every task finished (block_exit). An exact minimum on every
// publish would cost comm block 0 one load per task every 50 µs.
#pragma once
#include "autarky/wait.cuh"

namespace autarky {

__device__ __forceinline__ void publish_iterations_done(const RunParams& p, uint32_t n) {
    st_relaxed_sys_u32(&control_of(p)->iterations_done, n);
}

// Thread 0 of comm block 0: the sweep's cursor and running minimum.
struct ProgressSweep {
    uint32_t next = 0;            // next task to look at
    uint32_t least = 0xffffffffu;  // minimum done seen in this sweep

    __device__ void step(const RunParams& p) {
        const States state = states_of(p);
        const uint32_t end = p.num_tasks - next < PROGRESS_SWEEP_TASKS ? p.num_tasks : next + PROGRESS_SWEEP_TASKS;
        // done ≤ MAX_ITERATIONS < 2^31: a plain compare is exact.
        for (uint32_t t = next; t < end; ++t) {
            const uint32_t d = state_done(ld_relaxed_gpu_u64(state.at(t)));
            least = d < least ? d : least;
        }
        next = end;
        if (next < p.num_tasks) return;
        if (p.num_tasks > 0) publish_iterations_done(p, least);
        next = 0;
        least = 0xffffffffu;
    }
};

// The last block out of a PE: when every task finished (or the run
// stopped early at the limit), every task's done reached the limit.
// Otherwise (abort) the last sweep's value stays.
__device__ inline void publish_final_iterations_done(const RunParams& p) {
    const Status* s = status_of(p);
    const bool all = ld_relaxed_gpu_u32(&s->tasks_finished) == p.num_tasks ||
                     ((p.flags & RUN_MAY_STOP) && ld_relaxed_gpu_u32(&s->stopped) != 0);
    if (all) publish_iterations_done(p, run_limit(p));
}

}  // namespace autarky
