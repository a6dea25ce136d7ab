//! Parsing the benches' knobs (shared by the jacobi, cg and jacobi_mpi
//! benches and their tests, included with `#[path]`).

/// `"256,1_024"` → `[256, 1024]`; `"none"` or `""` → `[]`. Every value must
/// lie in `min..=max`; the error names the knob (`what`) and what it got.
pub fn parse_list(
    what: &str,
    s: &str,
    min: u64,
    max: u64,
) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
    let s = s.trim();
    if s.is_empty() || s == "none" {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|v| match v.trim().replace('_', "").parse::<u64>() {
            Ok(x) if (min..=max).contains(&x) => Ok(x as u32),
            _ => Err(format!(
                "{what} must be integers in {min}..={max} separated by commas (or 'none'), got {s:?}"
            )
            .into()),
        })
        .collect()
}
