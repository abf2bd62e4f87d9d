//! The CPU kernels: propagate (pull), bc, collide, the fused propagate + bc + collide, and the
//! two half-steps of the in-place AA scheme; rayon over the lattice's lines (its columns in
//! 2-D, its pencils of constant `(x, z)` in 3-D: see [`crate::layout`]). A velocity moves a
//! line's cluster to line `(x + c_x, z + c_z)` (periodic in z) and shifts it by `c_y` within
//! the line, so one code serves both dimensions.
//!
//! Every kernel works on clusters of `VL` sites (one site for AoS and SoA). An interior cluster
//! without boundary sites (nearly all of them) takes the fast path, [`collide_interior`]: the
//! model's [`Model::collide_access`] loads the cluster's `Q` lane-arrays straight from the
//! lattice through the pass's accessor ([`Interior`]: the streaming pattern), collides them
//! and stores them, all in one function. Clusters that hold a boundary site (see
//! [`crate::boundary`]) are gathered into a per-worker buffer `[[T; VL]; Q]`, fixed up lane
//! by lane and collided with [`Model::collide_cluster`]. The lane loops are straight-line code
//! over `[T; VL]` arrays, which LLVM turns into vector instructions.
//!
//! Checked in the assembly (x86-64 with AVX-512, `target-cpu=native`): for `VL = 8` in f64 and
//! `VL = 16` in f32 the generated collision of D2Q9 runs on `zmm` registers only (57 packed
//! FMAs and 4 `vdivpd` per cluster of 8 sites, no scalar arithmetic), D2Q37 likewise (550
//! packed FMAs); an interior load or store is one aligned 64-byte move per population
//! (CAoSoA) plus a prefetch ([`crate::prefetch`]). `VL = 1` (AoS, SoA) runs the same code on
//! scalars. The criterion benches (`benches/kernels.rs`) and `lbm bench` would show a
//! regression.
//!
//! # Streaming schemes
//! *Two copies (A-B)*, Calore et al. 2019 §4: with post-collision populations `f*` in `A`,
//!
//! ```text
//! B_i(x) = collide( A_i(x − c_i) )      (pull; bounced links: A_ī(x) + correction)
//! ```
//!
//! *In place (AA pattern*, Bailey et al. 2009, cited in Calore et al. 2019 §4*)*, one array, two
//! alternating half-steps that need no second copy and move the same bytes as a single sweep:
//!
//! ```text
//! even → odd ("pull"):  g_i = F_i(x − c_i);   h = collide(g);   F_ī(x + c_i) = h_i
//! odd → even ("local"): g_i = F_ī(x);         h = collide(g);   F_i(x) = h_i
//! ```
//!
//! Site `x` reads and writes the same set of elements `{(i, x − c_i)}` in the pull half-step
//! and `{(i, x)}` in the local one, so sites never touch each other's elements and the
//! sweep is race-free in place. A bounced link `i` of `x` reads `F_ī(x)` (its own slot) in the
//! pull half-step, and the population `h_ī` that would leave through the wall is written to
//! `F_ī(x)` instead of `F_i(x − c_i)`; the local half-step then finds it where it reads `g_i`.
//! This needs the masks to be symmetric, which [`crate::boundary`] guarantees. Both schemes
//! compute the same `g` with the same arithmetic, so they are bitwise identical.
//!
//! With periodic x, the pull half-step reads halo columns (filled from the periodic image
//! before it, like the two-copy step) and writes into them; [`fold_halo`] moves those writes
//! back to the periodic image.
//!
//! Two steps can also be swept together, column by column, so that each column comes from
//! memory once for the two ([`paired`]): in place a local half-step and the pull half-step
//! after it; with two copies two fused steps, the first writing into a ring of planes
//! ([`Dims::ring`]) from which the second pulls (so a job's `src` and `dst` each have their
//! own addressing, [`Job::src_d`] and [`Job::dst_d`]).

use crate::boundary::{uniform, Boundaries, Rule, Site, Term, OWN_SLOTS, TERMS, TERMS_LEN};
use crate::layout::{Dims, Layout, Shifted, WithVl};
use crate::storage::{store_fence, Element, Pops, RawBuf};
use crate::{ClusterAccess, Model, Real};

mod paired;
pub(crate) use paired::{PairedCopy, PairedSweep};

/// Whether non-temporal stores ([`RawBuf::stream`]) pay for a second array of `bytes`: when
/// it is larger than the last-level cache (measured from the machine, not assumed), so that its
/// lines would be evicted before the next sweep reads them anyway. The fused two-copy step
/// then writes whole cache lines without the write-allocate read: 2 bytes moved per byte
/// copied instead of 3. The propagate kernel, which has no arithmetic between its loads and
/// stores, ran slower with them and does not stream. (The figures: see docs/performance.md.)
pub(crate) fn streams_pay(bytes: usize) -> bool {
    crate::machine::last_level_cache().is_some_and(|llc| bytes > llc)
}

/// The most bytes the rings of a paired two-copy sweep ([`PairedCopy`]) may take together:
/// half the last-level cache (read from the machine, [`crate::machine::last_level_cache`];
/// `None`, no bound, where it cannot be read), the other half left to the lines the sweep
/// streams through. Rings larger than that gained nothing measurable over separate steps
/// (D3Q19 cubes whose rings fill the cache), where small ones (D2Q9, D2Q37) gain; the bound
/// also keeps their memory small. (The figures: see docs/performance.md.)
pub(crate) fn ring_budget() -> Option<usize> {
    crate::machine::last_level_cache().map(|llc| llc / 2)
}

