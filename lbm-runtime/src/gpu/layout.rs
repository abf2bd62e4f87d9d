//! The layouts of Calore et al. 2019 §4 transcribed into WGSL from the [`Layout`] trait itself.
//!
//! All four layouts address lane `l` of cluster `k` of population `i` in storage column `col`
//! as an affine function, and place that lane at an affine row:
//!
//! ```text
//! index(i, col, k, l) = i·S_i + col·S_c + k·S_k + l        (Layout::cluster_base + l)
//! y(k, l)             = k·Y_k + l·Y_l                      (Layout::site_y)
//! ```
//!
//! (AoS: `S_i = 1, S_c = LY·Q, S_k = Q`; SoA: `S_i = NC·LY, S_c = LY, S_k = 1`; CSoA:
//! `S_k = VL, Y_k = VL, Y_l = 1`; CAoSoA: `S_i = VL, S_c = (LY/VL)·Q·VL, S_k = Q·VL, Y_k = 1,
//! Y_l = LY/VL`). Rather than restate these per layout, [`AffineLayout::probe`] measures the
//! strides from [`Layout::cluster_base`] and [`Layout::site_y`], checks that the layout really is
//! affine on this lattice, and [`AffineLayout::wgsl`] emits the one WGSL index function. A
//! future layout that is affine runs on the GPU unchanged; one that is not is refused with
//! [`GpuError::Layout`].

use super::GpuError;
use crate::layout::{Dims, Layout, LayoutKind, WithLayout};

/// The strides of an affine layout on one lattice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AffineLayout {
    /// The layout they were measured from.
    pub kind: LayoutKind,
    /// Stride of the population index `i`.
    pub si: u64,
    /// Stride of the storage column.
    pub sc: u64,
    /// Stride of the cluster index `k`.
    pub sk: u64,
    /// Lanes per cluster.
    pub vl: u64,
    /// Row stride of the cluster index: `y = k·yk + l·yl`.
    pub yk: u64,
    /// Row stride of the lane index.
    pub yl: u64,
}

