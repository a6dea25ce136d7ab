//! Matrix Market (`.mtx`) reading and writing.
//!
//! Hand-written rather than taken from a crate: `sprs::io` reports every
//! malformed file as one opaque `BadMatrixMarketFile`, `matrix-market-rs`
//! has no positions in its errors, and `nalgebra-sparse` would pull in
//! nalgebra and pest for one function; none names the offending line, which
//! is what a user fixing a file needs.
//!
//! Supported: `%%MatrixMarket matrix coordinate {real|integer|pattern}
//! {general|symmetric}` (keywords case-insensitive). Choices where the format
//! leaves room:
//! - **pattern** files get the value 1.0 for every entry;
//! - **symmetric** files must store the lower triangle only (`row >= col`,
//!   as the format prescribes); each off-diagonal entry is mirrored;
//! - a **duplicate** position is an error naming both lines (the format
//!   does not say whether duplicates add up, so we refuse to guess);
//! - blank lines and `%` comment lines are skipped anywhere after the header;
//! - the matrix must be square (the solvers need it);
//! - a **general** file is read as it is, symmetric or not: CG callers
//!   check with [`Csr::check_symmetric`], which names the first asymmetric
//!   pair (the `autarky cg` command does).
//!
//! Every error is a [`MatrixError::MatrixMarket`] with the 1-based line
//! number; a file that ends too early names the line after its last one.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use super::csr::{check_dims, Csr};
use super::error::{io_words, MatrixError};
use super::scalar::Scalar;

/// How the entries of a file are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

/// Reads a square coordinate Matrix Market file into a [`Csr`].
pub fn read_matrix_market(path: impl AsRef<Path>) -> Result<Csr<f64>, MatrixError> {
    use std::io::{Error, ErrorKind};
    let path = path.as_ref();
    let io = |source| MatrixError::Io {
        path: path.to_owned(),
        source,
    };
    // The common mistakes in the reader's words: a missing file (the OS
    // says "No such file or directory (os error 2)"), and a directory,
    // which opens and then fails its first read with "Is a directory".
    let file = File::open(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => io(Error::new(ErrorKind::NotFound, "no such file")),
        _ => io(e),
    })?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        // (ErrorKind::IsADirectory is newer than the MSRV, 1.80.)
        return Err(io(Error::other("is a directory, not a Matrix Market file")));
    }
    parse(BufReader::new(file), &path.display().to_string())
}

/// Parses Matrix Market text from any reader; errors name the source
/// `<input>`. See the [module docs](self) for what is accepted.
pub fn parse_matrix_market(reader: impl BufRead) -> Result<Csr<f64>, MatrixError> {
    parse(reader, "<input>")
}

/// Line-numbered reader that skips comments and blank lines.
struct Lines<R> {
    reader: R,
    source_name: String,
    line_no: usize,
    buf: String,
}

/// A Matrix Market error at `line` of `source_name`.
fn mm_err(source_name: &str, line: usize, reason: impl Into<String>) -> MatrixError {
    MatrixError::MatrixMarket {
        source_name: source_name.to_owned(),
        line,
        reason: reason.into(),
    }
}

impl<R: BufRead> Lines<R> {
    /// The next raw line (without its terminator), or `None` at the end.
    fn next_raw(&mut self) -> Result<Option<&str>, MatrixError> {
        self.buf.clear();
        let (line, name) = (self.line_no + 1, &self.source_name);
        let read = self.reader.read_line(&mut self.buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                mm_err(name, line, "not valid UTF-8 text")
            } else {
                mm_err(name, line, format!("read failed: {}", io_words(&e)))
            }
        })?;
        if read == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        Ok(Some(self.buf.trim_end_matches(['\n', '\r'])))
    }

    /// The next line that is neither blank nor a `%` comment.
    fn next_data(&mut self) -> Result<Option<(usize, &str)>, MatrixError> {
        loop {
            let Some(line) = self.next_raw()? else {
                return Ok(None);
            };
            let t = line.trim();
            if !t.is_empty() && !t.starts_with('%') {
                // Re-borrow: `line` ends where `next_raw` left the buffer.
                let t = self.buf.trim();
                return Ok(Some((self.line_no, t)));
            }
        }
    }
}

