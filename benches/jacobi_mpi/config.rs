//! What the Jacobi-over-MPI bench runs, from the environment and the
//! command line (cargo passes `--bench` to harness-less benches; it is
//! ignored, and so is anything else not listed, with a warning). Every
//! rank parses the same arguments (mpirun gives each the same command
//! line), so every rank runs the same cases in the same order — the
//! runtime's steps are collective.

use crate::knobs;
use crate::BoxResult;

/// The bench's knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `--quick`: fewer reps, no 16384².
    pub quick: bool,
    /// Strong scaling: total 2D sizes N (N² interior cells over 2 GPUs).
    pub strong: Vec<u32>,
    /// Weak scaling: 2D sizes N per GPU (a 2N × N grid over 2 GPUs).
    pub weak: Vec<u32>,
    /// Timed repetitions per case (after `warmup` untimed ones).
    pub reps: usize,
    /// Untimed repetitions before them.
    pub warmup: usize,
    /// Iterations of every case instead of the per-size default.
    pub iterations: Option<u32>,
}

/// One grid of the bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// `"strong"` (N² in total) or `"weak"` (N² per GPU).
    pub family: &'static str,
    /// The N of the knob.
    pub n: u32,
    /// Interior rows (y), split over the 2 GPUs.
    pub ny: u32,
    /// Interior columns (x).
    pub nx: u32,
}

impl Grid {
    /// Interior cells.
    pub fn cells(&self) -> u64 {
        self.ny as u64 * self.nx as u64
    }

    /// Padded cells of the larger of the two PEs' sub-grids (rows split
    /// along y, `pe_grid` [1, 2, 1]), ghost layers included.
    pub fn padded_cells_per_pe(&self) -> u64 {
        (self.ny.div_ceil(2) as u64 + 2) * (self.nx as u64 + 2)
    }

    /// Symmetric heap bytes per PE for one solver of `k` iterations on
    /// this grid (2 PEs): both f32 buffers of the larger sub-grid, the
    /// check's partials (32 bytes a tile, tiles of ≥ ~1024 cells), norms,
    /// slack. The same on every rank (the ranks must agree on it).
    pub fn heap_bytes(&self, k: u32) -> usize {
        let local = self.padded_cells_per_pe() + 64;
        (2 * 4 * local + local / 4 + 8 * (k as u64 + 1) + (1 << 20) + (16 << 20)) as usize
    }
}

/// Symmetric heap bytes per PE for one runtime that hosts a solver of
/// every `(grid, iterations)` in turn: the **sum** of their
/// [`Grid::heap_bytes`], not the largest, because the symmetric heap is a
/// bump allocator whose allocations are freed only with the runtime
/// (runtime/symmetric.rs). The NVSHMEM side keeps one runtime for the
/// whole bench (NVSHMEM is initialised once per process).
#[cfg_attr(not(feature = "nvshmem"), allow(dead_code))]
pub fn heap_bytes_for_all(runs: &[(Grid, u32)]) -> usize {
    runs.iter().map(|(g, k)| g.heap_bytes(*k)).sum()
}

impl Config {
    /// The grids, strong first, in the order every rank runs them.
    pub fn grids(&self) -> Vec<Grid> {
        let strong = self.strong.iter().map(|&n| Grid {
            family: "strong",
            n,
            ny: n,
            nx: n,
        });
        let weak = self.weak.iter().map(|&n| Grid {
            family: "weak",
            n,
            ny: 2 * n,
            nx: n,
        });
        strong.chain(weak).collect()
    }
}

/// Why this process cannot run the bench, if it cannot, from the ranks
/// of its MPI job (`None`: not started by mpirun): the bench needs a job
/// of exactly 2 ranks, one per GPU.
pub fn mpi_skip(ranks: Option<u32>) -> Option<String> {
    match ranks {
        None => {
            Some("not started by mpirun (run `mpirun -n 2 <this binary>`: one rank per GPU)".into())
        }
        Some(2) => None,
        Some(n) => Some(format!("needs a job of 2 MPI ranks, this one has {n}")),
    }
}

/// Largest total size of a strong-scaling case (two f32 buffers of
/// 32768² are 8 GiB, on top of the field the host gathers in f64).
pub const MAX_STRONG: u64 = 32768;
/// Largest per-GPU size of a weak-scaling case.
pub const MAX_WEAK: u64 = 16384;
/// Most iterations a case may be given.
pub const MAX_ITERS: u64 = 100_000;

