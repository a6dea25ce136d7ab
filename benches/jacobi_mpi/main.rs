//! Jacobi over MPI ranks (issue 12, item 4): autarky's Jacobi 2D on two
//! GPUs, one process against two MPI ranks over CUDA IPC and two MPI ranks
//! over NVSHMEM, the same grid, the same PE grid ([1, 2, 1]: the rows
//! split between the GPUs), the same iterations; time per iteration side
//! by side. Targets: IPC within 5 % of one process, NVSHMEM within 20 %.
//!
//! Run under `mpirun -n 2` (one rank per GPU, both GPUs visible to every
//! rank), e.g.
//!
//! ```text
//! cargo bench --features mpi --bench jacobi_mpi --no-run           # one process vs IPC
//! cargo bench --features mpi,nvshmem --bench jacobi_mpi --no-run   # … and NVSHMEM
//! mpirun --allow-run-as-root --oversubscribe -n 2 -x LD_LIBRARY_PATH <binary> [--quick]
//! ```
//!
//! The NVSHMEM side needs NVSHMEM, nvJitLink and the CUDA headers at run
//! time, and the variables that find them passed to every rank
//! (docs/nvshmem-gpu-checklist.md has the full command):
//! `-x AUTARKY_NVSHMEM_DIR -x AUTARKY_NVJITLINK_DIR -x AUTARKY_CUDA_INCLUDE_DIR
//! -x AUTARKY_NVRTC_DIR -x AUTARKY_NVSHMEM_FORCE_REMOTE`. Run it with
//! `AUTARKY_NVSHMEM_FORCE_REMOTE=1` (the other rank through NVSHMEM puts
//! and signals only, as across nodes) and without (through `nvshmem_ptr`
//! load/store); the table's header says which one ran.
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
//! - `2 ranks NVSHMEM` (built with `--features nvshmem`): every rank's
//!   `Transport::Nvshmem` runtime (1 PE = its NVSHMEM PE), timed like IPC.
//!   Its grid must be bitwise the IPC run's.
//!
//! Runtimes are never alive at the same time. Per grid, each phase drops
//! its runtime before the ranks agree that the phase is over, and only
//! then does the next phase build:
//!
//! 1. all ranks: MPI runtime, one run, the field (every rank gathers the
//!    whole grid); drop;
//! 2. rank 0: one-process runtime, one run, its field must be **bitwise**
//!    the MPI run's (the same PEs, tiles and f32 formula; the transport
//!    only moves the halos), then warm-ups and timed reps; drop;
//! 3. all ranks: MPI runtime, warm-ups and timed reps; drop; the ranks'
//!    times go to rank 0.
//!
//! The NVSHMEM side comes after phase 3 of **every** grid, on one
//! runtime built once (every rank, collectively) and kept for all grids,
//! then dropped before `main` returns (NVSHMEM's finalize is collective;
//! MPI is finalized at exit, after it). Why one, and why last:
//!
//! - NVSHMEM is initialised once per process (`nvshmemx_hostlib_init`
//!   when the runtime is built, finalize when it drops); whether it can
//!   be initialised again after a finalize is nothing a bench should rely
//!   on, so there is one NVSHMEM runtime, and its heap is the **sum** of
//!   the grids' heaps (`config::heap_bytes_for_all`: the symmetric heap
//!   is a bump allocator freed only with the runtime).
//! - Nothing in autarky forbids an NVSHMEM runtime next to an MPI-IPC or
//!   one-process one (they share the MPI session, and NVSHMEM's unique-id
//!   bootstrap goes over autarky's own bounded allgather), but they would
//!   share each GPU's primary context with NVSHMEM's heap mappings, and
//!   NVSHMEM's proxy thread would run during the other sides' timing. That
//!   has never run, so the bench does not depend on it: all MPI-IPC and
//!   one-process runtimes are gone before the NVSHMEM one is built, and
//!   none is built after it.
//!
//! Even NVSHMEM's libraries are loaded only then: whether NVSHMEM is
//! usable (`runtime::nvshmem::toolchain`, `host::nvshmem_info`) is asked
//! after the other sides. So, when built with the feature, the IPC field
//! of every grid is kept (host memory, f64: 2 GiB per rank for 16384²)
//! until its NVSHMEM check. Per grid, on the NVSHMEM runtime: one run whose
//! field must be bitwise the IPC run's (else the case fails: wrong work is
//! not timed), then warm-ups and timed reps on every rank, the slower rank
//! per rep. The table's NVSHMEM header and results.json say how the other
//! rank was reached (`Runtime::peer_transports`: `nvshmem` under
//! `AUTARKY_NVSHMEM_FORCE_REMOTE=1`, `nvshmem-p2p` through `nvshmem_ptr`).
//!
//! Every phase ends with an agreement (an MPI allgather of "did this rank
//! fail"), so a failure on one rank ends every rank with an error instead
//! of leaving the other waiting; the runtime's own collective steps are
//! bounded by its rank timeout (NVSHMEM's own init and finalize are not).
//! The NVSHMEM side never hides the IPC result: when NVSHMEM is not usable
//! on some rank (no toolchain or host library: the ranks agree, naming the
//! rank and its reason) its column says `skipped` and the reason is
//! printed under the table; when it fails (the build, a run, a grid that
//! differs), its column says `FAILED`, the error is printed, the remaining
//! grids' NVSHMEM sides are skipped, the table and results.json are still
//! written, and every rank exits with an error. Built without the
//! `nvshmem` feature, the column says `not built`.
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

