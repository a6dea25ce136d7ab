//! Device trace rings → [`TraceEvent`]s.
//!
//! A traced GPU run gives every block of every PE a ring of
//! [`TraceRecord`]s (layout: [`TraceRingHeader`]; protocol:
//! `device/include/autarky/trace.cuh`). After the kernel ended the host
//! downloads each PE's area and decodes it here:
//!
//! - a ring whose header counts `head` appends holds the last
//!   `min(head, cap)` of them, the oldest at `head % cap` once it wrapped;
//!   the other `head − min(head, cap)` were overwritten and are counted in
//!   [`Trace::dropped`];
//! - each record becomes one event of its block's track, in append order
//!   (so events of one block keep the order the block recorded them in);
//!   local task ids become global ones through the PE's `global` table
//!   (`LoweredGraph::global`; a proxy's is its producer's); a signal's
//!   task is the producer named by the destination PE's proxy table;
//! - a record that cannot be a real one (an unknown kind, another block's
//!   number, a task id outside the tables) is left out and counted in
//!   [`Trace::dropped`] too, with a warning: nothing is lost silently and
//!   nothing is invented.

use autarky_shared::{
    trace_kind_block_parts, AbiEnum, TraceKind, TraceRecord, TraceRingHeader, TASK_NONE,
};

use super::{EventKind, Role, Trace, TraceEvent};

/// One PE's trace area as downloaded from the device.
#[derive(Clone, Copy, Debug)]
pub struct PeRings<'a> {
    /// The PE.
    pub pe: u32,
    /// Blocks `[0, comm_blocks)` of the PE have the comm role.
    pub comm_blocks: u32,
    /// Records per ring (a power of two; `RunParams::trace_cap`).
    pub records_per_block: u32,
    /// The whole area: for every block, its header (as a record-sized
    /// entry) then its `records_per_block` records.
    pub area: &'a [TraceRecord],
    /// Global task id of every local task and proxy of the PE.
    pub global: &'a [u32],
}

/// A trace area whose shape does not match its description (a host bug:
/// the area was not allocated for these parameters).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    /// `records_per_block` is zero or not a power of two.
    #[error("PE {pe}: {records_per_block} records per trace ring is not a power of two")]
    Capacity {
        /// The PE.
        pe: u32,
        /// The bad capacity.
        records_per_block: u32,
    },
    /// The area's length is not a whole number of rings.
    #[error("PE {pe}: a trace area of {len} records is not a whole number of rings of {ring} (header + records)")]
    Length {
        /// The PE.
        pe: u32,
        /// Records in the area.
        len: usize,
        /// Entries per ring.
        ring: usize,
    },
}

fn event_kind(kind: TraceKind, to_pe: u32) -> EventKind {
    match kind {
        TraceKind::TaskStart => EventKind::TaskStart,
        TraceKind::TaskEnd => EventKind::TaskEnd,
        TraceKind::WaitBegin => EventKind::WaitBegin,
        TraceKind::WaitEnd => EventKind::WaitEnd,
        TraceKind::SignalSent => EventKind::SignalSent { to_pe },
        TraceKind::SignalSeen => EventKind::SignalSeen,
        TraceKind::PulsePack => EventKind::PulsePack,
        TraceKind::PulsePut => EventKind::PulsePut,
    }
}

