//! One grid's result, time per iteration in one process, over 2 MPI
//! ranks through CUDA IPC and over 2 ranks through NVSHMEM, their ratios,
//! the targets (issue 12 item 4: IPC within 5 % of one process,
//! NVSHMEM within 20 %), the table and the JSON record. No GPU or MPI
//! code here (tests/jacobi_mpi_bench.rs runs it on made-up times).

use serde_json::json;

use crate::config::Grid;
use crate::report::Spread;

/// The slowest IPC may be against one process and still meet the target:
/// IPC median ≤ this × one-process median.
pub const TARGET_RATIO: f64 = 1.05;

/// The target as printed.
pub const TARGET: &str = "2 ranks over IPC within 5 % of one process (time per iteration)";

/// The slowest NVSHMEM may be against one process and still meet its
/// target: NVSHMEM median ≤ this × one-process median.
pub const NVSHMEM_TARGET_RATIO: f64 = 1.20;

/// The NVSHMEM target as printed.
pub const NVSHMEM_TARGET: &str =
    "2 ranks over NVSHMEM within 20 % of one process (time per iteration)";

/// What became of a case's `2 ranks NVSHMEM` side. Every rank holds the
/// same variant (the ranks agree before choosing one). Built without the
/// `nvshmem` feature, the bench holds only [`NvshmemSide::NotBuilt`].
#[cfg_attr(not(feature = "nvshmem"), allow(dead_code))]
#[derive(Clone, Debug, PartialEq)]
pub enum NvshmemSide {
    /// The bench was built without `--features nvshmem`.
    NotBuilt,
    /// Not run, and why: NVSHMEM is not usable on some rank (no toolchain,
    /// no host library), or an earlier case's NVSHMEM side failed.
    Skipped(String),
    /// It ran and failed (the runtime's build, a run, or a grid that is
    /// not bitwise the IPC run's); the error. The bench exits non-zero.
    Failed(String),
    /// Timed.
    Timed {
        /// How the device reaches the other rank
        /// (`Runtime::peer_transports`: `"nvshmem-p2p"` through
        /// `nvshmem_ptr`, `"nvshmem"` through NVSHMEM puts and signals).
        peer: String,
        /// Seconds per run of every rank, `[rank][rep]`.
        ranks: Vec<Vec<f64>>,
    },
}

impl NvshmemSide {
    /// One word for the JSON record and the table.
    pub fn status(&self) -> &'static str {
        match self {
            NvshmemSide::NotBuilt => "not built",
            NvshmemSide::Skipped(_) => "skipped",
            NvshmemSide::Failed(_) => "FAILED",
            NvshmemSide::Timed { .. } => "timed",
        }
    }

    /// Why it was not timed (`None` when it was).
    pub fn reason(&self) -> Option<String> {
        match self {
            NvshmemSide::NotBuilt => Some(
                "this bench was built without NVSHMEM (cargo bench --features mpi,nvshmem)".into(),
            ),
            NvshmemSide::Skipped(why) | NvshmemSide::Failed(why) => Some(why.clone()),
            NvshmemSide::Timed { .. } => None,
        }
    }
}

/// One grid's timed runs.
pub struct Case {
    /// `<gpu>/jacobi2d-mpi/<strong|weak>/<n>`.
    pub name: String,
    /// The grid.
    pub grid: Grid,
    /// Iterations per timed run.
    pub iterations: u32,
    /// One process, 2 GPUs: seconds per run (device events on GPU 0).
    pub one_process: Vec<f64>,
    /// 2 ranks over IPC: seconds per run of every rank, `[rank][rep]`
    /// (each rank's device events on its own GPU).
    pub ranks: Vec<Vec<f64>>,
    /// 2 ranks over NVSHMEM (timed like IPC), or why not.
    pub nvshmem: NvshmemSide,
    /// The correctness checks' summary.
    pub checked: String,
}

/// Seconds of each 2-rank rep: the slowest rank's (the run lasts until
/// both kernels have ended, and a rank that launched earlier waits for the
/// other's halos inside its kernel). `None` without ranks, or when the
/// ranks hold different numbers of reps.
pub fn slowest_per_rep(ranks: &[Vec<f64>]) -> Option<Vec<f64>> {
    let first = ranks.first()?;
    if ranks.iter().any(|r| r.len() != first.len()) {
        return None;
    }
    Some(
        (0..first.len())
            .map(|i| ranks.iter().map(|r| r[i]).fold(f64::MIN, f64::max))
            .collect(),
    )
}

/// `Err` unless `got` is bit for bit `want` (same length, same bits in
/// every cell: -0.0 is not 0.0, and NaN payloads count): the bench refuses
/// to time a side that computes something else. `side` names the grid
/// checked, `against` the reference, both as printed.
pub fn check_bitwise(
    case: &str,
    side: &str,
    against: &str,
    got: &[f64],
    want: &[f64],
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{case}: the {side} grid has {} cells, the {against} grid {}; refusing to time wrong work",
            got.len(),
            want.len()
        ));
    }
    let diff = got
        .iter()
        .zip(want)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    if diff != 0 {
        return Err(format!(
            "{case}: the {side} grid differs from the {against} grid in {diff} of {} cells; refusing to time wrong work",
            got.len()
        ));
    }
    Ok(())
}

