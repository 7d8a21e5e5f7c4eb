//! Compile-time behaviour of the rjax macros: the constructs they refuse, with the message and
//! span of each error (`tests/ui/fail`, snapshots in the `.stderr` files), and the constructs
//! they accept, compiled and run (`tests/ui/pass`).
//!
//! Refresh the snapshots after a deliberate change with `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
