//! Models declared with `lbm_model!` that the shipped ones don't cover: each must compile and
//! its compile-time facts and collision must be what the declaration says (the macro's
//! refusals are the compile-fail cases of `lbm-macros/tests/ui/fail`, run by
//! `lbm-macros/tests/compile_fail.rs`).

mod d2q5_bgk;
mod d2q5_passive_scalar;
mod d2q9_fixed_rate_no_params;
mod d2q9_rate_from_stress;
mod d2q9_third_order_equilibrium;
mod d2q9_trt_user_equilibrium;
