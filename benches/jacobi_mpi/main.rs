//! Jacobi over MPI ranks (issue 12, item 4): autarky's Jacobi 2D on two
//! GPUs, one process against two MPI ranks over CUDA IPC, the same grid,
//! the same PE grid ([1, 2, 1]: the rows split between the GPUs), the same
//! iterations; time per iteration side by side. Target: IPC within 5 % of
//! one process.
//!
//! Run under `mpirun -n 2` (one rank per GPU, both GPUs visible to every
//! rank), e.g.
//!
//! ```text
//! cargo bench --features mpi --bench jacobi_mpi --no-run   # prints the binary
//! mpirun --allow-run-as-root --oversubscribe -n 2 -x LD_LIBRARY_PATH <binary> [--quick]
//! ```
//!
//! Cases: strong scaling at N² in total (default N = 1024, 4096, 16384)
//! and weak scaling at N² per GPU (default N = 256: a 512 × 256 grid), f32
//! 5-point, interior 0, a smooth Dirichlet boundary, no norm
//! (`check_every` 0). Variants:
//!
//! - `one process`: rank 0 alone builds a `Transport::InProcess` runtime
//!   over both GPUs (`Builder::gpus(2).pes(2)`); rank 1 waits in an MPI
//!   collective meanwhile (an in-process runtime touches no MPI, so it
//!   lives in an MPI process like in any other). Time: device events on
//!   GPU 0's stream around the launches (GPU 0's kernel ends when both
//!   have).
//! - `2 ranks IPC`: every rank builds a `Transport::MpiIpc` runtime (1 PE,
//!   GPU = its node-local rank); halos and the end of the run go through
//!   the peer's memory mapped with CUDA IPC. Time: each rank's device
//!   events on its own GPU; a rep counts the slowest rank's.
//!
//! The two kinds of runtime are never alive at the same time: each phase
//! drops its runtime before the ranks agree that the phase is over, and
//! only then does the next phase build. Per grid:
//!
//! 1. all ranks: MPI runtime, one run, the field (every rank gathers the
//!    whole grid); drop;
//! 2. rank 0: one-process runtime, one run, its field must be **bitwise**
//!    the MPI run's (the same PEs, tiles and f32 formula; the transport
//!    only moves the halos), then warm-ups and timed reps; drop;
//! 3. all ranks: MPI runtime, warm-ups and timed reps; drop; the ranks'
//!    times go to rank 0.
//!
//! Every phase ends with an agreement (an MPI allgather of "did this rank
//! fail"), so a failure on one rank ends every rank with an error instead
//! of leaving the other waiting; the runtime's own collective steps are
//! bounded by its rank timeout.
//!
//! Without mpirun, with a job of other than 2 ranks, without a GPU, NVRTC
//! or 2 visible GPUs, it prints `SKIP jacobi_mpi bench: <reason>` and
//! exits 0. Output (rank 0): the table, and `results.json` in
//! `target/bench-report/jacobi_mpi/` (`AUTARKY_BENCH_OUT` overrides).

// The bench passes `autarky::Error` through unchanged; its size is the
// library's business, not this bench's.
#![allow(clippy::result_large_err)]

mod cases;
mod config;
// The Jacobi bench's per-size iteration count, so both benches time runs
// of the same length.
#[path = "../jacobi/config.rs"]
#[allow(dead_code)]
mod jacobi_config;
#[path = "../common/knobs.rs"]
mod knobs;
#[path = "../common/probe.rs"]
mod probe;
#[path = "../common/report.rs"]
mod report;

use std::error::Error as StdError;
use std::f64::consts::PI;
use std::path::PathBuf;
use std::time::Duration;

use autarky::runtime::driver;
use autarky::solvers::jacobi::{JacobiConfig, JacobiSolver};
use autarky::solvers::jacobi_ref::{JacobiProblem, Stencil};
use autarky::{RunOptions, Runtime, Transport};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use serde_json::json;

use cases::Case;
use config::{mpi_skip, Config, Grid};

/// The bench's result type.
pub type BoxResult<T> = Result<T, Box<dyn StdError>>;

