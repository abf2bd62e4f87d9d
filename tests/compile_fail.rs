//! The compile-time checks of `lbm_model!` (DESIGN.md, "Checked at compile time"): one
//! compile-fail case per rule in `tests/ui/fail/`, each with its expected message, and models the
//! shipped ones don't cover in `tests/ui/pass/`, which must compile and run.
//!
//! Regenerate the expected messages with `TRYBUILD=overwrite cargo test --release --test
//! compile_fail`, then read every changed `.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
