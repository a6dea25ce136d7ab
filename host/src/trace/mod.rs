//! Traces of a run: what every block did and when, as Chrome trace JSON
//! (opens in Perfetto) and as a summary (busy/idle per block, overlap of
//! compute and communication, wait time per awaited word, critical path).
//!
//! A [`Trace`] is a flat list of [`TraceEvent`]s from any number of PEs and
//! blocks, in any order, plus the count of events that were lost
//! (`dropped`: a full ring or buffer never loses events silently). Events
//! pair up per track (one PE's block):
//!
//! - `TaskStart` … `TaskEnd` of the same (task, iteration) is one task
//!   instance ([`Span`]);
//! - `WaitBegin` … `WaitEnd` of the same awaited word (`arg`) is one wait;
//! - `SignalSent { to_pe }` (signal `arg`) pairs with a later `SignalSeen`
//!   of the same signal on PE `to_pe` ([`Trace::flows`]).
//!
//! A begin without its end (or an end without its begin), e.g. because
//! the ring dropped one half, is counted in [`Pairing::unmatched`] and left
//! out of spans; it is never invented.
//!
//! Sources: a traced GPU run (`RunOptions::trace`) decodes its device
//! trace rings into [`TraceEvent`]s ([`decode`]; `RunReport::trace`);
//! [`TraceRecorder`] records the same events from host code (a CPU
//! backend's workers, or CPU task bodies) on a host clock. Wait events
//! name the awaited word with [`wait_word`] on both.

mod chrome;
pub mod decode;
mod event;
mod recorder;
mod summary;
mod word;

use std::collections::HashMap;
use std::path::Path;

pub use event::{EventKind, Role, TraceEvent};
pub use recorder::{BlockTrace, TraceRecorder};
pub use summary::{BlockSummary, CriticalPath, TraceSummary, WaitSummary};
pub use word::{describe_word, split_wait_word, wait_word};

/// The events of one run, with what was lost and how to name tasks.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// The recorded events, in any order.
    pub events: Vec<TraceEvent>,
    /// Events that could not be recorded (a full buffer); never silent:
    /// the summary and the JSON both report it.
    pub dropped: u64,
    /// Task labels by task id (`labels[t]`); a task without one is shown
    /// as `#t`.
    pub labels: Vec<String>,
}

/// A paired interval on one track: a task instance or a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// PE of the track.
    pub pe: u32,
    /// Block of the track.
    pub block: u32,
    /// Role of the block.
    pub role: Role,
    /// Task (for waits: the task that was running, if any).
    pub task: u32,
    /// Iteration.
    pub iteration: u32,
    /// Begin time (ns, recorder clock).
    pub start_ns: u64,
    /// End time (ns); `≥ start_ns`.
    pub end_ns: u64,
    /// For waits: the awaited word; for task instances: 0.
    pub arg: u64,
}

impl Span {
    /// `end_ns − start_ns`.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// Task instances and waits paired from the events.
#[derive(Clone, Debug, Default)]
pub struct Pairing {
    /// Task instances, ordered by (PE, block, start).
    pub tasks: Vec<Span>,
    /// Waits, ordered by (PE, block, start).
    pub waits: Vec<Span>,
    /// Begin or end events that found no partner.
    pub unmatched: u64,
}

/// A signal from its sender to the receiver that saw it: indices into
/// [`Trace::events`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    /// The `SignalSent` event.
    pub sent: usize,
    /// The `SignalSeen` event it pairs with.
    pub seen: usize,
}

impl Trace {
    /// An empty trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// `labels[task]`, or `#task`.
    pub fn label(&self, task: u32) -> String {
        match self.labels.get(task as usize) {
            Some(l) if !l.is_empty() => l.clone(),
            _ => format!("#{task}"),
        }
    }

    /// Event indices grouped by track `(pe, block)`, each group in time
    /// order (ties keep recording order), tracks in `(pe, block)` order.
    pub(crate) fn tracks(&self) -> Vec<((u32, u32), Vec<usize>)> {
        let mut by: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
        for (i, e) in self.events.iter().enumerate() {
            by.entry((e.pe, e.block)).or_default().push(i);
        }
        let mut tracks: Vec<_> = by.into_iter().collect();
        tracks.sort_by_key(|(k, _)| *k);
        for (_, idx) in &mut tracks {
            idx.sort_by_key(|&i| self.events[i].t_ns);
        }
        tracks
    }