use cases::{Case, NvshmemSide};
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

/// Iterations of a grid: the Jacobi bench's count for its total size.
fn iterations(cfg: &Config, g: &Grid) -> u32 {
    cfg.iterations
        .unwrap_or_else(|| jacobi_config::default_iterations(2 * 4 * g.cells()))
}

fn mpi_runtime(g: &Grid, k: u32) -> BoxResult<Runtime> {
    Ok(Runtime::builder()
        .transport(Transport::MpiIpc)
        .symmetric_heap_bytes(g.heap_bytes(k))
        .rank_timeout(RANK_TIMEOUT)
        .build()?)
}

fn one_process_runtime(g: &Grid, k: u32) -> BoxResult<Runtime> {
    Ok(Runtime::builder()
        .gpu()
        .gpus(2)
        .pes(2)
        .symmetric_heap_bytes(g.heap_bytes(k))
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

/// `cfg.warmup` untimed runs, then `cfg.reps` timed ones: their seconds.
fn timed_reps(
    cfg: &Config,
    rt: &Runtime,
    s: &JacobiSolver,
    k: u32,
    what: &str,
) -> BoxResult<Vec<f64>> {
    // The megakernel's grid on this side: the NVSHMEM build links more
    // device code, and fewer co-resident blocks would show here (the
    // 16384² NVSHMEM case ran at 1.46× one process in session 8, through
    // puts and through the P2P mapping alike).
    if rt.rank() == 0 {
        match rt.blocks_per_pe(s.graph().kinds()) {
            Ok((comm, compute)) => {
                eprintln!("{what}: {comm} comm + {compute} compute blocks per PE")
            }
            Err(e) => eprintln!("{what}: block count unknown: {e}"),
        }
    }
    let mut secs = Vec::with_capacity(cfg.reps);
    for rep in 0..cfg.warmup + cfg.reps {
        let t = time_run(rt, s, k, what)?;
        if rep >= cfg.warmup {
            secs.push(t);
        }
    }
    Ok(secs)
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

/// One grid's one-process and IPC sides (phases 1–3 of the module docs):
/// the case, and the IPC run's field when `keep_field` (for the NVSHMEM
/// side's check, later).
fn run_case(
    cfg: &Config,
    slug: &str,
    g: Grid,
    rank: u32,
    keep_field: bool,
) -> BoxResult<(Case, Option<Vec<f64>>)> {
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
            cases::check_bitwise(&name, "one-process", "2-rank IPC", &f, &ipc_field)?;
            let checked = format!(
                "one process bitwise = 2 ranks over IPC ({} cells, PE grid {:?})",
                f.len(),
                s.pe_grid()
            );
            eprintln!("{name}: correctness ok ({checked}); timing one process …");
            let secs = timed_reps(cfg, &rt, &s, k, &format!("{name}: one process"))?;
            Ok((secs, checked))
        })()
    } else {
        Ok((Vec::new(), String::new()))
    };
    let kept = keep_field.then_some(ipc_field);
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
        timed_reps(
            cfg,
            &rt,
            &s,
            k,
            &format!("{name}: 2 ranks IPC (rank {rank})"),
        )
    })();
    let mine = agree(&world, &format!("{name}: the IPC timing"), mine)?;
    case.ranks = gather_reps(&world, &mine);
    Ok((case, kept))
}

