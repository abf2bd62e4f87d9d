//! The four data layouts of Calore et al. 2019 §4 (and Calore et al. 2018): where population
//! `i` of a site lives in memory. This module is the one place that defines the addressing;
//! the GPU backend mirrors [`Layout::index`] in WGSL.
//!
//! # Geometry
//! A lattice has `LX × LY` sites (2-D) or `LX × LY × LZ` sites (3-D) plus `H = M::HALO` halo
//! *planes* on each side in x, so `NC = LX + 2H` stored planes; storage plane `col = x + H` holds
//! the sites of `x` (halo planes `col < H` and `col ≥ LX + H` hold copies filled from the periodic
//! image, a neighbour rank or the GPU part of the slab; x-major storage makes a halo plane
//! contiguous, Calore et al. 2016 §4). In 2-D a plane is a column of `LY` sites (`LZ = 1`). A
//! *ring* ([`Dims::ring`]) is a small array of `w` planes in the same layout that holds site plane
//! `x` at `x mod w` (the CPU's paired two-copy sweep, `kernels::paired`).
//!
//! A plane is `LZ` *lines* of `LY` sites: line `z` of plane `col` is storage line
//! `col·LZ + z`, and the layouts below address lines exactly as the 2-D lattice addresses its
//! columns, so every formula and every kernel is one code for both dimensions. Within a plane
//! a site is numbered `s = z·LY + y` ([`Dims::plane_site`]); the column-wise machinery
//! (halos, slabs, checkpoints, moments) walks planes site by site in that order.
//!
//! In y and z there are **no halo rows**: each is a ring (`LY` and `LZ` sites), and streaming
//! wraps around it. Walls at the bottom and top are placed half-way across the y-wrap
//! (between rows `LY − 1` and `0`) and enforced by the boundary rules, which replace every
//! population that crossed the wrap. This keeps every line exactly `LY` sites long, which is
//! what lets CAoSoA turn a y-shift into an aligned cluster move (see [`Shifted`]); a z-shift
//! is a move to another line.
//!
//! # Clusters
//! Each layout groups the sites of one line into `LY / VL` *clusters* of `VL` *lanes*, and
//! stores the lanes of cluster `k`, population `i`, at `VL` consecutive addresses starting at
//! [`Layout::cluster_base`] (`line` the storage line, `NL = NC·LZ` lines in all):
//!
//! | layout | VL | site of (cluster k, lane l) | `index(i, line, y)` |
//! |---|---|---|---|
//! | [`Aos`] | 1 | `y = k` | `(line·LY + y)·Q + i` |
//! | [`Soa`] | 1 | `y = k` | `(i·NL + line)·LY + y` |
//! | [`CSoa<VL>`] | VL | `y = k·VL + l` | `(i·NL + line)·LY + y` (SoA addresses, processed by clusters) |
//! | [`CAoSoa<VL>`] | VL | `y = l·(LY/VL) + k` | `((line·LY/VL + k)·Q + i)·VL + l` |
//!
//! CSoA is SoA cut into aligned clusters of `VL` consecutive sites; CAoSoA cuts each line into
//! `VL` partitions of `LY/VL` sites and packs the `k`-th site of every partition into cluster
//! `k`, the `Q` clusters of one `k` one after the other (Calore et al. 2019 §4.2, Figure 5).

use crate::Real;

/// The shape of a lattice's storage: `LX × LY × LZ` sites (`LZ = 1` in 2-D), `halo` planes
/// each side in x, `q` populations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    /// Sites in x (without halos).
    pub lx: usize,
    /// Sites in y (a periodic ring; no halo rows).
    pub ly: usize,
    /// Sites in z (a periodic ring; 1 in 2-D).
    pub lz: usize,
    /// Halo planes on each side in x (`M::HALO`).
    pub halo: usize,
    /// Populations per site (`M::Q`).
    pub q: usize,
    /// `None` for a lattice's own arrays (`LX + 2·halo` stored planes, halos included);
    /// `Some(w)` for a *ring* of `w` planes that holds site plane `x` at storage plane
    /// `x mod w`, with the same lines and layout: a worker's window of planes in the CPU's
    /// paired two-copy sweep (`kernels::paired`), which pulls through it without halos.
    /// The GPU backend never sees a ring.
    pub ring: Option<usize>,
}

impl Dims {
    /// The shape of a lattice of `size = [LX, LY, LZ]` sites (`LZ = 1` in 2-D) for model `M`.
    pub fn of<M: crate::Model>(size: [usize; 3]) -> Self {
        Self {
            lx: size[0],
            ly: size[1],
            lz: size[2],
            halo: M::HALO,
            q: M::Q,
            ring: None,
        }
    }

