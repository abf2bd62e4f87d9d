//! The bounced link as a value: which post-collision populations a bounced link reads, from
//! which sites, with which weights — written once, here, and evaluated by the CPU kernels
//! ([`Interp::apply`]) and written out as WGSL by the GPU shader generator (`gpu::shader`),
//! both from [`TERMS`].
//!
//! A link `i` of a fluid site `x` whose neighbour `x − c_i` lies beyond a wall takes, with
//! `f*` the post-collision populations, `ī` the opposite of `i` and the wall at `x + q c_ī`,
//!
//! ```text
//! f_i(x, t+1) = Σ_k w_k f*_{p_k}(x + s_k c_i) + δ_i,
//! ```
//!
//! the terms `(p_k, s_k)` of [`TERMS`], the weights `w_k` of the link's [`Interp`] and `δ_i`
//! the moving wall's momentum. Half-way bounce-back is the single term `f*_ī(x)` (`q = ½`);
//! interpolated bounce-back (Bouzidi, Firdaouss & Lallemand 2001) weighs the populations of
//! up to three sites along the link:
//!
//! ```text
//! linear,     q < ½:  2q f*_ī(x) + (1 − 2q) f*_ī(x + c_i)
//!             q ≥ ½:  f*_ī(x) / 2q + (2q − 1)/2q · f*_i(x)
//! quadratic,  q < ½:  q(1 + 2q) f*_ī(x) + (1 − 4q²) f*_ī(x + c_i) − q(1 − 2q) f*_ī(x + 2c_i)
//!             q ≥ ½:  f*_ī(x) / q(2q + 1) + (2q − 1)/q · f*_i(x) − (2q − 1)/(2q + 1) · f*_i(x + c_i)
//! ```
//!
//! Both are exact for a velocity profile along the link that vanishes on the wall — linear,
//! or, quadratic, a parabola — so the wall is second-order accurate wherever it lies; the
//! quadratic one has the smaller error constant (Bouzidi et al. 2001, Fig. 4). A link whose
//! stencil lacks a fluid site falls back to the lower order: quadratic to linear, linear (at
//! `q < ½`) to half-way.
//!
//! The links that enter through an extrapolated outflow ([`crate::Wall::Outflow`]) are links
//! of the same kind: their population is the one the site's inner neighbour `x + n` pulls
//! (`n` the inward normal), a zero normal gradient of the populations,
//!
//! ```text
//! f_i(x, t+1) = f_i(x + n, t+1) = f*_i(x + n − c_i),
//! ```
//!
//! a term whose site `x − c_i` is brought back onto the outflow's plane: `c_i·n = 1` for the
//! links that cross it (velocity components in {−1, 0, 1}), so its site lies in the plane,
//! beside `x`. It is the first-order extrapolation of the populations across the outflow
//! (Yu, Mei & Shyy 2005 give the second-order one, `2 f_i(x + n) − f_i(x + 2n)`; Krüger et al.
//! 2017, ch. 5): pressure and vortices leave through it with little reflection, where a
//! Zou–He pressure side, holding the density, reflects a pressure wave whole.

use crate::{Model, Real};

/// Which population of a site a [`Term`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pop {
    /// `f*_ī`, the population heading for the wall.
    Opposite,
    /// `f*_i`, the population leaving it.
    Same,
}

impl Pop {
    /// The population's index for link `i` of model `M`.
    #[inline(always)]
    pub fn of<M: Model>(self, i: usize) -> usize {
        match self {
            Pop::Opposite => M::OPPOSITE[i],
            Pop::Same => i,
        }
    }
}

/// One term of a bounced link: population `pop` of the site `x + step · c_i`, or — `flat`,
/// the axis of an outflow's normal — of `x + step · c_i` with its coordinate along that axis
/// `x`'s own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Term {
    pub pop: Pop,
    pub step: i32,
    pub flat: Option<usize>,
}

impl Term {
    /// The offset of the term's site from `x`, for link velocity `c`.
    #[inline(always)]
    pub fn offset(self, c: [i32; 3]) -> [i32; 3] {
        let mut o = c.map(|v| v * self.step);
        if let Some(a) = self.flat {
            o[a] = 0;
        }
        o
    }

    /// Whether the term's site is read from the lattice's own columns, wrapped in x, rather
    /// than through its halo: a site two links away may lie beyond the halo. Only a whole
    /// lattice reads such terms (a slab refuses quadratic walls,
    /// [`Interpolation::Quadratic`]), where wrapping is exact — a periodic lattice's halo is
    /// the image of its own columns — and, in a lattice closed in x, never crosses an edge
    /// (the term's site is fluid, so inside).
    pub fn wraps(self) -> bool {
        self.step > 1
    }
}

/// The terms a link reads from its site's own slots in both states of the in-place scheme,
/// `f*_ī(x)` and `f*_ī(x + c_i)` (`TERMS[0]` and `TERMS[1]`); it holds the others before
/// each half-step (`Boundaries::held_terms`), as another site's sweep may overwrite where
/// they lie before the link reads them.
pub(crate) const OWN_SLOTS: usize = 2;

