//! [`Trace`] → Chrome trace event format (the JSON that `chrome://tracing`
//! and Perfetto open).
//!
//! - One process per PE (`pid` = PE, named `PE n`), one thread per block
//!   (`tid` = block, named `block n (compute)`), through `process_name` /
//!   `thread_name` metadata (`ph: "M"`).
//! - Task instances and waits: complete events (`ph: "X"`, `ts` and `dur`
//!   in µs from the trace's first event), category `task` or `wait`.
//! - Signals: a zero-length complete event at the sender and one at the
//!   receiver, joined by a flow (`ph: "s"` at the sender, `ph: "f"` with
//!   `bp: "e"` at the receiver, same `id`).
//! - Pulses: instant events (`ph: "i"`, thread scope).
//!
//! Every event has `name`, `ph`, `ts`, `pid` and `tid`; events are sorted
//! by `ts`, so timestamps only increase along every track. Unpaired begin or
//! end events and dropped events are reported in `otherData`, never drawn.

use serde_json::{json, Value};

use super::{EventKind, Role, Trace};

/// µs from `t0` for the `ts` field (Chrome's unit), keeping ns precision.
fn us(t_ns: u64, t0: u64) -> f64 {
    (t_ns - t0) as f64 / 1000.0
}

pub(super) fn to_chrome_json(trace: &Trace) -> Value {
    let t0 = trace.events.iter().map(|e| e.t_ns).min().unwrap_or(0);
    let mut meta: Vec<Value> = Vec::new();
    let mut events: Vec<(f64, u8, Value)> = Vec::new();

    // Metadata: name every PE and block that recorded anything.
    let tracks = trace.tracks();
    let mut last_pe = None;
    for ((pe, block), idx) in &tracks {
        if last_pe != Some(*pe) {
            meta.push(
                json!({"name": "process_name", "ph": "M", "ts": 0, "pid": pe, "tid": 0,
                             "args": {"name": format!("PE {pe}")}}),
            );
            last_pe = Some(*pe);
        }
        let role = trace.events[idx[0]].role;
        meta.push(
            json!({"name": "thread_name", "ph": "M", "ts": 0, "pid": pe, "tid": block,
                         "args": {"name": format!("block {block} ({})", role.name())}}),
        );
        // Comm blocks first, then compute blocks in block order.
        let sort = match role {
            Role::Comm => *block as i64 - (1 << 32),
            Role::Compute => *block as i64,
        };
        meta.push(
            json!({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": pe, "tid": block,
                         "args": {"sort_index": sort}}),
        );
    }

    let p = trace.pair();
    for s in &p.tasks {
        events.push((
            us(s.start_ns, t0),
            // At equal timestamps the longer, enclosing slice goes first.
            0,
            json!({"name": trace.label(s.task), "cat": "task", "ph": "X",
                   "ts": us(s.start_ns, t0), "dur": us(s.end_ns, s.start_ns),
                   "pid": s.pe, "tid": s.block,
                   "args": {"task": s.task, "iteration": s.iteration}}),
        ));
    }
    for s in &p.waits {
        events.push((
            us(s.start_ns, t0),
            1,
            json!({"name": format!("wait {}", super::describe_word(s.arg)), "cat": "wait", "ph": "X",
                   "ts": us(s.start_ns, t0), "dur": us(s.end_ns, s.start_ns),
                   "pid": s.pe, "tid": s.block,
                   "args": {"word": s.arg, "task": s.task, "iteration": s.iteration}}),
        ));
    }
    for e in &trace.events {
        let name = match e.kind {
            EventKind::SignalSent { to_pe } => format!("signal {} → PE {to_pe}", e.arg),
            EventKind::SignalSeen => format!("signal {} seen", e.arg),
            EventKind::PulsePack => format!("pulse {} pack", e.arg),
            EventKind::PulsePut => format!("pulse {} put", e.arg),
            _ => continue,
        };
        let base = json!({"name": name, "cat": "signal", "ts": us(e.t_ns, t0),
                          "pid": e.pe, "tid": e.block,
                          "args": {"task": e.task, "iteration": e.iteration, "id": e.arg}});
        let v = match e.kind {
            EventKind::PulsePack | EventKind::PulsePut => with(
                base,
                &[
                    ("ph", json!("i")),
                    ("s", json!("t")),
                    ("cat", json!("pulse")),
                ],
            ),
            // A zero-length slice for the flow to bind to.
            _ => with(base, &[("ph", json!("X")), ("dur", json!(0.0))]),
        };
        events.push((us(e.t_ns, t0), 2, v));
    }
    for (id, f) in trace.flows().iter().enumerate() {
        let (s, r) = (&trace.events[f.sent], &trace.events[f.seen]);
        let name = format!("signal {}", s.arg);
        events.push((
            us(s.t_ns, t0),
            3,
            json!({"name": name, "cat": "signal", "ph": "s", "id": id,
                   "ts": us(s.t_ns, t0), "pid": s.pe, "tid": s.block}),
        ));
        events.push((
            us(r.t_ns, t0),
            3,
            json!({"name": name, "cat": "signal", "ph": "f", "bp": "e", "id": id,
                   "ts": us(r.t_ns, t0), "pid": r.pe, "tid": r.block}),
        ));
    }
    // Stable sort: by time, then enclosing slices before what they contain.
    events.sort_by(|a, b| {
        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then_with(|| {
            let dur = |v: &Value| v.get("dur").and_then(Value::as_f64).unwrap_or(0.0);
            dur(&b.2).total_cmp(&dur(&a.2))
        })
    });
    meta.extend(events.into_iter().map(|(_, _, v)| v));
    json!({
        "traceEvents": meta,
        "displayTimeUnit": "ns",
        "otherData": {
            "dropped_events": trace.dropped,
            "unmatched_events": p.unmatched,
        },
    })
}

