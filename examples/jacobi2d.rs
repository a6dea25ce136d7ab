//! Jacobi 2D (5-point, f32) on every PE the runtime has, CPU-free: the
//! solver is a task graph of pinned tiles, halo pulses and an in-kernel
//! convergence check (autarky::solvers::jacobi).
//!
//! ```sh
//! cargo run --release --example jacobi2d -- [N=1024] [ITERATIONS=1000] [PES=1] [TILE=TYxTX] [THREADS=128]
//! ```
//!
//! Prints the time per iteration; for N ≤ 256 it also checks the grid
//! against the f64 CPU reference.

use autarky::solvers::jacobi::{JacobiConfig, JacobiSolver};
use autarky::solvers::jacobi_ref::{reference, JacobiProblem, Stencil};
use autarky::{RunOptions, Runtime};

/// Prints an error as its message (`main` returning `Result` would print
/// its `Debug` form) and exits with status 1.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `what`, a whole number: the error names the argument and the text.
fn number(what: &str, s: &str) -> Result<usize, String> {
    s.trim()
        .parse()
        .map_err(|e| format!("{what} must be a whole number, got {s:?} ({e})"))
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize, what: &str, d: usize| -> Result<usize, String> {
        std::env::args().nth(i).map_or(Ok(d), |s| number(what, &s))
    };
    let (n, iters, pes) = (
        arg(1, "N", 1024)?,
        arg(2, "ITERATIONS", 1000)?,
        arg(3, "PES", 1)?,
    );
    let tile = match std::env::args().nth(4) {
        Some(t) if t != "auto" => {
            let (y, x) = t
                .split_once('x')
                .ok_or_else(|| format!("TILE is TYxTX (or auto), got {t:?}"))?;
            Some([1, number("TILE's TY", y)?, number("TILE's TX", x)?])
        }
        _ => None,
    };
    let threads = arg(5, "THREADS", 128)? as u32;
    let heap = 2 * (n + 2) * (n + 2) * 4 + (64 << 20);
    let mut b = Runtime::builder()
        .pes(pes as u32)
        .symmetric_heap_bytes(heap.next_multiple_of(1 << 20));
    if threads != 128 {
        b = b.threads_per_block(threads);
    }
    let rt = b.build()?;
    let problem = JacobiProblem::new([1, n, n], Stencil::FivePoint)
        .with_dirichlet(|_, y, x| (x as f64 * 0.01).sin() + (y as f64 * 0.02).cos());
    let mut cfg = JacobiConfig::new(problem.clone(), iters as u32);
    cfg.tile = tile;
    let solver = JacobiSolver::new(&rt, cfg)?;
    println!(
        "{n}x{n}, {iters} iterations on {} PE(s) ({} backend), PE grid {:?}, {} tiles per PE",
        pes,
        rt.backend_name(),
        solver.pe_grid(),
        solver.tiles_per_pe()[0]
    );
    let timed = rt.backend_name() == "gpu";
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let run = solver.run_with(RunOptions {
            timed,
            ..RunOptions::iterations(iters as u32)
        })?;
        times.push(run.time_per_iteration().as_nanos() as f64 / 1000.0);
        last = Some(run);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "time per iteration: median {:.3} µs (min {:.3}, max {:.3}) over {} runs",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        times.len()
    );
    if n <= 256 {
        let run = last.expect("ran");
        let want = reference(&problem, iters)?.field;
        let err = run
            .field
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f64, f64::max);
        println!("max |autarky − f64 reference| = {err:.2e}");
        if err > 1e-4 {
            return Err(format!("the grid differs from the reference by {err:e}").into());
        }
    }
    Ok(())
}