/// How the fused two-copy step writes its second array: the other passes store into lines
/// they have just loaded, always [`Stores::Plain`]. Which kind is fastest depends on the model
/// and the machine, so a lattice times the kinds open to it (`Stores::candidates`) with its
/// prefetch distances and keeps the fastest (module `prefetch`; [`crate::Lattice::tuned`] says
/// which it kept). Non-temporal stores halve
/// a memory-bound step's write traffic, but they wait on memory, where an in-place step's
/// stores hit lines it has just loaded: a compute-bound collision that ends in a burst of `Q`
/// of them stalls on them, so the generated collision stores its results in groups as it
/// computes them (`lbm-macros/src/store_groups.rs`). Where D2Q37's two-copy step still ran
/// below its in-place step, the kind of store was not the cause (on one thread the three kinds
/// run alike), nor where the arrays lie (both start on a 2 MiB page, so a cluster's elements in
/// the two share their low 21 address bits; offsetting one changed nothing): a two-copy
/// cluster moves `2Q` lines through the core that computes it, the in-place one `Q` (its
/// stores hit lines it has just loaded, and the caches write them back later). Sweeping two
/// steps through a ring that stays in the caches (`PairedCopy`) is what brings the two
/// schemes level. (The figures: see docs/performance.md.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stores {
    /// Ordinary stores.
    Plain,
    /// Non-temporal stores (`RawBuf::stream`): whole lines to memory without the
    /// write-allocate read, 2 bytes moved per byte copied instead of 3.
    Streamed,
    /// Ordinary stores, each preceded by a write prefetch (`RawBuf::prefetch_write`) of the
    /// element the prefetch distance further on, so that the line is owned before its store
    /// comes, as an in-place pass's are.
    Prefetched,
}

impl Stores {
    /// How reports name the kind.
    pub fn name(self) -> &'static str {
        match self {
            Stores::Plain => "plain",
            Stores::Streamed => "non-temporal",
            Stores::Prefetched => "write-prefetched",
        }
    }

    /// The kinds the fused step of a `scheme` lattice whose arrays hold `array_bytes` bytes
    /// may use: non-temporal stores only where the array is larger than the last-level cache
    /// ([`streams_pay`]), plain ones only where it is not (plain stores into an array that the
    /// caches cannot hold wait for every line's write-allocate read from memory, and ran far
    /// slower than either; see docs/performance.md).
    pub(crate) fn candidates(scheme: crate::Scheme, array_bytes: usize) -> &'static [Stores] {
        match scheme {
            crate::Scheme::InPlace => &[Stores::Plain],
            crate::Scheme::TwoCopy if streams_pay(array_bytes) => {
                &[Stores::Streamed, Stores::Prefetched]
            }
            crate::Scheme::TwoCopy => &[Stores::Plain, Stores::Prefetched],
        }
    }
}

/// One of the kernels, run over all columns of the lattice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Two-copy pull + bc + collide, `src → dst`.
    Fused,
    /// Two-copy pull only, `src → dst`.
    Propagate,
    /// Boundary links and rules on `dst`, reading `src` (after `Propagate`).
    Bc,
    /// Collide `dst` in place (after `Propagate` and `Bc`).
    Collide,
    /// AA even → odd half-step on `src`.
    AaPull,
    /// AA odd → even half-step on `src`.
    AaLocal,
}

/// The memory access pattern of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Reads and writes the same array.
    InPlace,
    /// Reads one array and writes another with ordinary stores.
    Copy,
    /// Reads one array and writes another with non-temporal stores.
    StreamedCopy,
}

impl Pattern {
    /// How reports name the pattern's bandwidth.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::InPlace => "read-modify-write",
            Pattern::Copy => "copy",
            Pattern::StreamedCopy => "non-temporal copy",
        }
    }
}

/// A kernel launch: the pass, its arrays and what it needs.
pub(crate) struct Job<'a, M: Model, L: Layout, T: Real> {
    pub pass: Pass,
    pub src: Pops<'a, T>,
    pub dst: Pops<'a, T>,
    /// The lattice's shape: its sites, boundaries and fields.
    pub d: Dims,
    /// How `src` and `dst` are addressed: `d`, except in the paired two-copy sweep, whose
    /// first step writes and second step reads a ring of planes ([`Dims::ring`]; the fused
    /// two-copy pass only).
    pub src_d: Dims,
    pub dst_d: Dims,
    pub bc: &'a Boundaries<T>,
    /// In place, the populations the interpolated links hold, held before the half-step
    /// (`Lattice::hold_terms`; term `k` of the link at `o` in [`Boundaries::interp`] at
    /// `o·TERMS_LEN + k`); empty with two copies.
    pub held: &'a [T],
    pub params: &'a M::Params,
    /// The values of the model's fields ([`Model::FIELDS`]) per site, stored as a lattice of
    /// `FIELDS.len()` populations in the same layout (`None`: the fields are uniform).
    pub fields: Option<RawBuf<'a, T>>,
    /// The site columns `x` to update (`0..LX` for a whole step; a distributed slab updates
    /// its bulk and its border columns separately, Calore et al. 2016 §4).
    pub cols: std::ops::Range<usize>,
    /// How the fused two-copy step writes `dst` ([`Stores`]; other passes: `Plain`).
    pub stores: Stores,
    /// How far ahead of the cluster being computed the interior loads prefetch, per stream,
    /// in bytes (see [`crate::prefetch`]).
    pub prefetch_bytes: usize,
    pub _layout: std::marker::PhantomData<L>,
}

impl<M: Model, L: Layout, T: Real> WithVl for Job<'_, M, L, T> {
    type Output = ();
    fn run<const VL: usize>(self) {
        debug_assert_eq!(VL, L::VL);
        let job = &self;
        let offsets: Vec<Offsets> = (0..self.d.lz)
            .map(|z| Offsets::new(job, Line { x: 0, z }))
            .collect();
        let lz = self.d.lz;
        let lines = self.cols.start * lz..self.cols.end * lz;
        crate::parallel::for_each_init(
            lines,
            &|| Scratch::<T, VL>::new(M::Q, M::FIELDS.len()),
            &|s, j| {
                let at = Line {
                    x: j / lz,
                    z: j % lz,
                };
                line::<M, L, T, VL>(job, &offsets[at.z], at, s)
            },
        );
    }
}

/// A line of the lattice: site column `x`, row of planes `z` (0 in 2-D).
#[derive(Debug, Clone, Copy)]
struct Line {
    x: usize,
    z: usize,
}