fn parse(reader: impl BufRead, source_name: &str) -> Result<Csr<f64>, MatrixError> {
    let mut lines = Lines {
        reader,
        source_name: source_name.to_owned(),
        line_no: 0,
        buf: String::new(),
    };
    let err = |line: usize, reason: String| mm_err(source_name, line, reason);

    // Line 1: the banner.
    let (field, symmetric) = {
        let Some(header) = lines.next_raw()? else {
            return Err(err(
                1,
                "empty file: expected a %%MatrixMarket header".into(),
            ));
        };
        let header = header.to_owned();
        parse_header(&header).map_err(|reason| err(1, reason))?
    };

    // The size line: rows, columns, stored entries.
    let Some((size_line, text)) = lines.next_data()? else {
        let at = lines.line_no + 1;
        return Err(err(
            at,
            "file ends before the size line `rows cols entries`".into(),
        ));
    };
    let size: Vec<&str> = text.split_whitespace().collect();
    if size.len() != 3 {
        return Err(err(
            size_line,
            format!(
                "size line must be `rows cols entries`, found {} fields",
                size.len()
            ),
        ));
    }
    let mut dims = [0usize; 3];
    for (d, tok) in dims.iter_mut().zip(&size) {
        *d = tok.parse().map_err(|_| {
            err(
                size_line,
                format!("size `{tok}` is not a non-negative integer"),
            )
        })?;
    }
    let [n_rows, n_cols, declared] = dims;
    if n_rows != n_cols {
        return Err(err(
            size_line,
            format!("matrix is {n_rows} x {n_cols}; only square matrices are supported"),
        ));
    }
    check_dims(n_rows, n_cols).map_err(|e| err(size_line, e.to_string()))?;
    let max_entries = if symmetric {
        // Lower triangle including the diagonal.
        (n_rows as u128) * (n_rows as u128 + 1) / 2
    } else {
        (n_rows as u128) * (n_cols as u128)
    };
    if declared as u128 > max_entries {
        return Err(err(
            size_line,
            format!("{declared} entries cannot fit a {n_rows} x {n_cols} matrix"),
        ));
    }

    // Entries. `line` is kept to name duplicates.
    // Capacity is capped: a lying size line must not allocate the machine away.
    let mut entries: Vec<(u32, u32, f64, usize)> = Vec::with_capacity(declared.min(1 << 20));
    let mut count = 0usize;
    while let Some((line_no, text)) = lines.next_data()? {
        if count == declared {
            return Err(err(
                line_no,
                format!("entry beyond the {declared} declared on line {size_line}"),
            ));
        }
        let (row, col, value) =
            parse_entry(text, field, n_rows, n_cols).map_err(|reason| err(line_no, reason))?;
        if symmetric && col > row {
            return Err(err(
                line_no,
                format!(
                    "entry ({}, {}) is above the diagonal; a symmetric file stores the lower triangle only",
                    row + 1,
                    col + 1
                ),
            ));
        }
        entries.push((row, col, value, line_no));
        if symmetric && row != col {
            entries.push((col, row, value, line_no));
        }
        count += 1;
    }
    if count < declared {
        let at = lines.line_no + 1;
        return Err(err(
            at,
            format!(
                "file ends after {count} of the {declared} entries declared on line {size_line}"
            ),
        ));
    }

    entries.sort_by_key(|&(r, c, _, _)| (r, c));
    for w in entries.windows(2) {
        if (w[0].0, w[0].1) == (w[1].0, w[1].1) {
            let (first, second) = (w[0].3.min(w[1].3), w[0].3.max(w[1].3));
            return Err(err(
                second,
                format!(
                    "duplicate entry ({}, {}), first given on line {first}",
                    w[0].0 + 1,
                    w[0].1 + 1
                ),
            ));
        }
    }
    let mut row_ptr = vec![0u64; n_rows + 1];
    for &(r, _, _, _) in &entries {
        row_ptr[r as usize + 1] += 1;
    }
    for i in 0..n_rows {
        row_ptr[i + 1] += row_ptr[i];
    }
    let col_idx = entries.iter().map(|e| e.1).collect();
    let values = entries.iter().map(|e| e.2).collect();
    Csr::new(n_rows, n_cols, row_ptr, col_idx, values)
}

