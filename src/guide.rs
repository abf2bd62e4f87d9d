//! The user guide: `docs/guide.md`, included here so that rustdoc renders it and compiles and
//! runs its examples as doc tests.
#![doc = include_str!("../docs/guide.md")]
