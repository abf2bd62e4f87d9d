//! The compile-time checks of `lbm_model!`: one compile-fail case per rule in `tests/ui/fail/`,
//! each with its expected message. (Models the shipped ones don't cover, which must compile and
//! run, are ordinary tests: `lbm-validation/tests/physics/dsl/`.) Every case is refused by the
//! macro itself, before any code it would generate is type-checked, so each names the macro by
//! this crate (`lbm_macros::lbm_model`, which the facade re-exports as `lbm::lbm_model`) and
//! trybuild checks it against this crate alone: without the facade, its dependency graph (wgpu,
//! the shipped models) is not checked a second time in trybuild's own target directory. A case
//! whose refusal needs the generated code type-checked would need the facade back as a
//! development dependency.
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
