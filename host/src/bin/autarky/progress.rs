//! A progress bar for GPU runs, drawn from the host-mapped progress word
//! (`GpuRun::progress`: no CUDA call) while the kernel runs.
//!
//! The bar appears only after the run has taken a second (short runs print
//! nothing extra) and only when asked (stderr is a terminal, no --quiet).
//! The loop hands over to `GpuRun::wait` — which owns the watchdog, the
//! CPU-free wait and the error report — as soon as every instance is done
//! or progress stops moving for a while (the kernel ended early or stalls).

use std::time::{Duration, Instant};

use autarky::runtime::GpuRun;
use autarky::RunReport;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long before the bar shows up.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// How long progress may stand still before `wait` takes over.
const STALL: Duration = Duration::from_secs(1);
/// Poll period of the progress word.
const POLL: Duration = Duration::from_millis(50);

/// Waits for `run` (of `total` instances), drawing a bar when `show`.
pub fn wait(run: GpuRun<'_>, total: u64, show: bool) -> autarky::Result<RunReport> {
    if !show {
        return run.wait();
    }
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40.cyan/blue} {human_pos}/{human_len} instances  {rate}  ETA {eta}",
        )
        .map(|s| {
            s.with_key(
                "rate",
                |st: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.1} M/s", st.per_sec() / 1e6);
                },
            )
        })
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let (mut last, mut last_change) = (run.progress(), Instant::now());
    while last < total && last_change.elapsed() < STALL {
        std::thread::sleep(POLL);
        let p = run.progress();
        if p != last {
            last = p;
            last_change = Instant::now();
        }
        if bar.is_hidden() && started.elapsed() >= SHOW_AFTER {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.set_position(p.min(total));
    }
    let report = run.wait();
    bar.finish_and_clear();
    report
}
