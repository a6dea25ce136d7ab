//! Jacobi 2D (5-point, f32) on every PE the runtime has, CPU-free: the
//! solver is a task graph of pinned tiles, halo pulses and an in-kernel
//! convergence check (autarky::solvers::jacobi).
//!
//! ```sh
//! cargo run --release --example jacobi -- [N=1024] [ITERATIONS=1000] [PES=1]
//! ```
//!
//! Prints the time per iteration; for N ≤ 256 it also checks the grid
//! against the f64 CPU reference.

use autarky::solvers::jacobi::{JacobiConfig, JacobiSolver};
use autarky::solvers::jacobi_ref::{reference, JacobiProblem, Stencil};
use autarky::{RunOptions, Runtime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize, d: usize| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(std::env::args().nth(i).map_or(Ok(d), |s| s.parse())?)
    };
    let (n, iters, pes) = (arg(1, 1024)?, arg(2, 1000)?, arg(3, 1)?);
    let rt = Runtime::builder().pes(pes as u32).build()?;
    let problem = JacobiProblem::new([1, n, n], Stencil::FivePoint)
        .with_dirichlet(|_, y, x| (x as f64 * 0.01).sin() + (y as f64 * 0.02).cos());
    let solver = JacobiSolver::new(&rt, JacobiConfig::new(problem.clone(), iters as u32))?;
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
