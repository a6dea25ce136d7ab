//! The `dag` command's proof of order: every instance logs a start and an
//! end sequence number taken from one global counter, and counts how often
//! it ran; afterwards every instance must have run exactly once, and
//! started after every instance it depends on (its predecessors' instances
//! through each edge, and its own previous instance) had ended.
//!
//! Why sequence numbers prove order: all of them come from read-modify-
//! writes on one atomic word, whose modification order is consistent with
//! happens-before. The scheduler orders an instance's completion before any
//! instance it releases, so a correct scheduler gives `start(successor) >
//! end(predecessor)`; a successor that ran too early can get a smaller one.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use autarky::graph::EdgeSpec;

/// Most instances the check logs (20 bytes each, on the host and, on the
/// GPU, on the device too): 2^27, about 2.7 GB.
pub const MAX_CHECKED_INSTANCES: u64 = 1 << 27;

/// What a successful check covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Instances checked (tasks × iterations).
    pub instances: u64,
    /// Dependencies checked (instance pairs through edges and self edges).
    pub dependencies: u64,
}

/// The host-side log the emulator's task bodies write (`Arc`-shared with
/// the kinds' CPU closures).
#[derive(Debug)]
pub struct HostLog {
    /// Next sequence number.
    pub counter: AtomicU64,
    /// `(start, end)` sequence numbers per instance slot.
    pub seq: Vec<AtomicU64>,
    /// Executions per instance slot.
    pub count: Vec<AtomicU32>,
    /// Iterations per task (slot = task × iterations + iteration).
    pub iterations: u32,
}

impl HostLog {
    /// A log for `instances` slots, or a message when it cannot be had.
    pub fn new(instances: u64, iterations: u32) -> Result<HostLog, String> {
        let n = usize::try_from(instances)
            .ok()
            .filter(|n| n.checked_mul(2).is_some())
            .ok_or_else(|| format!("{instances} instances are too many to log"))?;
        let fail = |e| format!("cannot allocate the check log for {instances} instances: {e}");
        let mut seq = Vec::new();
        seq.try_reserve_exact(2 * n).map_err(fail)?;
        seq.resize_with(2 * n, || AtomicU64::new(u64::MAX));
        let mut count = Vec::new();
        count.try_reserve_exact(n).map_err(fail)?;
        count.resize_with(n, || AtomicU32::new(0));
        Ok(HostLog {
            counter: AtomicU64::new(0),
            seq,
            count,
            iterations,
        })
    }

    /// Called by an instance's body before its work: its start number.
    pub fn start(&self) -> u64 {
        // AcqRel (any RMW would do): see the module docs.
        self.counter.fetch_add(1, Ordering::AcqRel)
    }

    /// Called by an instance's body after its work.
    pub fn end(&self, task: u32, iteration: u32, start: u64) {
        let slot = task as usize * self.iterations as usize + iteration as usize;
        // Relaxed: read only after the run's threads were joined.
        self.count[slot].fetch_add(1, Ordering::Relaxed);
        let end = self.counter.fetch_add(1, Ordering::AcqRel);
        self.seq[2 * slot].store(start, Ordering::Relaxed);
        self.seq[2 * slot + 1].store(end, Ordering::Relaxed);
    }

    /// Checks the log (after the run ended).
    pub fn check(&self, tasks: u32, edges: &[EdgeSpec]) -> Result<Checked, String> {
        check(
            tasks,
            self.iterations,
            edges,
            |i| self.seq[i].load(Ordering::Relaxed),
            |i| self.count[i].load(Ordering::Relaxed),
        )
    }
}