impl Line {
    /// The storage line of this line's sites shifted by `(dx, dz)` (periodic in z).
    #[inline(always)]
    fn shifted(self, d: &Dims, dx: i32, dz: i32) -> usize {
        d.line(col_of(d, self.x, dx), d.wrap_z(self.z, dz as isize))
    }
}

/// The storage lines of one line of sites in a job's arrays: `src` and `dst` in their own
/// addressing ([`Job::src_d`], [`Job::dst_d`]), `site` in the lattice's (its fields).
#[derive(Debug, Clone, Copy)]
struct Lines {
    src: usize,
    dst: usize,
    site: usize,
}

impl Lines {
    #[inline(always)]
    fn of<M: Model, L: Layout, T: Real>(job: &Job<M, L, T>, at: Line) -> Self {
        Self {
            src: at.shifted(&job.src_d, 0, 0),
            dst: at.shifted(&job.dst_d, 0, 0),
            site: at.shifted(&job.d, 0, 0),
        }
    }

    /// The element offsets `(src, dst)` of lane 0 of cluster `k`, population 0: the interior
    /// path's bases ([`Offsets`]).
    #[inline(always)]
    fn bases<M: Model, L: Layout, T: Real>(&self, job: &Job<M, L, T>, k: usize) -> (isize, isize) {
        (
            L::cluster_base(&job.src_d, 0, self.src, k) as isize,
            L::cluster_base(&job.dst_d, 0, self.dst, k) as isize,
        )
    }
}

/// Runs the job's pass on one line (the one non-inlined function per kernel instantiation:
/// look here for the generated assembly).
#[inline(never)]
fn line<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    o: &Offsets,
    at: Line,
    s: &mut Scratch<T, VL>,
) {
    match job.pass {
        Pass::Fused => fused_line::<M, L, T, VL>(job, o, at, s),
        Pass::Propagate => propagate_line::<M, L, T, VL>(job, o, at),
        Pass::Bc => bc_line::<M, L, T>(job, at, &mut s.site, &mut s.regs),
        Pass::Collide => collide_line::<M, L, T, VL>(job, o, at, s),
        Pass::AaPull => aa_pull_line::<M, L, T, VL>(job, o, at, s),
        Pass::AaLocal => aa_local_line::<M, L, T, VL>(job, o, at, s),
    }
    if job.stores == Stores::Streamed {
        store_fence();
    }
}

/// Constant index offsets of the interior fast path (see [`Layout::interior`]) of the lines of
/// one `z`, relative to `cluster_base(0, line, k)` of the array accessed ([`Lines::bases`]):
/// on interior clusters every access of a kernel is one of these (the lines of a row `z` away
/// from the z-wrap share them; in a ring, [`Dims::ring`], the lines of one `x mod w`).
struct Offsets {
    interior: std::ops::Range<usize>,
    /// Population `i` pulled from `x − c_i`, in `src`.
    pull: Vec<isize>,
    /// Population `i` of the cluster itself, in `dst`.
    own: Vec<isize>,
    /// Where the pass's interior path loads population `i` of a cluster (offset, population
    /// slot), and where it stores it.
    access: Access,
    /// Prefetch distance: [`Job::prefetch_bytes`] ahead along the line, in elements, rounded
    /// to whole clusters.
    ahead: isize,
}

impl Offsets {
    /// The offsets of line `at` of `job`.
    fn new<M: Model, L: Layout, T: Real>(job: &Job<M, L, T>, at: Line) -> Self {
        let (sd, dd) = (&job.src_d, &job.dst_d);
        let interior = L::interior(&job.d);
        let lines = Lines::of(job, at);
        let base = |k: usize| lines.bases(job, k);
        // A cluster's own elements lie at the same offsets from its base in every cluster.
        let own: Vec<isize> = (0..M::Q)
            .map(|i| L::cluster_base(dd, i, lines.dst, 0) as isize - base(0).1)
            .collect();
        let stride = (base(1).0 - base(0).0) as usize;
        let ahead = (job.prefetch_bytes / (stride * T::BYTES).max(1)).max(1) * stride;
        let (mut pull, mut push) = (Vec::new(), Vec::new());
        if !interior.is_empty() {
            let k = interior.start;
            let plain = |d: &Dims, from: isize, i: usize, line: usize, dy: i32| match L::shifted(
                d,
                i,
                line,
                k,
                dy as isize,
            ) {
                Shifted::Contiguous { base, rotate: 0 } => base as isize - from,
                _ => unreachable!("interior clusters shift without wrap"),
            };
            let (src, dst) = base(k);
            for (i, c) in M::VELOCITIES.iter().enumerate() {
                pull.push(plain(sd, src, i, at.shifted(sd, -c[0], -c[2]), -c[1]));
                let to = at.shifted(dd, c[0], c[2]);
                push.push(plain(dd, dst, M::OPPOSITE[i], to, c[1]));
            }
        }
        let access = Access::of::<M>(job.pass, &pull, &push, &own);
        Self {
            interior,
            pull,
            own,
            access,
            ahead: ahead as isize,
        }
    }

    /// Whether cluster `k` takes the fast path (interior, no boundary site).
    #[inline(always)]
    fn fast(&self, k: usize, sites: &[Site]) -> bool {
        sites.is_empty() && self.interior.contains(&k)
    }
}

/// The interior path's accesses of one pass: population `i` of a cluster is loaded at offset
/// `load[i].0` from the cluster's base in `src` (stored as population `load[i].1`) and stored
/// at `store[i].0` from its base in `dst` (as population `store[i].1`).
#[derive(Default)]
struct Access {
    load: Vec<(isize, usize)>,
    store: Vec<(isize, usize)>,
}