/// `base` with `fields` set.
fn with(mut base: Value, fields: &[(&str, Value)]) -> Value {
    if let Value::Object(m) = &mut base {
        for (k, v) in fields {
            m.insert((*k).to_string(), v.clone());
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::test_util::*;
    use super::super::{EventKind, Role, Trace, TraceEvent};
    use serde_json::Value;

    /// Two blocks, nested waits, signals across PEs, a pulse, an orphan.
    fn sample() -> Trace {
        let mut t = Trace {
            labels: vec!["a".into(), "b".into()],
            dropped: 3,
            ..Trace::default()
        };
        task(&mut t, 1, Role::Compute, 0, 0, 1_000, 5_000);
        task(&mut t, 1, Role::Compute, 1, 0, 5_000, 9_000);
        task(&mut t, 2, Role::Compute, 1, 1, 2_000, 3_000);
        task(&mut t, 0, Role::Comm, 0, 1, 2_500, 8_000);
        let mut w = ev(6_000, 1, Role::Compute, 1, 0, EventKind::WaitBegin);
        w.arg = 11;
        t.events.push(w);
        t.events.push(TraceEvent {
            t_ns: 7_000,
            kind: EventKind::WaitEnd,
            ..w
        });
        t.events.push(TraceEvent {
            arg: 4,
            ..ev(
                3_000,
                0,
                Role::Comm,
                0,
                1,
                EventKind::SignalSent { to_pe: 1 },
            )
        });
        t.events.push(TraceEvent {
            pe: 1,
            arg: 4,
            ..ev(4_000, 5, Role::Comm, 0, 1, EventKind::SignalSeen)
        });
        t.events
            .push(ev(3_500, 0, Role::Comm, 0, 1, EventKind::PulsePut));
        t.events
            .push(ev(9_500, 2, Role::Compute, 1, 2, EventKind::TaskStart));
        // Recorded out of order on purpose.
        t.events.reverse();
        t
    }

    fn events(v: &Value) -> &Vec<Value> {
        v["traceEvents"].as_array().expect("traceEvents array")
    }

    #[test]
    fn every_event_has_the_required_fields() {
        let v = sample().to_chrome_json();
        let evs = events(&v);
        assert!(evs.len() > 10);
        for e in evs {
            for f in ["name", "ph", "ts", "pid", "tid"] {
                assert!(e.get(f).is_some(), "event without {f}: {e}");
            }
            if e["ph"] == "X" {
                assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
            }
        }
        assert_eq!(v["otherData"]["dropped_events"], 3);
        assert_eq!(v["otherData"]["unmatched_events"], 1);
        // Names come from the labels; a thread name for every block seen.
        assert!(evs.iter().any(|e| e["ph"] == "X" && e["name"] == "b"));
        let threads: Vec<_> = evs
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
            .collect();
        assert_eq!(threads, vec![(0, 0), (0, 1), (0, 2), (1, 5)]);
    }

    #[test]
    fn timestamps_only_increase_along_every_track_and_slices_nest() {
        let v = sample().to_chrome_json();
        let mut last: HashMap<(u64, u64), f64> = HashMap::new();
        let mut open: HashMap<(u64, u64), Vec<f64>> = HashMap::new();
        for e in events(&v).iter().filter(|e| e["ph"] != "M") {
            let k = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            let ts = e["ts"].as_f64().unwrap();
            assert!(
                ts >= *last.get(&k).unwrap_or(&0.0),
                "ts went back on {k:?}: {e}"
            );
            last.insert(k, ts);
            if e["ph"] == "X" {
                // Complete events on one track either nest or follow each
                // other (what Perfetto needs to draw them).
                let stack = open.entry(k).or_default();
                while stack.last().is_some_and(|&end| end <= ts) {
                    stack.pop();
                }
                let end = ts + e["dur"].as_f64().unwrap();
                if let Some(&outer) = stack.last() {
                    assert!(end <= outer, "slice {e} overlaps its enclosing slice");
                }
                stack.push(end);
            }
        }
        // The orphan TaskStart at 9.5 µs draws nothing: 4 + 1 instances.
        let slices = events(&v)
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == "task")
            .count();
        assert_eq!(slices, 4);
    }

    #[test]
    fn flow_events_pair_up_from_sender_to_receiver() {
        let v = sample().to_chrome_json();
        let evs = events(&v);
        let starts: Vec<_> = evs.iter().filter(|e| e["ph"] == "s").collect();
        let ends: Vec<_> = evs.iter().filter(|e| e["ph"] == "f").collect();
        assert_eq!((starts.len(), ends.len()), (1, 1));
        let (s, f) = (starts[0], ends[0]);
        assert_eq!(s["id"], f["id"]);
        assert_eq!((s["pid"].as_u64(), s["tid"].as_u64()), (Some(0), Some(0)));
        assert_eq!((f["pid"].as_u64(), f["tid"].as_u64()), (Some(1), Some(5)));
        assert_eq!(f["bp"], "e");
        assert!(f["ts"].as_f64() > s["ts"].as_f64());
        // Each end binds to a zero-length slice at the same place and time.
        for fe in [s, f] {
            assert!(evs.iter().any(|e| e["ph"] == "X"
                && e["pid"] == fe["pid"]
                && e["tid"] == fe["tid"]
                && e["ts"] == fe["ts"]));
        }
    }
}
