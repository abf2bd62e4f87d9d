//! [`Solver`]: the one interface to a lattice, however it is run — the engine's blocks
//! ([`crate::distributed::DistLattice`], which [`crate::backend::build`] makes for every backend
//! and process count: the host, a GPU, the two split, one process or MPI ranks), or a lone
//! [`crate::Lattice`] on the host, the one block a user may build by hand. A program (the `lbm`
//! binary, a user's own driver, the conformance tests) is written once against it and runs on
//! every backend.
//!
//! The interface speaks in *logical* order, independent of the layout and of the streaming
//! scheme: the post-collision populations `f*_i(x)` of the sites, `[(s·Q + i]` with `s` the
//! site's index in x-major order (`s = x·LY + y` in 2-D), and the moments in the order of
//! [`Model::MOMENT_NAMES`]. What one process holds is a box of sites ([`Solver::local_box`]:
//! whole x-planes on a slab of a ring, a block where the lattice is cut along y or z too); its
//! outputs are written by planes ([`Solver::output_planes`], [`crate::planes`]); nothing in the
//! signatures assumes two dimensions ([`Extent`]).
//!
//! What every backend shares is written here once, on top of the few things each backend
//! provides: the totals (mass, momentum, energy), the checkpoint — a shard per process and a
//! manifest, restored on any number of processes — and the process group's agreements (one
//! process: trivially its own).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

pub use crate::blocks::Extent;
use crate::checkpoint::{self, Shard};
use crate::error::check_values;
use crate::group::{OneProcess, Transfers};
use crate::{Checkpoint, CheckpointError, Error, Lattice, LbmError, Model, Real, Scheme};

/// The conserved totals over the fluid sites, from the post-collision populations and
/// accumulated in `f64`: mass `Σ f_i`, momentum `Σ f_i c_i`, energy `Σ f_i |c_i|²/2`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Totals {
    /// `Σ_x Σ_i f*_i(x)`.
    pub mass: f64,
    /// `Σ_x Σ_i f*_i(x) c_iα`, one entry per axis (the unused ones 0).
    pub momentum: [f64; 3],
    /// `Σ_x Σ_i f*_i(x) |c_i|² / 2`.
    pub energy: f64,
}

impl Totals {
    /// The totals of the populations `f` (`[s·Q + i]`) of the sites for which `fluid(s)`.
    pub fn of<M: Model, T: Real>(f: &[T], fluid: impl Fn(usize) -> bool) -> Self {
        let mut t = Totals::default();
        for (_, site) in f.chunks_exact(M::Q).enumerate().filter(|(s, _)| fluid(*s)) {
            for (v, c) in site.iter().zip(M::VELOCITIES) {
                let v = v.to_f64();
                t.mass += v;
                for (p, &ca) in t.momentum.iter_mut().zip(c.iter()) {
                    *p += v * f64::from(ca);
                }
                t.energy += v * c.iter().map(|&ca| f64::from(ca * ca)).sum::<f64>() / 2.0;
            }
        }
        t
    }

    fn to_vec(self) -> Vec<f64> {
        let [a, b, c] = self.momentum;
        vec![self.mass, a, b, c, self.energy]
    }

    fn from_slice(v: &[f64]) -> Self {
        Self {
            mass: v[0],
            momentum: [v[1], v[2], v[3]],
            energy: v[4],
        }
    }
}

/// Where the sites of a lattice are updated.
#[derive(Debug, Clone)]
pub enum Placement {
    /// On the host CPU (rayon).
    Host,
    /// On a GPU.
    #[cfg(feature = "gpu")]
    Device(std::sync::Arc<crate::device::GpuContext>),
    /// Border columns on the host, the bulk on a GPU.
    #[cfg(feature = "gpu")]
    Split(std::sync::Arc<crate::device::GpuContext>),
}

/// The sites of a lattice that one process holds and the store they live in, however they are
/// run: what a whole lattice ([`Solver`]) and a rank's slab on its backend
/// ([`crate::SlabBackend`]) both are. Sites are counted from the first local plane, `s =
/// (x − x0)·LY·LZ + z·LY + y`, and populations laid out `[s·Q + i]` in logical order.
///
/// On a lattice of several processes (a [`Solver`] over a group) the methods that change the
/// state are collective: a refusal on one process is every process's.
pub trait Block {
    /// The model.
    type Model: Model;
    /// The precision the populations are stored and computed in.
    type Real: Real;