impl Access {
    /// The accesses of `pass` from the offsets of its lines (see the schemes in the module
    /// doc): the two-copy step pulls and stores in place in `dst`; collide loads and stores in
    /// place; the AA pull half-step pulls `F_i(x − c_i)` and pushes `h_i` to `F_ī(x + c_i)`;
    /// the AA local half-step loads `F_ī(x)` and stores `F_i(x)`.
    fn of<M: Model>(pass: Pass, pull: &[isize], push: &[isize], own: &[isize]) -> Self {
        let pulled = pull.iter().enumerate().map(|(i, &o)| (o, i)).collect();
        let pushed = push.iter().enumerate();
        let pushed = pushed.map(|(i, &o)| (o, M::OPPOSITE[i])).collect();
        // The cluster's own elements, population `i` or its opposite in slot `i`.
        let own_of = |opposite: bool| {
            let p = |i: usize| if opposite { M::OPPOSITE[i] } else { i };
            (0..M::Q).map(|i| (own[p(i)], p(i))).collect()
        };
        let (load, store) = match pass {
            Pass::Fused => (pulled, own_of(false)),
            Pass::AaPull => (pulled, pushed),
            Pass::AaLocal => (own_of(true), own_of(false)),
            Pass::Collide | Pass::Propagate | Pass::Bc => (own_of(false), own_of(false)),
        };
        Self { load, store }
    }
}

/// The [`ClusterAccess`] of an interior cluster: loads from `src` and stores to `dst` at the
/// pass's offsets ([`Access`]) from the cluster's base, prefetching `ahead` elements ahead of
/// each load. `S`: the kind of its stores ([`Stores`]), a parameter of the type rather than a
/// flag tested at each store. (With a flag, the 37 stores of a D2Q37 cluster were 37 branches
/// in the collision's straight-line code, and its AA half-steps ran measurably slower; see
/// docs/performance.md.)
struct Interior<'j, 'a, T: Real, S: StoreKind> {
    src: &'j Pops<'a, T>,
    dst: &'j Pops<'a, T>,
    access: &'j Access,
    /// The cluster's bases in `src` and in `dst` ([`Lines::bases`]).
    base: (isize, isize),
    ahead: isize,
    _stores: std::marker::PhantomData<S>,
}

/// A [`Stores`] variant as a type.
trait StoreKind {
    /// Stores lanes `v` of population `slot` at element `e` of `dst`; `ahead`: the prefetch
    /// distance in elements.
    fn store<T: Real, const VL: usize>(
        dst: &Pops<T>,
        e: usize,
        slot: usize,
        v: [T; VL],
        ahead: isize,
    );
}

/// The [`StoreKind`]s, one per [`Stores`] variant.
mod store_kind {
    use super::{Pops, Real, StoreKind};

    pub(super) struct Plain;
    pub(super) struct Streamed;
    pub(super) struct Prefetched;

    impl StoreKind for Plain {
        #[inline(always)]
        fn store<T: Real, const VL: usize>(d: &Pops<T>, e: usize, i: usize, v: [T; VL], _: isize) {
            d.store::<VL>(e, i, v);
        }
    }

    impl StoreKind for Streamed {
        #[inline(always)]
        fn store<T: Real, const VL: usize>(d: &Pops<T>, e: usize, i: usize, v: [T; VL], _: isize) {
            d.stream::<VL>(e, i, v);
        }
    }

    impl StoreKind for Prefetched {
        #[inline(always)]
        fn store<T: Real, const VL: usize>(d: &Pops<T>, e: usize, i: usize, v: [T; VL], a: isize) {
            d.prefetch_write(e, a);
            d.store::<VL>(e, i, v);
        }
    }
}

impl<T: Real, const VL: usize, S: StoreKind> ClusterAccess<T, VL> for Interior<'_, '_, T, S> {
    #[inline(always)]
    fn load(&mut self, i: usize) -> [T; VL] {
        let (off, slot) = self.access.load[i];
        let e = self.base.0 + off;
        self.src.prefetch(e as usize, self.ahead);
        self.src.load::<VL>(e as usize, slot)
    }

    #[inline(always)]
    fn store(&mut self, i: usize, v: [T; VL]) {
        let (off, slot) = self.access.store[i];
        let e = (self.base.1 + off) as usize;
        S::store::<T, VL>(self.dst, e, slot, v, self.ahead);
    }
}

/// Loads, collides and stores interior cluster `k` of the line at `lines` through the pass's
/// accesses, `src → dst`, with [`Model::collide_access`] inlined: the cluster lives in the
/// function's own variables, never in a buffer stored before the collision and reloaded in
/// it. (A 64-byte vector stored and then reloaded whole is not forwarded from the store on
/// cores that split it into two 32-byte halves, such as Zen 4: the load waits for the store
/// to reach the cache, and clusters no longer overlap: every pass ran slower through the
/// buffer; see docs/performance.md.) Not inlined into the line loop: with the boundary paths
/// beside it, a large model's collision inlined there ran at half speed.
#[inline(never)]
fn collide_interior<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    o: &Offsets,
    (src, dst): (&Pops<T>, &Pops<T>),
    lines: Lines,
    k: usize,
    fl: &mut [[T; VL]],
) {
    let fields = cluster_fields(job, lines.site, k, fl);
    let base = lines.bases(job, k);
    let (p, a) = (job.params, &o.access);
    match job.stores {
        Stores::Plain => {
            collide_through::<M, T, VL, store_kind::Plain>(p, fields, src, dst, a, base, o.ahead)
        }
        Stores::Streamed => {
            collide_through::<M, T, VL, store_kind::Streamed>(p, fields, src, dst, a, base, o.ahead)
        }
        Stores::Prefetched => collide_through::<M, T, VL, store_kind::Prefetched>(
            p, fields, src, dst, a, base, o.ahead,
        ),
    }
}

/// [`Model::collide_access`] of the cluster at `base` through an [`Interior`] accessor.
#[inline(always)]
fn collide_through<M: Model, T: Real, const VL: usize, S: StoreKind>(
    params: &M::Params,
    fields: Option<&[[T; VL]]>,
    src: &Pops<T>,
    dst: &Pops<T>,
    access: &Access,
    base: (isize, isize),
    ahead: isize,
) {
    let mut a = Interior::<T, S> {
        src,
        dst,
        access,
        base,
        ahead,
        _stores: std::marker::PhantomData,
    };
    M::collide_access::<T, VL, _>(&mut a, params, fields);
}

