//! The compile-time checks of `lbm_model!`: one compile-fail case per rule in `tests/ui/fail/`,
//! each with its expected message. (Models the shipped ones don't cover, which must compile and
//! run, are ordinary tests: `lbm-validation/tests/physics/dsl/`.) trybuild only checks these cases
//! (`cargo check`), so it builds no code of the dependencies; they live in the macro's crate so
//! that trybuild checks them against the facade `lbm` alone, without the features the suite
//! turns on (`mpi`: MPICH's bindings) and the facade's development dependencies.
//!
//! Regenerate the expected messages with `TRYBUILD=overwrite cargo test --release -p
//! lbm-macros --test compile_fail`, then read every changed `.stderr`.

#[test]
fn ui() {
    // trybuild's project builds in the dev profile, without the workspace's profile settings:
    // no debug info there (about a tenth of its time), as `[profile.dev.package."*"]` says for
    // the dependencies of ours.
    std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "false");
    trybuild::TestCases::new().compile_fail("tests/ui/fail/*.rs");
}
