//! Compute blocks: dynamic workers (pop or keep an instance, run it,
//! complete it, keep the first compute instance it claimed, push the rest)
//! and pinned workers (run their slot's list in order, instance after
//! instance, polling each instance's predecessors).

use autarky_shared::{WaitKind, TASK_NONE};

use super::body::{run_instance, run_instance_lowering};
use super::record;
use super::sched::Pending;
use super::shared::Run;
use super::wait::Waiter;

/// Pushes a claimed instance to its ring: comm tasks to the comm ring
/// (only comm workers run them), compute tasks to the compute ring.
/// Returns false when the push was abandoned (abort).
pub(crate) fn push(run: &Run<'_>, pe: u32, block: u32, task: u32, iteration: u32) -> bool {
    let p = &run.pes[pe as usize];
    let q = if p.lowered.is_comm(task) {
        &p.comm_queue
    } else {
        &p.queue
    };
    let mut w = Waiter::new(run, pe, block, false);
    match q.push(task, iteration, |s| w.queue_poll(s, task, iteration)) {
        Ok(()) => {
            w.done();
            true
        }
        Err(_) => false,
    }
}

/// A dynamic compute block of PE `pe`: pop (or keep) an instance, run it,
/// complete it, keep the first compute instance the completion claimed and
/// push the rest.
pub(crate) fn dynamic(run: &Run<'_>, pe: u32, block: u32) {
    // Publishes owed by fused completions (`sched::Pending`): made before
    // the worker waits for its ring, every 16 completions, and when it
    // leaves (here, whatever ended its loop).
    let mut pending = Pending::default();
    dynamic_loop(run, pe, block, &mut pending);
    run.states[pe as usize].flush(&mut pending);
}

fn dynamic_loop(run: &Run<'_>, pe: u32, block: u32, pending: &mut Pending) {
    let p = &run.pes[pe as usize];
    let states = &run.states[pe as usize];
    let tr = run.tracer(pe, block);
    let mut next: Option<(u32, u32)> = None;
    let mut claims = Vec::new();
    let mut completed = 0u64;
    loop {
        let (task, iteration) = match next.take() {
            Some(x) => x,
            None => {
                // Owed arrivals too: a join they make ready runs here first.
                claims.clear();
                states.flush_arrivals(p.lowered, pending, &mut claims);
                if !claims.is_empty() {
                    if !keep_or_push(run, pe, block, &claims, &mut next) {
                        return;
                    }
                    continue;
                }
                let mut w = Waiter::new(run, pe, block, true);
                match p.queue.pop(|q| w.queue_poll(q, TASK_NONE, 0)) {
                    Some(x) => {
                        w.done();
                        x
                    }
                    None => return,
                }
            }
        };
        if run.aborted() || !run_instance(run, pe, block, task, iteration) {
            return;
        }
        claims.clear();
        if let Some(t) = &tr {
            record::signals_sent(t, p.lowered, task, iteration);
        }
        states.complete_with(
            p.lowered,
            task,
            iteration,
            &run.states,
            &mut claims,
            Some(&mut *pending),
        );
        completed += 1;
        // The device flushes with its progress counter, every 16 instances.
        if completed % 16 == 0 {
            states.flush_arrivals(p.lowered, pending, &mut claims);
        }
        p.blocks[block as usize].count();
        if !keep_or_push(run, pe, block, &claims, &mut next) {
            return;
        }
    }
}

/// Keep one: run the first claimed compute instance ourselves (no hand-off
/// through the ring on the dependency chain), push the rest; comm instances
/// always go to the comm ring. Returns false if a push failed (the run is
/// over).
fn keep_or_push(
    run: &Run<'_>,
    pe: u32,
    block: u32,
    claims: &[(u32, u32)],
    next: &mut Option<(u32, u32)>,
) -> bool {
    let p = &run.pes[pe as usize];
    for &(t, i) in claims {
        if next.is_none() && !p.lowered.is_comm(t) {
            *next = Some((t, i));
        } else if !push(run, pe, block, t, i) {
            return false;
        }
    }
    true
}