/// Per-worker buffers, allocated once per rayon task.
struct Scratch<T, const VL: usize> {
    /// The cluster being collided: `cl[i][l]`.
    cl: Vec<[T; VL]>,
    /// One site's populations.
    site: Vec<T>,
    /// The registers of a site rule's program.
    regs: Vec<[T; 1]>,
    /// The registers of a rule's program run on a cluster's lanes at once.
    lane_regs: Vec<[T; VL]>,
    /// The cluster's field values: `fl[j][l]`.
    fl: Vec<[T; VL]>,
    /// A cluster at rest, collided (what a solid site holds after a step), once the two-copy
    /// step met a solid lane of a lattice with uniform fields; empty before.
    rest: Vec<[T; VL]>,
}

impl<T: Real, const VL: usize> Scratch<T, VL> {
    fn new(q: usize, nf: usize) -> Self {
        Self {
            cl: vec![[T::default(); VL]; q],
            site: vec![T::default(); q],
            regs: Vec::new(),
            lane_regs: Vec::new(),
            fl: vec![[T::default(); VL]; nf],
            rest: Vec::new(),
        }
    }
}

/// Collides the cluster in `s.cl` (cluster `k` of storage line `col`), with the cluster's
/// field values when the lattice has per-site fields.
#[inline(always)]
fn collide<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    col: usize,
    k: usize,
    s: &mut Scratch<T, VL>,
) {
    let fields = cluster_fields(job, col, k, &mut s.fl);
    M::collide_cluster::<T, VL>(&mut s.cl, job.params, fields);
}

/// What a solid site's rule sets before the collision (its program, `Kind::Solid`): the rest
/// populations `w_i` (`ρ = 1`, `u = 0`), whatever its links held.
#[inline(always)]
fn solid_at_rest<M: Model, T: Real>(mut set: impl FnMut(usize, T)) {
    for (i, &w) in M::WEIGHTS.iter().enumerate() {
        set(i, T::from_f64(w));
    }
}

/// The field values of cluster `k` of storage line `col`, loaded into `fl`, when the lattice
/// has per-site fields.
#[inline(always)]
fn cluster_fields<'f, M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    col: usize,
    k: usize,
    fl: &'f mut [[T; VL]],
) -> Option<&'f [[T; VL]]> {
    let fb = job.fields.as_ref()?;
    let d = Dims {
        q: M::FIELDS.len(),
        ..job.d
    };
    for (j, v) in fl.iter_mut().enumerate() {
        *v = fb.load::<VL>(L::cluster_base(&d, j, col, k));
    }
    Some(fl)
}

/// Loads lanes `l` of the sites `y(k, l) + dy` (periodic) of population `i`, line `col`, as
/// stored.
#[inline(always)]
fn load_shifted<L: Layout, E: Element, const VL: usize>(
    b: &RawBuf<E>,
    d: &Dims,
    i: usize,
    col: usize,
    k: usize,
    dy: isize,
) -> [E; VL] {
    match L::shifted(d, i, col, k, dy) {
        Shifted::Contiguous { base, rotate: 0 } => b.load::<VL>(base),
        Shifted::Contiguous { base, rotate } => {
            let v = b.load::<VL>(base);
            std::array::from_fn(|l| v[rotated::<VL>(l, rotate)])
        }
        Shifted::PerLane => std::array::from_fn(|l| {
            b.get(L::line_index(d, i, col, d.wrap_y(L::site_y(d, k, l), dy)))
        }),
    }
}

/// Stores lane `l` of `v` (stored elements) at the site `y(k, l) + dy` (periodic) of
/// population `i`, line `col`.
#[inline(always)]
fn store_shifted<L: Layout, E: Element, const VL: usize>(
    b: &RawBuf<E>,
    d: &Dims,
    i: usize,
    col: usize,
    k: usize,
    dy: isize,
    v: [E; VL],
) {
    match L::shifted(d, i, col, k, dy) {
        Shifted::Contiguous { base, rotate: 0 } => b.store::<VL>(base, v),
        Shifted::Contiguous { base, rotate } => {
            let mut w = v;
            for (l, &vl) in v.iter().enumerate() {
                w[rotated::<VL>(l, rotate)] = vl;
            }
            b.store::<VL>(base, w)
        }
        Shifted::PerLane => {
            for (l, &vl) in v.iter().enumerate() {
                b.set(
                    L::line_index(d, i, col, d.wrap_y(L::site_y(d, k, l), dy)),
                    vl,
                );
            }
        }
    }
}

#[inline(always)]
fn rotated<const VL: usize>(l: usize, rotate: isize) -> usize {
    (l as isize + rotate).rem_euclid(VL as isize) as usize
}

/// Storage column of the site column `x` shifted by `dx`.
#[inline(always)]
fn col_of(d: &Dims, x: usize, dx: i32) -> usize {
    d.col(x as isize + dx as isize)
}

/// The boundary sites of cluster `k`, advancing the cursor `at` through a line's sorted list.
#[inline(always)]
fn cluster_sites<'s>(sites: &'s [Site], at: &mut usize, k: usize) -> &'s [Site] {
    let lo = *at;
    while *at < sites.len() && sites[*at].k == k {
        *at += 1;
    }
    &sites[lo..*at]
}

/// The correction of bounced link `i` of `s` (moving walls), or zero.
#[inline(always)]
fn correction<T: Real>(bc: &Boundaries<T>, s: &Site, i: usize) -> Option<T> {
    s.corr.map(|o| bc.corr[o + i])
}

