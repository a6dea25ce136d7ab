//! The committed C header must match the Rust ABI crate.

use autarky::abi_header::{generate, HEADER_PATH};

#[test]
fn committed_abi_header_is_fresh() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(HEADER_PATH);
    let want = generate();
    if std::env::var("AUTARKY_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{HEADER_PATH} is stale: it no longer matches shared/src/lib.rs. \
         Regenerate it with `AUTARKY_BLESS=1 cargo test --test abi` and commit the result."
    );
}

#[test]
fn layout_table_has_one_label_per_entry() {
    assert_eq!(
        autarky::abi_header::expected_layout().len(),
        autarky::abi_header::layout_labels().len()
    );
}
