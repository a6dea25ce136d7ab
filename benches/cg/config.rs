//! What the CG bench runs, from the environment and the command line
//! (cargo passes `--bench` to harness-less benches; it is ignored, and so
//! is anything else not listed, with a warning).

use crate::knobs;
use crate::BoxResult;

/// The bench's knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `--quick`: fewer reps, no 256³.
    pub quick: bool,
    /// 3D Poisson sizes N (7-point, N³ rows).
    pub sizes_3d: Vec<u32>,
    /// 2D Poisson sizes N (5-point, N² rows).
    pub sizes_2d: Vec<u32>,
    /// Timed repetitions per case (after `warmup` untimed ones).
    pub reps: usize,
    /// Untimed repetitions before them.
    pub warmup: usize,
    /// Iterations of every case instead of the per-size default.
    pub iterations: Option<u32>,
    /// Skip the cuSPARSE/cuBLAS baseline (autarky alone).
    pub no_baseline: bool,
    /// Cases of the two-GPU part (autarky on 1 GPU against 2 GPUs).
    pub two_gpu: Vec<TwoGpuCase>,
}

/// A matrix of the two-GPU part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwoGpuCase {
    /// `"poisson3d"` or `"poisson2d"`.
    pub family: &'static str,
    /// Grid points per axis.
    pub n: u32,
}

/// The two-GPU part's list: `N` (or `3d:N`) is Poisson 3D N³, `2d:N` is
/// Poisson 2D N²; `"128,256,2d:1024"` → three cases; `"none"` or `""` →
/// none.
pub fn parse_two_gpu(s: &str) -> BoxResult<Vec<TwoGpuCase>> {
    let s = s.trim();
    if s.is_empty() || s == "none" {
        return Ok(Vec::new());
    }
    let bad = || -> Box<dyn std::error::Error> {
        format!(
            "two-GPU cases must be N (Poisson 3D, 1..={MAX_3D}), 3d:N or 2d:N (Poisson 2D, 1..={MAX_2D}) separated by commas (or 'none'), got {s:?}"
        )
        .into()
    };
    s.split(',')
        .map(|item| {
            let item = item.trim();
            let (family, v, max) = match item.split_once(':') {
                None => ("poisson3d", item, MAX_3D),
                Some(("3d", v)) => ("poisson3d", v, MAX_3D),
                Some(("2d", v)) => ("poisson2d", v, MAX_2D),
                Some(_) => return Err(bad()),
            };
            match v.trim().replace('_', "").parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => Ok(TwoGpuCase {
                    family,
                    n: n as u32,
                }),
                _ => Err(bad()),
            }
        })
        .collect()
}

/// Largest 3D size (`poisson3d` accepts up to 1290; 512³ already needs
/// ~30 GB of device memory for autarky's two solvers and the baseline).
pub const MAX_3D: u64 = 512;
/// Largest 2D size.
pub const MAX_2D: u64 = 8192;
/// Most iterations a case may be given (see [`default_iterations`]).
pub const MAX_ITERS: u64 = 100_000;

/// `--help`.
pub const HELP: &str = "\
cg bench knobs (env or `cargo bench --bench cg -- --flag=value`):
  --quick            CG_BENCH_QUICK=1     3D 32,64,128; 2D 1024; two-GPU 128; 5 reps (no 256³)
  --3d=LIST          CG_BENCH_3D          3D Poisson sizes N (default 32,64,128,256), 'none' to skip
  --2d=LIST          CG_BENCH_2D          2D Poisson sizes N (default 1024), 'none' to skip
  --reps=R           CG_BENCH_REPS        timed reps per case (default 11; quick 5)
  --iters=K          CG_BENCH_ITERS       CG iterations of every case (default: per size, see below)
  --no-baseline      CG_BENCH_NO_BASELINE=1  autarky only (no cuSPARSE/cuBLAS)
  --two-gpu=LIST     CG_BENCH_2GPU        two-GPU part: autarky on 1 GPU vs 2 GPUs; N = Poisson 3D N³,
                                          2d:N = Poisson 2D N² (default 128,256,2d:1024; quick 128),
                                          'none' to skip; needs 2 GPUs, else it prints a SKIP line
  CG_BENCH_CUDA_LIBS directories searched first for libcublas/libcusparse (colon-separated)
  AUTARKY_BENCH_OUT  directory of results.json and the SVGs (default target/bench-report/cg)