/// The round path (the device's `pinned_round`) over a round list
/// ([`LoweredGraph::is_round_list`](crate::graph::LoweredGraph::is_round_list)):
/// an iteration of the whole list at a time — one wait for every
/// predecessor from outside the list, the bodies in order, then one
/// release of all their words. Nothing to push (no dynamic successors).
fn run_round_list(run: &Run<'_>, pe: u32, block: u32, list: &[u32]) {
    let p = &run.pes[pe as usize];
    let states = &run.states[pe as usize];
    let l = p.lowered;
    let mut known = states.iterations();
    let lowered = std::sync::atomic::AtomicU32::new(u32::MAX);
    for n in 0.. {
        if n % 16 == 0 {
            known = known.min(states.limit());
        }
        if n >= known {
            return;
        }
        let low = match states.round_preds_done_now(l, list, n) {
            Some(low) => low,
            None => {
                let mut w = Waiter::new(run, pe, block, false);
                loop {
                    if let Some(low) = states.round_preds_done_now(l, list, n) {
                        w.done();
                        break low;
                    }
                    if n >= states.limit() {
                        w.done();
                        return;
                    }
                    let t = states.round_late_task(l, list, n);
                    if w.poll(WaitKind::Predecessors, t, 0, n as u64, t, n)
                        .is_break()
                    {
                        return;
                    }
                }
            }
        };
        known = states.fold_limit(known, low);
        if n >= known || run.aborted() {
            return;
        }
        // The bodies one after another, as the device's round: a body that
        // fails stops only the tasks after it that wait for an earlier one
        // of the round in this iteration (the device reads its failure
        // flag before those alone, and after the last body); the round is
        // then not released.
        let mut ok = true;
        for &t in list {
            let waits_inside = || {
                l.preds(&l.tasks[t as usize])
                    .iter()
                    .any(|e| e.distance == 0 && list.contains(&e.task))
            };
            if !ok && waits_inside() {
                break;
            }
            ok &= run_instance_lowering(run, pe, block, t, n, &lowered);
        }
        if !ok {
            return;
        }
        known = known.min(lowered.load(std::sync::atomic::Ordering::Relaxed));
        states.complete_pinned_round(l, list, n, known);
        for _ in list {
            p.blocks[block as usize].count();
        }
    }
}

/// A pinned compute block of PE `pe`, running compute slot `slot`'s list in
/// order, instance after instance, until the limit, an abort or a failure.
/// Dynamic successors its completions claim are pushed, never kept.
pub(crate) fn pinned(run: &Run<'_>, pe: u32, block: u32, slot: u32) {
    let p = &run.pes[pe as usize];
    let list = p.lowered.pinned_compute(slot);
    run_pinned_list(run, pe, block, list);
}

/// The pinned loop over `list` (compute blocks; comm blocks interleave
/// their list with other duties in `comm::worker`).
fn run_pinned_list(run: &Run<'_>, pe: u32, block: u32, list: &[u32]) {
    let p = &run.pes[pe as usize];
    let states = &run.states[pe as usize];
    let l = p.lowered;
    let tr = run.tracer(pe, block);
    let mut claims = Vec::new();
    if list.is_empty() {
        return;
    }
    if l.is_round_list(list) && !run.hold.is_some_and(|(q, t)| q == pe && list.contains(&t)) {
        run_round_list(run, pe, block, list);
        return;
    }
    // The limit this worker knows (the device's `known`; only decreases):
    // the limit every 16 instances of the list (a task no stop gates learns
    // of a lowered limit there), what the awaited words carried after each
    // instance's acquire (`fold_limit`), and its own bodies' finish_at. Its
    // publishes carry it (`complete_pinned`).
    let mut known = states.iterations();
    let lowered = std::sync::atomic::AtomicU32::new(u32::MAX);
    for n in 0.. {
        for (k, &t) in list.iter().enumerate() {
            if k == 0 && n % 16 == 0 {
                known = known.min(states.limit());
            }
            if n >= known {
                return;
            }
            let low = match states.preds_done_now(l, t, n) {
                Some(low) => low,
                None => {
                    let mut w = Waiter::new(run, pe, block, false);
                    loop {
                        if let Some(low) = states.preds_done_now(l, t, n) {
                            w.done();
                            break low;
                        }
                        // A stopping task that gates this one lowers the
                        // limit before it publishes; one that does not gate
                        // it may lower it while we wait: leave then.
                        if n >= states.limit() {
                            w.done();
                            return;
                        }
                        if w.poll(WaitKind::Predecessors, t, 0, n as u64, t, n)
                            .is_break()
                        {
                            return;
                        }
                    }
                }
            };
            if let Some(tr) = &tr {
                record::proxies_seen(tr, l, t, n);
            }
            // The limit after the acquire: what the awaited words carried
            // (a stopping predecessor lowered it before publishing), or the
            // limit read now when one of them carried none.
            known = states.fold_limit(known, low);
            if n >= known || run.aborted() {
                return;
            }
            if !run_instance_lowering(run, pe, block, t, n, &lowered) {
                return;
            }
            known = known.min(lowered.load(std::sync::atomic::Ordering::Relaxed));
            claims.clear();
            if let Some(tr) = &tr {
                record::signals_sent(tr, l, t, n);
            }
            states.complete_pinned(l, t, n, &run.states, &mut claims, known);
            p.blocks[block as usize].count();
            for &(s, i) in &claims {
                if !push(run, pe, block, s, i) {
                    return;
                }
            }
        }
    }
}