/// Pre-collision value of link `i` of boundary site `s` in a pull sweep over `src` (two-copy
/// or AA even → odd): bounced links read the site's own opposite population. `line`: the
/// site's storage line in `src` ([`Lines`]), where its own populations are addressed by its
/// cluster and lane (no division by the column's height).
#[inline(always)]
fn pull_link<M: Model, L: Layout, T: Real>(
    job: &Job<M, L, T>,
    s: &Site,
    i: usize,
    line: usize,
) -> T {
    let d = &job.src_d;
    let c = M::VELOCITIES[i];
    if s.bounced(i) {
        // The link's terms (`boundary::link`), the wall between `x` and `x − c_i`.
        let read = |t: Term| {
            let p = t.pop.of::<M>(i);
            let step = t.offset(c);
            if step == [0; 3] {
                return job.src.get(L::cluster_base(d, p, line, s.k) + s.lane, p);
            }
            let col = match t.wraps() {
                true => d.col((s.x as isize + step[0] as isize).rem_euclid(d.lx as isize)),
                false => col_of(d, s.x, step[0]),
            };
            job.src.get(L::index(d, p, col, d.shift(s.y, step)), p)
        };
        let v = match s.interp {
            // Interpolated; in place, the terms beyond the site's own slots are those held
            // before the half-step, as their slots may have been overwritten since.
            Some(at) => {
                job.bc.interp[at + i].apply(|k, t| match job.held.get((at + i) * TERMS_LEN + k) {
                    Some(&v) if k >= OWN_SLOTS => v,
                    _ => read(t),
                })
            }
            None => read(TERMS[0]),
        };
        correction(job.bc, s, i).map_or(v, |c| v + c)
    } else {
        let y = d.shift(s.y, c.map(|v| -v));
        job.src.get(L::index(d, i, col_of(d, s.x, -c[0]), y), i)
    }
}

/// Gathers a cluster by pulling from `src` (two-copy and AA even → odd), boundary lanes with
/// their bounced links and rules. Every link is a vector load, except — `in_place` — a link
/// that a lane of the cluster bounces: that one is gathered lane by lane, so that no element
/// outside the cluster's own read set is touched (the in-place sweep must not read what others
/// write; a two-copy sweep reads a `src` no one writes). `alike`: the lanes are boundary sites
/// alike ([`uniform`]), their bounced links read a vector at a time.
#[inline(always)]
fn gather_pull<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    at: Line,
    k: usize,
    (sites, alike): (&[Site], bool),
    s: &mut Scratch<T, VL>,
    in_place: bool,
) {
    let d = &job.src_d;
    let line = at.shifted(d, 0, 0);
    let lane_wise = if in_place { bounced_links(sites) } else { 0 };
    let lanes = (lane_wise != 0).then(|| lanes::<L, VL>(&job.d, sites, at, k));
    for (i, c) in M::VELOCITIES.iter().enumerate() {
        if let Some(lanes) = lanes.as_ref().filter(|_| lane_wise >> i & 1 == 1) {
            for (l, lane) in lanes.iter().enumerate() {
                if !lane.bounced(i) {
                    s.cl[i][l] = pull_link(job, lane, i, line);
                }
            }
        } else {
            let src = at.shifted(d, -c[0], -c[2]);
            let raw = load_shifted::<L, _, VL>(&job.src.raw, d, i, src, k, -c[1] as isize);
            s.cl[i] = job.src.values(i, raw);
        }
    }
    if alike {
        // Every lane bounces the same links back from its own slots: a vector each.
        for i in (0..M::Q).filter(|&i| sites[0].bounced(i)) {
            let p = TERMS[0].pop.of::<M>(i);
            s.cl[i] = job.src.load::<VL>(L::cluster_base(d, p, line, k), p);
        }
        job.bc
            .apply_rules::<M, VL>(sites, &mut s.cl, &mut s.lane_regs, job.params);
        return;
    }
    for site in sites {
        // A solid site's rule sets the rest populations: its (bounced) links are not read.
        if site.rule == Rule::Solid {
            solid_at_rest::<M, T>(|i, w| s.cl[i][site.lane] = w);
            continue;
        }
        for i in (0..M::Q).filter(|&i| site.bounced(i)) {
            s.cl[i][site.lane] = pull_link(job, site, i, line);
        }
        if site.rule != Rule::None {
            for i in 0..M::Q {
                s.site[i] = s.cl[i][site.lane];
            }
            job.bc
                .apply_rule::<M>(&site.rule, &mut s.site, &mut s.regs, job.params);
            for i in 0..M::Q {
                s.cl[i][site.lane] = s.site[i];
            }
        }
    }
}

/// The links that some site of `sites` bounces, as a bit mask.
#[inline(always)]
fn bounced_links(sites: &[Site]) -> u64 {
    sites.iter().fold(0, |m, s| m | s.mask)
}

/// Two-copy fused step of a line: pull, bc, collide, store (one read and one write of every
/// population).
#[inline(always)] // into `line`
fn fused_line<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    o: &Offsets,
    at: Line,
    s: &mut Scratch<T, VL>,
) {
    let lines = Lines::of(job, at);
    let sites = job.bc.line(at.x, at.z);
    let mut cursor = 0;
    for k in 0..L::clusters(&job.d) {
        let here = cluster_sites(sites, &mut cursor, k);
        if o.fast(k, here) {
            collide_interior::<M, L, T, VL>(job, o, (&job.src, &job.dst), lines, k, &mut s.fl);
            continue;
        }
        // Solid lanes alone: the interior path (its `src` is read-only; no fluid site reads
        // a solid one), then the solid lanes' own result, the rest populations collided.
        if o.interior.contains(&k) && here.iter().all(|s| s.rule == Rule::Solid) {
            collide_interior::<M, L, T, VL>(job, o, (&job.src, &job.dst), lines, k, &mut s.fl);
            // Uniform fields: every cluster's rest collides alike, once a worker.
            if job.fields.is_some() || s.rest.is_empty() {
                solid_at_rest::<M, T>(|i, w| s.cl[i] = [w; VL]);
                collide::<M, L, T, VL>(job, lines.site, k, s);
                if job.fields.is_none() {
                    s.rest.clone_from(&s.cl);
                }
            } else {
                s.cl.copy_from_slice(&s.rest);
            }
            for site in here {
                for (i, v) in s.cl.iter().enumerate() {
                    let e = L::cluster_base(&job.dst_d, i, lines.dst, k) + site.lane;
                    job.dst.set(e, i, v[site.lane]);
                }
            }
            continue;
        }
        gather_pull::<M, L, T, VL>(job, at, k, (here, uniform::<VL>(here)), s, false);
        collide::<M, L, T, VL>(job, lines.site, k, s);
        for (i, v) in s.cl.iter().enumerate() {
            let e = L::cluster_base(&job.dst_d, i, lines.dst, k);
            if job.stores == Stores::Streamed {
                job.dst.stream::<VL>(e, i, *v);
            } else {
                job.dst.store::<VL>(e, i, *v);
            }
        }
    }
}

