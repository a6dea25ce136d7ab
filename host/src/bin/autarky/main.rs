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
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use autarky::{Error, Runtime};
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

const AFTER_HELP: &str = "\
Backends: the GPU when one is present, else the CPU emulator (with a notice on stderr);
--emulator forces the emulator.

Exit status: 0 success; 1 the run failed (device error, timeout, I/O);
2 bad arguments (checked before anything runs: that a --trace FILE can be
created, that --gpus G GPUs are present, that the problem fits in the
memory there is); 3 the run finished but its check found a violation;
4 a solve (cg, jacobi2d/3d) ended without reaching --tol (the result is
still printed).

Logging: RUST_LOG=info (or debug, trace) logs to stderr.
Memory: jacobi2d/3d and cg refuse a solve larger than the host memory
available (MemAvailable), or than AUTARKY_HOST_MEMORY bytes when set.";

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
    /// Run on the CPU emulator, with THREADS compute threads per PE
    /// (default: one per core). Write `--emulator=4` to give a count.
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
            stdout_line(line);
        }
    }

    /// Prints the JSON result (only with --json).
    pub fn emit(&self, v: &serde_json::Value) {
        if self.json {
            stdout_line(serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("\"{e}\"")));
        }
    }

    /// A notice on stderr (not with --quiet).
    pub fn note(&self, line: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    /// The notice when there is no GPU and the emulator runs instead: the
    /// reason's first clause on stderr, the whole of it (every place looked
    /// in) in the debug log. Every subcommand prints this same line.
    pub fn note_no_gpu(&self, reason: &str, threads: u32) {
        tracing::debug!("no GPU: {reason}");
        self.note(format_args!(
            "autarky: no GPU ({}); running on the CPU emulator with {threads} threads (RUST_LOG=debug says where it looked)",
            reason.split(';').next().unwrap_or(reason)
        ));
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
                    let threads = Self::default_threads();
                    self.note_no_gpu(&reason, threads);
                    emulator(threads)
                }
                Err(e) => Err(e.into()),
            },
        }
    }
}

/// Writes a line to stdout. `println!` panics when stdout is gone (`autarky
/// dag | head -1` closes it early); here a reader that went away ends the
/// process quietly, as SIGPIPE would, and any other write error (a full
/// disk) ends it with one line on stderr and status 1.
fn stdout_line(line: impl std::fmt::Display) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = writeln!(std::io::stderr(), "error: cannot write to stdout: {e}");
        }
        std::process::exit(1);
    }
}

/// `n thing` / `n things`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A tolerance (or any number the user typed) as they would write it: the
/// shorter of the plain and the scientific form, both the shortest that
/// reads back to the same `f64` (`0`, `0.5`, `100`, `1e-8`, `1.5e-6`,
/// `1e9`; `{:e}` alone printed `0e0`, `{}` alone `0.00000001`).
pub fn number_text(x: f64) -> String {
    let (plain, sci) = (format!("{x}"), format!("{x:e}"));
    if sci.len() < plain.len() {
        sci
    } else {
        plain
    }
}

/// The line the first run of a graph prints while NVRTC compiles its
/// megakernel (a pause of 10–25 s that would otherwise look like a hang).
fn compile_notice(name: &str, cache_file: Option<&std::path::Path>) {
    let cached = match cache_file.and_then(|f| f.parent()) {
        Some(dir) => format!(
            "later runs of the same graph load it from {}",
            dir.display()
        ),
        None => "the cache is off (AUTARKY_CACHE=0): every run compiles".into(),
    };
    eprintln!("autarky: compiling {name} for this graph with NVRTC (10–25 s; {cached})");
}

fn dispatch(cli: Cli) -> Result<(), CliError> {
    if !cli.quiet {
        autarky::runtime::nvrtc::set_compile_notice(compile_notice);
    }
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

/// Output files the subcommand will write (`--trace FILE`), checked before
/// anything runs: a path that cannot be written is a usage error now, not
/// an I/O error after the whole run. Read from the parsed matches, so that
/// every subcommand with a `trace` argument is covered.
fn check_output_paths(matches: &ArgMatches) -> Result<(), CliError> {
    let Some((_, sub)) = matches.subcommand() else {
        return Ok(());
    };
    match sub.try_get_one::<PathBuf>("trace") {
        Ok(Some(path)) => check_writable("--trace", path),
        _ => Ok(()),
    }
}

/// `path` can be written as a file: it is not a directory, its directory
/// exists, and the file can be opened for writing (created, then removed
/// again, when it does not exist yet; an existing file is left as it is).
fn check_writable(flag: &str, path: &Path) -> Result<(), CliError> {
    let bad = |why: String| CliError::Usage(format!("{flag} {}: {why}", path.display()));
    if path.is_dir() {
        return Err(bad("is a directory; give a file name".into()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(bad(if dir.exists() {
            format!("{} is not a directory", dir.display())
        } else {
            format!("the directory {} does not exist", dir.display())
        }));
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| bad(format!("cannot be written: {e}")))?;
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| bad(format!("cannot be created: {e}")))?;
        let _ = std::fs::remove_file(path);
    }
    Ok(())
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
            eprintln!("{}", one_line(&e.render().to_string(), std::env::args()));
            ExitCode::from(2)
        }
    }
}