impl Case {
    /// A case with no runs yet (and no NVSHMEM side: [`NvshmemSide::NotBuilt`]).
    pub fn new(slug: &str, grid: Grid, iterations: u32) -> Case {
        Case {
            name: format!("{slug}/jacobi2d-mpi/{}/{}", grid.family, grid.n),
            grid,
            iterations,
            one_process: Vec::new(),
            ranks: Vec::new(),
            nvshmem: NvshmemSide::NotBuilt,
            checked: String::new(),
        }
    }

    fn us(&self, seconds: &[f64]) -> Option<Spread> {
        let v: Vec<f64> = seconds
            .iter()
            .map(|s| s * 1e6 / self.iterations as f64)
            .collect();
        Spread::of(&v)
    }

    /// Seconds of each IPC rep (the slower rank's: [`slowest_per_rep`]).
    pub fn ipc_seconds(&self) -> Option<Vec<f64>> {
        slowest_per_rep(&self.ranks)
    }

    /// Seconds of each NVSHMEM rep (the slower rank's), when timed.
    pub fn nvshmem_seconds(&self) -> Option<Vec<f64>> {
        match &self.nvshmem {
            NvshmemSide::Timed { ranks, .. } => slowest_per_rep(ranks),
            _ => None,
        }
    }

    /// µs per iteration in one process.
    pub fn one_process_spread(&self) -> Option<Spread> {
        self.us(&self.one_process)
    }

    /// µs per iteration over 2 ranks through IPC (slowest rank per rep).
    pub fn ipc_spread(&self) -> Option<Spread> {
        self.us(&self.ipc_seconds()?)
    }

    /// µs per iteration over 2 ranks through NVSHMEM (slowest rank per rep).
    pub fn nvshmem_spread(&self) -> Option<Spread> {
        self.us(&self.nvshmem_seconds()?)
    }

    fn over_one(&self, side: Option<Spread>) -> Option<f64> {
        let (one, side) = (self.one_process_spread()?, side?);
        (one.median > 0.0).then(|| side.median / one.median)
    }

    /// IPC median / one-process median (> 1: IPC slower).
    pub fn ratio(&self) -> Option<f64> {
        self.over_one(self.ipc_spread())
    }

    /// NVSHMEM median / one-process median (> 1: NVSHMEM slower).
    pub fn nvshmem_ratio(&self) -> Option<f64> {
        self.over_one(self.nvshmem_spread())
    }

    /// Target met: IPC median ≤ [`TARGET_RATIO`] × one-process median.
    pub fn verdict(&self) -> Option<bool> {
        Some(self.ratio()? <= TARGET_RATIO)
    }

    /// NVSHMEM target met: NVSHMEM median ≤ [`NVSHMEM_TARGET_RATIO`] ×
    /// one-process median.
    pub fn nvshmem_verdict(&self) -> Option<bool> {
        Some(self.nvshmem_ratio()? <= NVSHMEM_TARGET_RATIO)
    }

    /// The case's JSON record.
    pub fn to_json(&self) -> serde_json::Value {
        let (peer, nv_ranks) = match &self.nvshmem {
            NvshmemSide::Timed { peer, ranks } => (Some(peer.clone()), ranks.clone()),
            _ => (None, Vec::new()),
        };
        json!({
            "name": self.name,
            "family": self.grid.family,
            "n": self.grid.n,
            "ny": self.grid.ny,
            "nx": self.grid.nx,
            "iterations": self.iterations,
            "unit": "µs/iteration",
            "one_process": {
                "spread": self.one_process_spread(),
                "seconds_per_run": self.one_process,
            },
            "ipc_2_ranks": {
                "spread": self.ipc_spread(),
                "per_rank_spread": self.ranks.iter().map(|r| self.us(r)).collect::<Vec<_>>(),
                "seconds_per_run_per_rank": self.ranks,
            },
            "ratio_ipc_over_one_process": self.ratio(),
            "meets_target": self.verdict(),
            "nvshmem_2_ranks": {
                "status": self.nvshmem.status(),
                "reason": self.nvshmem.reason(),
                "peer_transport": peer,
                "spread": self.nvshmem_spread(),
                "per_rank_spread": nv_ranks.iter().map(|r| self.us(r)).collect::<Vec<_>>(),
                "seconds_per_run_per_rank": nv_ranks,
            },
            "ratio_nvshmem_over_one_process": self.nvshmem_ratio(),
            "meets_nvshmem_target": self.nvshmem_verdict(),
            "checked": self.checked,
        })
    }
}

fn cell(s: Option<Spread>) -> String {
    match s {
        Some(s) => format!("{:.3} [{:.3}–{:.3}]", s.median, s.min, s.max),
        None => "—".into(),
    }
}