    /// The model parameters.
    fn params(&self) -> &<Self::Model as Model>::Params;

    /// The streaming scheme.
    fn scheme(&self) -> Scheme;

    /// The name of the populations' layout (`AoS`, `CAoSoA<8>`, …).
    fn layout_name(&self) -> &'static str;

    /// Steps done so far.
    fn steps_done(&self) -> u64;

    /// Sets the step counter (a state restored from a checkpoint).
    fn set_steps_done(&mut self, step: u64);

    /// The post-collision populations of the local sites, `[s·Q + i]`.
    fn local_populations(&self) -> Result<Vec<Self::Real>, Error>;

    /// Sets the populations of the local sites from values laid out as
    /// [`Block::local_populations`]'; refuses a wrong count and non-finite values.
    fn set_local_populations(&mut self, values: &[Self::Real]) -> Result<(), Error>;

    /// Whether the local site `s` is solid.
    fn local_solid(&self, s: usize) -> bool;

    /// Gives the model's field `name` ([`Model::FIELDS`]) a value per local site, `[s]`; until
    /// then a field is uniform, its value in the parameters. Fails before changing anything
    /// on an unknown name, a wrong length or a non-finite value.
    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error>;

    /// The per-site values of every field of the model ([`Model::FIELDS`]) on the local sites,
    /// laid out as [`Block::set_local_field`] takes them, once any was given values per site;
    /// `None` while they are uniform (their values in the parameters).
    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error>;

    /// Where the sites are updated.
    fn placement(&self) -> Placement;

    /// The backend in words: device, threads, ranks, split.
    fn describe(&self) -> String;
}

/// What [`Solver::with_moments`] runs: given the processes of the lattice and a reader of the
/// moment fields of any local columns, it returns fields of its own (the output planes'
/// moments, say).
pub type ReadMoments<'a> =
    &'a mut dyn FnMut(&dyn Transfers<f64>, crate::planes::Columns<'_>) -> Vec<Vec<f64>>;

/// A lattice of a model, run by some backend (see the module documentation).
///
/// Methods marked *collective* must be called by every process of the lattice's group in the
/// same order (one process: no constraint); they return the same answer on every process.
pub trait Solver: Block {
    /// The global lattice's extent.
    fn extent(&self) -> Extent;

    /// Runs `n` steps and waits for them (collective).
    fn advance(&mut self, n: u64) -> Result<(), Error>;

    /// The global sites this process holds, `[xs, ys, zs]`: the whole lattice on one
    /// process, whole planes `[xs, 0..LY, 0..LZ]` on a slab of a ring, a block of a lattice
    /// cut along y or z too. The local sites of [`Block`]'s methods are these, in the order
    /// `[(x − x0)·P + s]` with `P` the box's sites per plane and `s = (z − z0)·ny + y − y0`
    /// (for whole planes, the plane site).
    fn local_box(&self) -> [Range<usize>; 3];