    /// A ring of `w` planes of this lattice's lines (see [`Dims::ring`]).
    pub fn ring_of(&self, w: usize) -> Self {
        Self {
            ring: Some(w),
            ..*self
        }
    }

    /// Stored planes (columns in 2-D): `LX + 2·halo`, halos included, or the ring's `w`.
    #[inline(always)]
    pub fn ncols(&self) -> usize {
        match self.ring {
            None => self.lx + 2 * self.halo,
            Some(w) => w,
        }
    }

    /// Stored lines of `LY` sites, halos included: `(LX + 2·halo)·LZ`.
    #[inline(always)]
    pub fn nlines(&self) -> usize {
        self.ncols() * self.lz
    }

    /// Sites in one plane of constant x: `LY·LZ`.
    #[inline(always)]
    pub fn plane(&self) -> usize {
        self.ly * self.lz
    }

    /// The sites of the site columns `xs`, whole planes: `[xs, 0..LY, 0..LZ]`.
    pub fn planes(&self, xs: std::ops::Range<usize>) -> [std::ops::Range<usize>; 3] {
        [xs, 0..self.ly, 0..self.lz]
    }

    /// Number of sites (without halos).
    pub fn sites(&self) -> usize {
        self.lx * self.plane()
    }

    /// Storage line `z` of storage plane `col`.
    #[inline(always)]
    pub fn line(&self, col: usize, z: usize) -> usize {
        col * self.lz + z
    }

    /// The number `s = z·LY + y` of site `(y, z)` within its plane.
    #[inline(always)]
    pub fn plane_site(&self, y: usize, z: usize) -> usize {
        z * self.ly + y
    }

    /// The `(y, z)` of plane site `s`.
    #[inline(always)]
    pub fn yz(&self, s: usize) -> (usize, usize) {
        (s % self.ly, s / self.ly)
    }

    /// Number of values in one copy of the lattice.
    pub fn len(&self) -> usize {
        self.nlines() * self.ly * self.q
    }

    /// Whether the lattice holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Storage column of site column `x` (which may lie in a halo: `-halo ≤ x < LX + halo`):
    /// `x + halo`, or `x mod w` in a ring of `w` planes (any `x`).
    #[inline(always)]
    pub fn col(&self, x: isize) -> usize {
        match self.ring {
            None => (x + self.halo as isize) as usize,
            Some(w) => x.rem_euclid(w as isize) as usize,
        }
    }

    /// `x + dx` on the periodic ring of `LX` sites (`|dx| ≤ LX`).
    #[inline(always)]
    pub fn wrap_x(&self, x: usize, dx: isize) -> usize {
        wrap(x, dx, self.lx)
    }

    /// `y + dy` on the periodic ring of `LY` sites (`|dy| ≤ LY`).
    #[inline(always)]
    pub fn wrap_y(&self, y: usize, dy: isize) -> usize {
        wrap(y, dy, self.ly)
    }

    /// `z + dz` on the periodic ring of `LZ` sites (`|dz| ≤ LZ`).
    #[inline(always)]
    pub fn wrap_z(&self, z: usize, dz: isize) -> usize {
        wrap(z, dz, self.lz)
    }

    /// Plane site `s` shifted by `(c_y, c_z)` of `c`, periodically in y and z.
    #[inline(always)]
    pub fn shift(&self, s: usize, c: [i32; 3]) -> usize {
        if self.lz == 1 {
            return self.wrap_y(s, c[1] as isize);
        }
        let (y, z) = self.yz(s);
        self.plane_site(self.wrap_y(y, c[1] as isize), self.wrap_z(z, c[2] as isize))
    }
}

/// `v + dv` on a periodic ring of `n` sites (`|dv| ≤ n`).
#[inline(always)]
fn wrap(v: usize, dv: isize, n: usize) -> usize {
    let n = n as isize;
    let w = v as isize + dv;
    (if w < 0 {
        w + n
    } else if w >= n {
        w - n
    } else {
        w
    }) as usize
}

/// Where the `VL` lanes of a cluster land when every site is shifted by `dy` in y
/// (periodically): lane `l` of the shifted cluster is element `base + (l + rotate) mod VL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shifted {
    /// The shifted sites are `VL` consecutive elements, possibly rotated by one lane (CAoSoA
    /// when the shift crosses a partition boundary).
    Contiguous {
        /// Index of the first element.
        base: usize,
        /// Lane rotation: −1, 0 or +1.
        rotate: isize,
    },
    /// The shifted sites are not consecutive in memory (CSoA across the wrap of the column):
    /// address each lane with [`Layout::index`].
    PerLane,
}