/// Propagate (pull) of a line, `src → dst`: `dst_i(x) = src_i(x − c_i)` (Calore et al. 2019,
/// eq. 3), the stored elements moved as they are.
#[inline(always)] // into `line`
fn propagate_line<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    o: &Offsets,
    at: Line,
) {
    let d = &job.d;
    let col = at.shifted(d, 0, 0);
    for k in 0..L::clusters(d) {
        if o.interior.contains(&k) {
            let b = L::cluster_base(d, 0, col, k) as isize;
            for (pull, own) in o.pull.iter().zip(&o.own) {
                let v = job.src.raw.load::<VL>((b + pull) as usize);
                job.dst.raw.store::<VL>((b + own) as usize, v);
            }
            continue;
        }
        for (i, c) in M::VELOCITIES.iter().enumerate() {
            let scol = at.shifted(d, -c[0], -c[2]);
            let v = load_shifted::<L, _, VL>(&job.src.raw, d, i, scol, k, -c[1] as isize);
            job.dst.raw.store::<VL>(L::cluster_base(d, i, col, k), v);
        }
    }
}

/// The bc kernel of a line: bounced links of `dst` from `src`, then the sites' rules.
#[inline(always)] // into `line`
fn bc_line<M: Model, L: Layout, T: Real>(
    job: &Job<M, L, T>,
    at: Line,
    g: &mut [T],
    regs: &mut Vec<[T; 1]>,
) {
    let d = &job.d;
    let col = col_of(d, at.x, 0);
    for site in job.bc.line(at.x, at.z) {
        for (i, gi) in g.iter_mut().enumerate() {
            let idx = L::index(d, i, col, site.y);
            *gi = if site.bounced(i) {
                pull_link(job, site, i, at.shifted(&job.src_d, 0, 0))
            } else {
                job.dst.get(idx, i)
            };
        }
        job.bc.apply_rule::<M>(&site.rule, g, regs, job.params);
        for (i, gi) in g.iter().enumerate() {
            job.dst.set(L::index(d, i, col, site.y), i, *gi);
        }
    }
}

/// The collide kernel of a line, in place on `dst`.
#[inline(always)] // into `line`
fn collide_line<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    o: &Offsets,
    at: Line,
    s: &mut Scratch<T, VL>,
) {
    let lines = Lines::of(job, at);
    for k in 0..L::clusters(&job.d) {
        collide_interior::<M, L, T, VL>(job, o, (&job.dst, &job.dst), lines, k, &mut s.fl);
    }
}

/// AA even → odd half-step of a line, in place on `src`: pull, bc, collide, then push `h_i`
/// to `F_ī(x + c_i)`, or to `F_i(x)` when link `ī` is bounced.
#[inline(always)] // into `line`
fn aa_pull_line<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    o: &Offsets,
    at: Line,
    s: &mut Scratch<T, VL>,
) {
    let lines = Lines::of(job, at);
    let sites = job.bc.line(at.x, at.z);
    let mut cursor = 0;
    for k in 0..L::clusters(&job.d) {
        let here = cluster_sites(sites, &mut cursor, k);
        if o.fast(k, here) {
            collide_interior::<M, L, T, VL>(job, o, (&job.src, &job.dst), lines, k, &mut s.fl);
        } else {
            let alike = uniform::<VL>(here);
            gather_pull::<M, L, T, VL>(job, at, k, (here, alike), s, true);
            collide::<M, L, T, VL>(job, lines.site, k, s);
            push::<M, L, T, VL>(job, at, k, (here, alike), &s.cl);
        }
    }
}

/// Pushes a collided cluster: `F_ī(x + c_i) = h_i`, or `F_i(x) = h_i` when link `ī` is
/// bounced. A link that no lane bounces is a vector store; the others go lane by lane.
#[inline(always)]
fn push<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    at: Line,
    k: usize,
    (sites, alike): (&[Site], bool),
    cl: &[[T; VL]],
) {
    let d = &job.d;
    let bounced = bounced_links(sites);
    // Every lane bounces the same links: those go to the cluster's own slots, a vector each.
    let own = alike.then(|| at.shifted(d, 0, 0));
    let lanes = (bounced != 0 && own.is_none()).then(|| lanes::<L, VL>(d, sites, at, k));
    for (i, c) in M::VELOCITIES.iter().enumerate() {
        let o = M::OPPOSITE[i];
        if let Some(line) = own.filter(|_| bounced >> o & 1 == 1) {
            job.dst
                .store::<VL>(L::cluster_base(d, i, line, k), i, cl[i]);
            continue;
        }
        let Some(lanes) = lanes.as_ref().filter(|_| bounced >> o & 1 == 1) else {
            let col = at.shifted(d, c[0], c[2]);
            let v = job.dst.stored_lanes(o, cl[i]);
            store_shifted::<L, _, VL>(&job.dst.raw, d, o, col, k, c[1] as isize, v);
            continue;
        };
        for (l, lane) in lanes.iter().enumerate() {
            let (idx, slot) = if lane.bounced(o) {
                (L::index(d, i, col_of(d, at.x, 0), lane.y), i)
            } else {
                (
                    L::index(d, o, col_of(d, at.x, c[0]), d.shift(lane.y, *c)),
                    o,
                )
            };
            job.dst.set(idx, slot, cl[i][l]);
        }
    }
}

/// The sites of the `VL` lanes of cluster `k` of a line: its boundary sites, and plain sites
/// (no bounced link, no rule) in the other lanes.
fn lanes<L: Layout, const VL: usize>(d: &Dims, sites: &[Site], at: Line, k: usize) -> [Site; VL] {
    std::array::from_fn(|l| {
        sites.iter().find(|s| s.lane == l).copied().unwrap_or(Site {
            x: at.x,
            y: d.plane_site(L::site_y(d, k, l), at.z),
            k,
            lane: l,
            mask: 0,
            corr: None,
            interp: None,
            rule: Rule::None,
        })
    })
}