    /// Runs `read` with the processes of the lattice and the moments of its local sites, and
    /// gives what it returns (collective: the sites next to a cut need the neighbours' border
    /// sites, which a process exchanges into its halos as the next step would; the state does
    /// not change). `read` calls its reader for any local columns `cols` (`x − x0` over
    /// [`Solver::local_box`]) and gets their moment fields, in the order of
    /// [`Model::MOMENT_NAMES`], each indexed `[(x − x0 − cols.start)·P + s]` as the local sites
    /// (solid sites hold 0): the moments of the populations streamed once more, as
    /// [`crate::Lattice::moment_field`] gives them. A block computes the columns asked for
    /// where they lie (on the host or the device), so that a few at a time need no array of
    /// the block's size.
    fn with_moments(&mut self, read: ReadMoments<'_>) -> Result<Vec<Vec<f64>>, Error>;

    /// The moment fields of all the local sites ([`Solver::with_moments`], collective).
    fn local_moments(&mut self) -> Result<Vec<Vec<f64>>, Error> {
        let columns = self.local_box()[0].len();
        self.with_moments(&mut |_, moments| moments(0..columns))
    }

    /// For each site of `sites` (global `[x, y, z]`, on this process's planes), its
    /// post-collision populations followed by its pre-collision ones at the next step, `2Q`
    /// values a site, as [`crate::Lattice::exchanged`] gives them: what momentum exchange
    /// measures the loads on bodies from (collective). The CPU reads them at any site, the
    /// device at boundary sites ([`crate::Boundaries::sites`]: those whose links a body cuts
    /// are); a backend that cannot read them refuses, saying so.
    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<Self::Real>, Error> {
        let _ = sites;
        Err(cannot_exchange::<Self::Model>(&self.describe()).into())
    }

    /// Fails with [`LbmError::Diverged`] where a fluid site has a non-finite moment, a Mach
    /// number beyond the model's range or `T ≤ 0` (collective).
    fn check(&self) -> Result<(), Error>;

    /// The processes of the lattice and how they meet (collective methods): one process
    /// alone by default.
    fn group(&self) -> &dyn Transfers<f64> {
        &OneProcess
    }

    /// The x-planes whose outputs this process writes ([`crate::planes`]): its own where it
    /// holds whole planes, an even share of them where the lattice is cut along y or z.
    fn output_planes(&self) -> Range<usize> {
        let g = self.group();
        crate::planes::output_planes(
            &self.local_box(),
            self.extent().size(),
            (g.rank(), g.ranks()),
        )
    }

    /// The moment fields of [`Solver::output_planes`] (collective), in the order of
    /// [`Model::MOMENT_NAMES`], each indexed `[(x − x0)·LY·LZ + z·LY + y]` (solid sites hold
    /// 0): [`Solver::local_moments`] where this process holds whole planes, otherwise moved
    /// there, a few planes at a time, from the processes whose blocks hold them
    /// ([`crate::planes::to_planes`]).
    fn output_moments(&mut self) -> Result<Vec<Vec<f64>>, Error> {
        let size = self.extent().size();
        if crate::planes::whole_planes(&self.local_box(), size) {
            return self.local_moments();
        }
        let (boxes, planes) = (self.boxes_of_ranks(), self.planes_of_ranks());
        let fields = <Self::Model as Model>::MOMENT_NAMES.len();
        self.with_moments(&mut |group, moments| {
            crate::planes::to_planes(group, (&boxes, &planes), size, (fields, moments))
        })
    }

    /// [`Solver::output_moments`] from moments already taken: `own`, per-site fields of this
    /// process's own sites as [`Solver::local_moments`] gives them (any number of fields),
    /// moved to [`Solver::output_planes`] (collective: [`crate::planes::to_planes`]). What a
    /// block that writes its own VTK piece gives the outputs that read whole planes, without
    /// computing its moments twice.
    fn planes_of(&self, own: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let size = self.extent().size();
        let [_, ys, zs] = self.local_box();
        let per_column = ys.len() * zs.len();
        let mut columns = |cols: Range<usize>| -> Vec<Vec<f64>> {
            let sites = cols.start * per_column..cols.end * per_column;
            own.iter().map(|f| f[sites.clone()].to_vec()).collect()
        };
        let (boxes, planes) = (self.boxes_of_ranks(), self.planes_of_ranks());
        let fields = (own.len(), &mut columns as crate::planes::Columns<'_>);
        crate::planes::to_planes(self.group(), (&boxes, &planes), size, fields)
    }

    /// The columns (planes in 3-D) beside this process's output planes, `[before its first,
    /// after its last]`, wrapping around the lattice: each process gives its own `[first,
    /// last]` — any values per column, e.g. its moments there — and receives its neighbours'
    /// (collective with the neighbours). On one process, `[last, first]`. What a stencil
    /// across a slab's edge needs, such as a derivative in x.
    fn neighbour_columns(&self, ends: [Vec<f64>; 2]) -> [Vec<f64>; 2] {
        let g = self.group();
        g.swap(g.ring_neighbours(), ends)
    }

    /// Every process's [`Solver::output_planes`], in rank order, on every process
    /// (collective).
    fn planes_of_ranks(&self) -> Vec<Range<usize>> {
        let local = self.output_planes();
        let starts = self.group().each(local.start as u64);
        let ends = self.group().each(local.end as u64);
        starts
            .into_iter()
            .zip(ends)
            .map(|(a, b)| a as usize..b as usize)
            .collect()
    }

    /// Every process's [`Solver::local_box`], in rank order, on every process (collective).
    fn boxes_of_ranks(&self) -> Vec<[Range<usize>; 3]> {
        let local = self.local_box();
        let [starts, ends] = [0, 1].map(|end| {
            let ends = local
                .clone()
                .map(|r| if end == 0 { r.start } else { r.end } as u64);
            ends.map(|e| self.group().each(e))
        });
        (0..self.group().ranks())
            .map(|r| std::array::from_fn(|a| starts[a][r] as usize..ends[a][r] as usize))
            .collect()
    }

    /// The totals over the whole lattice (collective): [`totals`].
    fn totals(&self) -> Result<Totals, Error>
    where
        Self: Sized,
    {
        totals(self)
    }

    /// Sets every local site to the equilibrium of the moments `moments(x, y)` (global
    /// coordinates, order of [`Model::MOMENT_NAMES`]); refuses a wrong count or non-finite
    /// moments before changing anything. As for [`crate::Lattice::set_equilibrium`], the
    /// velocity given is the bare one of the equilibrium.
    ///
    /// By default the equilibria of the local planes are built in one array and set with
    /// [`Block::set_local_populations`]; the host's lattices write them in place.
    fn set_equilibrium_at(
        &mut self,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        let (local, ly) = (self.local_box(), self.extent().size()[1]);
        let f = equilibria::<Self::Model, Self::Real>(&local, ly, self.params(), moments)?;
        self.set_local_populations(&f)
    }

    /// Writes the whole state to the checkpoint `path` (collective): [`write_checkpoint`].
    fn write_checkpoint(&self, path: &Path) -> Result<(), Error>
    where
        Self: Sized,
    {
        write_checkpoint(self, path)
    }

    /// As [`Solver::write_checkpoint`], with what the application says of the run:
    /// [`write_checkpoint_about`].
    fn write_checkpoint_about(
        &self,
        path: &Path,
        about: &BTreeMap<String, String>,
    ) -> Result<(), Error>
    where
        Self: Sized,
    {
        write_checkpoint_about(self, path, about)
    }

    /// Continues from `checkpoint` (collective): [`restore`].
    fn restore(
        &mut self,
        checkpoint: &Checkpoint<Self::Model, Self::Real>,
        path: &Path,
    ) -> Result<(), Error>
    where
        Self: Sized,
    {
        restore(self, checkpoint, path)
    }
}

// What is written on the trait's own methods alone (the totals, the checkpoint's writing and
// restoring) takes a `dyn Solver`: compiled once per model and precision rather than once per
// backend and layout. The trait's same-named methods call these on a concrete lattice; on a
// trait object, call these.

/// The totals over the whole lattice (collective).
pub fn totals<M: Model, T: Real>(
    solver: &dyn Solver<Model = M, Real = T>,
) -> Result<Totals, Error> {
    let f = solver.local_populations()?;
    let local = Totals::of::<M, T>(&f, |s| !solver.local_solid(s));
    Ok(Totals::from_slice(&solver.group().sum(local.to_vec())))
}

/// Writes the whole state to the checkpoint `path` (collective): every process writes
/// its shard (its planes' populations, in the layout-independent order, and the per-site
/// fields if any process has them), then the root the manifest that makes them one
/// checkpoint (module `checkpoint`): atomic as a set, in the one format of every backend
/// and process count.
pub fn write_checkpoint<M: Model, T: Real>(
    solver: &dyn Solver<Model = M, Real = T>,
    path: &Path,
) -> Result<(), Error> {
    write_checkpoint_about(solver, path, &BTreeMap::new())
}

/// As [`write_checkpoint`], with what the application says of the run in the
/// manifest ([`CheckpointHeader::about`](crate::CheckpointHeader::about); the root's is
/// written).
pub fn write_checkpoint_about<M: Model, T: Real>(
    solver: &dyn Solver<Model = M, Real = T>,
    path: &Path,
    about: &BTreeMap<String, String>,
) -> Result<(), Error> {
    let run = checkpoint::run_name(solver.group().each(checkpoint::new_run())[0]);
    let e = solver.extent();
    let nodes = solver.local_box();
    let sites = nodes.iter().map(Range::len).product::<usize>();
    let fields = solver.local_fields();
    let with_fields = solver.group().any(matches!(fields, Ok(Some(_))));
    let shard = fields.and_then(|fields| {
        let fields = match fields {
            Some(v) => v,
            None if with_fields => crate::lattice::uniform_fields::<M>(solver.params())
                .into_iter()
                .map(|v| vec![v; sites])
                .collect(),
            None => Vec::new(),
        };
        let f = solver.local_populations()?;
        Ok(checkpoint::write_shard::<M, T>(
            path,
            (&run, solver.group().rank(), solver.group().ranks()),
            (e.size(), &nodes),
            solver.steps_done(),
            (&f, &fields),
        )?)
    });
    let elsewhere = |what: &str| {
        Error::from(LbmError::Shape(format!(
            "{what} could not write its part of the checkpoint {}",
            path.display()
        )))
    };
    if solver.group().any(shard.is_err()) {
        return Err(shard.err().unwrap_or_else(|| elsewhere("another rank")));
    }
    let shard = shard?;
    let crcs = solver.group().each(u64::from(shard.crc32));
    let sizes = solver.group().each(shard.payload_bytes);
    let boxes = solver.boxes_of_ranks();
    let written = if solver.group().is_root() {
        let [_, ly, lz] = e.size();
        let shards = (0..solver.group().ranks())
            .map(|r| {
                let [xs, ys, zs] = boxes[r].clone();
                let whole = ys == (0..ly) && zs == (0..lz);
                Shard {
                    file: checkpoint::shard_name(path, &run, r, solver.group().ranks()),
                    x0: xs.start,
                    x1: xs.end,
                    yz: (!whole).then_some([[ys.start, ys.end], [zs.start, zs.end]]),
                    payload_bytes: sizes[r],
                    crc32: crcs[r] as u32,
                }
            })
            .collect();
        checkpoint::write_manifest::<M, T>(
            path,
            e.size(),
            (solver.params(), with_fields),
            solver.steps_done(),
            (&run, about),
            shards,
        )
        .map_err(Error::from)
    } else {
        Ok(())
    };
    if solver.group().root_says(written.is_ok()) {
        written
    } else {
        written.and(Err(elsewhere("the root process")))
    }
}

/// Continues from `checkpoint` (collective): the per-site fields it stores and the
/// populations of the local planes, read from the shards that hold them, and its step.
/// Refuses a checkpoint of another extent or other parameters, a damaged shard, or fields
/// this backend cannot take, on every process, before changing the populations.
pub fn restore<M: Model, T: Real>(
    solver: &mut dyn Solver<Model = M, Real = T>,
    checkpoint: &Checkpoint<M, T>,
    path: &Path,
) -> Result<(), Error> {
    let (h, e) = (&checkpoint.header, solver.extent());
    let mismatch = |reason: String| CheckpointError::Mismatch {
        path: path.to_path_buf(),
        reason,
    };
    if h.size() != e.size() {
        return Err(mismatch(format!(
            "it holds a {} lattice, this run's is {e}",
            Extent::of_size(h.size())
        ))
        .into());
    }
    if &checkpoint.params != solver.params() {
        return Err(mismatch(format!(
            "its parameters {:?} differ from this run's {:?}",
            checkpoint.params,
            solver.params()
        ))
        .into());
    }
    let c = checkpoint
        .read_box(&solver.local_box())
        .map_err(Error::from)
        .and_then(|c| {
            for (name, values) in &c.fields {
                solver.set_local_field(name, values)?;
            }
            Ok(c)
        });
    if solver.group().any(c.is_err()) {
        return Err(match c {
            Err(e) => e,
            Ok(_) => LbmError::Shape(format!(
                "another rank could not restore its columns of the checkpoint {}",
                path.display()
            ))
            .into(),
        });
    }
    solver.set_local_populations(&c?.populations)?;
    solver.set_steps_done(h.step);
    Ok(())
}

/// The equilibria of the moments `moments(x, s)` (`s` the global plane site of a lattice `ly`
/// high) over the sites of the global box `[xs, ys, zs]`, in the local order of
/// [`Solver::local_box`], `Q` values a site; refuses a wrong count or non-finite moments,
/// naming the site.
pub(crate) fn equilibria<M: Model, T: Real>(
    [xs, ys, zs]: &[Range<usize>; 3],
    ly: usize,
    params: &M::Params,
    moments: &dyn Fn(usize, usize) -> Vec<f64>,
) -> Result<Vec<T>, LbmError> {
    let names = M::MOMENT_NAMES;
    let plane = ys.len() * zs.len();
    let mut f = vec![T::default(); xs.len() * plane * M::Q];
    let mut mt = vec![T::default(); names.len()];
    for (k, feq) in f.chunks_exact_mut(M::Q).enumerate() {
        let s = k % plane;
        let (x, y) = (
            xs.start + k / plane,
            (zs.start + s / ys.len()) * ly + ys.start + s % ys.len(),
        );
        let m = moments(x, y);
        check_values(m.len(), names.len(), "moments")?;
        if let Some((j, v)) = m.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(LbmError::NonFinite {
                x,
                y,
                what: names[j].to_string(),
                value: *v,
            });
        }
        for (a, b) in mt.iter_mut().zip(m) {
            *a = T::from_f64(b);
        }
        M::equilibrium(&mt, params, feq);
    }
    Ok(f)
}

/// The items a whole lattice (CPU or GPU) answers from its own accessors (`dims`, `params`,
/// `scheme`, `steps_done`, `set_steps_done`, the fields, the solid sites): written once for
/// both, inside their `impl Block` (`block`) and `impl Solver` (`solver`) blocks (generic
/// parameters `M` and `T`).
macro_rules! lattice_basics {
    (block $lattice:ident) => {
        type Model = M;
        type Real = T;

        fn params(&self) -> &M::Params {
            $lattice::params(self)
        }

        fn scheme(&self) -> $crate::Scheme {
            $lattice::scheme(self)
        }

        fn layout_name(&self) -> &'static str {
            $lattice::layout(self).name()
        }

        fn steps_done(&self) -> u64 {
            $lattice::steps_done(self)
        }

        fn set_steps_done(&mut self, step: u64) {
            $lattice::set_steps_done(self, step);
        }

        fn local_solid(&self, s: usize) -> bool {
            let d = self.dims();
            self.boundaries().is_solid(&d, s / d.plane(), s % d.plane())
        }

        fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), $crate::Error> {
            Ok($lattice::set_field(self, name, values)?)
        }

        fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, $crate::Error> {
            if !$lattice::has_site_fields(self) {
                return Ok(None);
            }
            let all = M::FIELDS.iter().map(|name| $lattice::field(self, name));
            Ok(Some(all.collect::<Result<_, _>>()?))
        }
    };
    (solver) => {
        fn extent(&self) -> $crate::solver::Extent {
            let d = self.dims();
            $crate::solver::Extent::of_size([d.lx, d.ly, d.lz])
        }

        fn local_box(&self) -> [std::ops::Range<usize>; 3] {
            let d = self.dims();
            d.planes(0..d.lx)
        }
    };
}
#[cfg(feature = "gpu")]
pub(crate) use lattice_basics;

impl<M: Model, L: crate::Layout, T: Real> Block for Lattice<M, L, T> {
    lattice_basics!(block Lattice);

    fn local_populations(&self) -> Result<Vec<T>, Error> {
        let d = self.dims();
        Ok(crate::lattice::export_block(self, &d.planes(0..d.lx))?)
    }

    fn set_local_populations(&mut self, values: &[T]) -> Result<(), Error> {
        let d = self.dims();
        check_values(values.len(), d.sites() * M::Q, "populations")?;
        Ok(crate::lattice::import_block(
            self,
            &d.planes(0..d.lx),
            values,
        )?)
    }