/// Calls a computation with a layout's cluster width as a const generic (`[T; VL]` needs a
/// constant, and an associated const cannot be used as one in generic code).
pub trait WithVl {
    /// The computation's result.
    type Output;
    /// Runs the computation with `VL` lanes per cluster.
    fn run<const VL: usize>(self) -> Self::Output;
}

/// A layout named at run time: one of the four and its cluster width.
///
/// The CPU kernels take the layout as a type ([`Layout`]): their speed comes from the
/// addressing being known to the compiler. Code whose speed does not depend on it — the GPU
/// backend, whose shaders are generated at run time from the layout's strides
/// (`gpu::AffineLayout`) — takes this value instead, so it is compiled once, not once per
/// layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// [`Aos`].
    Aos,
    /// [`Soa`].
    Soa,
    /// [`CSoa`] with this many lanes per cluster.
    CSoa(usize),
    /// [`CAoSoa`] with this many lanes per cluster.
    CAoSoa(usize),
}

/// A computation generic over the layout, run by [`LayoutKind::dispatch`].
pub trait WithLayout {
    /// The computation's result.
    type Output;
    /// Runs the computation with layout `L`.
    fn run<L: Layout>(self) -> Self::Output;
}

impl LayoutKind {
    /// The cluster widths a clustered layout can be named with at run time.
    pub const WIDTHS: [usize; 4] = [4, 8, 16, 32];

    /// Lanes per cluster (1 for AoS and SoA).
    pub fn vl(self) -> usize {
        match self {
            Self::Aos | Self::Soa => 1,
            Self::CSoa(vl) | Self::CAoSoa(vl) => vl,
        }
    }

    /// Runs `k` with the layout type of this kind, or returns `None` for a cluster width
    /// outside [`LayoutKind::WIDTHS`]. Each arm instantiates `k` once: keep what runs through
    /// here small (probes of the addressing, not kernels).
    pub fn dispatch<K: WithLayout>(self, k: K) -> Option<K::Output> {
        macro_rules! by_vl {
            ($layout:ident, $vl:expr) => {
                match $vl {
                    4 => k.run::<$layout<4>>(),
                    8 => k.run::<$layout<8>>(),
                    16 => k.run::<$layout<16>>(),
                    32 => k.run::<$layout<32>>(),
                    _ => return None,
                }
            };
        }
        Some(match self {
            Self::Aos => k.run::<Aos>(),
            Self::Soa => k.run::<Soa>(),
            Self::CSoa(vl) => by_vl!(CSoa, vl),
            Self::CAoSoa(vl) => by_vl!(CAoSoa, vl),
        })
    }

    /// The name as printed in tables (as [`Layout::NAME`]).
    pub fn name(self) -> &'static str {
        struct Name;
        impl WithLayout for Name {
            type Output = &'static str;
            fn run<L: Layout>(self) -> &'static str {
                L::NAME
            }
        }
        self.dispatch(Name).unwrap_or(match self {
            Self::CSoa(_) => "CSoA<VL>",
            _ => "CAoSoA<VL>",
        })
    }
}

impl std::fmt::Display for LayoutKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::CSoa(vl) => write!(f, "CSoA<{vl}>"),
            Self::CAoSoa(vl) => write!(f, "CAoSoA<{vl}>"),
            _ => f.write_str(self.name()),
        }
    }
}

