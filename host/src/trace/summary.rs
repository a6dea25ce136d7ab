//! What a trace adds up to: busy and idle time per block, how much
//! communication overlapped compute, where the waits went, and the chain of
//! task instances that decided how long an iteration took.
//!
//! Definitions (all times in ns on the recorder's clock):
//! - `wall_ns`: from the trace's first event to its last, the same for every
//!   block so blocks compare; `busy_ns`: the union of the block's task
//!   instances; `idle_ns = wall_ns − busy_ns`.
//! - Overlap: the fraction of the time some comm block ran a task instance
//!   during which some compute block also ran one (`None` without comm
//!   activity).
//! - Waits: per awaited word, how many waits and their total time.
//! - Compute waits: of the compute blocks' time (their number × `wall_ns`),
//!   the share they spent in waits, split by what they awaited
//!   (`WaitKind`: a pinned tile's predecessors — in a stencil solver its
//!   neighbours and halos —, user words such as a convergence counter,
//!   queue items when idle…; plain host word ids count as "other"). With
//!   one PE against several, it shows how much of an iteration the halos
//!   add, and whether pulses overlap compute.
//! - Critical path of an iteration: start at the instance that ended last
//!   in it; step to its predecessor (a distance-0 edge, same iteration)
//!   that ended last, i.e. the one whose end released it; repeat until an
//!   instance has no traced predecessor. Its span is the last end minus the
//!   first start. Reported for the iteration where that span is longest.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use super::{Role, Span, Trace};

/// One block's time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSummary {
    /// PE.
    pub pe: u32,
    /// Block.
    pub block: u32,
    /// Its role.
    pub role: Role,
    /// Time inside task instances (union of their intervals).
    pub busy_ns: u64,
    /// `wall_ns − busy_ns`.
    pub idle_ns: u64,
    /// The trace's span (first event to last), shared by all blocks.
    pub wall_ns: u64,
    /// Task instances it ran (paired start and end).
    pub instances: u64,
}

/// The waits for one word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitSummary {
    /// The awaited signal or word id.
    pub word: u64,
    /// How many waits.
    pub count: u64,
    /// Their total time.
    pub total_ns: u64,
}

/// The chain of instances that decided when one iteration ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CriticalPath {
    /// The iteration.
    pub iteration: u32,
    /// Task ids, first to last.
    pub tasks: Vec<u32>,
    /// Their labels.
    pub labels: Vec<String>,
    /// Last end − first start.
    pub span_ns: u64,
    /// Time inside the path's instances; the rest of the span is hand-off.
    pub busy_ns: u64,
}

/// What a trace adds up to (see the module docs for each definition).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSummary {
    /// Where the summarized window starts: the first event, or — when
    /// events were dropped — the latest first kept event of any block (the
    /// window in which every block still has its events).
    pub window_start_ns: u64,
    /// From the window's start to the last event.
    pub wall_ns: u64,
    /// Every block that recorded anything, by (PE, block).
    pub per_block: Vec<BlockSummary>,
    /// Time some comm block ran a task instance.
    pub comm_busy_ns: u64,
    /// Of that, time some compute block was also running one.
    pub overlap_ns: u64,
    /// `overlap_ns / comm_busy_ns`, `None` without comm activity.
    pub overlap_fraction: Option<f64>,
    /// Waits per awaited word, by word.
    pub waits: Vec<WaitSummary>,
    /// The longest iteration's critical path through its same-iteration
    /// (distance-0) edges; `None` without instances or without edges (a
    /// path of one instance would only name the longest instance).
    /// Loop-carried edges are not followed, so in a graph whose instances
    /// are mostly released by them the path is short.
    pub critical_path: Option<CriticalPath>,
    /// Events lost while recording.
    pub dropped: u64,
    /// Begin or end events without their partner.
    pub unmatched: u64,
    /// The compute blocks' time: their number × `wall_ns`.
    pub compute_block_ns: u64,
    /// Their waits, by what was awaited (`describe_word`'s kind name, or
    /// "other" for a plain word id), longest total first.
    pub compute_waits: Vec<(String, u64)>,
}

impl TraceSummary {
    /// The share of the compute blocks' time spent waiting for `kind`
    /// (a name in [`TraceSummary::compute_waits`]); 0 when there is none.
    pub fn compute_wait_fraction(&self, kind: &str) -> f64 {
        if self.compute_block_ns == 0 {
            return 0.0;
        }
        let ns = self
            .compute_waits
            .iter()
            .find(|(k, _)| k == kind)
            .map_or(0, |(_, ns)| *ns);
        ns as f64 / self.compute_block_ns as f64
    }
}