/// Decodes every PE's rings into one trace (without labels).
pub fn decode(pes: &[PeRings<'_>]) -> Result<Trace, DecodeError> {
    let mut trace = Trace::new();
    let mut malformed = 0u64;
    for r in pes {
        let cap = r.records_per_block;
        if cap == 0 || !cap.is_power_of_two() {
            return Err(DecodeError::Capacity {
                pe: r.pe,
                records_per_block: cap,
            });
        }
        let ring = cap as usize + 1;
        if r.area.len() % ring != 0 {
            return Err(DecodeError::Length {
                pe: r.pe,
                len: r.area.len(),
                ring,
            });
        }
        for (block, entries) in r.area.chunks_exact(ring).enumerate() {
            let block = block as u32;
            let header: TraceRingHeader = bytemuck::cast(entries[0]);
            let records = &entries[1..];
            let kept = header.head.min(cap as u64);
            trace.dropped += header.head - kept;
            let first = if header.head > cap as u64 {
                (header.head % cap as u64) as usize
            } else {
                0
            };
            let role = if block < r.comm_blocks {
                Role::Comm
            } else {
                Role::Compute
            };
            for k in 0..kept as usize {
                let rec = &records[(first + k) % cap as usize];
                match decode_record(pes, r, block, role, rec) {
                    Some(e) => trace.events.push(e),
                    None => malformed += 1,
                }
            }
        }
    }
    if malformed > 0 {
        tracing::warn!(
            "{malformed} device trace record(s) could not be decoded; counted as dropped"
        );
    }
    trace.dropped += malformed;
    Ok(trace)
}

/// The event a record of `block` on `ring.pe` stands for, or `None` when
/// the record cannot be a real one.
fn decode_record(
    all: &[PeRings<'_>],
    ring: &PeRings<'_>,
    block: u32,
    role: Role,
    rec: &TraceRecord,
) -> Option<TraceEvent> {
    let (kind, rec_block) = trace_kind_block_parts(rec.kind_block);
    let kind = TraceKind::from_u32(kind)?;
    if rec_block != block {
        return None;
    }
    let local = |t: u32| -> Option<u32> {
        if t == TASK_NONE {
            Some(TASK_NONE)
        } else {
            ring.global.get(t as usize).copied()
        }
    };
    let task = match kind {
        // The producer, named by the destination's proxy table (unknown
        // when the destination is not among the decoded PEs).
        TraceKind::SignalSent => all
            .iter()
            .find(|p| p.pe == rec.pe)
            .map_or(Some(TASK_NONE), |dest| {
                dest.global.get(rec.arg as usize).copied()
            })?,
        _ => local(rec.task)?,
    };
    Some(TraceEvent {
        t_ns: rec.t_ns,
        pe: ring.pe,
        block,
        role,
        task,
        iteration: rec.iteration,
        kind: event_kind(kind, rec.pe),
        arg: rec.arg,
    })
}

#[cfg(test)]
mod tests {
    use autarky_shared::{trace_kind_block, trace_wait_word, WaitKind};

    use super::*;

    /// A record of `kind` by `block` at `t` for local task `task`.
    fn rec(t: u64, block: u32, kind: TraceKind, task: u32, it: u32, arg: u64) -> TraceRecord {
        TraceRecord {
            t_ns: t,
            task,
            iteration: it,
            arg,
            kind_block: trace_kind_block(kind, block),
            pe: 0,
        }
    }

    fn header(head: u64) -> TraceRecord {
        bytemuck::cast(TraceRingHeader { head, _pad: [0; 3] })
    }

    /// An area of `blocks` rings of `cap`, block `b` appending `appends[b]`
    /// task start/end pairs' worth of records (as the device would: append
    /// k goes to slot k % cap).
    fn area(cap: u32, appends: &[Vec<TraceRecord>]) -> Vec<TraceRecord> {
        let mut out = Vec::new();
        for recs in appends {
            let mut ring = vec![TraceRecord::default(); cap as usize];
            for (k, r) in recs.iter().enumerate() {
                ring[k % cap as usize] = *r;
            }
            out.push(header(recs.len() as u64));
            out.extend(ring);
        }
        out
    }

    fn instances(block: u32, n: u32, t0: u64) -> Vec<TraceRecord> {
        (0..n)
            .flat_map(|i| {
                [
                    rec(t0 + 10 * i as u64, block, TraceKind::TaskStart, 0, i, 0),
                    rec(t0 + 10 * i as u64 + 5, block, TraceKind::TaskEnd, 0, i, 0),
                ]
            })
            .collect()
    }

    #[test]
    fn a_ring_that_did_not_wrap_decodes_every_record_in_order() {
        let a = area(8, &[vec![], instances(1, 3, 100)]);
        let global = [7u32];
        let t = decode(&[PeRings {
            pe: 2,
            comm_blocks: 1,
            records_per_block: 8,
            area: &a,
            global: &global,
        }])
        .unwrap();
        assert_eq!(t.dropped, 0);
        assert_eq!(t.events.len(), 6);
        assert!(t
            .events
            .iter()
            .all(|e| e.pe == 2 && e.block == 1 && e.role == Role::Compute && e.task == 7));
        let p = t.pair();
        assert_eq!(p.tasks.len(), 3);
        assert_eq!(p.unmatched, 0);
        assert_eq!(
            p.tasks.iter().map(|s| s.iteration).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn a_wrapped_ring_keeps_the_newest_records_and_counts_the_rest_dropped() {
        // Block 0 (comm) appends 10 records into a ring of 4; block 1 two.
        let a = area(4, &[instances(0, 5, 0), instances(1, 1, 1000)]);
        let global = [3u32];
        let t = decode(&[PeRings {
            pe: 0,
            comm_blocks: 1,
            records_per_block: 4,
            area: &a,
            global: &global,
        }])
        .unwrap();
        assert_eq!(t.dropped, 10 - 4, "overwritten records are counted");
        let b0: Vec<_> = t.events.iter().filter(|e| e.block == 0).collect();
        // The last four appends, oldest first: instances 3 and 4.
        assert_eq!(
            b0.iter().map(|e| (e.iteration, e.kind)).collect::<Vec<_>>(),
            vec![
                (3, EventKind::TaskStart),
                (3, EventKind::TaskEnd),
                (4, EventKind::TaskStart),
                (4, EventKind::TaskEnd)
            ]
        );
        assert!(b0.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
        assert!(b0.iter().all(|e| e.role == Role::Comm));
        assert_eq!(t.events.iter().filter(|e| e.block == 1).count(), 2);
    }

    #[test]
    fn a_ring_wrapped_exactly_k_times_starts_at_slot_zero() {
        let a = area(4, &[instances(0, 4, 0)]);
        let t = decode(&[PeRings {
            pe: 0,
            comm_blocks: 0,
            records_per_block: 4,
            area: &a,
            global: &[0],
        }])
        .unwrap();
        assert_eq!(t.dropped, 4);
        assert_eq!(
            t.events.iter().map(|e| e.iteration).collect::<Vec<_>>(),
            vec![2, 2, 3, 3]
        );
    }

    #[test]
    fn waits_signals_and_proxies_name_global_tasks() {
        // PE 0 task 1 (global 10) signals proxy 2 on PE 1, whose proxy
        // table names global 10; PE 1's relay sees it.
        let word = trace_wait_word(WaitKind::QueueItem, 3);
        let pe0 = area(
            8,
            &[vec![
                rec(1, 0, TraceKind::WaitBegin, TASK_NONE, 0, word),
                rec(2, 0, TraceKind::WaitEnd, TASK_NONE, 0, word),
                TraceRecord {
                    pe: 1,
                    ..rec(3, 0, TraceKind::SignalSent, TASK_NONE, 4, 2)
                },
            ]],
        );
        let pe1 = area(
            8,
            &[vec![TraceRecord {
                pe: 1,
                ..rec(5, 0, TraceKind::SignalSeen, 2, 4, 2)
            }]],
        );
        let (g0, g1) = ([9u32, 10], [11u32, 12, 10]);
        let t = decode(&[
            PeRings {
                pe: 0,
                comm_blocks: 1,
                records_per_block: 8,
                area: &pe0,
                global: &g0,
            },
            PeRings {
                pe: 1,
                comm_blocks: 1,
                records_per_block: 8,
                area: &pe1,
                global: &g1,
            },
        ])
        .unwrap();
        assert_eq!(t.dropped, 0);
        let kinds: Vec<_> = t.events.iter().map(|e| (e.pe, e.kind, e.task)).collect();
        assert_eq!(
            kinds,
            vec![
                (0, EventKind::WaitBegin, TASK_NONE),
                (0, EventKind::WaitEnd, TASK_NONE),
                (0, EventKind::SignalSent { to_pe: 1 }, 10),
                (1, EventKind::SignalSeen, 10),
            ]
        );
        assert_eq!(t.pair().waits[0].arg, word);
        assert_eq!(t.flows().len(), 1, "the signal pairs into a flow");
    }

    #[test]
    fn impossible_records_are_counted_as_dropped_not_decoded() {
        let a = area(
            8,
            &[vec![
                rec(1, 0, TraceKind::TaskStart, 0, 0, 0),
                TraceRecord {
                    kind_block: 99,
                    ..rec(2, 0, TraceKind::TaskEnd, 0, 0, 0)
                },
                rec(3, 5, TraceKind::TaskEnd, 0, 0, 0), // another block's number
                rec(4, 0, TraceKind::TaskEnd, 40, 0, 0), // no such task
            ]],
        );
        let t = decode(&[PeRings {
            pe: 0,
            comm_blocks: 0,
            records_per_block: 8,
            area: &a,
            global: &[0],
        }])
        .unwrap();
        assert_eq!(t.events.len(), 1);
        assert_eq!(t.dropped, 3);
    }

    #[test]
    fn a_mis_shaped_area_is_an_error() {
        let a = vec![TraceRecord::default(); 11];
        let ring = |cap, area| PeRings {
            pe: 3,
            comm_blocks: 0,
            records_per_block: cap,
            area,
            global: &[],
        };
        assert_eq!(
            decode(&[ring(3, &a)]).unwrap_err(),
            DecodeError::Capacity {
                pe: 3,
                records_per_block: 3
            }
        );
        assert_eq!(
            decode(&[ring(4, &a)]).unwrap_err(),
            DecodeError::Length {
                pe: 3,
                len: 11,
                ring: 5
            }
        );
    }
}
