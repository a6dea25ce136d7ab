//! Comm blocks: one polling loop that runs, in this order of preference,
//! the next instance of the block's pinned comm list when its predecessors
//! are done, an instance from the comm ring, or relays of changed proxies
//! to their dynamic successors. Comm block 0 also publishes progress,
//! detects an early stop and is its PE's stall watchdog. In a traced run a
//! comm block records its idle time (polls that ran nothing, until the next
//! instance), the proxies its relays see advance, and what the instances it
//! runs record (`record.rs`).

use std::time::{Duration, Instant};

use autarky_shared::{ErrorCode, Role, Status, WaitKind, TASK_NONE};

use super::body::run_instance_lowering;
use super::compute::push;
use super::record::{self, Idle};
use super::shared::Run;
use super::sync::Ordering;
use super::wait::{back_off, CHECK_EVERY};

/// How often comm block 0 publishes progress and looks for an early stop
/// and a stall.
const COMM_PERIOD: Duration = Duration::from_micros(200);

/// Comm block `block` of PE `pe`.
pub(crate) fn worker(run: &Run<'_>, pe: u32, block: u32) {
    let p = &run.pes[pe as usize];
    let states = &run.states[pe as usize];
    let l = p.lowered;
    let list = l.pinned_comm(block);
    let publisher = block == 0;
    // Pinned cursor: list index, instance.
    let (mut k, mut n) = (0usize, 0u32);
    // Last relayed value of every proxy of this block's share.
    let mut seen = vec![0u32; l.num_proxies as usize];
    let mut claims = Vec::new();
    let mut idle = 0u32;
    let mut last_look = Instant::now();
    let mut watch = (p.completed_total(), Instant::now());
    let tr = run.tracer(pe, block);
    let mut idle_trace = Idle::new(block);
    // The limit this worker knows, as a pinned compute worker's (see
    // `run_pinned_list`): the limit when the list starts an instance that
    // is a multiple of 16 and every 64 idle polls, what the awaited words
    // carried, its own bodies' finish_at.
    let mut known = states.iterations();
    let mut refreshed = None;
    let lowered = std::sync::atomic::AtomicU32::new(u32::MAX);
    loop {
        if run.aborted() {
            break;
        }
        claims.clear();
        let mut worked = false;
        if k == 0 && n % 16 == 0 && refreshed != Some(n) {
            refreshed = Some(n);
            known = known.min(states.limit());
        }
        if !list.is_empty() && n < known {
            let t = list[k];
            // The limit after the acquire (as in the pinned compute loop).
            let ready = match states.preds_done_now(l, t, n) {
                Some(low) => {
                    known = states.fold_limit(known, low);
                    true
                }
                None => false,
            };
            if ready && n < known {
                if let Some(tr) = &tr {
                    idle_trace.end(tr);
                    record::proxies_seen(tr, l, t, n);
                }
                if !run_instance_lowering(run, pe, block, t, n, &lowered) {
                    break;
                }
                known = known.min(lowered.load(std::sync::atomic::Ordering::Relaxed));
                if let Some(tr) = &tr {
                    record::signals_sent(tr, l, t, n);
                }
                states.complete_pinned(l, t, n, &run.states, &mut claims, known);
                p.blocks[block as usize].count();
                k += 1;
                if k == list.len() {
                    k = 0;
                    n += 1;
                }
                worked = true;
            }
        }
        if !worked {
            if let Some((t, i)) = p.comm_queue.try_pop() {
                if let Some(tr) = &tr {
                    idle_trace.end(tr);
                }
                if !run_instance_lowering(run, pe, block, t, i, &lowered) {
                    break;
                }
                known = known.min(lowered.load(std::sync::atomic::Ordering::Relaxed));
                if let Some(tr) = &tr {
                    record::signals_sent(tr, l, t, i);
                }
                states.complete_serial(l, t, i, &run.states, &mut claims);
                p.blocks[block as usize].count();
                worked = true;
            }
        }
        let ran = worked;
        if !worked {
            worked = states.relay_with(l, block, p.comm_blocks, &mut seen, &mut claims, |t, v| {
                if let Some(tr) = &tr {
                    tr.signal_seen(l.global[t as usize], v.saturating_sub(1), t);
                }
            });
        }
        // Nothing is kept: every claimed instance goes to its ring.
        if !claims.iter().all(|&(t, i)| push(run, pe, block, t, i)) {
            break;
        }
        // Trace: a poll that ran no instance is idle time (relays included,
        // as on the device), until the next instance.
        if !ran {
            if let Some(tr) = &tr {
                idle_trace.nothing_ran(tr);
            }
        }
        if worked {
            idle = 0;
            continue;
        }
        idle = idle.saturating_add(1);
        if idle % 64 == 0 {
            known = known.min(states.limit());
            if states.is_finished() {
                break;
            }
        }
        if publisher && (idle % CHECK_EVERY == 0 || idle > 4096) {
            let now = Instant::now();
            if now.duration_since(last_look) >= COMM_PERIOD {
                last_look = now;
                let total = p.completed_total();
                // Relaxed: the host reads it as a progress indicator only.
                p.progress.store(total, Ordering::Relaxed);
                states.detect_stop();
                // Stall watchdog (re-armed by progress anywhere on the PE):
                // catches bodies that never return; waiters, which know what
                // they wait for, normally report first.
                if total != watch.0 {
                    watch = (total, now);
                } else if now.duration_since(watch.1) >= 2 * run.timeout && !states.is_finished() {
                    // The run cannot end before a body that never returns
                    // does: say which instances may be stuck in one.
                    let busy: Vec<String> = p
                        .blocks
                        .iter()
                        .enumerate()
                        .filter(|&(b, _)| b as u32 != block)
                        .filter_map(|(b, c)| {
                            let (t, i) = c.busy_with()?;
                            let g = p.lowered.global.get(t as usize)?;
                            Some(format!("task #{g} iteration {i} (block {b})"))
                        })
                        .collect();
                    if !busy.is_empty() {
                        tracing::warn!(
                            "emulator: nothing completed on PE {pe} for {:?}; blocks not waiting, \
                             possibly inside a CPU body that does not return: {}. The run ends \
                             with a timeout once they return (a CPU body cannot be interrupted)",
                            2 * run.timeout,
                            busy.join(", ")
                        );
                    }
                    run.fail(
                        pe,
                        Status {
                            error_code: ErrorCode::Timeout as u32,
                            block,
                            role: Role::Comm as u32,
                            task: TASK_NONE,
                            iteration: 0,
                            wait_kind: WaitKind::Progress as u32,
                            wait_index: pe,
                            seen: total,
                            wanted: total + 1,
                            ..Status::default()
                        },
                    );
                    break;
                }
            }
        }
        back_off(idle);
    }
    if let Some(tr) = &tr {
        idle_trace.end(tr);
    }
    if publisher {
        p.progress.store(p.completed_total(), Ordering::Relaxed);
    }
}
