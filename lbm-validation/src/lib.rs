//! The validation suite of `lbm` (no library code): `cargo test --release -p lbm-validation
//! --test physics` runs the physics on the host, `--test gpu` the GPU backend and the
//! host/device split. The `lbm` program's own tests are the `lbm` package's (`--test program`).
