//! Shared helpers of the tests that run the `lbm` program: run it, read what it printed, and
//! find the numbers of its reports.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `lbm` with `args`.
pub fn lbm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lbm"))
        .args(args)
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .expect("the lbm program runs")
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `lbm` and expects success.
pub fn ok(args: &[&str]) -> String {
    let o = lbm(args);
    assert!(o.status.success(), "lbm {args:?} failed:\n{}", text(&o));
    text(&o)
}

/// Runs `lbm` and expects a failure whose message contains every one of `needles`.
pub fn fails(args: &[&str], needles: &[&str]) -> String {
    let o = lbm(args);
    let t = text(&o);
    assert!(!o.status.success(), "lbm {args:?} should fail:\n{t}");
    for n in needles {
        assert!(t.contains(n), "lbm {args:?}: `{n}` missing from:\n{t}");
    }
    t
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The number after `label` in `text`.
pub fn number_after(text: &str, label: &str) -> f64 {
    text.split(label)
        .nth(1)
        .and_then(|r| {
            r.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ')')
                .find(|w| !w.is_empty())
        })
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number after `{label}` in:\n{text}"))
}

/// `lbm run` of a Taylor–Green vortex that diverges within its 5,000 steps (U₀ = 0.25 with
/// τ − ½ = 10⁻⁴ on 32²); add the checks' period and the outputs.
pub const DIVERGING_VORTEX: &[&str] = &[
    "run",
    "taylor-green",
    "--lx",
    "32",
    "--velocity",
    "0.25",
    "--tau",
    "0.5001",
    "--steps",
    "5000",
];
