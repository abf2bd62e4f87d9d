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
//! Each rule is a set of affine assignments on the line through the wall ([`Set`]), which the
//! CPU grid and the GPU's fill kernel both apply. Where two walls meet, the later axis's rule
//! sets the shared nodes (y after x, z after y).

use super::store::Store;
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

/// One value the sides set on a line: `v[to] = c[0] + c[1] v[from[0]] + c[2] v[from[1]]`,
/// positions along the padded line (`g` ghosts, `n` nodes, `g` ghosts). A line's sets read
/// only nodes that no set of the same axis writes, so they may run in any order, or at once
/// (the GPU's fill kernel runs the same sets as the CPU).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Set {
    pub to: usize,
    pub c: [f64; 3],
    pub from: [usize; 2],
}

/// The sets of one unknown's line along an axis of `n` nodes and `g` ghosts a side: the
/// periodic wrap when `lo` is periodic and `wrap`, each wall given with its rule (`None`: the
/// side is not this process's to set).
pub(crate) fn line_sets(
    (lo, hi): (Option<&Side>, Option<&Side>),
    u: usize,
    (g, n): (usize, usize),
    wrap: bool,
) -> Vec<Set> {
    let mut out = Vec::new();
    if wrap && lo == Some(&Side::Periodic) {
        for j in 0..g {
            out.push(Set {
                to: j,
                c: [0.0, 1.0, 0.0],
                from: [j + n, j + n],
            });
            out.push(Set {
                to: g + n + j,
                c: [0.0, 1.0, 0.0],
                from: [g + j, g + j],
            });
        }
    }
    for (high, side) in [(false, lo), (true, hi)] {
        let Some(Side::Wall(rules)) = side else {
            continue;
        };
        // Position of the node `k` nodes inside the wall (k < 0: a ghost).
        let at = |k: isize| {
            let t = if high {
                (g + n - 1) as isize - k
            } else {
                g as isize + k
            };
            t as usize
        };
        let (f1, f2) = (at(1), at(2));
        for j in 0..=g as isize {
            let jf = j as f64;
            let (c, from) = match rules[u] {
                Rule::Value(x) if j == 0 => ([x, 0.0, 0.0], [f1, f2]),
                Rule::Value(x) => ([2.0 * x, -1.0, 0.0], [at(j), f2]),
                Rule::ZeroGradient if j == 0 => ([0.0, 4.0 / 3.0, -1.0 / 3.0], [f1, f2]),
                Rule::ZeroGradient => ([0.0, 1.0, 0.0], [at(j), f2]),
                // φ_−j = φ_0 + j (φ_0 − φ_1) with φ_0 = 2φ_1 − φ_2.
                Rule::Extrapolated => ([0.0, 2.0 + jf, -(1.0 + jf)], [f1, f2]),
            };
            out.push(Set {
                to: at(-j),
                c,
                from,
            });
        }
    }
    out
}

/// Applies `sets` to unknown `u`'s line through `v` from the padded node `base` at `stride`.
pub(crate) fn apply<T: Real>(
    v: &mut Store<T>,
    u: usize,
    (base, stride): (usize, usize),
    sets: &[Set],
) {
    for s in sets {
        let [c0, c1, c2] = s.c.map(T::from_f64);
        let value = c0
            + c1 * v.get(u, base + s.from[0] * stride)
            + c2 * v.get(u, base + s.from[1] * stride);
        v.set(u, base + s.to * stride, value);
    }
}