/// `(field, symmetric)` from the banner line, or why it is not accepted.
fn parse_header(header: &str) -> Result<(Field, bool), String> {
    let words: Vec<String> = header
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    if words.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(format!(
            "expected a `%%MatrixMarket matrix coordinate <field> <symmetry>` header, found `{header}`"
        ));
    }
    if words.len() != 5 {
        return Err(format!(
            "header must have 5 words (`%%MatrixMarket matrix coordinate <field> <symmetry>`), found {}",
            words.len()
        ));
    }
    if words[1] != "matrix" {
        return Err(format!(
            "object `{}` is not supported (only `matrix`)",
            words[1]
        ));
    }
    if words[2] != "coordinate" {
        return Err(format!(
            "format `{}` is not supported (only sparse `coordinate`)",
            words[2]
        ));
    }
    let field = match words[3].as_str() {
        "real" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        other => {
            return Err(format!(
                "field `{other}` is not supported (real, integer or pattern)"
            ))
        }
    };
    let symmetric = match words[4].as_str() {
        "general" => false,
        "symmetric" => true,
        other => {
            return Err(format!(
                "symmetry `{other}` is not supported (general or symmetric)"
            ))
        }
    };
    Ok((field, symmetric))
}

/// A 0-based `(row, col, value)` from one entry line, or why not.
fn parse_entry(
    text: &str,
    field: Field,
    n_rows: usize,
    n_cols: usize,
) -> Result<(u32, u32, f64), String> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    let want = if field == Field::Pattern { 2 } else { 3 };
    if toks.len() != want {
        return Err(format!(
            "expected {want} fields (`row col{}`), found {}",
            if want == 3 { " value" } else { "" },
            toks.len()
        ));
    }
    let index = |tok: &str, what: &str, bound: usize| -> Result<u32, String> {
        let i: usize = tok
            .parse()
            .map_err(|_| format!("{what} index `{tok}` is not a positive integer"))?;
        if i == 0 || i > bound {
            return Err(format!("{what} index {i} out of range 1..={bound}"));
        }
        Ok((i - 1) as u32)
    };
    let row = index(toks[0], "row", n_rows)?;
    let col = index(toks[1], "column", n_cols)?;
    let value = match field {
        Field::Pattern => 1.0,
        Field::Integer => {
            let v: i64 = toks[2]
                .parse()
                .map_err(|_| format!("value `{}` is not an integer", toks[2]))?;
            v as f64
        }
        Field::Real => {
            let v: f64 = toks[2]
                .parse()
                .map_err(|_| format!("value `{}` is not a number", toks[2]))?;
            if !v.is_finite() {
                return Err(format!("value `{}` is not finite", toks[2]));
            }
            v
        }
    };
    Ok((row, col, value))
}

/// Writes `a` as a `coordinate real general` file. Values are printed in
/// the shortest form that reads back to the same `f64`, so
/// [`read_matrix_market`] returns a bitwise-equal matrix (an `f32` matrix
/// comes back as the `f64` of each value, exactly).
pub fn write_matrix_market<T: Scalar>(
    a: &Csr<T>,
    path: impl AsRef<Path>,
) -> Result<(), MatrixError> {
    let path = path.as_ref();
    let io = |source| MatrixError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::create(path).map_err(io)?;
    let mut w = BufWriter::new(file);
    write_matrix_market_to(a, &mut w).map_err(io)?;
    w.flush().map_err(io)
}