impl AffineLayout {
    /// The strides of the layout `kind` on a lattice of shape `d`, measured and checked as
    /// [`AffineLayout::probe`] does; fails for a cluster width outside [`LayoutKind::WIDTHS`].
    pub fn of(kind: LayoutKind, d: &Dims) -> Result<Self, GpuError> {
        struct Probe<'a>(&'a Dims);
        impl WithLayout for Probe<'_> {
            type Output = Result<AffineLayout, GpuError>;
            fn run<L: Layout>(self) -> Self::Output {
                AffineLayout::probe::<L>(self.0)
            }
        }
        kind.dispatch(Probe(d)).unwrap_or_else(|| {
            Err(GpuError::Layout {
                layout: kind.name(),
                reason: format!(
                    "a cluster width of {} lanes; the widths are {:?}",
                    kind.vl(),
                    LayoutKind::WIDTHS
                ),
            })
        })
    }

    /// Measures the strides of `L` on a lattice of shape `d` and checks them against
    /// [`Layout::cluster_base`], [`Layout::site_y`] and [`Layout::cluster_lane`] (every
    /// population and row, and the columns at both ends and in the middle).
    pub fn probe<L: Layout>(d: &Dims) -> Result<Self, GpuError> {
        let nk = L::clusters(d);
        let cb = |i, c, k| L::cluster_base(d, i, c, k) as u64;
        let diff = |a: u64, b: u64| a.wrapping_sub(b);
        let a = Self {
            kind: L::KIND,
            si: diff(cb(1, 0, 0), cb(0, 0, 0)),
            sc: diff(cb(0, 1, 0), cb(0, 0, 0)),
            sk: if nk > 1 {
                diff(cb(0, 0, 1), cb(0, 0, 0))
            } else {
                0
            },
            vl: L::VL as u64,
            yk: L::site_y(d, 1.min(nk - 1), 0) as u64,
            yl: if L::VL > 1 {
                L::site_y(d, 0, 1) as u64
            } else {
                0
            },
        };
        a.check::<L>(d)?;
        Ok(a)
    }

    fn check<L: Layout>(&self, d: &Dims) -> Result<(), GpuError> {
        let fail = |reason: String| GpuError::Layout {
            layout: L::NAME,
            reason,
        };
        let nc = d.ncols();
        let cols = [0, 1, nc / 2, nc - 1];
        for col in cols.into_iter().filter(|&c| c < nc) {
            for i in 0..d.q {
                for k in 0..L::clusters(d) {
                    let want = L::cluster_base(d, i, col, k) as u64;
                    let got = i as u64 * self.si + col as u64 * self.sc + k as u64 * self.sk;
                    if want != got {
                        return Err(fail(format!(
                            "cluster_base({i}, {col}, {k}) = {want}, affine model gives {got}"
                        )));
                    }
                    let lanes = [0, L::VL as u64 - 1];
                    if let Some(l) = lanes
                        .into_iter()
                        .find(|l| self.population(got + l, d.q) != i)
                    {
                        return Err(fail(format!(
                            "index {} of population {i} is read as population {}",
                            got + l,
                            self.population(got + l, d.q)
                        )));
                    }
                }
            }
        }
        for y in 0..d.ly {
            let (k, l) = L::cluster_lane(d, y);
            if self.lane_of(d, y) != (k as u64, l as u64)
                || self.site_y(k as u64, l as u64) != y as u64
            {
                return Err(fail(format!(
                    "row {y} is (cluster {k}, lane {l}), which y = k·{} + l·{} does not invert",
                    self.yk, self.yl
                )));
            }
        }
        Ok(())
    }

    /// The population of storage index `g` when the layout has `q` populations: `(g / S_i) mod
    /// Q`. Every layout of Calore et al. 2019 nests `i` between what lies below its stride (a cluster's
    /// lanes, or the rows of a column) and what lies above (multiples of `Q·S_i`), which
    /// [`AffineLayout::probe`] checks.
    pub fn population(&self, g: u64, q: usize) -> usize {
        ((g / self.si) % q as u64) as usize
    }

    /// The row of lane `l` of cluster `k`.
    pub fn site_y(&self, k: u64, l: u64) -> u64 {
        k * self.yk + l * self.yl
    }

    /// The (cluster, lane) of row `y` ([`Layout::cluster_lane`]).
    pub fn cluster_lane(&self, d: &Dims, y: usize) -> (usize, usize) {
        let (k, l) = self.lane_of(d, y);
        (k as usize, l as usize)
    }

    /// Index of population `i` of the site in storage line `line`, row `y`
    /// ([`Layout::line_index`]).
    pub fn line_index(&self, d: &Dims, i: usize, line: usize, y: usize) -> usize {
        let (k, l) = self.lane_of(d, y);
        (i as u64 * self.si + line as u64 * self.sc + k * self.sk + l) as usize
    }

    /// Index of population `i` of plane site `s` in storage plane `col` ([`Layout::index`]).
    pub fn index(&self, d: &Dims, i: usize, col: usize, s: usize) -> usize {
        if d.lz == 1 {
            return self.line_index(d, i, col, s);
        }
        let (y, z) = d.yz(s);
        self.line_index(d, i, d.line(col, z), y)
    }

    /// The (cluster, lane) of row `y`: the larger row stride is the major digit.
    pub fn lane_of(&self, d: &Dims, y: usize) -> (u64, u64) {
        let y = y as u64;
        let nk = (d.ly as u64) / self.vl;
        match self.inverse() {
            Inverse::Scalar => (y, 0),
            Inverse::LaneMinor => (y / self.vl, y % self.vl),
            Inverse::ClusterMinor => (y % nk, y / nk),
        }
    }

    fn inverse(&self) -> Inverse {
        if self.vl == 1 {
            Inverse::Scalar
        } else if self.yl == 1 {
            Inverse::LaneMinor
        } else {
            Inverse::ClusterMinor
        }
    }

    /// WGSL of `fn site_y(k, l) -> u32` and `fn idx(i, col, y) -> u32`, the storage index of
    /// population `i` of the site in storage column `col`, row `y` (the transcription of
    /// [`Layout::index`]); `NK` is the shader's constant `LY / VL`.
    pub fn wgsl(&self) -> String {
        let kl = match self.inverse() {
            Inverse::Scalar => "    let k = y;\n    let l = 0u;\n".to_string(),
            Inverse::LaneMinor => format!(
                "    let k = y / {vl}u;\n    let l = y % {vl}u;\n",
                vl = self.vl
            ),
            Inverse::ClusterMinor => "    let k = y % NK;\n    let l = y / NK;\n".to_string(),
        };
        format!(
            "fn site_y(k: u32, l: u32) -> u32 {{\n    return k * {yk}u + l * {yl}u;\n}}\n\
             fn col_base(col: u32, y: u32) -> u32 {{\n{kl}    return col * {sc}u + k * {sk}u + l;\n}}\n\
             fn idx(i: u32, col: u32, y: u32) -> u32 {{\n    return i * {si}u + col_base(col, y);\n}}\n",
            yk = self.yk,
            yl = self.yl,
            sc = self.sc,
            sk = self.sk,
            si = self.si,
        )
    }
}

/// How a row splits into (cluster, lane).
enum Inverse {
    /// One lane per cluster: `k = y`.
    Scalar,
    /// `y = k·VL + l` (CSoA).
    LaneMinor,
    /// `y = l·NK + k` (CAoSoA).
    ClusterMinor,
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
