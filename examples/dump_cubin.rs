//! Writes the megakernel CUBIN for the sanitizer graph's kind to a file, for
//! offline disassembly (`cuobjdump -sass`): `cargo run --example dump_cubin -- out.cubin`.
fn main() {
    let src = include_str!("sanitize.rs");
    let start = src.find("const BODY: &str = r#\"").unwrap() + 22;
    let end = src[start..].find("\"#;").unwrap() + start;
    let kind = autarky::TaskKind::new("counted", &src[start..end]).arg_size_bytes(24);
    let cubin = autarky::runtime::source::compile(&[kind], 128, 90).expect("compile");
    std::fs::write(
        std::env::args().nth(1).unwrap_or("megakernel.cubin".into()),
        cubin,
    )
    .unwrap();
}