/// Every rank's reps, `[rank][rep]` (collective; every rank holds the
/// same number, the same config everywhere).
fn gather_reps(world: &SimpleCommunicator, mine: &[f64]) -> Vec<Vec<f64>> {
    let ranks = world.size() as usize;
    let mut all = vec![0f64; ranks * mine.len()];
    world.all_gather_into(mine, &mut all[..]);
    all.chunks(mine.len().max(1)).map(<[f64]>::to_vec).collect()
}

/// The NVSHMEM side (feature `nvshmem`): why this rank cannot run it, if
/// it cannot (no toolchain: NVSHMEM's headers and device library,
/// nvJitLink, the CUDA headers; or no NVSHMEM host library). Local: no
/// MPI, NVSHMEM loaded but not initialised (tests/nvshmem_mpi.rs asks the
/// same before building anything).
#[cfg(feature = "nvshmem")]
fn nvshmem_local_check() -> Result<(), String> {
    use autarky::runtime::nvshmem::{host::nvshmem_info, toolchain};
    toolchain().map_err(|e| format!("no NVSHMEM toolchain: {e}"))?;
    nvshmem_info().map_err(|e| format!("no NVSHMEM host library: {e}"))?;
    Ok(())
}

/// Every rank's `local` verdict, agreed: `Ok` on every rank, or on every
/// rank the first failing rank's reason, named (collective: a fixed-size
/// allgather of a flag and the reason's first bytes).
#[cfg(feature = "nvshmem")]
fn agree_why(world: &SimpleCommunicator, local: &Result<(), String>) -> Result<(), String> {
    const LEN: usize = 1024;
    let mut mine = vec![0u8; LEN];
    if let Err(why) = local {
        mine[0] = 1;
        let b = why.as_bytes();
        let n = b.len().min(LEN - 1);
        mine[1..1 + n].copy_from_slice(&b[..n]);
    }
    let mut all = vec![0u8; LEN * world.size() as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    match all.chunks(LEN).enumerate().find(|(_, c)| c[0] != 0) {
        None => Ok(()),
        Some((r, c)) => {
            let text = &c[1..];
            let end = text.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            Err(format!(
                "NVSHMEM is not usable on rank {r}: {}",
                String::from_utf8_lossy(&text[..end])
            ))
        }
    }
}

/// The NVSHMEM runtime of the whole bench (module docs: one per process,
/// heap for every grid's solver).
#[cfg(feature = "nvshmem")]
fn nvshmem_runtime(heap: usize) -> BoxResult<Runtime> {
    Ok(Runtime::builder()
        .transport(Transport::Nvshmem)
        .symmetric_heap_bytes(heap)
        .rank_timeout(RANK_TIMEOUT)
        .build()?)
}

/// One grid's NVSHMEM side on every rank: one run, bitwise the IPC run's
/// field, then warm-ups and timed reps: this rank's seconds.
#[cfg(feature = "nvshmem")]
fn nvshmem_reps(
    cfg: &Config,
    rt: &Runtime,
    case: &Case,
    ipc_field: &[f64],
    rank: u32,
) -> BoxResult<Vec<f64>> {
    let (g, k, name) = (case.grid, case.iterations, &case.name);
    let what = format!("{name}: 2 ranks NVSHMEM (rank {rank})");
    let s = JacobiSolver::new(rt, solver_config(&g, k))?;
    let f = checked_field(&s, k, &what)?;
    cases::check_bitwise(name, "2-rank NVSHMEM", "2-rank IPC", &f, ipc_field)?;
    drop(f);
    if rank == 0 {
        eprintln!("{name}: correctness ok (2 ranks over NVSHMEM bitwise = 2 ranks over IPC); timing 2 ranks over NVSHMEM …");
    }
    timed_reps(cfg, rt, &s, k, &what)
}

/// The NVSHMEM side of every case, after every case's other sides (module
/// docs): sets each case's [`NvshmemSide`]. Collective; every rank ends
/// with the same sides. `fields[i]` is case `i`'s IPC field.
#[cfg(feature = "nvshmem")]
fn nvshmem_side(
    cfg: &Config,
    cases: &mut [Case],
    fields: Vec<Option<Vec<f64>>>,
    rank: u32,
) -> BoxResult<()> {
    let world = world()?;
    let local = nvshmem_local_check();
    if let Err(why) = &local {
        eprintln!("rank {rank}: 2 ranks NVSHMEM: {why}");
    }
    if let Err(why) = agree_why(&world, &local) {
        for c in cases.iter_mut() {
            c.nvshmem = NvshmemSide::Skipped(why.clone());
        }
        if rank == 0 {
            eprintln!("jacobi_mpi: 2 ranks NVSHMEM skipped: {why}");
        }
        return Ok(());
    }
    let runs: Vec<(Grid, u32)> = cases.iter().map(|c| (c.grid, c.iterations)).collect();
    let heap = config::heap_bytes_for_all(&runs);
    if rank == 0 {
        eprintln!(
            "jacobi_mpi: building the NVSHMEM runtime ({} MiB of symmetric heap per PE, every grid's) …",
            heap >> 20
        );
    }
    let rt = nvshmem_runtime(heap);
    if let Err(e) = &rt {
        eprintln!("rank {rank}: building the NVSHMEM runtime: {e}");
    }
    let rt = match agree(&world, "building the NVSHMEM runtime", rt) {
        Ok(rt) => rt,
        Err(e) => {
            let why = format!("building the NVSHMEM runtime: {e}");
            for c in cases.iter_mut() {
                c.nvshmem = NvshmemSide::Failed(why.clone());
            }
            return Ok(());
        }
    };
    let peers = rt.peer_transports();
    // The other rank's entry (a job of 2 ranks, 1 PE each).
    let other = usize::from(rt.rank() == 0);
    let peer = peers.get(other).copied().unwrap_or("?").to_string();
    if rank == 0 {
        eprintln!("jacobi_mpi: NVSHMEM runtime up; PEs reached as {peers:?}");
    }
    let mut failed: Option<String> = None;
    for (c, field) in cases.iter_mut().zip(fields) {
        if let Some(first) = &failed {
            c.nvshmem =
                NvshmemSide::Skipped(format!("not run: the NVSHMEM side of {first} failed"));
            continue;
        }
        let mine = match &field {
            Some(f) => nvshmem_reps(cfg, &rt, c, f, rank),
            None => Err("the IPC field was not kept (a bench bug)".into()),
        };
        drop(field);
        if let Err(e) = &mine {
            eprintln!("rank {rank}: {e}");
        }
        match agree(&world, &format!("{}: the NVSHMEM side", c.name), mine) {
            Ok(mine) => {
                c.nvshmem = NvshmemSide::Timed {
                    peer: peer.clone(),
                    ranks: gather_reps(&world, &mine),
                };
                c.checked += "; 2 ranks over NVSHMEM bitwise = 2 ranks over IPC";
            }
            Err(e) => {
                c.nvshmem = NvshmemSide::Failed(e.to_string());
                failed = Some(c.name.clone());
            }
        }
    }
    // NVSHMEM's finalize (collective) happens here, on every rank, before
    // main returns and MPI is finalized at exit.
    drop(rt);
    Ok(())
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
    // The NVSHMEM side checks each IPC grid later (module docs).
    let keep_fields = cfg!(feature = "nvshmem");
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
        if cfg!(feature = "nvshmem") {
            println!(
                "2 ranks NVSHMEM: built; runs after every other side; AUTARKY_NVSHMEM_FORCE_REMOTE={}",
                std::env::var("AUTARKY_NVSHMEM_FORCE_REMOTE").unwrap_or_else(|_| "unset".into())
            );
        } else {
            println!("2 ranks NVSHMEM: not built (cargo bench --features mpi,nvshmem)");
        }
    }

    let mut cases = Vec::new();
    let mut fields = Vec::new();
    for g in cfg.grids() {
        let (case, field) = run_case(&cfg, &slug, g, rank, keep_fields)?;
        cases.push(case);
        fields.push(field);
    }
    #[cfg(feature = "nvshmem")]
    nvshmem_side(&cfg, &mut cases, fields, rank)?;
    #[cfg(not(feature = "nvshmem"))]
    drop(fields);

    let nvshmem_failed = cases
        .iter()
        .filter(|c| matches!(c.nvshmem, NvshmemSide::Failed(_)))
        .count();
    let refs: Vec<&Case> = cases.iter().collect();
    if rank == 0 {
        report_results(&cfg, &props, count, &refs)?;
    }
    if nvshmem_failed > 0 {
        return Err(format!(
            "the 2-rank NVSHMEM side FAILED on {nvshmem_failed} of {} cases (the errors are above; rank 0 printed the table and wrote results.json)",
            cases.len()
        )
        .into());
    }
    Ok(())
}