/// How long a rank waits for the other at the runtime's collective steps
/// (the first run of a graph compiles the megakernel on both ranks).
const RANK_TIMEOUT: Duration = Duration::from_secs(120);

fn out_dir() -> PathBuf {
    report::bench_dir("jacobi_mpi")
}

/// Ranks of the MPI job this process belongs to, from the launcher's
/// environment (Open MPI, or PMI-based launchers); `None` outside mpirun.
fn env_ranks() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// This process's rank from the launcher's environment (0 outside mpirun).
fn env_rank() -> u32 {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
        .unwrap_or(0)
}

fn skip(reason: &str) -> BoxResult<()> {
    // Every rank decides the same way (the same environment, the same
    // machine); rank 0 speaks for the job.
    if env_rank() == 0 {
        report::skip("jacobi_mpi", reason, &out_dir());
    }
    Ok(())
}

/// The bench problem on an `ny × nx` grid: interior 0, Dirichlet
/// `1 + ½·sin(kx)·cos(ky)`, k = 2π/nx (the Jacobi bench's).
fn problem(g: &Grid) -> JacobiProblem {
    let k = 2.0 * PI / g.nx as f64;
    JacobiProblem::new([1, g.ny as usize, g.nx as usize], Stencil::FivePoint)
        .with_dirichlet(move |_z, y, x| 1.0 + 0.5 * (k * x as f64).sin() * (k * y as f64).cos())
}

fn solver_config(g: &Grid, k: u32) -> JacobiConfig {
    JacobiConfig {
        pe_grid: Some([1, 2, 1]),
        ..JacobiConfig::new(problem(g), k)
    }
}

/// Heap bytes per PE for one solver of `k` iterations on `g` (2 PEs):
/// both f32 buffers of the larger sub-grid, the check's partials (32
/// bytes a tile, tiles of ≥ ~1024 cells), norms, slack. The same on every
/// rank (the ranks must agree on it).
fn heap_bytes(g: &Grid, k: u32) -> usize {
    let local = g.padded_cells_per_pe() + 64;
    (2 * 4 * local + local / 4 + 8 * (k as u64 + 1) + (1 << 20) + (16 << 20)) as usize
}

/// Iterations of a grid: the Jacobi bench's count for its total size.
fn iterations(cfg: &Config, g: &Grid) -> u32 {
    cfg.iterations
        .unwrap_or_else(|| jacobi_config::default_iterations(2 * 4 * g.cells()))
}

fn mpi_runtime(g: &Grid, k: u32) -> BoxResult<Runtime> {
    Ok(Runtime::builder()
        .transport(Transport::MpiIpc)
        .symmetric_heap_bytes(heap_bytes(g, k))
        .rank_timeout(RANK_TIMEOUT)
        .build()?)
}

fn one_process_runtime(g: &Grid, k: u32) -> BoxResult<Runtime> {
    Ok(Runtime::builder()
        .gpu()
        .gpus(2)
        .pes(2)
        .symmetric_heap_bytes(heap_bytes(g, k))
        .build()?)
}

/// One timed run (reset first, outside the timing): device-event seconds.
fn time_run(rt: &Runtime, s: &JacobiSolver, k: u32, what: &str) -> BoxResult<f64> {
    s.reset()?;
    let r = rt
        .run_with(
            s.graph(),
            RunOptions {
                iterations: k,
                timed: true,
                ..Default::default()
            },
        )
        .map_err(|e| format!("{what}: {e}"))?;
    if r.iterations != k {
        return Err(format!("{what}: ran {} of {k} iterations", r.iterations).into());
    }
    let ms = r
        .event_ms
        .ok_or_else(|| format!("{what}: a timed run returned no event time"))?;
    Ok(ms as f64 * 1e-3)
}

/// The first run of a solver: its field, after checking that it ran every
/// iteration, stayed finite and moved away from the initial 0.
fn checked_field(s: &JacobiSolver, k: u32, what: &str) -> BoxResult<Vec<f64>> {
    let r = s.run().map_err(|e| format!("{what}: {e}"))?;
    if r.iterations != k {
        return Err(format!("{what}: ran {} of {k} iterations", r.iterations).into());
    }
    if r.field.iter().any(|v| !v.is_finite()) {
        return Err(format!("{what}: the grid holds a non-finite value").into());
    }
    let scale = r.field.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale <= 0.1 {
        return Err(format!("{what}: the grid did not move from 0 (max |a| = {scale})").into());
    }
    Ok(r.field)
}