/// The kind part of an awaited word's name (`predecessors of 5` →
/// `predecessors of`), "other" for a plain id.
fn wait_kind_name(word: u64) -> String {
    match super::split_wait_word(word) {
        Some(_) => {
            let d = super::describe_word(word);
            match d.rfind(' ') {
                Some(i) => d[..i].to_string(),
                None => d,
            }
        }
        None => "other".to_string(),
    }
}

/// Sorted, disjoint union of `[start, end)` intervals.
fn union(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn length(v: &[(u64, u64)]) -> u64 {
    v.iter().map(|(s, e)| e - s).sum()
}

/// Length of the intersection of two disjoint sorted interval lists.
fn intersection(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if s < e {
            total += e - s;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

fn critical_path(trace: &Trace, tasks: &[Span], edges: &[(u32, u32, u32)]) -> Option<CriticalPath> {
    // Without edges (the solvers pass none) there is no path to follow.
    if !edges.iter().any(|&(_, _, d)| d == 0) {
        return None;
    }
    let mut preds: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(from, to, d) in edges {
        if d == 0 {
            preds.entry(to).or_default().push(from);
        }
    }
    let mut by_iter: BTreeMap<u32, HashMap<u32, &Span>> = BTreeMap::new();
    for s in tasks {
        by_iter
            .entry(s.iteration)
            .or_default()
            .entry(s.task)
            .or_insert(s);
    }
    let mut best: Option<CriticalPath> = None;
    for (&iteration, inst) in &by_iter {
        let mut cur = inst
            .values()
            .max_by_key(|s| (s.end_ns, std::cmp::Reverse(s.task)))?;
        let mut path: Vec<Span> = vec![**cur];
        // Distance-0 edges within an iteration form a DAG (validation), so
        // this walk ends; the bound guards against a bad edge list.
        while path.len() <= inst.len() {
            let next = preds
                .get(&cur.task)
                .into_iter()
                .flatten()
                .filter_map(|p| inst.get(p))
                .max_by_key(|s| (s.end_ns, std::cmp::Reverse(s.task)));
            match next {
                Some(p) => {
                    path.push(**p);
                    cur = p;
                }
                None => break,
            }
        }
        path.reverse();
        let span_ns = path.last()?.end_ns.saturating_sub(path[0].start_ns);
        if best.as_ref().is_some_and(|b| b.span_ns >= span_ns) {
            continue;
        }
        best = Some(CriticalPath {
            iteration,
            tasks: path.iter().map(|s| s.task).collect(),
            labels: path.iter().map(|s| trace.label(s.task)).collect(),
            span_ns,
            busy_ns: path.iter().map(Span::duration_ns).sum(),
        });
    }
    best
}

pub(super) fn summarize(trace: &Trace, edges: &[(u32, u32, u32)]) -> TraceSummary {
    let mut p = trace.pair();
    let t1 = trace.events.iter().map(|e| e.t_ns).max().unwrap_or(0);
    // With events dropped, each block's ring kept only its own newest
    // records, so blocks' kept windows start at different times; before
    // the last of those starts some block's activity is missing, and
    // counting that time as idle once made shares 10-60x off. So the
    // summary covers the window in which every block still has events.
    let t0 = if trace.dropped > 0 {
        trace
            .tracks()
            .into_iter()
            .map(|(_, idx)| idx.iter().map(|&i| trace.events[i].t_ns).min().unwrap_or(0))
            .max()
            .unwrap_or(0)
    } else {
        trace.events.iter().map(|e| e.t_ns).min().unwrap_or(0)
    };
    let clip = |spans: &mut Vec<Span>| {
        spans.retain(|s| s.end_ns > t0 || (s.start_ns >= t0));
        for s in spans.iter_mut() {
            s.start_ns = s.start_ns.max(t0);
        }
    };
    clip(&mut p.tasks);
    clip(&mut p.waits);
    let wall_ns = t1.saturating_sub(t0);

    let mut per_block = Vec::new();
    for ((pe, block), idx) in trace.tracks() {
        let mine: Vec<&Span> = p
            .tasks
            .iter()
            .filter(|s| s.pe == pe && s.block == block)
            .collect();
        let busy_ns = length(&union(
            mine.iter().map(|s| (s.start_ns, s.end_ns)).collect(),
        ));
        per_block.push(BlockSummary {
            pe,
            block,
            role: trace.events[idx[0]].role,
            busy_ns,
            idle_ns: wall_ns - busy_ns,
            wall_ns,
            instances: mine.len() as u64,
        });
    }

    let of_role = |r: Role| {
        union(
            p.tasks
                .iter()
                .filter(|s| s.role == r)
                .map(|s| (s.start_ns, s.end_ns))
                .collect(),
        )
    };
    let (comm, compute) = (of_role(Role::Comm), of_role(Role::Compute));
    let comm_busy_ns = length(&comm);
    let overlap_ns = intersection(&comm, &compute);

    let mut waits: BTreeMap<u64, WaitSummary> = BTreeMap::new();
    for w in &p.waits {
        let s = waits.entry(w.arg).or_insert(WaitSummary {
            word: w.arg,
            count: 0,
            total_ns: 0,
        });
        s.count += 1;
        s.total_ns += w.duration_ns();
    }

    let compute_block_ns =
        per_block.iter().filter(|b| b.role == Role::Compute).count() as u64 * wall_ns;
    let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
    for w in p.waits.iter().filter(|w| w.role == Role::Compute) {
        *by_kind.entry(wait_kind_name(w.arg)).or_default() += w.duration_ns();
    }
    let mut compute_waits: Vec<(String, u64)> = by_kind.into_iter().collect();
    compute_waits.sort_by_key(|(k, ns)| (std::cmp::Reverse(*ns), k.clone()));

    TraceSummary {
        window_start_ns: t0,
        wall_ns,
        per_block,
        compute_block_ns,
        compute_waits,
        comm_busy_ns,
        overlap_ns,
        overlap_fraction: (comm_busy_ns > 0).then(|| overlap_ns as f64 / comm_busy_ns as f64),
        waits: waits.into_values().collect(),
        critical_path: critical_path(trace, &p.tasks, edges),
        dropped: trace.dropped,
        unmatched: p.unmatched,
    }
}

/// Awaited words the summary's text lists one by one (longest total first).
const MAX_WORDS_SHOWN: usize = 10;

/// `1234567` ns → `1.235 ms`.
fn dur(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{:.3} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.3} ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.3} µs", n as f64 / 1e3),
        n => format!("{n} ns"),
    }
}

