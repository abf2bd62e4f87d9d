//! The sides of a finite-difference grid: periodic, or walls whose nodes and ghost layers are
//! set by a rule per unknown.
//!
//! A wall's node `φ_0` is set from the first interior nodes, second-order accurate:
//! - [`Rule::Value`]: `φ_0 = v` (Dirichlet); ghosts by odd reflection about it,
//!   `φ_−j = 2φ_0 − φ_j`;
//! - [`Rule::ZeroGradient`]: `∂n φ = 0` by the one-sided second-order difference,
//!   `φ_0 = (4φ_1 − φ_2)/3` (Neumann); ghosts by even reflection, `φ_−j = φ_j`;
//! - [`Rule::Extrapolated`]: `φ_0 = 2φ_1 − φ_2`, the linear extrapolation (the wall pressure of
//!   a viscous wall in artificial-compressibility solvers); ghosts continue the line,
//!   `φ_−j = φ_0 + j (φ_0 − φ_1)`.
//!
//! Where two walls meet, the later axis's rule sets the shared nodes (y after x, z after y).

use crate::Real;

/// How a wall sets one unknown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// A fixed value (Dirichlet).
    Value(f64),
    /// A zero normal derivative (Neumann).
    ZeroGradient,
    /// Linear extrapolation from the interior.
    Extrapolated,
}

/// One side of the grid along an axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Side {
    /// Joined to the opposite side (both sides of the axis must say so).
    Periodic,
    /// A wall: one rule per unknown, in the order of the scheme's unknowns.
    Wall(Vec<Rule>),
}

/// Sets one line's wall node and ghosts by `rule`: the line runs through `v` from `base` at
/// `stride`, `g` ghosts then `n` nodes then `g` ghosts; the wall is its first node, or its last
/// when `high`.
pub(super) fn apply<T: Real>(
    v: &mut [T],
    (base, stride): (usize, usize),
    (g, n): (usize, usize),
    high: bool,
    rule: Rule,
) {
    // Position of the node `k` nodes inside the wall (k < 0: a ghost).
    let at = |k: isize| {
        let t = if high {
            (g + n - 1) as isize - k
        } else {
            g as isize + k
        };
        base + t as usize * stride
    };
    let c = |x: f64| T::from_f64(x);
    let (f1, f2) = (v[at(1)], v[at(2)]);
    let f0 = match rule {
        Rule::Value(x) => c(x),
        Rule::ZeroGradient => (c(4.0) * f1 - f2) / c(3.0),
        Rule::Extrapolated => c(2.0) * f1 - f2,
    };
    v[at(0)] = f0;
    for j in 1..=g as isize {
        v[at(-j)] = match rule {
            Rule::Value(_) => c(2.0) * f0 - v[at(j)],
            Rule::ZeroGradient => v[at(j)],
            Rule::Extrapolated => f0 + c(j as f64) * (f0 - f1),
        };
    }
}

/// Copies one periodic line's ghosts from the nodes a period away (`n` nodes, `g` ghosts each
/// end).
pub(super) fn wrap<T: Real>(v: &mut [T], (base, stride): (usize, usize), (g, n): (usize, usize)) {
    for j in 0..g {
        v[base + j * stride] = v[base + (j + n) * stride];
        v[base + (g + n + j) * stride] = v[base + (g + j) * stride];
    }
}