/// Ends a phase on every rank: `Ok` everywhere, or an error everywhere
/// (this rank's own, or one naming the rank that failed). Collective; MPI
/// is initialized by then (the first phase builds an MPI runtime, and a
/// failed build fails every rank before anyone gets here).
fn agree<T>(world: &SimpleCommunicator, phase: &str, local: BoxResult<T>) -> BoxResult<T> {
    let failed = i32::from(local.is_err());
    let mut all = vec![0i32; world.size() as usize];
    world.all_gather_into(&failed, &mut all[..]);
    match local {
        Err(e) => Err(e),
        Ok(v) => match all.iter().position(|&f| f != 0) {
            None => Ok(v),
            Some(r) => Err(format!("{phase}: rank {r} failed (its error is on its stderr)").into()),
        },
    }
}

/// The world communicator, once an MPI runtime has initialized MPI.
fn world() -> BoxResult<SimpleCommunicator> {
    if !mpi::environment::is_initialized() {
        return Err("MPI is not initialized (no MPI runtime was built)".into());
    }
    Ok(SimpleCommunicator::world())
}

fn run_case(cfg: &Config, slug: &str, g: Grid, rank: u32) -> BoxResult<Case> {
    let k = iterations(cfg, &g);
    let mut case = Case::new(slug, g, k);
    let name = case.name.clone();
    if rank == 0 {
        eprintln!("{name}: {}×{} cells, {k} iterations per run", g.ny, g.nx);
    }

    // 1. all ranks: the MPI run's field.
    let ipc_field = (|| -> BoxResult<Vec<f64>> {
        let rt = mpi_runtime(&g, k)?;
        let s = JacobiSolver::new(&rt, solver_config(&g, k))?;
        checked_field(&s, k, &format!("{name}: 2 ranks IPC (rank {rank})"))
    })();
    let world = match world() {
        Ok(w) => w,
        Err(e) => return Err(ipc_field.err().unwrap_or(e)),
    };
    let ipc_field = agree(&world, &format!("{name}: the MPI check run"), ipc_field)?;

    // 2. rank 0: one process on both GPUs: check, then time.
    let one = if rank == 0 {
        (|| -> BoxResult<(Vec<f64>, String)> {
            let rt = one_process_runtime(&g, k)?;
            let s = JacobiSolver::new(&rt, solver_config(&g, k))?;
            let f = checked_field(&s, k, &format!("{name}: one process"))?;
            let diff = f
                .iter()
                .zip(&ipc_field)
                .filter(|(a, b)| a.to_bits() != b.to_bits())
                .count();
            if f.len() != ipc_field.len() || diff != 0 {
                return Err(format!(
                    "{name}: the one-process grid differs from the 2-rank grid in {diff} of {} cells; refusing to time wrong work",
                    f.len()
                )
                .into());
            }
            let checked = format!(
                "one process bitwise = 2 ranks over IPC ({} cells, PE grid {:?})",
                f.len(),
                s.pe_grid()
            );
            eprintln!("{name}: correctness ok ({checked}); timing one process …");
            let mut secs = Vec::with_capacity(cfg.reps);
            for rep in 0..cfg.warmup + cfg.reps {
                let t = time_run(&rt, &s, k, &format!("{name}: one process"))?;
                if rep >= cfg.warmup {
                    secs.push(t);
                }
            }
            Ok((secs, checked))
        })()
    } else {
        Ok((Vec::new(), String::new()))
    };
    drop(ipc_field);
    let (one_secs, checked) = agree(&world, &format!("{name}: the one-process phase"), one)?;
    case.one_process = one_secs;
    case.checked = checked;

    // 3. all ranks: 2 ranks over IPC, timed.
    if rank == 0 {
        eprintln!("{name}: timing 2 ranks over IPC …");
    }
    let mine = (|| -> BoxResult<Vec<f64>> {
        let rt = mpi_runtime(&g, k)?;
        let s = JacobiSolver::new(&rt, solver_config(&g, k))?;
        let mut secs = Vec::with_capacity(cfg.reps);
        for rep in 0..cfg.warmup + cfg.reps {
            let t = time_run(&rt, &s, k, &format!("{name}: 2 ranks IPC (rank {rank})"))?;
            if rep >= cfg.warmup {
                secs.push(t);
            }
        }
        Ok(secs)
    })();
    let mine = agree(&world, &format!("{name}: the IPC timing"), mine)?;
    // Every rank has cfg.reps values (the same config everywhere).
    let ranks = world.size() as usize;
    let mut all = vec![0f64; ranks * mine.len()];
    world.all_gather_into(&mine[..], &mut all[..]);
    case.ranks = all.chunks(mine.len().max(1)).map(<[f64]>::to_vec).collect();
    Ok(case)
}