    /// Pairs begin and end events per track (see the module docs).
    pub fn pair(&self) -> Pairing {
        let mut out = Pairing::default();
        for (_, idx) in self.tracks() {
            // Open begins of this track: nesting is allowed (a wait inside
            // a task body), so an end closes the innermost matching begin.
            let mut open_tasks: Vec<&TraceEvent> = Vec::new();
            let mut open_waits: Vec<&TraceEvent> = Vec::new();
            for i in idx {
                let e = &self.events[i];
                let (open, is_end, same): (_, _, fn(&TraceEvent, &TraceEvent) -> bool) =
                    match e.kind {
                        EventKind::TaskStart => (&mut open_tasks, false, |_, _| true),
                        EventKind::TaskEnd => (&mut open_tasks, true, |a, b| {
                            a.task == b.task && a.iteration == b.iteration
                        }),
                        EventKind::WaitBegin => (&mut open_waits, false, |_, _| true),
                        EventKind::WaitEnd => (&mut open_waits, true, |a, b| a.arg == b.arg),
                        _ => continue,
                    };
                if !is_end {
                    open.push(e);
                    continue;
                }
                match open.iter().rposition(|b| same(b, e)) {
                    Some(k) => {
                        let b = open.remove(k);
                        let span = Span {
                            pe: e.pe,
                            block: e.block,
                            role: b.role,
                            task: b.task,
                            iteration: b.iteration,
                            start_ns: b.t_ns,
                            end_ns: e.t_ns,
                            arg: b.arg,
                        };
                        if matches!(e.kind, EventKind::TaskEnd) {
                            out.tasks.push(Span { arg: 0, ..span });
                        } else {
                            out.waits.push(span);
                        }
                    }
                    None => out.unmatched += 1,
                }
            }
            out.unmatched += (open_tasks.len() + open_waits.len()) as u64;
        }
        let key = |s: &Span| (s.pe, s.block, s.start_ns);
        out.tasks.sort_by_key(key);
        out.waits.sort_by_key(key);
        out
    }

    /// Pairs every `SignalSeen` with the `SignalSent` of the same signal to
    /// the same PE and the same producer instance (iteration), sent at or
    /// before it; when that send is not in the trace (dropped, or covered),
    /// with the most recent not yet paired older send. Signals are
    /// monotonic counters, so one sighting can cover several sends; the
    /// sends it covers get no flow of their own. (Pairing by time alone
    /// once crossed arrows: a sighting of iteration 18 drawn from the send
    /// of 19.)
    pub fn flows(&self) -> Vec<Flow> {
        // (to_pe, signal) → sends (time, event index, taken) in time order.
        type Sends = HashMap<(u32, u64), Vec<(u64, usize, bool)>>;
        let mut sends = Sends::new();
        let mut seen: Vec<usize> = Vec::new();
        for (i, e) in self.events.iter().enumerate() {
            match e.kind {
                EventKind::SignalSent { to_pe } => sends
                    .entry((to_pe, e.arg))
                    .or_default()
                    .push((e.t_ns, i, false)),
                EventKind::SignalSeen => seen.push(i),
                _ => {}
            }
        }
        for v in sends.values_mut() {
            v.sort_by_key(|&(t, i, _)| (t, i));
        }
        seen.sort_by_key(|&i| (self.events[i].t_ns, i));
        let mut flows = Vec::new();
        for s in seen {
            let e = &self.events[s];
            let Some(v) = sends.get_mut(&(e.pe, e.arg)) else {
                continue;
            };
            let same_instance = v.iter().rposition(|&(t, i, taken)| {
                !taken && t <= e.t_ns && self.events[i].iteration == e.iteration
            });
            let older = || v.iter().rposition(|&(t, _, taken)| !taken && t <= e.t_ns);
            if let Some(k) = same_instance.or_else(older) {
                v[k].2 = true;
                flows.push(Flow {
                    sent: v[k].1,
                    seen: s,
                });
            }
        }
        flows
    }

    /// The Chrome trace event format (see [`chrome`](self) docs): one
    /// process per PE, one thread per block, complete events for task
    /// instances and waits, flow events for signals.
    pub fn to_chrome_json(&self) -> serde_json::Value {
        chrome::to_chrome_json(self)
    }