/// Writes `a` to any writer; see [`write_matrix_market`].
pub fn write_matrix_market_to<T: Scalar>(a: &Csr<T>, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(w, "% written by autarky")?;
    writeln!(w, "{} {} {}", a.n_rows(), a.n_cols(), a.nnz())?;
    for i in 0..a.n_rows() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            writeln!(w, "{} {} {}", i + 1, c + 1, v.to_f64())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::generate::{poisson2d, random_spd};
    use super::*;

    fn parse_str(s: &str) -> Result<Csr<f64>, MatrixError> {
        parse_matrix_market(s.as_bytes())
    }

    /// The line number and reason of a Matrix Market error.
    fn line_of(s: &str) -> (usize, String) {
        match parse_str(s) {
            Err(MatrixError::MatrixMarket { line, reason, .. }) => (line, reason),
            other => panic!("expected a Matrix Market error, got {other:?}"),
        }
    }

    #[test]
    fn round_trip_through_a_file_is_bitwise() {
        let dir = tempfile::tempdir().unwrap();
        for (name, a) in [
            ("poisson.mtx", poisson2d(5).unwrap()),
            ("random.mtx", random_spd(60, 5, 3).unwrap()),
        ] {
            let path = dir.path().join(name);
            write_matrix_market(&a, &path).unwrap();
            let b = read_matrix_market(&path).unwrap();
            assert_eq!(a, b, "{name}");
            for (x, y) in a.values().iter().zip(b.values()) {
                assert_eq!(x.to_bits(), y.to_bits());
            }
        }
    }

    #[test]
    fn f32_matrix_round_trips_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f32.mtx");
        let a = random_spd(30, 5, 9).unwrap().cast::<f32>().unwrap();
        write_matrix_market(&a, &path).unwrap();
        let b = read_matrix_market(&path).unwrap().cast::<f32>().unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn symmetric_file_expands_the_lower_triangle() {
        let a = parse_str(
            "%%MatrixMarket matrix coordinate real symmetric\n\
             % a comment\n\
             \n\
             3 3 4\n\
             1 1 4.0\n\
             2 1 -1\n\
             2 2 4e0\n\
             3 3 2.5\n",
        )
        .unwrap();
        assert!(a.is_symmetric());
        assert_eq!(a.nnz(), 5);
        assert_eq!(a.get(0, 1), Some(-1.0));
        assert_eq!(a.get(1, 0), Some(-1.0));
        assert_eq!(a.diagonal(), vec![4.0, 4.0, 2.5]);
    }

    #[test]
    fn integer_and_pattern_fields_and_case_insensitive_header() {
        let a =
            parse_str("%%matrixmarket MATRIX Coordinate Integer General\n2 2 2\n1 2 -3\n2 1 7\n")
                .unwrap();
        assert_eq!(a.get(0, 1), Some(-3.0));
        assert_eq!(a.get(1, 0), Some(7.0));
        let p = parse_str("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n")
            .unwrap();
        assert_eq!(p.values(), &[1.0, 1.0, 1.0]);
        assert!(p.is_symmetric());
    }

    #[test]
    fn general_files_are_read_as_given_and_check_symmetric_tells_them_apart() {
        let sym = parse_str(&format!("{H}2 2 4\n1 1 2\n1 2 -1\n2 1 -1\n2 2 2\n")).unwrap();
        assert!(sym.check_symmetric().is_ok());
        let nonsym = parse_str(&format!("{H}2 2 4\n1 1 2\n1 2 -1\n2 1 3\n2 2 2\n")).unwrap();
        assert_eq!(nonsym.get(1, 0), Some(3.0), "read as given");
        match nonsym.check_symmetric() {
            Err(MatrixError::NotSymmetric {
                row: 0,
                col: 1,
                value,
                mirror,
            }) => assert_eq!((value, mirror), (-1.0, 3.0)),
            other => panic!("{other:?}"),
        }
        // A symmetric file is symmetric by construction.
        let lower =
            parse_str("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 -1\n1 1 2\n")
                .unwrap();
        assert!(lower.check_symmetric().is_ok());
    }

    #[test]
    fn crlf_line_endings_are_accepted() {
        let a = parse_str("%%MatrixMarket matrix coordinate real general\r\n1 1 1\r\n1 1 2.0\r\n")
            .unwrap();
        assert_eq!(a.values(), &[2.0]);
    }

    const H: &str = "%%MatrixMarket matrix coordinate real general\n";

    #[test]
    fn malformed_headers_name_line_1() {
        for (text, needle) in [
            ("", "empty file"),
            ("hello\n1 1 1\n1 1 1\n", "expected a `%%MatrixMarket"),
            ("%%MatrixMarket matrix coordinate real\n", "5 words"),
            ("%%MatrixMarket vector coordinate real general\n", "object"),
            (
                "%%MatrixMarket matrix array real general\n",
                "format `array`",
            ),
            (
                "%%MatrixMarket matrix coordinate complex general\n",
                "field `complex`",
            ),
            (
                "%%MatrixMarket matrix coordinate real hermitian\n",
                "symmetry `hermitian`",
            ),
            (
                "%%MatrixMarket matrix coordinate real skew-symmetric\n",
                "symmetry",
            ),
        ] {
            let (line, reason) = line_of(text);
            assert_eq!(line, 1, "{text:?}: {reason}");
            assert!(reason.contains(needle), "{text:?}: {reason}");
        }
    }

    #[test]
    fn bad_size_lines_name_their_line() {
        let (line, reason) = line_of(&format!("{H}% c\n3 3\n"));
        assert_eq!(line, 3);
        assert!(reason.contains("found 2 fields"), "{reason}");
        let (line, reason) = line_of(&format!("{H}3 x 1\n"));
        assert_eq!(line, 2);
        assert!(reason.contains("`x`"), "{reason}");
        let (line, reason) = line_of(&format!("{H}% only comments\n"));
        assert_eq!(line, 3);
        assert!(reason.contains("before the size line"), "{reason}");
        let (line, reason) = line_of(&format!("{H}2 2 5\n"));
        assert_eq!(line, 2);
        assert!(reason.contains("cannot fit"), "{reason}");
    }

    #[test]
    fn non_square_matrix_is_rejected_on_its_size_line() {
        let (line, reason) = line_of(&format!("{H}%\n%\n2 3 1\n1 1 1.0\n"));
        assert_eq!(line, 4);
        assert!(reason.contains("2 x 3"), "{reason}");
        assert!(reason.contains("square"), "{reason}");
    }

    #[test]
    fn too_few_entries_name_the_line_after_the_last() {
        let (line, reason) = line_of(&format!("{H}3 3 3\n1 1 1\n2 2 1\n"));
        assert_eq!(line, 5);
        assert!(reason.contains("after 2 of the 3 entries"), "{reason}");
    }

    #[test]
    fn too_many_entries_name_the_first_extra_line() {
        let (line, reason) = line_of(&format!("{H}3 3 1\n1 1 1\n\n2 2 1\n"));
        assert_eq!(line, 5);
        assert!(
            reason.contains("beyond the 1 declared on line 2"),
            "{reason}"
        );
    }

    #[test]
    fn out_of_range_indices_name_their_line() {
        for (entry, needle) in [
            ("0 1 1.0", "row index 0 out of range"),
            ("4 1 1.0", "row index 4 out of range"),
            ("1 4 1.0", "column index 4 out of range"),
            ("-1 1 1.0", "row index `-1`"),
        ] {
            let (line, reason) = line_of(&format!("{H}3 3 2\n1 1 1.0\n{entry}\n"));
            assert_eq!(line, 4, "{entry}: {reason}");
            assert!(reason.contains(needle), "{entry}: {reason}");
        }
    }

    #[test]
    fn unparsable_values_name_their_line() {
        for (header, entry, needle) in [
            (H, "2 2 abc", "`abc` is not a number"),
            (H, "2 2 nan", "`nan` is not finite"),
            (H, "2 2 inf", "not finite"),
            (H, "2 2", "expected 3 fields"),
            (H, "2 2 1.0 5", "expected 3 fields"),
            (
                "%%MatrixMarket matrix coordinate integer general\n",
                "2 2 1.5",
                "`1.5` is not an integer",
            ),
            (
                "%%MatrixMarket matrix coordinate pattern general\n",
                "2 2 1.0",
                "expected 2 fields",
            ),
        ] {
            let first = if header.contains("pattern") {
                "1 1"
            } else {
                "1 1 1"
            };
            let (line, reason) = line_of(&format!("{header}% c\n2 2 2\n{first}\n{entry}\n"));
            assert_eq!(line, 5, "{entry}: {reason}");
            assert!(reason.contains(needle), "{entry}: {reason}");
        }
    }

    #[test]
    fn upper_triangle_entry_in_symmetric_file_is_rejected() {
        let (line, reason) =
            line_of("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n1 2 5\n");
        assert_eq!(line, 4);
        assert!(reason.contains("above the diagonal"), "{reason}");
    }

    #[test]
    fn duplicate_entries_name_both_lines() {
        let (line, reason) = line_of(&format!("{H}2 2 3\n1 2 1\n2 2 1\n1 2 3\n"));
        assert_eq!(line, 5);
        assert!(reason.contains("(1, 2), first given on line 3"), "{reason}");
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let mut bytes = format!("{H}2 2 1\n").into_bytes();
        bytes.extend_from_slice(b"1 1 \xff\n");
        match parse_matrix_market(&bytes[..]) {
            Err(MatrixError::MatrixMarket { line, reason, .. }) => {
                assert_eq!(line, 3);
                assert!(reason.contains("UTF-8"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn file_errors_name_the_path_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.mtx");
        std::fs::write(&path, format!("{H}2 2 1\n1 9 1.0\n")).unwrap();
        let msg = read_matrix_market(&path).unwrap_err().to_string();
        assert!(msg.contains("bad.mtx:3:"), "{msg}");
        let missing = read_matrix_market(dir.path().join("missing.mtx")).unwrap_err();
        assert!(matches!(missing, MatrixError::Io { .. }), "{missing}");
        assert!(
            missing.to_string().ends_with("missing.mtx: no such file"),
            "{missing}"
        );
        // A directory opens, then fails its first read: said at once.
        let d = read_matrix_market(dir.path()).unwrap_err().to_string();
        assert_eq!(
            d,
            format!(
                "{}: is a directory, not a Matrix Market file",
                dir.path().display()
            )
        );
    }
}
