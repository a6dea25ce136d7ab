//! Developer tool (not an example to copy): writes the megakernel CUBIN for
//! the sanitizer graph's kind to a file, for offline disassembly
//! (`cuobjdump -sass`). Needs NVRTC, not a GPU; says so and exits non-zero
//! when NVRTC is missing.
//!
//! `cargo run --features dev-tools --bin dev-dump-cubin -- out.cubin [arch]`
//! (arch as `major * 10 + minor`, default 90).

use std::process::ExitCode;

fn main() -> ExitCode {
    match dump() {
        Ok(path) => {
            println!("dev-dump-cubin: wrote {path}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dev-dump-cubin: {e}");
            ExitCode::FAILURE
        }
    }
}

fn dump() -> Result<String, String> {
    let src = include_str!("dev-sanitize.rs");
    let body = src
        .split_once("const BODY: &str = r#\"")
        .and_then(|(_, rest)| rest.split_once("\"#;"))
        .map(|(body, _)| body)
        .ok_or("dev-sanitize.rs no longer defines `const BODY`")?;
    let kind = autarky::TaskKind::new("counted", body).arg_size_bytes(24);
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "megakernel.cubin".into());
    let arch = match args.next() {
        Some(a) => a
            .parse()
            .map_err(|_| format!("arch must be a number like 90, got {a:?}"))?,
        None => 90,
    };
    let cubin = autarky::runtime::source::compile(&[kind], 128, arch)
        .map_err(|e| format!("compiling the megakernel: {e}"))?;
    std::fs::write(&path, cubin).map_err(|e| format!("writing {path}: {e}"))?;
    Ok(path)
}