/// A data layout: the mapping `(i, col, y) → index` and its cluster structure.
pub trait Layout: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    /// Name as printed in tables: `AoS`, `SoA`, `CSoA<8>`, `CAoSoA<8>`.
    const NAME: &'static str;
    /// Lanes per cluster (1 for AoS and SoA).
    const VL: usize;
    /// The same layout as a run-time value.
    const KIND: LayoutKind;

    /// Index of lane 0 of cluster `k` of population `i` in storage line `col` (a column in
    /// 2-D, line `z` of a plane in 3-D: [`Dims::line`]).
    fn cluster_base(d: &Dims, i: usize, col: usize, k: usize) -> usize;

    /// The site `y` of lane `l` of cluster `k`.
    fn site_y(d: &Dims, k: usize, l: usize) -> usize;

    /// The cluster and lane holding site `y`.
    fn cluster_lane(d: &Dims, y: usize) -> (usize, usize);

    /// Where cluster `k` of population `i` in line `col` lands after a shift by `dy` in y
    /// (`|dy| ≤ LY / VL`).
    fn shifted(d: &Dims, i: usize, col: usize, k: usize, dy: isize) -> Shifted;

    /// Runs `k` with this layout's `VL` as a const generic.
    fn dispatch<K: WithVl>(k: K) -> K::Output;

    /// The *interior* clusters `k`: those whose shifts by any `|dy| ≤ halo` are plain
    /// contiguous clusters (no wrap, no lane rotation). On the interior every index is affine in
    /// `(col, k)`, so a shifted cluster lies at a constant offset from the unshifted one, and
    /// the kernels' fast path adds precomputed offsets instead of evaluating [`Layout::shifted`].
    fn interior(d: &Dims) -> std::ops::Range<usize>;

    /// Clusters per line: `LY / VL`.
    #[inline(always)]
    fn clusters(d: &Dims) -> usize {
        d.ly / Self::VL
    }

    /// Index of population `i` of the site in storage line `line`, row `y`.
    #[inline(always)]
    fn line_index(d: &Dims, i: usize, line: usize, y: usize) -> usize {
        let (k, l) = Self::cluster_lane(d, y);
        Self::cluster_base(d, i, line, k) + l
    }

    /// Index of population `i` of plane site `s` (`z·LY + y`; the row `y` in 2-D) in storage
    /// plane `col`.
    #[inline(always)]
    fn index(d: &Dims, i: usize, col: usize, s: usize) -> usize {
        if d.lz == 1 {
            return Self::line_index(d, i, col, s);
        }
        let (y, z) = d.yz(s);
        Self::line_index(d, i, d.line(col, z), y)
    }

    /// Bytes one site occupies in one copy of the lattice.
    fn site_bytes<T: Real>(d: &Dims) -> usize {
        d.q * T::BYTES
    }
}

/// Array of structures: the `Q` populations of a site are adjacent (Calore et al. 2019, Figure 2).
#[derive(Debug, Clone, Copy, Default)]
pub struct Aos;

/// Structure of arrays: population `i` of all sites forms one array (Calore et al. 2019, Figure 2).
#[derive(Debug, Clone, Copy, Default)]
pub struct Soa;

/// Cluster structure of arrays: SoA cut into aligned clusters of `VL` consecutive sites
/// (Calore et al. 2019 §4.1, Figure 4).
#[derive(Debug, Clone, Copy, Default)]
pub struct CSoa<const VL: usize>;

/// Clustered array of structure of arrays: each column cut into `VL` partitions of `LY/VL`
/// sites, the `k`-th site of every partition packed into cluster `k`, and the `Q` clusters of
/// one `k` stored one after the other (Calore et al. 2019 §4.2, Figure 5).
#[derive(Debug, Clone, Copy, Default)]
pub struct CAoSoa<const VL: usize>;

/// Single-lane layouts: a shift is one element, wrapped around the column.
fn shifted_scalar<L: Layout>(d: &Dims, i: usize, col: usize, k: usize, dy: isize) -> Shifted {
    Shifted::Contiguous {
        base: L::line_index(d, i, col, d.wrap_y(k, dy)),
        rotate: 0,
    }
}

impl Layout for Aos {
    const NAME: &'static str = "AoS";
    const VL: usize = 1;
    const KIND: LayoutKind = LayoutKind::Aos;
    #[inline(always)]
    fn cluster_base(d: &Dims, i: usize, col: usize, k: usize) -> usize {
        (col * d.ly + k) * d.q + i
    }
    #[inline(always)]
    fn site_y(_: &Dims, k: usize, _: usize) -> usize {
        k
    }
    #[inline(always)]
    fn cluster_lane(_: &Dims, y: usize) -> (usize, usize) {
        (y, 0)
    }
    #[inline(always)]
    fn shifted(d: &Dims, i: usize, col: usize, k: usize, dy: isize) -> Shifted {
        shifted_scalar::<Self>(d, i, col, k, dy)
    }
    fn interior(d: &Dims) -> std::ops::Range<usize> {
        d.halo..d.ly.saturating_sub(d.halo)
    }
    fn dispatch<K: WithVl>(k: K) -> K::Output {
        k.run::<1>()
    }
}