    fn placement(&self) -> Placement {
        Placement::Host
    }

    fn describe(&self) -> String {
        format!("cpu, {} threads", rayon::current_num_threads())
    }
}

impl<M: Model, L: crate::Layout, T: Real> Solver for Lattice<M, L, T> {
    lattice_basics!(solver);

    fn advance(&mut self, n: u64) -> Result<(), Error> {
        self.steps(n);
        Ok(())
    }

    fn with_moments(&mut self, read: ReadMoments<'_>) -> Result<Vec<Vec<f64>>, Error> {
        let [_, ly, lz] = self.extent().size();
        let plane: Vec<usize> = (0..ly * lz).collect();
        Ok(read(&OneProcess, &mut |cols| {
            self.moment_fields_at(cols, &plane)
        }))
    }

    /// In place, site by site: no array of the lattice's size beside it.
    fn set_equilibrium_at(
        &mut self,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        Ok(self.set_equilibrium(moments)?)
    }

    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<T>, Error> {
        Ok(crate::Lattice::exchanged(self, sites)?)
    }

    fn check(&self) -> Result<(), Error> {
        Ok(crate::Lattice::check(self)?)
    }
}

/// A lattice behind a box ([`crate::backend::build`]'s) is a lattice: every method forwarded.
impl<S: Block + ?Sized> Block for Box<S> {
    type Model = S::Model;
    type Real = S::Real;

