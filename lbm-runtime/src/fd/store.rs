//! Where a finite-difference grid keeps its unknowns ([`FdLayout`]): the address of unknown
//! `u` at the padded node index `i`, for the three layouts of the lattices' storage that apply
//! to a grid of a few unknowns per node (Calore et al. 2019 §4): structure of arrays, array of
//! structures, and clusters of consecutive nodes along x whose unknowns' lanes lie one after
//! the other. The arithmetic of a step is the same in each, so the results are bitwise the
//! same; only the memory traffic's pattern differs.

use crate::Real;

/// Nodes processed together along x (one 64-byte vector of f64), and the cluster of
/// [`FdLayout::Clustered`].
pub(crate) const LANES: usize = 8;

/// How a grid stores its unknowns (`U` of them, `N` padded nodes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FdLayout {
    /// One array per unknown, unknown `u` of node `i` at `u·N + i` (what the device runs).
    /// The CPU processes it by clusters of `LANES` consecutive nodes along x.
    #[default]
    Soa,
    /// The unknowns of a node together: `i·U + u`.
    Aos,
    /// Clusters of `LANES` consecutive nodes along x, each unknown's `LANES` values together:
    /// `(i / LANES)·U·LANES + u·LANES + i mod LANES`.
    Clustered,
}

impl FdLayout {
    /// The name the program takes (`--layout`).
    pub fn name(self) -> &'static str {
        match self {
            FdLayout::Soa => "soa",
            FdLayout::Aos => "aos",
            FdLayout::Clustered => "caosoa",
        }
    }

    /// [`FdLayout::at`] as a WGSL function `addr(u, i)` of a grid of `nodes` padded nodes of
    /// `unknowns` (what the device's kernels address the unknowns by).
    pub(crate) fn wgsl_addr(self, (nodes, unknowns): (usize, usize)) -> String {
        let body = match self {
            FdLayout::Soa => format!("u * {nodes}u + i"),
            FdLayout::Aos => format!("i * {unknowns}u + u"),
            FdLayout::Clustered => format!(
                "(i / {LANES}u) * {}u + u * {LANES}u + i % {LANES}u",
                unknowns * LANES
            ),
        };
        format!("fn addr(u: u32, i: u32) -> u32 {{\n    return {body};\n}}\n")
    }

    /// Where unknown `u` of node `i` lives among `nodes` padded nodes of `unknowns`.
    #[inline(always)]
    pub(crate) fn at(self, dims: (usize, usize), u: usize, i: usize) -> usize {
        match self {
            FdLayout::Soa => at_in::<SOA>(dims, u, i),
            FdLayout::Aos => at_in::<AOS>(dims, u, i),
            FdLayout::Clustered => at_in::<CLUSTERED>(dims, u, i),
        }
    }
}

/// Each layout as a code (`FdLayout as u8`): the hot loops take it as a const parameter, so
/// each is compiled with its layout's addressing.
pub(crate) const SOA: u8 = FdLayout::Soa as u8;
pub(crate) const AOS: u8 = FdLayout::Aos as u8;
pub(crate) const CLUSTERED: u8 = FdLayout::Clustered as u8;

/// [`FdLayout::at`] for the layout of code `L`.
#[inline(always)]
pub(crate) fn at_in<const L: u8>((nodes, unknowns): (usize, usize), u: usize, i: usize) -> usize {
    match L {
        SOA => u * nodes + i,
        AOS => i * unknowns + u,
        _ => (i / LANES) * unknowns * LANES + u * LANES + i % LANES,
    }
}

/// The unknowns of a grid (or its integrator's register) in a layout.
#[derive(Clone)]
pub(crate) struct Store<T> {
    pub data: Vec<T>,
    pub layout: FdLayout,
    /// Padded nodes.
    pub nodes: usize,
    pub unknowns: usize,
}

impl<T: Real> Store<T> {
    /// Zeros for `unknowns` unknowns at `nodes` padded nodes (a multiple of [`LANES`] in the
    /// clustered layout).
    pub fn new(layout: FdLayout, nodes: usize, unknowns: usize) -> Self {
        debug_assert!(layout != FdLayout::Clustered || nodes.is_multiple_of(LANES));
        Self {
            data: vec![T::default(); nodes * unknowns],
            layout,
            nodes,
            unknowns,
        }
    }

    /// Where unknown `u` of node `i` lives.
    #[inline(always)]
    pub fn at(&self, u: usize, i: usize) -> usize {
        self.layout.at((self.nodes, self.unknowns), u, i)
    }

    #[inline(always)]
    pub fn get(&self, u: usize, i: usize) -> T {
        self.data[self.at(u, i)]
    }

    #[inline(always)]
    pub fn set(&mut self, u: usize, i: usize, v: T) {
        let at = self.at(u, i);
        self.data[at] = v;
    }

    /// [`Store::get`] in the layout of code `L` (this store's).
    #[inline(always)]
    pub fn get_in<const L: u8>(&self, u: usize, i: usize) -> T {
        self.data[at_in::<L>((self.nodes, self.unknowns), u, i)]
    }

    /// Unknown `u` at the `LANES` nodes from `i` along x, in the layout of code `L` (this
    /// store's).
    #[inline(always)]
    pub fn lanes_in<const L: u8>(&self, u: usize, i: usize, out: &mut [T; LANES]) {
        if L == SOA {
            let at = at_in::<L>((self.nodes, self.unknowns), u, i);
            out.copy_from_slice(&self.data[at..at + LANES]);
        } else {
            for (l, o) in out.iter_mut().enumerate() {
                *o = self.get_in::<L>(u, i + l);
            }
        }
    }

    /// Unknown `u` at the nodes `i..i + len`, in order.
    pub fn run(&self, u: usize, i: usize, len: usize) -> impl Iterator<Item = T> + '_ {
        (i..i + len).map(move |j| self.get(u, j))
    }

    /// The store cut into its planes of `plane` nodes, each a list of disjoint pieces that
    /// [`Piece::at`] addresses: one per unknown in SoA, one for the whole plane otherwise
    /// (`plane` a multiple of [`LANES`] in the clustered layout).
    pub fn planes_mut(&mut self, plane: usize) -> Vec<Vec<&mut [T]>> {
        let planes = self.nodes / plane;
        let mut out: Vec<Vec<&mut [T]>> = (0..planes).map(|_| Vec::new()).collect();
        match self.layout {
            FdLayout::Soa => {
                for unknown in self.data.chunks_mut(self.nodes) {
                    for (t, chunk) in unknown.chunks_mut(plane).enumerate() {
                        out[t].push(chunk);
                    }
                }
            }
            _ => {
                for (t, chunk) in self.data.chunks_mut(plane * self.unknowns).enumerate() {
                    out[t].push(chunk);
                }
            }
        }
        out
    }
}

/// Where unknown `u` of the node `local` of a plane lies among the plane's pieces
/// ([`Store::planes_mut`]) in the layout of code `L`: `(piece, index)`.
#[inline(always)]
pub(crate) fn piece_at<const L: u8>(
    (plane, unknowns): (usize, usize),
    u: usize,
    local: usize,
) -> (usize, usize) {
    if L == SOA {
        (u, local)
    } else {
        (0, at_in::<L>((plane, unknowns), u, local))
    }
}
