//! What the dispatch bench runs, from the environment and the command line
//! (cargo passes `--bench` to harness-less benches; an unknown argument is
//! named on stderr and ignored, as in the other benches; `--help` lists the
//! knobs).

use crate::BoxResult;

#[derive(Clone, Debug)]
pub struct Config {
    pub quick: bool,
    /// Chain lengths and self-chain iterations (the chain families' sizes).
    pub sizes: Vec<u32>,
    /// Timed repetitions per case (after `warmup` untimed ones).
    pub reps: usize,
    pub warmup: usize,
    /// Target instance counts T·M of the throughput family.
    pub instances: Vec<u64>,
    /// Inputs of the fan-in cases' join (1000: the row; other
    /// widths show how the join's cost grows with them).
    pub fan_in: Vec<u64>,
    /// Also run every autarky case traced (`RunOptions::trace`) with this
    /// many records per block, and print traced / untraced time.
    pub trace: Option<u32>,
    /// Where traced runs write their last rep's trace (Chrome JSON, one
    /// file per case); implies `trace`.
    pub trace_dir: Option<std::path::PathBuf>,
    /// Case families to run (`None`: all): for a profiler that should see
    /// one family's kernels only.
    pub only: Option<Vec<String>>,
    /// Also run the dynamic stencil on runtimes of these many compute
    /// blocks (rows "autarky, C compute blocks"): whether the blocks' number
    /// — their contention at the ready queue — paces it.
    pub stencil_blocks: Vec<u32>,
    /// Also run the dynamic stencil on runtimes whose `counted_fan_in` is
    /// each of these (rows "autarky, counted from N"): its tiles (2–5
    /// predecessor edges) counted, each completion an arrival per successor
    /// instead of a scan and a claim.
    pub stencil_counted: Vec<u32>,
    /// Iterations of each stencil run (`None`: 500, `--quick` 50).
    pub stencil_iters: Option<u32>,
    /// Also run the stencil pinned in square patches of these sides (rows
    /// "autarky pinned, P×P a block"): a block runs P² tiles an iteration
    /// instead of one, so fewer blocks publish and poll.
    pub stencil_patches: Vec<u32>,
}

/// The case families, as `--only` names them.
pub const FAMILIES: [&str; 5] = ["chain", "self-chain", "independent", "fan-in", "stencil"];

impl Config {
    /// Does this run include the case family `family`?
    pub fn runs(&self, family: &str) -> bool {
        self.only
            .as_ref()
            .map_or(true, |o| o.iter().any(|f| f == family))
    }
}

/// `"100,1_000"` → `[100, 1000]`: positive integers.
fn parse_list(what: &str, s: &str) -> BoxResult<Vec<u64>> {
    s.split(',')
        .map(|v| match v.trim().replace('_', "").parse::<u64>() {
            Ok(x) if x > 0 => Ok(x),
            _ => Err(
                format!("{what} must be positive integers separated by commas, got {s:?}").into(),
            ),
        })
        .collect()
}

/// An optional list (`None`: empty) of integers in `min..=u32::MAX`.
fn parse_u32_list(what: &str, s: Option<&str>, min: u64) -> BoxResult<Vec<u32>> {
    let Some(s) = s else {
        return Ok(Vec::new());
    };
    parse_list(what, s)?
        .into_iter()
        .map(|n| {
            u32::try_from(n)
                .ok()
                .filter(|&n| n as u64 >= min)
                .ok_or_else(|| {
                    format!("every {what} must be in {min}..={}, got {n}", u32::MAX).into()
                })
        })
        .collect()
}

const HELP: &str = "dispatch bench: autarky's task dispatch against a launch per task, a CUDA
graph and an atomic-claim persistent kernel, in one process (device events).

  flag                 environment                   what
  --quick              AUTARKY_BENCH_QUICK=1         fewer sizes and repetitions
  --n=LIST             AUTARKY_BENCH_N               chain lengths (each ≥ 2)
  --reps=N             AUTARKY_BENCH_REPS            timed repetitions per case
  --instances=LIST     AUTARKY_BENCH_INSTANCES       T·M of the throughput cases
  --fan-in=LIST        AUTARKY_BENCH_FAN_IN          inputs of the fan-in joins (default 1000)
  --trace              AUTARKY_BENCH_TRACE=1         also run each autarky case traced
  --trace-records=N    AUTARKY_BENCH_TRACE_RECORDS   records per block when traced
  --trace-dir=DIR      AUTARKY_BENCH_TRACE_DIR       write each traced case's last trace there
                                                     (Chrome JSON; implies --trace)
  --only=LIST          AUTARKY_BENCH_ONLY            case families to run (chain, self-chain,
                                                     independent, fan-in, stencil; default all)
  --stencil-blocks=LIST AUTARKY_BENCH_STENCIL_BLOCKS also run the dynamic stencil with these
                                                     many compute blocks (default none)
  --stencil-counted=LIST AUTARKY_BENCH_STENCIL_COUNTED also run it with tasks of at least
                                                     these many inputs counted (each ≥ 2)
  --stencil-iters=N    AUTARKY_BENCH_STENCIL_ITERS   iterations of each stencil run (default
                                                     500, --quick 50): a run's fixed cost
                                                     (launch, start, end) is spread over them
  --stencil-patches=LIST AUTARKY_BENCH_STENCIL_PATCHES also run it pinned in square patches
                                                     of these sides a block (each divides 32)

Results: a table on stdout, results.json (and charts) in target/bench-report/
(or AUTARKY_BENCH_OUT). Without a GPU it prints SKIP and exits 0.";