fn main() -> BoxResult<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let cfg = Config::from_env_and_args()?;
    if let Some(why) = mpi_skip(env_ranks()) {
        return skip(&why);
    }
    let rank = env_rank();

    let props = match probe::gpu()? {
        probe::Probe::Gpu(rt, props) => {
            drop(rt); // the cases build their own runtimes
            props
        }
        probe::Probe::Skip(why) => return skip(&why),
    };
    // Rank 0's one-process runtime needs both GPUs; the ranks take one
    // each. A launcher that shows each rank only its own GPU leaves rank 0
    // without the second one.
    let count = driver::device_count()?;
    if count < 2 {
        return skip(&format!(
            "needs 2 GPUs visible to every rank, {count} present (do not narrow CUDA_VISIBLE_DEVICES per rank)"
        ));
    }
    let slug = report::gpu_slug(&props.name);
    if rank == 0 {
        println!(
            "jacobi_mpi bench on 2 × {} (sm_{}, {} SMs each; {count} GPUs present): strong {:?}, weak {:?} per GPU; f32 5-point, no norm; {} warm-up + {} timed reps per case and side{}",
            props.name,
            props.arch(),
            props.sm_count,
            cfg.strong,
            cfg.weak,
            cfg.warmup,
            cfg.reps,
            if cfg.quick { " (QUICK)" } else { "" }
        );
    }

    let mut cases = Vec::new();
    for g in cfg.grids() {
        cases.push(run_case(&cfg, &slug, g, rank)?);
    }
    if rank != 0 {
        return Ok(());
    }
    let refs: Vec<&Case> = cases.iter().collect();
    println!();
    print!("{}", cases::table(&refs));
    println!(
        "µs per iteration, median [min–max] over {} timed reps (device events); one process: GPU 0's stream; \
         2 ranks: the slower rank's per rep; ipc/one = 2-rank median / one-process median (> 1: IPC slower).",
        cfg.reps
    );
    println!("{}", cases::target_line(&refs));
    for c in &cases {
        println!("checked {}: {}", c.name, c.checked);
    }

    let mut facts = serde_json::Map::new();
    for (k, v) in [
        ("device", json!(props.name)),
        ("arch", props.arch().into()),
        ("sm_count", props.sm_count.into()),
        ("gpus_present", count.into()),
        ("quick", cfg.quick.into()),
        ("warmup", cfg.warmup.into()),
        ("reps", cfg.reps.into()),
        ("precision", "f32".into()),
        ("pe_grid", json!([1, 2, 1])),
        (
            "one_process",
            "Transport::InProcess, Builder::gpus(2).pes(2), rank 0 alone; device events on GPU 0's stream".into(),
        ),
        (
            "ipc",
            "Transport::MpiIpc, 2 ranks × 1 PE, one GPU each; per rep the slower rank's device-event time".into(),
        ),
        ("target", cases::TARGET.into()),
        ("target_line", cases::target_line(&refs).into()),
        (
            "cases",
            cases.iter().map(Case::to_json).collect::<Vec<_>>().into(),
        ),
    ] {
        facts.insert(k.to_string(), v);
    }
    let rep = report::Report {
        bench: "jacobi_mpi".into(),
        facts,
        cases: Vec::new(),
    };
    let w = report::write(&rep, &out_dir())?;
    println!("wrote {}", w.json.display());
    Ok(())
}