/// Number of terms of a bounced link.
pub(crate) const TERMS_LEN: usize = 8;

/// The terms of a bounced link, in the order their products are summed: the first is
/// half-way bounce-back's, the next four the interpolations', the last three the outflow's
/// (its normal along x, y or z); the weights of [`Interp`] go with them one by one.
pub(crate) const TERMS: [Term; TERMS_LEN] = [
    Term {
        pop: Pop::Opposite,
        step: 0,
        flat: None,
    },
    Term {
        pop: Pop::Opposite,
        step: 1,
        flat: None,
    },
    Term {
        pop: Pop::Same,
        step: 0,
        flat: None,
    },
    Term {
        pop: Pop::Opposite,
        step: 2,
        flat: None,
    },
    Term {
        pop: Pop::Same,
        step: 1,
        flat: None,
    },
    Term {
        pop: Pop::Same,
        step: -1,
        flat: Some(0),
    },
    Term {
        pop: Pop::Same,
        step: -1,
        flat: Some(1),
    },
    Term {
        pop: Pop::Same,
        step: -1,
        flat: Some(2),
    },
];

/// How the links that cross a curved wall are bounced back
/// ([`crate::Obstacles::with_wall_distance`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// Linear interpolation of two populations (Bouzidi et al. 2001): reads the site and its
    /// neighbour along the link.
    #[default]
    Linear,
    /// Quadratic interpolation of three populations (Bouzidi et al. 2001): a link whose wall
    /// lies at `q < ½` reads two sites along it, further than a slab's halo reaches, so it
    /// runs on a whole lattice (CPU or GPU), and MPI ranks and the host/device split refuse it.
    Quadratic,
}

/// The weights of one bounced link, one per term of [`TERMS`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interp<T> {
    pub w: [T; TERMS_LEN],
}

impl<T: Real> Interp<T> {
    /// Half-way bounce-back, `f_i(x) = f*_ī(x)`.
    pub fn halfway() -> Self {
        Self::of([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    }

    /// The zero-gradient outflow whose normal lies along `axis`: `f_i(x) = f*_i(x + n − c_i)`.
    pub fn outflow(axis: usize) -> Self {
        let mut w = [0.0; TERMS_LEN];
        w[TERMS_LEN - 3 + axis] = 1.0;
        Self::of(w)
    }

    fn of(w: [f64; TERMS_LEN]) -> Self {
        Self {
            w: w.map(T::from_f64),
        }
    }

    /// The interpolation `how` for a wall at `q ∈ (0, 1]` along the link, where `fluid[k]`
    /// says whether the site `x + (k + 1) c_i` is fluid and joined to `x` (no wall between),
    /// with the fall-backs of the module's doc. Also the share of the wall's momentum the
    /// link takes: `1` where the population is interpolated before it meets the wall
    /// (`q < ½`), the first weight where it meets the wall first (Bouzidi et al. 2001, §3).
    pub fn new(how: Interpolation, q: f64, fluid: [bool; 2]) -> (Self, f64) {
        let w = match (how, q >= 0.5) {
            (Interpolation::Quadratic, true) if fluid[0] => {
                let t = 2.0 * q + 1.0;
                [
                    1.0 / (q * t),
                    0.0,
                    (2.0 * q - 1.0) / q,
                    0.0,
                    -(2.0 * q - 1.0) / t,
                ]
            }
            (_, true) => [0.5 / q, 0.0, (2.0 * q - 1.0) / (2.0 * q), 0.0, 0.0],
            (Interpolation::Quadratic, false) if fluid[0] && fluid[1] => [
                q * (1.0 + 2.0 * q),
                1.0 - 4.0 * q * q,
                0.0,
                -q * (1.0 - 2.0 * q),
                0.0,
            ],
            (_, false) if fluid[0] => [2.0 * q, 1.0 - 2.0 * q, 0.0, 0.0, 0.0],
            (_, false) => return (Self::halfway(), 1.0),
        };
        let share = if q >= 0.5 { w[0] } else { 1.0 };
        let mut all = [0.0; TERMS_LEN];
        all[..w.len()].copy_from_slice(&w);
        (Self::of(all), share)
    }

    /// `Σ_k w_k f*_{p_k}(x + s_k c_i)`, `read(k, term)` reading the population of term `k`; a
    /// term of weight 0 beyond the first is not read (its site may lie beyond the lattice's
    /// reach).
    #[inline(always)]
    pub fn apply(&self, read: impl Fn(usize, Term) -> T) -> T {
        let zero = T::from_f64(0.0);
        let mut v = self.w[0] * read(0, TERMS[0]);
        for (k, (w, term)) in self.w.iter().zip(TERMS).enumerate().skip(1) {
            if *w != zero {
                v += *w * read(k, term);
            }
        }
        v
    }

    /// The largest step along the link of a term this link reads (0 for the outflow's,
    /// which read no further than the site's own pull).
    pub fn reach(&self) -> i32 {
        let zero = T::from_f64(0.0);
        (self.w.iter().zip(TERMS))
            .filter(|(w, _)| **w != zero)
            .map(|(_, t)| t.step.max(0))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