fn verdict_cell(v: Option<bool>) -> String {
    match v {
        Some(true) => "ok".into(),
        Some(false) => "MISS".into(),
        None => "—".into(),
    }
}

/// How the timed cases' NVSHMEM runs reached the other rank (distinct
/// values, in case order): what the table header and the JSON report.
pub fn nvshmem_peers(cases: &[&Case]) -> Vec<String> {
    let mut peers: Vec<String> = Vec::new();
    for c in cases {
        if let NvshmemSide::Timed { peer, .. } = &c.nvshmem {
            if !peers.contains(peer) {
                peers.push(peer.clone());
            }
        }
    }
    peers
}

/// The table: µs per iteration side by side, the ratios and the verdicts.
/// An NVSHMEM side that was not timed says so in its cell ("not built",
/// "skipped", "FAILED"; [`nvshmem_notes`] says why).
pub fn table(cases: &[&Case]) -> String {
    let peers = nvshmem_peers(cases);
    let nv_header = if peers.is_empty() {
        "2 ranks NVSHMEM".to_string()
    } else {
        format!("2 ranks NVSHMEM ({})", peers.join(", "))
    };
    let mut lines = vec![vec![
        "case".to_string(),
        "grid".into(),
        "iters".into(),
        "one process (2 GPUs)".into(),
        "2 ranks IPC".into(),
        "ipc/one".into(),
        format!("target ≤ {TARGET_RATIO:.2}"),
        nv_header,
        "nvshmem/one".into(),
        format!("target ≤ {NVSHMEM_TARGET_RATIO:.2}"),
    ]];
    let ratio = |r: Option<f64>| r.map_or("—".into(), |r| format!("{r:.3}"));
    for c in cases {
        let nv = match &c.nvshmem {
            NvshmemSide::Timed { .. } => cell(c.nvshmem_spread()),
            other => other.status().into(),
        };
        lines.push(vec![
            c.name.clone(),
            format!("{}×{}", c.grid.ny, c.grid.nx),
            c.iterations.to_string(),
            cell(c.one_process_spread()),
            cell(c.ipc_spread()),
            ratio(c.ratio()),
            verdict_cell(c.verdict()),
            nv,
            ratio(c.nvshmem_ratio()),
            verdict_cell(c.nvshmem_verdict()),
        ]);
    }
    crate::report::render_table(lines)
}

/// Met / missed over the `decided` cases; `of` names them ("cases", or
/// "timed cases" when some were not timed).
fn summary(decided: &[bool], of: &str) -> String {
    let met = decided.iter().filter(|&&ok| ok).count();
    if decided.is_empty() {
        "no measurement".to_string()
    } else if met == decided.len() {
        format!("met on all {met} {of}")
    } else {
        format!(
            "MISSED on {} of {} {of}",
            decided.len() - met,
            decided.len()
        )
    }
}

/// The summary under the table: how many cases meet the IPC target.
pub fn target_line(cases: &[&Case]) -> String {
    let decided: Vec<bool> = cases.iter().filter_map(|c| c.verdict()).collect();
    format!(
        "target (issue 12, item 4): {TARGET} — {}",
        summary(&decided, "cases")
    )
}

/// The NVSHMEM target's summary: how many cases meet it, and how many
/// were not timed and why in short ("not built", "skipped", "FAILED on k
/// of n cases"). A case that failed is never counted as met.
pub fn nvshmem_target_line(cases: &[&Case]) -> String {
    let decided: Vec<bool> = cases.iter().filter_map(|c| c.nvshmem_verdict()).collect();
    let count = |status: &str| {
        cases
            .iter()
            .filter(|c| c.nvshmem.status() == status)
            .count()
    };
    let of = if decided.len() == cases.len() {
        "cases"
    } else {
        "timed cases"
    };
    let mut parts = vec![summary(&decided, of)];
    for status in ["FAILED", "skipped", "not built"] {
        let k = count(status);
        if k > 0 {
            parts.push(format!("{status} on {k} of {} cases", cases.len()));
        }
    }
    format!(
        "target (issue 12, item 4): {NVSHMEM_TARGET} — {}",
        parts.join("; ")
    )
}

/// Why NVSHMEM sides were not timed, one line per distinct reason (the
/// cases it applies to named), for printing under the table: never a
/// silent blank column.
pub fn nvshmem_notes(cases: &[&Case]) -> Vec<String> {
    let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
    for c in cases {
        let Some(why) = c.nvshmem.reason() else {
            continue;
        };
        let line = format!("{}: {why}", c.nvshmem.status());
        match notes.iter_mut().find(|(l, _)| *l == line) {
            Some((_, names)) => names.push(&c.name),
            None => notes.push((line, vec![&c.name])),
        }
    }
    notes
        .into_iter()
        .map(|(line, names)| {
            if names.len() == cases.len() {
                format!("2 ranks NVSHMEM, every case: {line}")
            } else {
                format!("2 ranks NVSHMEM, {}: {line}", names.join(", "))
            }
        })
        .collect()
}