    fn params(&self) -> &<S::Model as Model>::Params {
        (**self).params()
    }

    fn scheme(&self) -> Scheme {
        (**self).scheme()
    }

    fn layout_name(&self) -> &'static str {
        (**self).layout_name()
    }

    fn steps_done(&self) -> u64 {
        (**self).steps_done()
    }

    fn set_steps_done(&mut self, step: u64) {
        (**self).set_steps_done(step)
    }

    fn local_populations(&self) -> Result<Vec<S::Real>, Error> {
        (**self).local_populations()
    }

    fn set_local_populations(&mut self, values: &[S::Real]) -> Result<(), Error> {
        (**self).set_local_populations(values)
    }

    fn local_solid(&self, s: usize) -> bool {
        (**self).local_solid(s)
    }

    fn set_local_field(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        (**self).set_local_field(name, values)
    }

    fn local_fields(&self) -> Result<Option<Vec<Vec<f64>>>, Error> {
        (**self).local_fields()
    }

    fn placement(&self) -> Placement {
        (**self).placement()
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}

impl<S: Solver + ?Sized> Solver for Box<S> {
    fn extent(&self) -> Extent {
        (**self).extent()
    }

    fn advance(&mut self, n: u64) -> Result<(), Error> {
        (**self).advance(n)
    }