/// Checks a log of `tasks × iterations` instances: `seq(2·slot)` and
/// `seq(2·slot + 1)` are an instance's start and end numbers, `count(slot)`
/// how often it ran. Returns the first violation in words.
pub fn check(
    tasks: u32,
    iterations: u32,
    edges: &[EdgeSpec],
    seq: impl Fn(usize) -> u64,
    count: impl Fn(usize) -> u32,
) -> Result<Checked, String> {
    let it = iterations as usize;
    let slot = |t: usize, i: usize| t * it + i;
    let start = |t: usize, i: usize| seq(2 * slot(t, i));
    let end = |t: usize, i: usize| seq(2 * slot(t, i) + 1);
    for t in 0..tasks as usize {
        for i in 0..it {
            let c = count(slot(t, i));
            if c != 1 {
                return Err(format!(
                    "task #{t} iteration {i} ran {c} time{}",
                    if c == 1 { "" } else { "s" }
                ));
            }
            if start(t, i) >= end(t, i) {
                return Err(format!(
                    "task #{t} iteration {i} logged start {} ≥ end {}",
                    start(t, i),
                    end(t, i)
                ));
            }
        }
    }
    let mut dependencies = 0u64;
    for t in 0..tasks as usize {
        for i in 1..it {
            dependencies += 1;
            if start(t, i) < end(t, i - 1) {
                return Err(format!(
                    "task #{t} iteration {i} started (seq {}) before its iteration {} ended (seq {})",
                    start(t, i),
                    i - 1,
                    end(t, i - 1)
                ));
            }
        }
    }
    for e in edges {
        let (p, s, d) = (e.from.index(), e.to.index(), e.distance as usize);
        for i in d..it {
            dependencies += 1;
            if start(s, i) < end(p, i - d) {
                return Err(format!(
                    "task #{s} iteration {i} started (seq {}) before task #{p} iteration {} ended (seq {}){}",
                    start(s, i),
                    i - d,
                    end(p, i - d),
                    if d == 1 { " across a loop-carried edge" } else { "" }
                ));
            }
        }
    }
    Ok(Checked {
        instances: tasks as u64 * iterations as u64,
        dependencies,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use autarky::TaskId;

    fn edge(from: usize, to: usize, distance: u32) -> EdgeSpec {
        EdgeSpec {
            from: TaskId::from_index(from),
            to: TaskId::from_index(to),
            distance,
        }
    }

    /// A log of 2 tasks × 2 iterations, in the order the runs give.
    fn log(order: &[(usize, usize)]) -> Vec<u64> {
        let mut seq = vec![0u64; 8];
        for (k, &(t, i)) in order.iter().enumerate() {
            seq[2 * (t * 2 + i)] = 2 * k as u64;
            seq[2 * (t * 2 + i) + 1] = 2 * k as u64 + 1;
        }
        seq
    }

    #[test]
    fn a_log_in_dependency_order_passes() {
        let seq = log(&[(0, 0), (1, 0), (0, 1), (1, 1)]);
        let edges = [edge(0, 1, 0), edge(1, 0, 1)];
        let c = check(2, 2, &edges, |i| seq[i], |_| 1).unwrap();
        assert_eq!(c.instances, 4);
        // 2 self edges, 2 through 0 → 1, 1 through the carried edge.
        assert_eq!(c.dependencies, 5);
    }

    #[test]
    fn a_successor_that_started_before_its_predecessor_ended_fails() {
        let seq = log(&[(1, 0), (0, 0), (0, 1), (1, 1)]);
        let e = check(2, 2, &[edge(0, 1, 0)], |i| seq[i], |_| 1).unwrap_err();
        assert!(
            e.starts_with(
                "task #1 iteration 0 started (seq 0) before task #0 iteration 0 ended (seq 3)"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_carried_edge_violation_is_named() {
        // 0's iteration 1 runs before 1's iteration 0: breaks 1 → 0 (d = 1).
        let seq = log(&[(0, 0), (0, 1), (1, 0), (1, 1)]);
        let e = check(2, 2, &[edge(1, 0, 1)], |i| seq[i], |_| 1).unwrap_err();
        assert!(e.ends_with("across a loop-carried edge"), "{e}");
    }

    #[test]
    fn an_instance_that_ran_twice_or_never_fails() {
        let seq = log(&[(0, 0), (1, 0), (0, 1), (1, 1)]);
        let e = check(2, 2, &[], |i| seq[i], |s| if s == 3 { 2 } else { 1 }).unwrap_err();
        assert_eq!(e, "task #1 iteration 1 ran 2 times");
        let e = check(2, 2, &[], |i| seq[i], |s| u32::from(s != 2)).unwrap_err();
        assert_eq!(e, "task #1 iteration 0 ran 0 times");
    }

    #[test]
    fn an_instance_overtaking_its_own_previous_instance_fails() {
        let seq = log(&[(0, 1), (0, 0), (1, 0), (1, 1)]);
        let e = check(2, 2, &[], |i| seq[i], |_| 1).unwrap_err();
        assert!(e.contains("before its iteration 0 ended"), "{e}");
    }

    #[test]
    fn a_log_that_cannot_be_allocated_is_an_error_not_an_abort() {
        let e = HostLog::new(u64::MAX / 4, 1).unwrap_err();
        assert!(
            e.contains("cannot allocate") || e.contains("too many"),
            "{e}"
        );
    }

    #[test]
    fn the_host_log_records_what_bodies_report() {
        let l = HostLog::new(4, 2).unwrap();
        for (t, i) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            let s = l.start();
            l.end(t, i, s);
        }
        l.check(2, &[edge(0, 1, 0)]).unwrap();
        let l = HostLog::new(4, 2).unwrap();
        for (t, i) in [(1, 0), (0, 0), (0, 1), (1, 1)] {
            let s = l.start();
            l.end(t, i, s);
        }
        assert!(l.check(2, &[edge(0, 1, 0)]).is_err());
    }
}