/// AA odd → even half-step of a line, in place: `g_i = F_ī(x)` (plus the wall correction on
/// bounced links), bc rules, collide, `F_i(x) = h_i`.
#[inline(always)] // into `line`
fn aa_local_line<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    o: &Offsets,
    at: Line,
    s: &mut Scratch<T, VL>,
) {
    let (d, lines) = (&job.src_d, Lines::of(job, at));
    let sites = job.bc.line(at.x, at.z);
    let mut cursor = 0;
    for k in 0..L::clusters(d) {
        let here = cluster_sites(sites, &mut cursor, k);
        if here.is_empty() {
            collide_interior::<M, L, T, VL>(job, o, (&job.src, &job.src), lines, k, &mut s.fl);
            continue;
        }
        for (i, v) in s.cl.iter_mut().enumerate() {
            let opp = M::OPPOSITE[i];
            *v = job
                .src
                .load::<VL>(L::cluster_base(d, opp, lines.src, k), opp);
        }
        if uniform::<VL>(here) {
            job.bc
                .apply_rules::<M, VL>(here, &mut s.cl, &mut s.lane_regs, job.params);
        } else {
            for site in here {
                local_site_bc::<M, L, T, VL>(job, site, s);
            }
        }
        collide::<M, L, T, VL>(job, lines.site, k, s);
        for (i, v) in s.cl.iter().enumerate() {
            job.src
                .store::<VL>(L::cluster_base(d, i, lines.src, k), i, *v);
        }
    }
}

/// The bc of one boundary lane in the AA local half-step. A curved wall's link reads
/// `f*_ī(x)` in `F_ī(x)` (the pull half-step redirected it there), `f*_ī(x + c_i)` in `F_i(x)`
/// (streamed there) and its other terms held before the half-step (`Lattice::hold_terms`).
fn local_site_bc<M: Model, L: Layout, T: Real, const VL: usize>(
    job: &Job<M, L, T>,
    site: &Site,
    s: &mut Scratch<T, VL>,
) {
    for i in 0..M::Q {
        let v = s.cl[i][site.lane];
        let v = match site.interp.filter(|_| site.bounced(i)) {
            Some(at) => job.bc.interp[at + i].apply(|k, _| match k {
                0 => v,
                1 => s.cl[M::OPPOSITE[i]][site.lane],
                _ => job.held[(at + i) * TERMS_LEN + k],
            }),
            None => v,
        };
        s.site[i] = match correction(job.bc, site, i) {
            Some(c) if site.bounced(i) => v + c,
            _ => v,
        };
    }
    job.bc
        .apply_rule::<M>(&site.rule, &mut s.site, &mut s.regs, job.params);
    for i in 0..M::Q {
        s.cl[i][site.lane] = s.site[i];
    }
}

/// A storage plane of an array: the array, its addressing and the plane's number.
type Plane<'p, 'a, E> = (&'p RawBuf<'a, E>, &'p Dims, usize);

/// Copies population `i` of one storage plane to another (of the same array or not), every
/// line.
fn copy_column<L: Layout, E: Element>(from: Plane<E>, to: Plane<E>, i: usize) {
    let ((fb, fd, fc), (tb, td, tc)) = (from, to);
    for z in 0..fd.lz {
        let (from, to) = (fd.line(fc, z), td.line(tc, z));
        for k in 0..L::clusters(fd) {
            for l in 0..L::VL {
                let v = fb.get(L::cluster_base(fd, i, from, k) + l);
                tb.set(L::cluster_base(td, i, to, k) + l, v);
            }
        }
    }
}

/// Fills the halo columns from the periodic image: column `LX + j` from `j`, column `−1 − j`
/// from `LX − 1 − j` (j < halo), all populations.
pub(crate) fn fill_halo<L: Layout, E: Element>(b: &RawBuf<E>, d: &Dims) {
    let lx = d.lx as isize;
    for j in 0..d.halo as isize {
        for i in 0..d.q {
            copy_column::<L, E>((b, d, d.col(j)), (b, d, d.col(lx + j)), i);
            copy_column::<L, E>((b, d, d.col(lx - 1 - j)), (b, d, d.col(-1 - j)), i);
        }
    }
}

/// After an AA pull half-step with periodic x: moves the populations pushed into halo column
/// `LX + j` (those with `c_x ≤ −(j+1)`) to column `j`, and those pushed into `−1 − j`
/// (`c_x ≥ j + 1`) to `LX − 1 − j`. A halo element whose pusher redirected it (a bounced
/// link at a wall crossing the periodic edge) holds nothing and is skipped.
pub(crate) fn fold_halo<M: Model, L: Layout, T: Real>(
    b: &RawBuf<T::Stored>,
    d: &Dims,
    bc: &Boundaries<T>,
) {
    let lx = d.lx as isize;
    for j in 0..d.halo as isize {
        for (p, c) in M::VELOCITIES.iter().enumerate() {
            let cx = c[0] as isize;
            if cx < -j {
                fold_column::<M, L, T>(b, d, bc, p, lx + j, j);
            }
            if cx > j {
                fold_column::<M, L, T>(b, d, bc, p, -1 - j, lx - 1 - j);
            }
        }
    }
}

/// Moves population `p` of halo plane `from` to its periodic image `to`, site by site, except
/// where the pushing site `from + c_p` redirected it (its link `p` is bounced).
fn fold_column<M: Model, L: Layout, T: Real>(
    b: &RawBuf<T::Stored>,
    d: &Dims,
    bc: &Boundaries<T>,
    p: usize,
    from: isize,
    to: isize,
) {
    let c = M::VELOCITIES[p];
    let pusher = (from + c[0] as isize) as usize;
    if bc.column(pusher).is_empty() {
        return copy_column::<L, _>((b, d, d.col(from)), (b, d, d.col(to)), p);
    }
    for y in 0..d.plane() {
        let ys = d.shift(y, c);
        if bc.site::<L>(d, pusher, ys).is_some_and(|s| s.bounced(p)) {
            continue;
        }
        let v = b.get(L::index(d, p, d.col(from), y));
        b.set(L::index(d, p, d.col(to), y), v);
    }
}
