//! Host memory as the solver commands see it: what is available, and how
//! to print a size. A command estimates what its solve needs before it
//! allocates, and refuses cleanly (exit 2) when that is more than
//! [`host_available`], instead of letting the allocator abort.

/// `MemAvailable` from /proc/meminfo, when readable (Linux), capped by
/// `AUTARKY_HOST_MEMORY` (bytes) when set: a budget for the solve — and
/// what makes the refusal tests the same on a machine of any size. `None`
/// when neither is known, and then the commands do not check.
pub fn host_available() -> Option<u64> {
    let budget = std::env::var("AUTARKY_HOST_MEMORY")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok());
    let meminfo = (|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    })();
    match (meminfo, budget) {
        (Some(m), Some(b)) => Some(m.min(b)),
        (m, b) => m.or(b),
    }
}

/// `b` bytes as GiB with two decimals, or MiB (KiB, bytes) when that
/// would print 0.00 GiB.
pub fn gib(b: u64) -> String {
    let g = b as f64 / (1u64 << 30) as f64;
    if g >= 0.005 || b == 0 {
        format!("{g:.2} GiB")
    } else if b >= 5 << 19 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gib_prints_two_decimals() {
        assert_eq!(gib(3 << 29), "1.50 GiB");
        assert_eq!(gib(0), "0.00 GiB");
        // Sizes that would print 0.00 GiB: in smaller units.
        assert_eq!(gib(3 << 20), "3.0 MiB");
        assert_eq!(gib(20000), "19.5 KiB");
        assert_eq!(gib(100), "100 bytes");
    }

    #[test]
    fn host_available_reads_a_positive_amount_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(host_available().is_some_and(|b| b > 0));
        }
    }
}
