//! What the Jacobi bench runs, from the environment and the command line
//! (cargo passes `--bench` to harness-less benches; it is ignored, and so
//! is anything else not listed, with a warning).

use crate::knobs;
use crate::BoxResult;

#[derive(Clone, Debug)]
pub struct Config {
    pub quick: bool,
    /// 2D sizes N (N² interior cells, 5-point f32).
    pub sizes_2d: Vec<u32>,
    /// 3D sizes N (N³ interior cells, 7-point f32).
    pub sizes_3d: Vec<u32>,
    /// 2D sizes of the virtual-PE overhead cases (P = 4 against P = 1).
    pub sizes_pes: Vec<u32>,
    /// 2D sizes of the two-GPU part.
    pub sizes_two_gpu: Vec<u32>,
    /// Per-GPU 2D sizes of the two-GPU weak-scaling cases.
    pub sizes_weak: Vec<u32>,
    /// Timed repetitions per case (after `warmup` untimed ones).
    pub reps: usize,
    pub warmup: usize,
    /// Iterations of every case instead of the per-size default.
    pub iterations: Option<u32>,
}

pub const HELP: &str = "\
jacobi bench knobs (env or `cargo bench --bench jacobi -- --flag=value`):
  --quick            AUTARKY_BENCH_QUICK=1   2D 256,1024,4096; 3D 64,256; PEs 1024,4096; two-GPU 4096; weak 256; 7 reps
  --2d=LIST          AUTARKY_BENCH_2D        2D sizes N (default 128,...,16384), 'none' to skip
  --3d=LIST          AUTARKY_BENCH_3D        3D sizes N (default 32,...,512), 'none' to skip
  --pes=LIST         AUTARKY_BENCH_PES       virtual-PE overhead sizes (default 1024,4096)
  --two-gpu=LIST     AUTARKY_BENCH_2GPU      two-GPU part sizes (default 1024,4096,16384)
  --weak=LIST        AUTARKY_BENCH_WEAK      two-GPU weak scaling, N per GPU (default 256,4096; quick 256)
  --reps=R           AUTARKY_BENCH_REPS      timed reps per case (default 11; quick 7)
  --iters=K          AUTARKY_BENCH_ITERS     iterations of every case (default: per size, 5-50 ms a run)
  AUTARKY_BENCH_OUT  directory of results.json and the SVGs (default target/bench-report/jacobi)";

impl Config {
    pub fn from_env_and_args() -> BoxResult<Config> {
        let env = |k: &str| std::env::var(k).ok();
        let mut quick = env("AUTARKY_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0");
        let mut d2 = env("AUTARKY_BENCH_2D");
        let mut d3 = env("AUTARKY_BENCH_3D");
        let mut pes = env("AUTARKY_BENCH_PES");
        let mut two = env("AUTARKY_BENCH_2GPU");
        let mut weak = env("AUTARKY_BENCH_WEAK");
        let mut reps = env("AUTARKY_BENCH_REPS").filter(|v| !v.is_empty());
        let mut iters = env("AUTARKY_BENCH_ITERS").filter(|v| !v.is_empty());
        for a in std::env::args().skip(1) {
            if a == "--quick" || a == "quick" {
                quick = true;
            } else if let Some(v) = a.strip_prefix("--2d=") {
                d2 = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--3d=") {
                d3 = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--pes=") {
                pes = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--two-gpu=") {
                two = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--weak=") {
                weak = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--reps=") {
                reps = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--iters=") {
                iters = Some(v.into());
            } else if a == "--help" || a == "-h" {
                println!("{HELP}");
                std::process::exit(0);
            } else if a != "--bench" {
                eprintln!("jacobi bench: ignoring unknown argument {a:?} (--help lists the knobs)");
            }
        }
        let (q2, q3, qp, qt, qw, qr) = if quick {
            ("256,1024,4096", "64,256", "1024,4096", "4096", "256", "7")
        } else {
            (
                "128,256,512,1024,2048,4096,8192,16384",
                "32,64,128,256,512",
                "1024,4096",
                "1024,4096,16384",
                "256,4096",
                "11",
            )
        };
        let reps = knobs::parse_list("reps", reps.as_deref().unwrap_or(qr), 1, 1000)?;
        if reps.len() != 1 {
            return Err("reps must be one integer in 1..=1000".into());
        }
        let iterations = match iters {
            Some(v) => {
                let v = knobs::parse_list("iters", &v, 1, autarky::abi::MAX_ITERATIONS as u64)?;
                if v.len() != 1 {
                    return Err("iters must be one integer".into());
                }
                Some(v[0])
            }
            None => None,
        };
        let cfg = Config {
            quick,
            sizes_2d: knobs::parse_list("2D sizes", d2.as_deref().unwrap_or(q2), 1, 1 << 16)?,
            sizes_3d: knobs::parse_list("3D sizes", d3.as_deref().unwrap_or(q3), 1, 2048)?,
            sizes_pes: knobs::parse_list("PE sizes", pes.as_deref().unwrap_or(qp), 1, 1 << 16)?,
            sizes_two_gpu: knobs::parse_list(
                "two-GPU sizes",
                two.as_deref().unwrap_or(qt),
                1,
                1 << 16,
            )?,
            sizes_weak: knobs::parse_list("weak sizes", weak.as_deref().unwrap_or(qw), 1, 1 << 15)?,
            reps: reps[0] as usize,
            warmup: 2,
            iterations,
        };
        // A bench that times nothing is refused (as the CG bench does).
        if cfg.sizes_2d.is_empty()
            && cfg.sizes_3d.is_empty()
            && cfg.sizes_pes.is_empty()
            && cfg.sizes_two_gpu.is_empty()
            && cfg.sizes_weak.is_empty()
        {
            return Err(
                "no case selected: the 2D, 3D, PE, two-GPU and weak lists are all empty".into(),
            );
        }
        Ok(cfg)
    }
}

/// Iterations of a case whose sweep moves `bytes` (read + write): enough
/// that a run lasts about 15 ms at 3 TB/s (at least 2.5 µs an iteration),
/// a multiple of 100 in 100..=5000 — so of 4: every temporal-blocking
/// column (S = 2, 4) runs at every size (with multiples of 50, 350 and 50
/// sweeps left S = 4 out at 4096² and 16384²).
pub fn default_iterations(bytes: u64) -> u32 {
    let est_us = (bytes as f64 / 3.0e6).max(2.5);
    let k = (15_000.0 / est_us / 100.0).round() as u32 * 100;
    k.clamp(100, 5000)
}
