//! Host and device together (Calore et al. 2019 §5–6): the lattice split between the host CPU and a GPU
//! that update it concurrently, the split balanced by the model of eq. 4–8 ([`SplitModel`]).
//!
//! # The split (Calore et al. 2019, Fig. 6)
//! The `LX` columns are cut into a left border `[0, M)`, the bulk `[M, LX − M)` and a right
//! border `[LX − M, LX)`: the borders on the host, the bulk on the device. The same split
//! runs a rank's slab in the MPI ring ([`SplitSlab`]: the parts form a chain whose inner halos
//! are copied between host and device and whose outer halos come from the ring); in one
//! process ([`split_lattice`]) that slab is closed on itself, a ring of one, whose outer halos
//! are its own opposite borders (neighbours across `x = LX` when x is periodic; with x walls
//! never read across, as the outer halos of the first and last slabs of [`crate::domain`]).
//!
//! # One step (Calore et al. 2019, Fig. 7)
//! ```text
//! swap     edge columns of each part → the other parts' inner halos
//! device   propagate + bc + collide on the bulk, submitted without waiting
//! host     [MPI halos overlapped, on ranks]  propagate + bc + collide on the borders (rayon)
//! ```
//! Every site computes the arithmetic of a single lattice, on the host in Rust and on the
//! device in WGSL, so a split run matches a single-backend run to the GPU-vs-CPU tolerance.
//! Both streaming schemes run: in place (AA), what the pull half-step pushes into an inner
//! halo is folded into the sibling part's border as between ranks ([`crate::domain`]).
//!
//! Boundaries are compiled once for the global lattice and sliced ([`crate::domain`]), so
//! walls, obstacles and thermal walls act as in one lattice. `M = 0` runs the whole lattice
//! on the device and `2M = LX` on the host (no swap). Between them each part must be at
//! least a halo wide, `M ≥ H` and `LX − 2M ≥ H` ([`admissible`]): a part narrower than the
//! halo could not fill the others' halos from its own columns.
//!
//! The split is fixed by the user ([`SplitChoice::Columns`], [`SplitChoice::HostShare`]) or
//! chosen at start-up ([`SplitChoice::Auto`]): [`calibrate`] times a probe split and each
//! side alone, and [`SplitModel::optimal_m`] picks `M*`.

mod model;
mod slab;

use std::sync::Arc;

pub use model::{calibrate, SplitModel};
pub use slab::{HostLayout, SplitSlab};

use crate::blocks::Cut;
use crate::distributed::DistLattice;
use crate::domain::GlobalSpec;
use crate::gpu::GpuContext;
use crate::group::OneProcess;
use crate::{Error, Model, Real, Scheme, Soa, Solver};

/// Steps of the start-up calibration of [`SplitChoice::Auto`].
pub const CALIBRATION_STEPS: u64 = 9;

/// How the columns are shared between host and device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplitChoice {
    /// Calibrate at start-up and take the model's optimum ([`SplitModel::optimal_m`]).
    Auto,
    /// `M` border columns on each side on the host (must be [`admissible`]).
    Columns(usize),
    /// The host's share of the columns, `2M/LX` in `[0, 1]`, rounded to the nearest
    /// admissible `M`.
    HostShare(f64),
}

pub use crate::runtime_error::HeteroError;

/// Whether `M` border columns per side split a lattice (or a rank's slab) `lx` wide with halo
/// `halo`: `M = 0`, `2M = LX`, or every part at least `max(H, 1)` wide — each host border
/// (`M ≥ H`) and the device's bulk (`LX − 2M ≥ H`).
pub fn admissible(lx: usize, halo: usize, m: usize) -> bool {
    let h = halo.max(1);
    m == 0 || 2 * m == lx || (m >= h && 2 * m < lx && lx - 2 * m >= h)
}

/// The admissible `M` nearest `want` (the smaller on a tie).
pub fn nearest_admissible(lx: usize, halo: usize, want: f64) -> usize {
    (0..=lx / 2)
        .filter(|&m| admissible(lx, halo, m))
        .min_by(|&a, &b| {
            let d = |m: usize| (m as f64 - want).abs();
            d(a).total_cmp(&d(b))
        })
        .unwrap_or(0)
}

/// `M` as `choice` says for a lattice (or a rank's slab) `spec` whose host part is laid out
/// as `host`, with the model it was tuned by ([`SplitChoice::Auto`]: [`calibrate`] on `spec`,
/// then the balance of eq. 8 with `t_c`, the ring's halo exchange per row, 0 in one process).
pub fn choose_columns<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    (spec, host): (&GlobalSpec<M>, HostLayout<M, T>),
    choice: SplitChoice,
    t_c: f64,
) -> Result<(usize, Option<SplitModel>), Error> {
    Ok(match choice {
        SplitChoice::Columns(m) => (m, None),
        SplitChoice::HostShare(s) => (share_columns(spec.lx, M::HALO, s)?, None),
        SplitChoice::Auto => {
            let model = SplitModel {
                t_c,
                ..calibrate(ctx, (spec, host), CALIBRATION_STEPS)?
            };
            (model.optimal_m(), Some(model))
        }
    })
}