Default iterations: a run of ~15 ms for autarky, a multiple of 50 in 50..=500 (more
iterations drive the recursive residual of small problems towards underflow).";

/// What `from_args` found: a config, or a request for the help text.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Run with this.
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
                    eprintln!("cg bench: ignoring unknown argument {a:?} (--help lists the knobs)");
                }
                Ok(cfg)
            }
        }
    }

    /// From `env` (a variable lookup; empty counts as unset) and `args`
    /// (without the program name): the config and the arguments it ignored.
    pub fn from_args(env: impl Fn(&str) -> Option<String>, args: &[String]) -> BoxResult<Parsed> {
        let flag = |v: Option<String>| v.is_some_and(|v| v != "0");
        let mut quick = flag(env("CG_BENCH_QUICK"));
        let mut no_baseline = flag(env("CG_BENCH_NO_BASELINE"));
        let mut d3 = env("CG_BENCH_3D");
        let mut d2 = env("CG_BENCH_2D");
        let mut reps = env("CG_BENCH_REPS");
        let mut iters = env("CG_BENCH_ITERS");
        let mut two = env("CG_BENCH_2GPU");
        let mut ignored = Vec::new();
        for a in args {
            if a == "--quick" || a == "quick" {
                quick = true;
            } else if a == "--no-baseline" {
                no_baseline = true;
            } else if let Some(v) = a.strip_prefix("--3d=") {
                d3 = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--2d=") {
                d2 = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--reps=") {
                reps = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--iters=") {
                iters = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--two-gpu=") {
                two = Some(v.into());
            } else if a == "--help" || a == "-h" {
                return Ok(Parsed::Help);
            } else if a != "--bench" {
                ignored.push(a.clone());
            }
        }
        let (q3, q2, qt, qr) = if quick {
            ("32,64,128", "1024", "128", "5")
        } else {
            ("32,64,128,256", "1024", "128,256,2d:1024", "11")
        };
        let one = |what: &str, v: &str, max: u64| -> BoxResult<u32> {
            match knobs::parse_list(what, v, 1, max)?.as_slice() {
                [x] => Ok(*x),
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
            sizes_3d: knobs::parse_list("3D sizes", d3.as_deref().unwrap_or(q3), 1, MAX_3D)?,
            sizes_2d: knobs::parse_list("2D sizes", d2.as_deref().unwrap_or(q2), 1, MAX_2D)?,
            reps: reps as usize,
            warmup: 2,
            iterations,
            no_baseline,
            two_gpu: parse_two_gpu(two.as_deref().unwrap_or(qt))?,
        };
        if cfg.sizes_3d.is_empty() && cfg.sizes_2d.is_empty() && cfg.two_gpu.is_empty() {
            return Err("no case selected: the 3D, 2D and two-GPU lists are all empty".into());
        }
        Ok(Parsed::Run(cfg, ignored))
    }
}

/// Bytes one standard CG iteration moves at least: the CSR matrix once
/// (8-byte value, 4-byte column per entry, 8-byte row offset per row)
/// and about 12 passes over n-vectors of f64 (SpMV's input and output,
/// two dot products, three vector updates).
pub fn bytes_per_iteration(rows: u64, nnz: u64) -> u64 {
    12 * nnz + 8 * rows + 12 * 8 * rows
}

/// Iterations of a case of `rows` rows and `nnz` entries: enough that an
/// autarky run lasts about 15 ms (estimated at 3 TB/s, at least 5 µs an
/// iteration), a multiple of 50 in 50..=500. The cap keeps small problems
/// away from underflow: CG's recursive residual keeps shrinking after
/// convergence (on Poisson 32³, by ~10⁻¹⁰⁰ after 1000 iterations; the
/// single-reduction recurrence breaks down near iteration 1660).
pub fn default_iterations(rows: u64, nnz: u64) -> u32 {
    let est_us = (bytes_per_iteration(rows, nnz) as f64 / 3.0e6).max(5.0);
    let k = (15_000.0 / est_us / 50.0).round() as u32 * 50;
    k.clamp(50, 500)
}
