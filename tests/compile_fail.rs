//! The compile-time checks of `lbm_model!`: one compile-fail case per rule in `tests/ui/fail/`,
//! each with its expected message. (Models the shipped ones don't cover, which must compile and
//! run, are ordinary tests: `lbm-validation/tests/physics/dsl/`.) trybuild only checks these cases
//! (`cargo check`), so it builds no code of the dependencies.
//!
//! Regenerate the expected messages with `TRYBUILD=overwrite cargo test --release --test
//! compile_fail`, then read every changed `.stderr`.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/fail/*.rs");
}
