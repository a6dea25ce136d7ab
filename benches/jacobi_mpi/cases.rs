//! The bench's results: per grid, time per iteration in one process and
//! over 2 MPI ranks, their ratio, the target (issue 12 item 4:
//! IPC within 5 % of one process), the table and the JSON record. No GPU
//! or MPI code here (tests/jacobi_mpi_bench.rs runs it on made-up times).

use serde_json::json;

use crate::config::Grid;
use crate::report::Spread;

/// The slowest IPC may be against one process and still meet the target:
/// IPC median ≤ this × one-process median.
pub const TARGET_RATIO: f64 = 1.05;

/// The target as printed.
pub const TARGET: &str = "2 ranks over IPC within 5 % of one process (time per iteration)";

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
    /// 2 ranks: seconds per run of every rank, `[rank][rep]` (each rank's
    /// device events on its own GPU).
    pub ranks: Vec<Vec<f64>>,
    /// The correctness check's summary.
    pub checked: String,
}

impl Case {
    /// A case with no runs yet.
    pub fn new(slug: &str, grid: Grid, iterations: u32) -> Case {
        Case {
            name: format!("{slug}/jacobi2d-mpi/{}/{}", grid.family, grid.n),
            grid,
            iterations,
            one_process: Vec::new(),
            ranks: Vec::new(),
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

    /// Seconds of each 2-rank rep: the slowest rank's (the run lasts until
    /// both kernels have ended, and a rank that launched earlier waits for
    /// the other's halos inside its kernel). `None` when the ranks hold
    /// different numbers of reps.
    pub fn ipc_seconds(&self) -> Option<Vec<f64>> {
        let first = self.ranks.first()?;
        if self.ranks.iter().any(|r| r.len() != first.len()) {
            return None;
        }
        Some(
            (0..first.len())
                .map(|i| self.ranks.iter().map(|r| r[i]).fold(f64::MIN, f64::max))
                .collect(),
        )
    }

    /// µs per iteration in one process.
    pub fn one_process_spread(&self) -> Option<Spread> {
        self.us(&self.one_process)
    }

    /// µs per iteration over 2 ranks (slowest rank per rep).
    pub fn ipc_spread(&self) -> Option<Spread> {
        self.us(&self.ipc_seconds()?)
    }

    /// IPC median / one-process median (> 1: IPC slower).
    pub fn ratio(&self) -> Option<f64> {
        let (one, ipc) = (self.one_process_spread()?, self.ipc_spread()?);
        (one.median > 0.0).then(|| ipc.median / one.median)
    }

    /// Target met: IPC median ≤ [`TARGET_RATIO`] × one-process median.
    pub fn verdict(&self) -> Option<bool> {
        Some(self.ratio()? <= TARGET_RATIO)
    }

    /// The case's JSON record.
    pub fn to_json(&self) -> serde_json::Value {
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

/// The table: µs per iteration side by side, the ratio and the verdict.
pub fn table(cases: &[&Case]) -> String {
    let mut lines = vec![[
        "case",
        "grid",
        "iters",
        "one process (2 GPUs)",
        "2 ranks IPC",
        "ipc/one",
        "target ≤ 1.05",
    ]
    .map(String::from)
    .to_vec()];
    for c in cases {
        lines.push(vec![
            c.name.clone(),
            format!("{}×{}", c.grid.ny, c.grid.nx),
            c.iterations.to_string(),
            cell(c.one_process_spread()),
            cell(c.ipc_spread()),
            c.ratio().map_or("—".into(), |r| format!("{r:.3}")),
            match c.verdict() {
                Some(true) => "ok".into(),
                Some(false) => "MISS".into(),
                None => "—".into(),
            },
        ]);
    }
    crate::report::render_table(lines)
}

/// The summary under the table: how many cases meet the target.
pub fn target_line(cases: &[&Case]) -> String {
    let decided: Vec<bool> = cases.iter().filter_map(|c| c.verdict()).collect();
    let met = decided.iter().filter(|&&ok| ok).count();
    let verdict = if decided.is_empty() {
        "no measurement".to_string()
    } else if met == decided.len() {
        format!("met on all {met} cases")
    } else {
        format!(
            "MISSED on {} of {} cases",
            decided.len() - met,
            decided.len()
        )
    };
    format!("target (issue 12, item 4): {TARGET} — {verdict}")
}