impl Config {
    pub fn from_env_and_args() -> BoxResult<Config> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let mut quick = env("AUTARKY_BENCH_QUICK").is_some_and(|v| v != "0");
        let mut n = env("AUTARKY_BENCH_N");
        let mut reps = env("AUTARKY_BENCH_REPS");
        let mut instances = env("AUTARKY_BENCH_INSTANCES");
        let mut fan_in = env("AUTARKY_BENCH_FAN_IN");
        let mut trace = env("AUTARKY_BENCH_TRACE").is_some_and(|v| v != "0");
        let mut trace_records = env("AUTARKY_BENCH_TRACE_RECORDS");
        let mut trace_dir = env("AUTARKY_BENCH_TRACE_DIR");
        let mut only = env("AUTARKY_BENCH_ONLY");
        let mut stencil_blocks = env("AUTARKY_BENCH_STENCIL_BLOCKS");
        let mut stencil_counted = env("AUTARKY_BENCH_STENCIL_COUNTED");
        let mut stencil_iters = env("AUTARKY_BENCH_STENCIL_ITERS");
        let mut stencil_patches = env("AUTARKY_BENCH_STENCIL_PATCHES");
        for a in std::env::args().skip(1) {
            if a == "--quick" || a == "quick" {
                quick = true;
            } else if let Some(v) = a.strip_prefix("--n=") {
                n = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--reps=") {
                reps = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--instances=") {
                instances = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--fan-in=") {
                fan_in = Some(v.into());
            } else if a == "--trace" {
                trace = true;
            } else if let Some(v) = a.strip_prefix("--trace-dir=") {
                trace_dir = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--trace-records=") {
                trace_records = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--only=") {
                only = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--stencil-blocks=") {
                stencil_blocks = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--stencil-counted=") {
                stencil_counted = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--stencil-iters=") {
                stencil_iters = Some(v.into());
            } else if let Some(v) = a.strip_prefix("--stencil-patches=") {
                stencil_patches = Some(v.into());
            } else if a == "--help" || a == "-h" {
                println!("{HELP}");
                std::process::exit(0);
            } else if a != "--bench" {
                eprintln!(
                    "dispatch bench: ignoring unknown argument {a:?} (--help lists the knobs)"
                );
            }
        }
        let (dn, dr, di) = if quick {
            ("100,1000", "3", "100000,1000000")
        } else {
            ("100,1000,10000", "11", "1000000,10000000")
        };
        let sizes = parse_list("N", n.as_deref().unwrap_or(dn))?;
        if let Some(&bad) = sizes.iter().find(|&&v| v < 2 || v > u32::MAX as u64) {
            return Err(format!("every N must be in 2..={}, got {bad}", u32::MAX).into());
        }
        let reps = parse_list("reps", reps.as_deref().unwrap_or(dr))?;
        if reps.len() != 1 {
            return Err("reps must be one positive integer".into());
        }
        let records = match trace_records {
            Some(v) => {
                let n = parse_list("trace records", &v)?;
                match n.as_slice() {
                    [n] if n.is_power_of_two()
                        && (autarky::TraceOptions::MIN_RECORDS as u64
                            ..=autarky::TraceOptions::MAX_RECORDS as u64)
                            .contains(n) =>
                    {
                        *n as u32
                    }
                    _ => {
                        return Err(format!(
                            "trace records must be one power of two in {}..={}, got {v:?}",
                            autarky::TraceOptions::MIN_RECORDS,
                            autarky::TraceOptions::MAX_RECORDS
                        )
                        .into())
                    }
                }
            }
            None => autarky::TraceOptions::DEFAULT_RECORDS,
        };
        let trace_dir = trace_dir.map(std::path::PathBuf::from);
        if let Some(d) = &trace_dir {
            std::fs::create_dir_all(d)
                .map_err(|e| format!("the trace directory {}: {e}", d.display()))?;
        }
        let only = match only {
            Some(v) => {
                let fams: Vec<String> = v.split(',').map(|f| f.trim().to_string()).collect();
                if let Some(bad) = fams.iter().find(|f| !FAMILIES.contains(&f.as_str())) {
                    return Err(format!(
                        "--only: unknown case family {bad:?} (give some of {})",
                        FAMILIES.join(", ")
                    )
                    .into());
                }
                Some(fams)
            }
            None => None,
        };
        let stencil_blocks = parse_u32_list("stencil block count", stencil_blocks.as_deref(), 1)?;
        let stencil_counted =
            parse_u32_list("stencil counted fan-in", stencil_counted.as_deref(), 2)?;
        let stencil_iters =
            match parse_u32_list("stencil iterations", stencil_iters.as_deref(), 1)?[..] {
                [] => None,
                [n] => Some(n),
                _ => return Err("--stencil-iters takes one number".into()),
            };
        let stencil_patches = parse_u32_list("stencil patch side", stencil_patches.as_deref(), 1)?;
        if let Some(&bad) = stencil_patches.iter().find(|&&p| 32 % p != 0) {
            return Err(format!("a stencil patch side must divide 32, got {bad}").into());
        }
        Ok(Config {
            only,
            stencil_patches,
            stencil_blocks,
            stencil_counted,
            stencil_iters,
            trace: (trace || trace_dir.is_some()).then_some(records),
            trace_dir,
            quick,
            sizes: sizes.into_iter().map(|v| v as u32).collect(),
            reps: reps[0] as usize,
            warmup: 2,
            instances: parse_list("instances", instances.as_deref().unwrap_or(di))?,
            fan_in: {
                let v = parse_list("fan-in", fan_in.as_deref().unwrap_or("1000"))?;
                if let Some(&bad) = v.iter().find(|&&n| !(2..=1_000_000).contains(&n)) {
                    return Err(
                        format!("every fan-in width must be in 2..=1000000, got {bad}").into(),
                    );
                }
                v
            },
        })
    }
}
