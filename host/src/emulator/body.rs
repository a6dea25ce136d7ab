//! Running one task instance's CPU body: the test hold, the context the
//! body sees (early finish, symmetric heaps), failures and panics, and the
//! body's trace events.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicU32;

use autarky_shared::{ErrorCode, Role, Status, WaitKind};

use super::shared::Run;
use super::wait::Waiter;
use crate::graph::CpuCtx;

/// Runs instance `iteration` of local task `task` of PE `pe` on block
/// `block`. Returns `false` when the instance failed, panicked or is held
/// (the error is recorded and abort raised): the block must leave.
pub(crate) fn run_instance(run: &Run<'_>, pe: u32, block: u32, task: u32, iteration: u32) -> bool {
    run_instance_lowering(run, pe, block, task, iteration, &AtomicU32::new(u32::MAX))
}

/// [`run_instance`], lowering `lowered` to every limit the body's
/// `finish_at` sets (the device block's `ResidualReport::limit`, which a
/// pinned block folds into the limit its words carry).
pub(crate) fn run_instance_lowering(
    run: &Run<'_>,
    pe: u32,
    block: u32,
    task: u32,
    iteration: u32,
    lowered: &AtomicU32,
) -> bool {
    let p = &run.pes[pe as usize];
    p.blocks[block as usize].set_running(task, iteration);
    if run.hold == Some((pe, task)) {
        hold(run, pe, block, task, iteration);
        return false;
    }
    let l = p.lowered;
    let d = &l.tasks[task as usize];
    // 0: no failure; else the code `finish_at` recorded (the device's
    // `fail` from inside `finish_at`: it counts even if the body goes on to
    // return Ok).
    let finish_failed = std::sync::atomic::AtomicU32::new(0);
    let may_finish = p.may_finish[task as usize];
    let states = &run.states[pe as usize];
    let finish = |n: u32| -> Result<(), u32> {
        if !may_finish {
            finish_failed.store(
                CpuCtx::FINISH_UNDECLARED,
                std::sync::atomic::Ordering::Relaxed,
            );
            return Err(CpuCtx::FINISH_UNDECLARED);
        }
        let limit = n.max(iteration + 1);
        states.lower_limit(limit);
        // Only this block reads it, after the body (the device's
        // shared-memory atomic min).
        lowered.fetch_min(limit, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    };
    let wait =
        |word: &std::sync::atomic::AtomicU32, wanted: u32, word_id: u32| -> Result<(), u32> {
            let mut w = Waiter::new(run, pe, block, false);
            loop {
                let v = word.load(std::sync::atomic::Ordering::Acquire);
                if (v.wrapping_sub(wanted) as i32) >= 0 {
                    w.done();
                    return Ok(());
                }
                if w.poll(
                    WaitKind::UserWord,
                    word_id,
                    v as u64,
                    wanted as u64,
                    task,
                    iteration,
                )
                .is_break()
                {
                    return Err(CpuCtx::WAIT_ABANDONED);
                }
            }
        };
    let ctx = CpuCtx {
        // The device's ctx.task is the graph's id (global over PEs), its
        // ctx.local the PE's: the same here (task was the local id once).
        task: d.global,
        local: task,
        global: d.global,
        iteration,
        pe,
        block,
        iterations: states.iterations(),
        args: &l.args[d.arg_offset as usize..(d.arg_offset + d.arg_len) as usize],
        finish: &finish,
        heaps: run.heaps,
        wait: &wait,
    };
    let body = &p.bodies[task as usize];
    let role = p.role(block);
    // Trace: one start and one end around every body, whatever it returns
    // (the device records TaskEnd after the body's barrier, failed or not).
    let tr = run.tracer(pe, block);
    if let Some(t) = &tr {
        t.task_start(d.global, iteration);
    }
    // A refusal left by an earlier body on this thread is not this one's.
    let _ = crate::runtime::host_mem::take_last_refusal();
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| body(&ctx)));
    if let Some(t) = &tr {
        t.task_end(d.global, iteration);
    }
    match outcome {
        Ok(result) => {
            let recorded = finish_failed.load(std::sync::atomic::Ordering::Relaxed);
            let code = match (recorded, result) {
                (0, Ok(())) => return true,
                (0, Err(code)) => code,
                (recorded, _) => recorded,
            };
            if code == crate::runtime::BufferAccessError::CODE {
                if let Some(refusal) = crate::runtime::host_mem::take_last_refusal() {
                    let mut r = run.refusals.lock().unwrap_or_else(|e| e.into_inner());
                    r.push((pe, d.global, iteration, refusal));
                }
            }
            run.fail(pe, task_failed(block, role, task, iteration, code as u64));
            false
        }
        Err(payload) => {
            // The host re-raises the panic after the join; the record
            // makes every other worker leave at once instead of timing out.
            let mut slot = run.panic.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert((payload, pe, d.global, iteration));
            drop(slot);
            run.fail(pe, task_failed(block, role, task, iteration, u64::MAX));
            false
        }
    }
}

/// Test hook: this block holds the instance and never runs it, like a
/// dependency that never completes. It waits (bounded) until the run
/// aborts; its own deadline may be what fires.
fn hold(run: &Run<'_>, pe: u32, block: u32, task: u32, iteration: u32) {
    let (_, done) = autarky_shared::state_parts(run.states[pe as usize].snapshot()[task as usize]);
    let mut w = Waiter::new(run, pe, block, false);
    while w
        .poll(
            WaitKind::TestHold,
            task,
            done as u64,
            iteration as u64 + 1,
            task,
            iteration,
        )
        .is_continue()
    {}
}

fn task_failed(block: u32, role: Role, task: u32, iteration: u32, code: u64) -> Status {
    Status {
        error_code: ErrorCode::TaskFailed as u32,
        block,
        role: role as u32,
        task,
        iteration,
        detail: code,
        ..Status::default()
    }
}