/// `--help`.
pub const HELP: &str = "\
jacobi_mpi bench: autarky Jacobi 2D on 2 GPUs, one process (Builder::gpus(2).pes(2)) against
2 MPI ranks over CUDA IPC (Transport::MpiIpc, one GPU per rank) and, when built with
`--features mpi,nvshmem`, 2 MPI ranks over NVSHMEM (Transport::Nvshmem). Run it under
`mpirun -n 2` (the knobs are flags so that every rank gets them):
  --quick            JACOBI_MPI_QUICK=1    strong 1024,4096; weak 256; 5 reps
  --strong=LIST      JACOBI_MPI_STRONG     total sizes N, N² over 2 GPUs (default 1024,4096,16384), 'none' to skip
  --weak=LIST        JACOBI_MPI_WEAK       sizes N per GPU, 2N × N over 2 GPUs (default 256), 'none' to skip
  --reps=R           JACOBI_MPI_REPS       timed reps per case and side (default 11; quick 5)
  --iters=K          JACOBI_MPI_ITERS      iterations of every case (default: per size, ~15 ms on one GPU)
  AUTARKY_BENCH_OUT  directory of results.json (default target/bench-report/jacobi_mpi)
  AUTARKY_NVSHMEM_FORCE_REMOTE=1  NVSHMEM side: reach the other rank with NVSHMEM puts and
                     signals only (else through nvshmem_ptr, load/store); AUTARKY_NVSHMEM_DIR,
                     AUTARKY_NVJITLINK_DIR, AUTARKY_CUDA_INCLUDE_DIR: where NVSHMEM's pieces are
Environment variables reach the other ranks only with `mpirun -x NAME`.";

/// What `from_args` found: a config, or a request for the help text.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Run with this, and these arguments were not understood.
    Run(Config, Vec<String>),
    /// `--help` / `-h`.
    Help,
}

impl Config {
    /// From the process's environment and arguments; `--help` prints
    /// [`HELP`] and exits.
    pub fn from_env_and_args() -> BoxResult<Config> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let args: Vec<String> = std::env::args().skip(1).collect();
        match Config::from_args(env, &args)? {
            Parsed::Help => {
                println!("{HELP}");
                std::process::exit(0);
            }
            Parsed::Run(cfg, ignored) => {
                for a in ignored {
                    eprintln!(
                        "jacobi_mpi bench: ignoring unknown argument {a:?} (--help lists the knobs)"
                    );
                }
                Ok(cfg)
            }
        }
    }

    /// From `env` (a variable lookup; empty counts as unset) and `args`
    /// (without the program name): the config and the arguments it ignored.
    pub fn from_args(env: impl Fn(&str) -> Option<String>, args: &[String]) -> BoxResult<Parsed> {
        let flag = |v: Option<String>| v.is_some_and(|v| v != "0");
        let mut quick = flag(env("JACOBI_MPI_QUICK"));
        let mut strong = env("JACOBI_MPI_STRONG");
        let mut weak = env("JACOBI_MPI_WEAK");
        let mut reps = env("JACOBI_MPI_REPS");
        let mut iters = env("JACOBI_MPI_ITERS");
        let mut ignored = Vec::new();
        for a in args {
            if a == "--quick" || a == "quick" {
                quick = true;
            } else if let Some(v) = a.strip_prefix("--strong=") {
                strong = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--weak=") {
                weak = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--reps=") {
                reps = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--iters=") {
                iters = Some(v.into());
            } else if a == "--help" || a == "-h" {
                return Ok(Parsed::Help);
            } else if a != "--bench" {
                ignored.push(a.clone());
            }
        }
        let (qs, qw, qr) = if quick {
            ("1024,4096", "256", "5")
        } else {
            ("1024,4096,16384", "256", "11")
        };
        let one = |what: &str, v: &str, max: u64| -> BoxResult<u32> {
            let v = v.trim().replace('_', "");
            match v.parse::<u64>() {
                Ok(x) if (1..=max).contains(&x) => Ok(x as u32),
                _ => Err(format!("{what} must be one integer in 1..={max}, got {v:?}").into()),
            }
        };
        let reps = one("reps", reps.as_deref().unwrap_or(qr), 1000)?;
        let iterations = match iters {
            Some(v) => Some(one("iters", &v, MAX_ITERS)?),
            None => None,
        };
        let cfg = Config {
            quick,
            strong: knobs::parse_list(
                "strong sizes",
                strong.as_deref().unwrap_or(qs),
                2,
                MAX_STRONG,
            )?,
            weak: knobs::parse_list("weak sizes", weak.as_deref().unwrap_or(qw), 2, MAX_WEAK)?,
            reps: reps as usize,
            warmup: 2,
            iterations,
        };
        if cfg.strong.is_empty() && cfg.weak.is_empty() {
            return Err(
                "no case selected: both the strong and the weak size lists are empty".into(),
            );
        }
        Ok(Parsed::Run(cfg, ignored))
    }
}