impl fmt::Display for TraceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "trace: {} wall", dur(self.wall_ns))?;
        for b in &self.per_block {
            let pct = if b.wall_ns == 0 {
                0.0
            } else {
                100.0 * b.busy_ns as f64 / b.wall_ns as f64
            };
            writeln!(
                f,
                "  PE {} block {} ({}): {} instance{}, busy {} ({pct:.1}%), idle {}",
                b.pe,
                b.block,
                b.role.name(),
                b.instances,
                if b.instances == 1 { "" } else { "s" },
                dur(b.busy_ns),
                dur(b.idle_ns)
            )?;
        }
        match self.overlap_fraction {
            Some(x) => writeln!(
                f,
                "  compute/communication overlap: {:.1}% of {} of communication",
                100.0 * x,
                dur(self.comm_busy_ns)
            )?,
            None => writeln!(
                f,
                "  compute/communication overlap: no communication recorded"
            )?,
        }
        if !self.compute_waits.is_empty() && self.compute_block_ns > 0 {
            let parts: Vec<String> = self
                .compute_waits
                .iter()
                .map(|(k, ns)| {
                    format!(
                        "{k} {:.1}%",
                        100.0 * *ns as f64 / self.compute_block_ns as f64
                    )
                })
                .collect();
            writeln!(
                f,
                "  compute blocks waiting, share of their time: {}",
                parts.join(", ")
            )?;
        }
        // The words waited on longest (a device trace names every ready-queue
        // slot, so there can be thousands).
        let mut waits: Vec<&WaitSummary> = self.waits.iter().collect();
        waits.sort_by_key(|w| (std::cmp::Reverse(w.total_ns), w.word));
        for w in waits.iter().take(MAX_WORDS_SHOWN) {
            writeln!(
                f,
                "  word {}: {} wait{}, {} in total",
                super::describe_word(w.word),
                w.count,
                if w.count == 1 { "" } else { "s" },
                dur(w.total_ns)
            )?;
        }
        if waits.len() > MAX_WORDS_SHOWN {
            let rest = &waits[MAX_WORDS_SHOWN..];
            writeln!(
                f,
                "  … and {} more words: {} waits, {} in total",
                rest.len(),
                rest.iter().map(|w| w.count).sum::<u64>(),
                dur(rest.iter().map(|w| w.total_ns).sum())
            )?;
        }
        if let Some(c) = &self.critical_path {
            writeln!(
                f,
                "  critical path (iteration {}): {} instance{}, {} span, {} busy: {}",
                c.iteration,
                c.tasks.len(),
                if c.tasks.len() == 1 { "" } else { "s" },
                dur(c.span_ns),
                dur(c.busy_ns),
                if c.labels.len() <= 12 {
                    c.labels.join(" → ")
                } else {
                    format!(
                        "{} → … ({} more) … → {}",
                        c.labels[..5].join(" → "),
                        c.labels.len() - 10,
                        c.labels[c.labels.len() - 5..].join(" → ")
                    )
                }
            )?;
        }
        if self.dropped > 0 || self.unmatched > 0 {
            writeln!(
                f,
                "  incomplete: {} event{} dropped, {} without a partner{}",
                self.dropped,
                if self.dropped == 1 { "" } else { "s" },
                self.unmatched,
                if self.dropped > 0 {
                    " (the figures above cover only the end of the run where every block's \
                     ring still holds events; more records per block cover more)"
                } else {
                    ""
                }
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::{EventKind, Role, Trace, TraceEvent};

    #[test]
    fn busy_plus_idle_is_wall_on_every_block() {
        let mut t = Trace::new();
        task(&mut t, 0, Role::Comm, 9, 0, 0, 400);
        task(&mut t, 1, Role::Compute, 0, 0, 100, 300);
        task(&mut t, 1, Role::Compute, 1, 0, 300, 350);
        task(&mut t, 2, Role::Compute, 2, 0, 500, 1_000);
        let s = t.summary(&[]);
        assert_eq!(s.wall_ns, 1_000);
        let busy: Vec<_> = s
            .per_block
            .iter()
            .map(|b| (b.block, b.busy_ns, b.instances))
            .collect();
        assert_eq!(busy, vec![(0, 400, 1), (1, 250, 2), (2, 500, 1)]);
        for b in &s.per_block {
            assert_eq!(b.busy_ns + b.idle_ns, b.wall_ns, "{b:?}");
        }
        // Comm ran [0, 400); compute ran [100, 350) of it.
        assert_eq!((s.comm_busy_ns, s.overlap_ns), (400, 250));
        assert_eq!(s.overlap_fraction, Some(250.0 / 400.0));
    }

    #[test]
    fn waits_add_up_per_awaited_word() {
        let mut t = Trace::new();
        for (b, e, word) in [(0, 10, 7u64), (20, 50, 7), (60, 61, 3)] {
            for (ts, kind) in [(b, EventKind::WaitBegin), (e, EventKind::WaitEnd)] {
                t.events.push(TraceEvent {
                    arg: word,
                    ..ev(ts, 1, Role::Compute, 0, 0, kind)
                });
            }
        }
        let s = t.summary(&[]);
        let w: Vec<_> = s
            .waits
            .iter()
            .map(|w| (w.word, w.count, w.total_ns))
            .collect();
        assert_eq!(w, vec![(3, 1, 1), (7, 2, 40)]);
        assert_eq!(s.overlap_fraction, None);
        // Plain word ids on the one compute block: "other", 41 of 61 ns.
        assert_eq!(s.compute_block_ns, 61);
        assert_eq!(s.compute_waits, vec![("other".to_string(), 41)]);
        assert!((s.compute_wait_fraction("other") - 41.0 / 61.0).abs() < 1e-12);
        // The text lists the longest first.
        let text = s.to_string();
        let (w7, w3) = (text.find("word 7:").unwrap(), text.find("word 3:").unwrap());
        assert!(w7 < w3, "{text}");
    }

    #[test]
    fn compute_waits_are_split_by_kind_and_leave_comm_blocks_out() {
        use autarky_shared::WaitKind;
        let mut t = Trace::new();
        // Block 1 (compute) waits 30 ns on predecessors of task 4 and 10 on
        // user word 2; block 2 (compute) 20 more on predecessors of task 5;
        // block 0 (comm) idles 50, which is not a compute wait.
        let waits = [
            (1, Role::Compute, WaitKind::Predecessors, 4, 0, 30),
            (1, Role::Compute, WaitKind::UserWord, 2, 40, 50),
            (2, Role::Compute, WaitKind::Predecessors, 5, 10, 30),
            (0, Role::Comm, WaitKind::CommIdle, 0, 0, 50),
        ];
        for (block, role, kind, index, b, e) in waits {
            for (ts, ek) in [(b, EventKind::WaitBegin), (e, EventKind::WaitEnd)] {
                t.events.push(TraceEvent {
                    arg: super::super::wait_word(kind, index),
                    ..ev(ts, block, role, 0, 0, ek)
                });
            }
        }
        task(&mut t, 1, Role::Compute, 4, 0, 60, 100);
        let s = t.summary(&[]);
        assert_eq!(s.wall_ns, 100);
        assert_eq!(s.compute_block_ns, 200, "two compute blocks × 100 ns");
        assert_eq!(
            s.compute_waits,
            vec![
                ("predecessors of".to_string(), 50),
                ("user word".to_string(), 10)
            ]
        );
        assert!((s.compute_wait_fraction("predecessors of") - 0.25).abs() < 1e-12);
        assert_eq!(s.compute_wait_fraction("comm idle"), 0.0);
        let text = s.to_string();
        assert!(
            text.contains(
                "compute blocks waiting, share of their time: predecessors of 25.0%, user word 5.0%"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_text_lists_the_ten_longest_waited_words_and_sums_the_rest() {
        let mut t = Trace::new();
        for word in 0..15u64 {
            for (ts, kind) in [(0, EventKind::WaitBegin), (word + 1, EventKind::WaitEnd)] {
                t.events.push(TraceEvent {
                    arg: word,
                    ..ev(ts, 1, Role::Compute, 0, 0, kind)
                });
            }
        }
        let text = t.summary(&[]).to_string();
        assert_eq!(text.matches("  word ").count(), 10, "{text}");
        assert!(text.contains("word 14: 1 wait, 15 ns"), "{text}");
        assert!(!text.contains("word 4:"), "{text}");
        // Words 0..=4 waited 1 + 2 + 3 + 4 + 5 ns.
        assert!(
            text.contains("… and 5 more words: 5 waits, 15 ns in total"),
            "{text}"
        );
    }

    /// Events dropped: block 1 kept only its newest records (from 80 on),
    /// block 2 all of its own from 0. The shares cover [80, 100], where
    /// both have data, not [0, 100], where block 1's missing work would
    /// count as idle.
    #[test]
    fn with_events_dropped_the_summary_covers_the_window_every_block_holds() {
        let mut t = Trace::new();
        task(&mut t, 1, Role::Compute, 1, 9, 80, 100);
        task(&mut t, 2, Role::Compute, 2, 0, 0, 10);
        task(&mut t, 2, Role::Compute, 2, 9, 90, 100);
        t.dropped = 40;
        let s = t.summary(&[]);
        assert_eq!((s.window_start_ns, s.wall_ns), (80, 20));
        let busy: Vec<_> = s.per_block.iter().map(|b| (b.block, b.busy_ns)).collect();
        assert_eq!(busy, vec![(1, 20), (2, 10)]);
        assert!(
            s.to_string().contains("cover only the end of the run"),
            "{s}"
        );
        // Nothing dropped: the whole trace.
        t.dropped = 0;
        let s = t.summary(&[]);
        assert_eq!((s.window_start_ns, s.wall_ns), (0, 100));
    }

    #[test]
    fn critical_path_follows_the_last_arriving_predecessor() {
        // 0 → 2, 1 → 2, 2 → 3, and 4 independent. In iteration 0, task 1
        // ends after task 0, so it released 2; the path is 1 → 2 → 3. In
        // iteration 1 everything is faster.
        let mut t = Trace {
            labels: vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()],
            ..Trace::default()
        };
        task(&mut t, 1, Role::Compute, 0, 0, 0, 100);
        task(&mut t, 2, Role::Compute, 1, 0, 0, 300);
        task(&mut t, 3, Role::Compute, 4, 0, 0, 350);
        task(&mut t, 1, Role::Compute, 2, 0, 320, 500);
        task(&mut t, 1, Role::Compute, 3, 0, 510, 600);
        task(&mut t, 1, Role::Compute, 0, 1, 600, 610);
        task(&mut t, 2, Role::Compute, 1, 1, 600, 620);
        task(&mut t, 1, Role::Compute, 2, 1, 630, 640);
        task(&mut t, 1, Role::Compute, 3, 1, 650, 660);
        let edges = [(0, 2, 0), (1, 2, 0), (2, 3, 0), (3, 0, 1)];
        let c = t.summary(&edges).critical_path.expect("a path");
        assert_eq!(c.iteration, 0);
        assert_eq!(c.tasks, vec![1, 2, 3]);
        assert_eq!(c.labels, vec!["b", "c", "d"]);
        assert_eq!((c.span_ns, c.busy_ns), (600, 300 + 180 + 90));
        let text = t.summary(&edges).to_string();
        assert!(
            text.contains("critical path (iteration 0): 3 instances"),
            "{text}"
        );
        assert!(text.contains("b → c → d"), "{text}");
    }
}