/// clap's rendered error `text` as one line: its first line, the arguments
/// a "…were not provided:" lists, and its hints (the possible values of an
/// invalid value, "tip: a similar argument exists: …"), which the usage and
/// help text clap prints with them would otherwise take away. `args` is the
/// command line, for a hint of our own: `--emulator 4` gives no count (the
/// 4 is read as a subcommand or argument), `--emulator=4` does.
fn one_line(text: &str, args: impl IntoIterator<Item = String>) -> String {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next().unwrap_or("error: bad arguments");
    let mut out = first.to_string();
    // "…were not provided:" lists the arguments on indented lines.
    if first.ends_with(':') {
        let listed: Vec<&str> = lines
            .by_ref()
            .take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty())
            .map(str::trim)
            .collect();
        if !listed.is_empty() {
            out = format!("{out} {}", listed.join(", "));
        }
    }
    let mut hints: Vec<String> = Vec::new();
    for l in lines.map(str::trim) {
        if l.starts_with("[possible values:") {
            out = format!("{out} {l}");
        } else if let Some(tip) = l.strip_prefix("tip:") {
            hints.push(tip.trim().to_string());
        }
    }
    let args: Vec<String> = args.into_iter().collect();
    if args
        .windows(2)
        .any(|w| w[0] == "--emulator" && w[1].parse::<u32>().is_ok())
    {
        hints.push("--emulator takes its thread count as `--emulator=N`".into());
    }
    hints.push("see --help".into());
    format!("{out} ({})", hints.join("; "))
}

/// A bare number right after `--emulator` on the command line. clap takes
/// the flag without its optional count there (only `--emulator=N` gives
/// one) and the number as the command's argument — `autarky dag
/// --emulator 4 10` would run 4 tasks — so it is refused instead of
/// meaning something the user likely did not.
fn ambiguous_emulator_count(args: impl IntoIterator<Item = String>) -> Option<String> {
    let args: Vec<String> = args.into_iter().collect();
    args.windows(2)
        .find(|w| w[0] == "--emulator" && w[1].parse::<u32>().is_ok())
        .map(|w| w[1].clone())
}

fn main() -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (m, cli)))
        .map_err(|e| e.format(&mut Cli::command()));
    let (matches, cli) = match parsed {
        Ok(p) => p,
        Err(e) => return parse_error(e),
    };
    if let Some(n) = ambiguous_emulator_count(std::env::args()) {
        eprintln!(
            "error: `--emulator {n}` is ambiguous: the {n} is read as an argument of the command, not as a thread count; write `--emulator={n}` for {n} threads, or `--emulator` after the command's own arguments (see --help)"
        );
        return ExitCode::from(2);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::builder()
                .with_default_directive(tracing::level_filters::LevelFilter::WARN.into())
                .from_env_lossy(),
        )
        .with_writer(std::io::stderr)
        // Colour only for a terminal: logs written to files stay plain text.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    match check_output_paths(&matches).and_then(|()| dispatch(cli)) {
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

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_writable_trace_path_is_accepted_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        // A new file: creatable, and not left behind by the check.
        let new = dir.path().join("t.json");
        check_writable("--trace", &new).unwrap();
        assert!(!new.exists(), "the check left {} behind", new.display());
        // An existing file: writable, and not truncated by the check.
        std::fs::write(&new, b"kept").unwrap();
        check_writable("--trace", &new).unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"kept");
        // A bare file name is in the current directory, which exists.
        check_writable("--trace", Path::new("autarky-no-such-trace.json")).unwrap();
    }

    #[test]
    fn a_trace_path_that_cannot_be_written_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        for (path, why) in [
            (dir.path().to_path_buf(), "is a directory"),
            (dir.path().join("missing/t.json"), "does not exist"),
            (file.join("t.json"), "is not a directory"),
        ] {
            match check_writable("--trace", &path) {
                Err(CliError::Usage(m)) => assert!(m.contains(why), "{m}"),
                other => panic!("{}: expected a usage error, got {other:?}", path.display()),
            }
        }
    }

    /// A parse error as the user sees it: one line.
    fn parse_error_line(args: &[&str]) -> String {
        let e = Cli::command()
            .try_get_matches_from(args)
            .expect_err("the arguments are bad");
        one_line(
            &e.format(&mut Cli::command()).render().to_string(),
            args.iter().map(|a| a.to_string()),
        )
    }

    #[test]
    fn parse_errors_keep_clap_s_hints_on_their_one_line() {
        let l = parse_error_line(&["autarky", "cg", "--poisson2d", "8", "--variant", "foo"]);
        assert!(
            l.starts_with("error: invalid value 'foo' for '--variant <VARIANT>'")
                && l.contains("[possible values: standard, single-reduction]")
                && l.ends_with("(see --help)")
                && !l.contains('\n'),
            "{l}"
        );
        let l = parse_error_line(&["autarky", "dag", "--sed", "3"]);
        assert!(l.contains("a similar argument exists: '--seed'"), "{l}");
        let l = parse_error_line(&["autarky", "--emulator", "4", "dag"]);
        assert!(l.contains("`--emulator=N`"), "{l}");
        let l = parse_error_line(&["autarky", "--emulator=4", "frob"]);
        assert_eq!(l, "error: unrecognized subcommand 'frob' (see --help)");
    }

    #[test]
    fn plurals_agree_with_their_count() {
        assert_eq!(plural(1, "task", "tasks"), "1 task");
        assert_eq!(plural(0, "task", "tasks"), "0 tasks");
        assert_eq!(plural(2, "iteration", "iterations"), "2 iterations");
    }

    #[test]
    fn numbers_are_written_the_shorter_way_and_read_back_the_same() {
        for (x, want) in [
            (0.0, "0"),
            (1e-8, "1e-8"),
            (1.5e-6, "1.5e-6"),
            (0.5, "0.5"),
            (100.0, "100"),
            (1e9, "1e9"),
            (1e-300, "1e-300"),
            (-1.0, "-1"),
        ] {
            assert_eq!(number_text(x), want);
            assert_eq!(want.parse::<f64>(), Ok(x));
        }
    }
}