    /// Writes [`Trace::to_chrome_json`] to `path`.
    pub fn write_chrome_json(&self, path: &Path) -> crate::Result<()> {
        let io = |source| crate::Error::Io {
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut w = std::io::BufWriter::new(file);
        serde_json::to_writer(&mut w, &self.to_chrome_json())
            .map_err(|e| io(std::io::Error::other(e)))?;
        std::io::Write::flush(&mut w).map_err(io)
    }

    /// Busy/idle per block, compute/communication overlap, waits per word
    /// and the critical path of the slowest iteration, given the graph's
    /// edges as `(from_task, to_task, distance)`.
    pub fn summary(&self, edges: &[(u32, u32, u32)]) -> TraceSummary {
        summary::summarize(self, edges)
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// An event with the given fields on PE 0.
    pub fn ev(
        t_ns: u64,
        block: u32,
        role: Role,
        task: u32,
        it: u32,
        kind: EventKind,
    ) -> TraceEvent {
        TraceEvent {
            t_ns,
            pe: 0,
            block,
            role,
            task,
            iteration: it,
            kind,
            arg: 0,
        }
    }

    /// A task instance `[start, end)` on `block`.
    pub fn task(t: &mut Trace, block: u32, role: Role, task: u32, it: u32, start: u64, end: u64) {
        t.events
            .push(ev(start, block, role, task, it, EventKind::TaskStart));
        t.events
            .push(ev(end, block, role, task, it, EventKind::TaskEnd));
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn pairing_matches_ends_to_their_own_begins_and_counts_orphans() {
        let mut t = Trace::new();
        task(&mut t, 1, Role::Compute, 7, 0, 100, 200);
        // A wait nested in a task body.
        task(&mut t, 1, Role::Compute, 8, 0, 300, 500);
        t.events.push(TraceEvent {
            arg: 42,
            ..ev(350, 1, Role::Compute, 8, 0, EventKind::WaitBegin)
        });
        t.events.push(TraceEvent {
            arg: 42,
            ..ev(400, 1, Role::Compute, 8, 0, EventKind::WaitEnd)
        });
        // An end whose begin was dropped, and a begin without end.
        t.events
            .push(ev(600, 1, Role::Compute, 9, 0, EventKind::TaskEnd));
        t.events
            .push(ev(700, 2, Role::Compute, 9, 1, EventKind::TaskStart));
        let p = t.pair();
        assert_eq!(
            p.tasks
                .iter()
                .map(|s| (s.task, s.start_ns, s.end_ns))
                .collect::<Vec<_>>(),
            vec![(7, 100, 200), (8, 300, 500)]
        );
        assert_eq!(p.waits.len(), 1);
        assert_eq!((p.waits[0].arg, p.waits[0].duration_ns()), (42, 50));
        assert_eq!(p.unmatched, 2);
    }

    #[test]
    fn a_sighting_pairs_with_the_latest_earlier_send_to_its_pe() {
        let sent = |t, to_pe, sig| TraceEvent {
            t_ns: t,
            pe: 0,
            block: 0,
            role: Role::Comm,
            task: 0,
            iteration: 0,
            kind: EventKind::SignalSent { to_pe },
            arg: sig,
        };
        let seen = |t, pe, sig| TraceEvent {
            t_ns: t,
            pe,
            block: 3,
            role: Role::Comm,
            task: 0,
            iteration: 0,
            kind: EventKind::SignalSeen,
            arg: sig,
        };
        let t = Trace {
            events: vec![
                sent(10, 1, 5), // 0: covered by the sighting at 40
                sent(20, 1, 5), // 1: paired with 3
                sent(30, 2, 5), // 2: other PE: never seen
                seen(40, 1, 5), // 3
                seen(45, 1, 6), // 4: other signal: no send
                sent(50, 1, 5), // 5: paired with 6
                seen(60, 1, 5), // 6
            ],
            ..Trace::default()
        };
        assert_eq!(
            t.flows(),
            vec![Flow { sent: 1, seen: 3 }, Flow { sent: 5, seen: 6 }]
        );
    }

    /// Two sends before two sightings (of iterations 18 and 19, on two
    /// blocks): each sighting pairs with its own instance's send; by time
    /// alone the arrows crossed (18's sighting drawn from 19's send).
    #[test]
    fn a_sighting_pairs_with_the_send_of_its_own_instance() {
        let ev = |t, it, kind| TraceEvent {
            t_ns: t,
            pe: 1,
            block: if t < 30 { 0 } else { t as u32 / 10 },
            role: Role::Comm,
            task: 0,
            iteration: it,
            kind,
            arg: 8,
        };
        let sent = EventKind::SignalSent { to_pe: 1 };
        let t = Trace {
            events: vec![
                ev(10, 18, sent),
                ev(20, 19, sent),
                ev(30, 18, EventKind::SignalSeen),
                ev(40, 19, EventKind::SignalSeen),
            ],
            ..Trace::default()
        };
        assert_eq!(
            t.flows(),
            vec![Flow { sent: 0, seen: 2 }, Flow { sent: 1, seen: 3 }]
        );
    }
}