/// Rank 0's output: the table, the targets, the checks, results.json.
fn report_results(
    cfg: &Config,
    props: &driver::DeviceProps,
    count: u32,
    refs: &[&Case],
) -> BoxResult<()> {
    println!();
    print!("{}", cases::table(refs));
    println!(
        "µs per iteration, median [min–max] over {} timed reps (device events); one process: GPU 0's stream; \
         2 ranks: the slower rank's per rep; ipc/one, nvshmem/one = 2-rank median / one-process median (> 1: slower).",
        cfg.reps
    );
    println!("{}", cases::target_line(refs));
    println!("{}", cases::nvshmem_target_line(refs));
    for note in cases::nvshmem_notes(refs) {
        println!("{note}");
    }
    for c in refs {
        println!("checked {}: {}", c.name, c.checked);
    }

    let peers = cases::nvshmem_peers(refs);
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
        (
            "nvshmem",
            "Transport::Nvshmem, 2 ranks × 1 PE (= NVSHMEM PE), one GPU each, one runtime for every case, built after every other side; per rep the slower rank's device-event time".into(),
        ),
        ("nvshmem_built", cfg!(feature = "nvshmem").into()),
        (
            "nvshmem_force_remote",
            json!(std::env::var("AUTARKY_NVSHMEM_FORCE_REMOTE").ok()),
        ),
        ("nvshmem_peer_transport", json!(peers)),
        ("nvshmem_notes", json!(cases::nvshmem_notes(refs))),
        ("target", cases::TARGET.into()),
        ("target_line", cases::target_line(refs).into()),
        ("nvshmem_target", cases::NVSHMEM_TARGET.into()),
        ("nvshmem_target_line", cases::nvshmem_target_line(refs).into()),
        (
            "cases",
            refs.iter().map(|c| c.to_json()).collect::<Vec<_>>().into(),
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