    fn local_box(&self) -> [Range<usize>; 3] {
        (**self).local_box()
    }

    fn with_moments(&mut self, read: ReadMoments<'_>) -> Result<Vec<Vec<f64>>, Error> {
        (**self).with_moments(read)
    }

    fn exchanged(&mut self, sites: &[[usize; 3]]) -> Result<Vec<S::Real>, Error> {
        (**self).exchanged(sites)
    }

    fn check(&self) -> Result<(), Error> {
        (**self).check()
    }

    fn group(&self) -> &dyn Transfers<f64> {
        (**self).group()
    }

    fn neighbour_columns(&self, ends: [Vec<f64>; 2]) -> [Vec<f64>; 2] {
        (**self).neighbour_columns(ends)
    }

    fn boxes_of_ranks(&self) -> Vec<[Range<usize>; 3]> {
        (**self).boxes_of_ranks()
    }

    fn planes_of_ranks(&self) -> Vec<Range<usize>> {
        (**self).planes_of_ranks()
    }

    fn set_equilibrium_at(
        &mut self,
        moments: &(dyn Fn(usize, usize) -> Vec<f64> + Sync),
    ) -> Result<(), Error> {
        (**self).set_equilibrium_at(moments)
    }
}

/// The refusal of a backend that cannot read the populations momentum exchange needs.
pub(crate) fn cannot_exchange<M: Model>(backend: &str) -> LbmError {
    LbmError::Boundary(format!(
        "the loads on bodies (momentum exchange) of model {} are not read on this backend \
         ({backend}) yet: run on the CPU backend (`--backend cpu`, one process or MPI ranks)",
        M::NAME
    ))
}