impl Layout for Soa {
    const NAME: &'static str = "SoA";
    const VL: usize = 1;
    const KIND: LayoutKind = LayoutKind::Soa;
    #[inline(always)]
    fn cluster_base(d: &Dims, i: usize, col: usize, k: usize) -> usize {
        (i * d.nlines() + col) * d.ly + k
    }
    #[inline(always)]
    fn site_y(_: &Dims, k: usize, _: usize) -> usize {
        k
    }
    #[inline(always)]
    fn cluster_lane(_: &Dims, y: usize) -> (usize, usize) {
        (y, 0)
    }
    #[inline(always)]
    fn shifted(d: &Dims, i: usize, col: usize, k: usize, dy: isize) -> Shifted {
        shifted_scalar::<Self>(d, i, col, k, dy)
    }
    fn interior(d: &Dims) -> std::ops::Range<usize> {
        d.halo..d.ly.saturating_sub(d.halo)
    }
    fn dispatch<K: WithVl>(k: K) -> K::Output {
        k.run::<1>()
    }
}

impl<const VL: usize> Layout for CSoa<VL> {
    const NAME: &'static str = match VL {
        4 => "CSoA<4>",
        8 => "CSoA<8>",
        16 => "CSoA<16>",
        32 => "CSoA<32>",
        _ => "CSoA<VL>",
    };
    const VL: usize = VL;
    const KIND: LayoutKind = LayoutKind::CSoa(VL);
    #[inline(always)]
    fn cluster_base(d: &Dims, i: usize, col: usize, k: usize) -> usize {
        (i * d.nlines() + col) * d.ly + k * VL
    }
    #[inline(always)]
    fn site_y(_: &Dims, k: usize, l: usize) -> usize {
        k * VL + l
    }
    #[inline(always)]
    fn cluster_lane(_: &Dims, y: usize) -> (usize, usize) {
        (y / VL, y % VL)
    }
    #[inline(always)]
    fn shifted(d: &Dims, i: usize, col: usize, k: usize, dy: isize) -> Shifted {
        let y0 = (k * VL) as isize + dy;
        if y0 >= 0 && y0 as usize + VL <= d.ly {
            Shifted::Contiguous {
                base: (i * d.nlines() + col) * d.ly + y0 as usize,
                rotate: 0,
            }
        } else {
            Shifted::PerLane
        }
    }
    fn interior(d: &Dims) -> std::ops::Range<usize> {
        let m = d.halo.div_ceil(VL);
        m..(d.ly / VL).saturating_sub(m)
    }
    fn dispatch<K: WithVl>(k: K) -> K::Output {
        k.run::<VL>()
    }
}

impl<const VL: usize> Layout for CAoSoa<VL> {
    const NAME: &'static str = match VL {
        4 => "CAoSoA<4>",
        8 => "CAoSoA<8>",
        16 => "CAoSoA<16>",
        32 => "CAoSoA<32>",
        _ => "CAoSoA<VL>",
    };
    const VL: usize = VL;
    const KIND: LayoutKind = LayoutKind::CAoSoa(VL);
    #[inline(always)]
    fn cluster_base(d: &Dims, i: usize, col: usize, k: usize) -> usize {
        ((col * (d.ly / VL) + k) * d.q + i) * VL
    }
    #[inline(always)]
    fn site_y(d: &Dims, k: usize, l: usize) -> usize {
        l * (d.ly / VL) + k
    }
    #[inline(always)]
    fn cluster_lane(d: &Dims, y: usize) -> (usize, usize) {
        let p = d.ly / VL;
        (y % p, y / p)
    }
    /// Site `l·P + k` shifted by `dy` is `l·P + (k + dy)`: the same lane of cluster `k + dy`
    /// while `0 ≤ k + dy < P`, otherwise the neighbouring lane of cluster `k + dy ∓ P` (the
    /// last lane wraps to the first, closing the periodic ring).
    #[inline(always)]
    fn shifted(d: &Dims, i: usize, col: usize, k: usize, dy: isize) -> Shifted {
        let p = (d.ly / VL) as isize;
        let ks = k as isize + dy;
        let (kk, rotate) = if ks < 0 {
            (ks + p, -1)
        } else if ks >= p {
            (ks - p, 1)
        } else {
            (ks, 0)
        };
        Shifted::Contiguous {
            base: Self::cluster_base(d, i, col, kk as usize),
            rotate,
        }
    }
    fn interior(d: &Dims) -> std::ops::Range<usize> {
        d.halo..(d.ly / VL).saturating_sub(d.halo)
    }
    fn dispatch<K: WithVl>(k: K) -> K::Output {
        k.run::<VL>()
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
