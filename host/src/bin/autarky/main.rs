//! The autarky command line: one file per subcommand (`cmd_*.rs`), this
//! file for what they share (global options, backend choice, output, exit
//! codes). Adding a subcommand: a `cmd_x.rs` with an `Args` struct and a
//! `run`, one variant in [`Command`], one arm in [`dispatch`].
//!
//! Logging goes through `tracing` (set `RUST_LOG`, e.g. `RUST_LOG=debug`);
//! the subscriber is set up here and nowhere in the library.

mod cg_footprint;
mod cmd_bench;
mod cmd_cg;
mod cmd_chain;
mod cmd_dag;
mod cmd_info;
mod cmd_jacobi;
mod dag_check;
mod memory;
mod progress;

use std::io::IsTerminal;
use std::process::ExitCode;

use autarky::{Error, Runtime};
use clap::{Parser, Subcommand};

const AFTER_HELP: &str = "\
Backends: the GPU when one is present, else the CPU emulator (with a notice on stderr);
--emulator forces the emulator.

Exit status: 0 success; 1 the run failed (device error, timeout, I/O);
2 bad arguments (including a problem too large for the memory there is);
3 the run finished but its check found a violation; 4 cg stopped at
--max-iters without reaching --tol (the result is still printed).

Logging: RUST_LOG=info (or debug, trace) logs to stderr.";

/// Task graphs that run entirely on GPUs: one persistent megakernel per
/// GPU with a device-side scheduler.
#[derive(Debug, Parser)]
#[command(name = "autarky", version, after_help = AFTER_HELP, subcommand_required = true)]
struct Cli {
    /// Print the result as one JSON object on stdout (and nothing else there).
    #[arg(long, global = true)]
    json: bool,
    /// Print nothing on stdout except --json output; errors still go to stderr.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Run on the CPU emulator, with THREADS compute threads (default: one
    /// per core). Write `--emulator=4` to give a count.
    #[arg(long, global = true, value_name = "THREADS", num_args = 0..=1,
          require_equals = true, value_parser = clap::value_parser!(u32).range(1..=1024))]
    emulator: Option<Option<u32>>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Info(cmd_info::Args),
    Dag(cmd_dag::Args),
    Chain(cmd_chain::Args),
    Bench(cmd_bench::Args),
    Jacobi2d(cmd_jacobi::Args2d),
    Jacobi3d(cmd_jacobi::Args3d),
    Cg(cmd_cg::Args),
}

/// What went wrong, and so the exit status.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The arguments make no sense together (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The runtime failed (exit 1).
    #[error(transparent)]
    Run(#[from] Error),
    /// The run finished, but what it should guarantee did not hold (exit 3).
    #[error("check failed: {0}")]
    Check(String),
    /// An iterative solve ran out of iterations before its tolerance; its
    /// result has been printed (exit 4).
    #[error("not converged: {0}")]
    NotConverged(String),
}

impl CliError {
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Run(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Check(_) => 3,
            CliError::NotConverged(_) => 4,
        }
    }
}

/// The global options every subcommand sees.
#[derive(Debug)]
pub struct Ctx {
    /// `--json`.
    pub json: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// `--emulator[=THREADS]`: `Some(None)` for one thread per core.
    pub emulator: Option<Option<u32>>,
}

impl Ctx {
    /// Prints a line of human-readable output (not with --json or --quiet).
    pub fn say(&self, line: impl std::fmt::Display) {
        if !self.json && !self.quiet {
            println!("{line}");
        }
    }