/// The admissible `M` nearest the host share `share = 2M/LX` of a lattice (or a rank's slab)
/// `lx` wide; refuses a share outside `[0, 1]`.
fn share_columns(lx: usize, halo: usize, share: f64) -> Result<usize, HeteroError> {
    if !(0.0..=1.0).contains(&share) {
        return Err(HeteroError::BadShare(share));
    }
    Ok(nearest_admissible(lx, halo, share * lx as f64 / 2.0))
}

/// The admissible `M` for `lx` and `halo`, as ranges (for messages).
/// Refuses `m` host columns a side on a lattice (or slab) `lx` wide unless [`admissible`],
/// naming the admissible values.
pub(crate) fn check_columns<M: Model>(lx: usize, m: usize) -> Result<(), HeteroError> {
    if admissible(lx, M::HALO, m) {
        return Ok(());
    }
    Err(HeteroError::BadColumns {
        m,
        lx,
        model: M::NAME,
        halo: M::HALO,
        admissible: admissible_list(lx, M::HALO),
    })
}

fn admissible_list(lx: usize, halo: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for m in (0..=lx / 2).filter(|&m| admissible(lx, halo, m)) {
        run = match run {
            Some((a, b)) if b + 1 == m => Some((a, m)),
            Some((a, b)) => {
                out.push(range_text(a, b));
                Some((m, m))
            }
            None => Some((m, m)),
        };
    }
    out.extend(run.map(|(a, b)| range_text(a, b)));
    out.join(", ")
}

fn range_text(a: usize, b: usize) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}..={b}")
    }
}

/// The wall times of one split step's phases, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTimes {
    /// From the device's submission until it finished the bulk.
    pub device: f64,
    /// From the device's submission until the host finished its borders.
    pub host: f64,
    /// The swap of edge and halo columns between host and device, before the submission.
    pub swap: f64,
}

/// The lattice `spec` in one process, split between the host (in the layout `host`) and the
/// device of `ctx` as `choice` says, at rest, run in `scheme` ([`SplitChoice::Auto`] first
/// calibrates the model, [`calibrate`], on a few steps of scratch lattices): the ring of one
/// process whose one block is a [`SplitSlab`] — with `M = 0` on the device alone, with
/// `2M = LX` on the host alone, between them its borders on the host and its bulk on the
/// device (its outer halos its own opposite borders: neighbours across `x = LX` when x is
/// periodic; with x walls never read across, as the outer halos of the first and last slabs
/// of [`crate::domain`]). Fails on an inadmissible `M`, a share outside `[0, 1]`, or whatever
/// the blocks refuse ([`crate::domain::Slab`], [`crate::gpu::GpuSlab`]).
pub fn split_lattice<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    (spec, host): (GlobalSpec<M>, HostLayout<M, T>),
    scheme: Scheme,
    choice: SplitChoice,
) -> Result<Box<dyn Solver<Model = M, Real = T>>, Error> {
    spec.validate(host.kind)?;
    let (m, model) = choose_columns(ctx, (&spec, host), choice, 0.0)?;
    check_columns::<M>(spec.lx, m)?;
    let ring = ring_of_one(ctx, (spec, host), (m, model), scheme)?;
    Ok(Box::new(ring))
}

/// A lattice over a group of processes whose slabs are each split between host and device
/// (the ring's own windows, which read the moments of device slabs, in SoA whatever the
/// host's layout: one instantiation per model and precision).
pub type SplitRing<M, T> = DistLattice<M, Soa, T, SplitSlab<M, T>>;

/// The lattice `spec` as one [`SplitSlab`] with `m` border columns a side on the host (in the
/// layout `host`; `model`: the calibration that chose `m`, if any), in a ring of one process.
pub(crate) fn ring_of_one<M: Model, T: Real>(
    ctx: &Arc<GpuContext>,
    (spec, host): (GlobalSpec<M>, HostLayout<M, T>),
    (m, model): (usize, Option<SplitModel>),
    scheme: Scheme,
) -> Result<SplitRing<M, T>, Error> {
    DistLattice::on_blocks(
        Box::new(OneProcess),
        spec,
        Cut::WHOLE.into(),
        |g, dec, r| SplitSlab::with_columns(ctx, (g, host), (dec, r), scheme, (m, model)),
    )
}