    /// Prints the JSON result (only with --json).
    pub fn emit(&self, v: &serde_json::Value) {
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("\"{e}\""))
            );
        }
    }

    /// A notice on stderr (not with --quiet).
    pub fn note(&self, line: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    /// Whether a progress bar may be drawn: stderr is a terminal and the
    /// user did not ask for quiet.
    pub fn progress_bar(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }

    /// Emulator threads when none are given: one per core, at least 2.
    fn default_threads() -> u32 {
        std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 1024) as u32)
    }

    /// The runtime: the emulator when asked, else the GPU, else (with a
    /// notice) the emulator. Returns it with its emulator thread count.
    pub fn runtime(&self) -> Result<(Runtime, Option<u32>), CliError> {
        self.runtime_with(|b| b)
    }

    /// [`Ctx::runtime`] with the builder passed through `configure` first.
    pub fn runtime_with(
        &self,
        configure: impl Fn(autarky::runtime::Builder) -> autarky::runtime::Builder,
    ) -> Result<(Runtime, Option<u32>), CliError> {
        let emulator = |threads: u32| -> Result<(Runtime, Option<u32>), CliError> {
            Ok((
                configure(Runtime::builder().emulator(threads as usize)).build()?,
                Some(threads),
            ))
        };
        match self.emulator {
            Some(t) => emulator(t.unwrap_or_else(Self::default_threads)),
            None => match configure(Runtime::builder().gpu()).build() {
                Ok(rt) => Ok((rt, None)),
                Err(Error::NoGpu { reason }) => {
                    tracing::debug!("no GPU: {reason}");
                    let threads = Self::default_threads();
                    self.note(format_args!(
                        "autarky: no GPU ({}); running on the CPU emulator with {threads} threads (RUST_LOG=debug says where it looked)",
                        reason.split(';').next().unwrap_or(&reason)
                    ));
                    emulator(threads)
                }
                Err(e) => Err(e.into()),
            },
        }
    }
}

/// `n thing` / `n things`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn dispatch(cli: Cli) -> Result<(), CliError> {
    let ctx = Ctx {
        json: cli.json,
        quiet: cli.quiet,
        emulator: cli.emulator,
    };
    match cli.command {
        Command::Info(a) => cmd_info::run(&ctx, a),
        Command::Dag(a) => cmd_dag::run(&ctx, a),
        Command::Chain(a) => cmd_chain::run(&ctx, a),
        Command::Bench(a) => cmd_bench::run(&ctx, a),
        Command::Jacobi2d(a) => cmd_jacobi::run_2d(&ctx, a),
        Command::Jacobi3d(a) => cmd_jacobi::run_3d(&ctx, a),
        Command::Cg(a) => cmd_cg::run(&ctx, a),
    }
}

/// Help and version go to stdout with status 0; every other parse error is
/// one line on stderr with status 2.
fn parse_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            eprintln!(
                "error: a subcommand is required: info, dag, chain, bench, jacobi2d, jacobi3d or cg (see 'autarky --help')"
            );
            ExitCode::from(2)
        }
        ErrorKind::MissingRequiredArgument => {
            // clap lists the missing arguments on the lines after the first.
            let text = e.render().to_string();
            let missing: Vec<&str> = text
                .lines()
                .skip(1)
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            eprintln!(
                "error: missing required argument(s): {} (see --help)",
                missing.join(", ")
            );
            ExitCode::from(2)
        }
        _ => {
            let text = e.render().to_string();
            let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
            let first = lines.next().unwrap_or("error: bad arguments");
            // "…were not provided:" lists the arguments on indented lines:
            // keep them on the one line.
            let listed: Vec<&str> = if first.ends_with(':') {
                lines
                    .take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty())
                    .map(str::trim)
                    .collect()
            } else {
                Vec::new()
            };
            if listed.is_empty() {
                eprintln!("{first} (see --help)");
            } else {
                eprintln!("{first} {} (see --help)", listed.join(", "));
            }
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_error(e),
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::builder()
                .with_default_directive(tracing::level_filters::LevelFilter::WARN.into())
                .from_env_lossy(),
        )
        .with_writer(std::io::stderr)
        .init();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the runtime's multi-line reports (deadlock reports)
            // stay whole, since they are the explanation.
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn plurals_agree_with_their_count() {
        assert_eq!(plural(1, "task", "tasks"), "1 task");
        assert_eq!(plural(0, "task", "tasks"), "0 tasks");
        assert_eq!(plural(2, "iteration", "iterations"), "2 iterations");
    }
}
