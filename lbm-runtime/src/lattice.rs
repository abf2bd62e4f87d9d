//! [`Lattice`]: the populations of an `LX × LY` (2-D) or `LX × LY × LZ` (3-D) lattice of
//! model `M` in layout `L` and precision `T`, with its boundary conditions, streaming scheme
//! and time stepping.
//!
//! The stored state between steps is the post-collision populations `f*_i(x)`; everything a
//! user reads or writes by `(x, y)` goes through that logical view, so it does not depend on
//! the layout or on the scheme (in the AA scheme the odd half-steps keep `f*_i(x)` at
//! `F_ī(x + c_i)`, and the accessors follow it there). In 3-D the second coordinate of
//! every accessor is the site's number in its plane of constant x, `s = z·LY + y`
//! ([`Dims::plane_site`]); in 2-D it is the row `y`.

use std::marker::PhantomData;
use std::ops::Range;
use std::time::Instant;

use crate::parallel;

use crate::boundary::{aa_source, Boundaries, BoundarySpec, HeldTerm, Term, TERMS, TERMS_LEN};
use crate::kernels::{fill_halo, fold_halo, Job, PairedCopy, PairedSweep, Pass, Pattern, Stores};
use crate::layout::{Dims, Layout, LayoutKind};
use crate::model::{divergence, moment_named};
use crate::prefetch::{Choice, Prefetch};
use crate::storage::{rest_values, stored, value, AlignedBuf, Pops};
use crate::tuner::Tuner;
use crate::{LbmError, Model, Real, Scheme};

/// One of the separate kernels of Calore et al.'s pipeline (two-copy scheme), for benchmarks and
/// for [`Lattice::step_split`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Pull streaming into the second copy (halos filled first when x is periodic).
    Propagate,
    /// Boundary conditions on the streamed copy.
    Bc,
    /// Collision of the streamed copy, in place.
    Collide,
    /// Fused propagate + bc + collide: one full step.
    Fused,
}

/// Where the post-collision populations `f*_i(x, s)` (`s` the plane site) are stored: a map
/// from `i` to (element index, population whose slot it is: `i` or `ī`, see [`Pops`]),
/// [`aa_source`]'s slots in the layout given by its line-index and cluster-lane functions
/// ([`Layout::line_index`], [`Layout::cluster_lane`]), so a layout known only at run time is
/// served by the same map. The site's boundary record is looked up once, for every `i`.
pub(crate) fn stored_slot<'a, M: Model, T: Real>(
    (d, bc): (&'a Dims, &'a Boundaries<T>),
    line_index: impl Fn(&Dims, usize, usize, usize) -> usize + 'a,
    lanes: impl Fn(&Dims, usize) -> (usize, usize),
    odd: bool,
    (x, s): (isize, usize),
) -> impl Fn(usize) -> (usize, usize) + 'a {
    let inside = (0..d.lx as isize).contains(&x);
    let site = (odd && inside)
        .then(|| bc.site_at(d, x as usize, s, lanes).copied())
        .flatten();
    let (y, z) = d.yz(s);
    move |i| {
        let redirected = site.is_some_and(|s| s.bounced(M::OPPOSITE[i]));
        let (p, xs, c) = aa_source::<M>(d, (odd, redirected, bc.x_periodic()), (i, x));
        let line = d.line(d.col(xs), d.wrap_z(z, c[2] as isize));
        (line_index(d, p, line, d.wrap_y(y, c[1] as isize)), p)
    }
}

/// A lattice of model `M`, layout `L`, precision `T`.
pub struct Lattice<M: Model, L: Layout, T: Real> {
    d: Dims,
    params: M::Params,
    scheme: Scheme,
    f: AlignedBuf<T::Stored>,
    /// The second copy (two-copy scheme only).
    g: Option<AlignedBuf<T::Stored>>,
    /// The rest populations `w_i`, relative to which a compact precision stores (see
    /// [`Pops`]).
    rest: Vec<T>,
    /// In-place scheme: the last half-step was a pull (the state is "odd").
    odd: bool,
    bc: Boundaries<T>,
    /// In place: the populations the interpolated links hold ([`Boundaries::held_terms`]).
    holds: Vec<HeldTerm>,
    /// Their values, held at the start of the half-step that reads them
    /// ([`Lattice::hold_terms`]) at their `at`; empty with two copies and where nothing holds.
    held: Vec<T>,
    /// The step whose start [`Lattice::held`] was taken at; `None` after the state was written
    /// otherwise than by a step.
    held_at: Option<u64>,
    /// The per-site values of the model's fields ([`Model::FIELDS`]), a lattice of
    /// `FIELDS.len()` populations in layout `L` (`None` until one is set: uniform fields).
    fields: Option<AlignedBuf<T>>,
    step: u64,
    max_mach: f64,
    /// The prefetch distance of each pass, tuned while the lattice runs.
    prefetch: Prefetch,
    /// Whether [`Lattice::steps`] sweeps two steps in pairs, tuned while the lattice runs:
    /// candidate [`SEPARATE`] or [`PAIRED`].
    pairing: Tuner,
    /// The rings of planes of the two-copy scheme's paired sweep ([`Lattice::ring`]), one per
    /// chunk, allocated when first needed.
    rings: Vec<AlignedBuf<T::Stored>>,
    /// Paired sweeps taken (what the tests check was exercised).
    #[cfg(test)]
    pub(crate) paired_sweeps: u64,
    _m: PhantomData<(M, L)>,
}

/// [`Lattice::steps`]' candidates for two steps: two sweeps, or one ([`PairedSweep`] in
/// place, [`PairedCopy`] with two copies).
const SEPARATE: usize = 0;
const PAIRED: usize = 1;

impl<M: Model, L: Layout, T: Real> Lattice<M, L, T> {
    /// A lattice of `lx × ly` sites of a 2-D model at rest (`ρ = 1`, `u = 0`: populations
    /// `w_i`).
    ///
    /// Fails before allocating when `ly` is not a multiple of `L::VL`, when the lattice is
    /// smaller than the model's halo (`lx < HALO` or `ly / VL < HALO`), when the parameters
    /// are out of range (`M::validate`, e.g. τ ≤ ½) or the boundaries do not fit.
    pub fn new(
        lx: usize,
        ly: usize,
        params: M::Params,
        scheme: Scheme,
        boundaries: &BoundarySpec,
    ) -> Result<Self, LbmError> {
        if M::D != 2 {
            return Err(LbmError::Shape(format!(
                "model {} is three-dimensional: give its third side with Lattice::with_size([lx, ly, lz], …)",
                M::NAME
            )));
        }
        Self::with_size([lx, ly, 1], params, scheme, boundaries)
    }

    /// A lattice of `size = [LX, LY, LZ]` sites at rest; `LZ = 1` for a 2-D model, `LZ ≥ HALO`
    /// for a 3-D one. Fails as [`Lattice::new`].
    pub fn with_size(
        size: [usize; 3],
        params: M::Params,
        scheme: Scheme,
        boundaries: &BoundarySpec,
    ) -> Result<Self, LbmError> {
        check_size::<M>(size, L::KIND)?;
        M::validate(&params)?;
        let d = Dims::of::<M>(size);
        let bc = Boundaries::compile::<M, L>(boundaries, &d)?;
        let mut lat = Self {
            d,
            params,
            scheme,
            f: AlignedBuf::zeroed(d.len()),
            g: (scheme == Scheme::TwoCopy).then(|| AlignedBuf::zeroed(d.len())),
            rest: rest_values(M::WEIGHTS),
            odd: false,
            holds: Vec::new(),
            held: Vec::new(),
            held_at: None,
            bc,
            fields: None,
            step: 0,
            max_mach: default_max_mach::<M>(),
            prefetch: Prefetch::new(Stores::candidates(scheme, d.len() * T::BYTES)),
            pairing: Tuner::new(2),
            rings: Vec::new(),
            #[cfg(test)]
            paired_sweeps: 0,
            _m: PhantomData,
        };
        lat.hold_nothing();
        lat.fill_rest();
        if !lat.can_pair() {
            lat.pairing.settle(SEPARATE);
        }
        Ok(lat)
    }

    /// The addressing of the rings of planes the two-copy scheme's paired sweep pulls through
    /// ([`PairedCopy::ring`]); `None` in place, where no ring fits, and where a wall's links
    /// read further along them than the ring keeps planes behind (quadratic curved walls).
    fn ring(&self) -> Option<Dims> {
        match self.scheme {
            Scheme::TwoCopy if self.bc.link_reach() <= 1 => {
                PairedCopy::<M, L, T>::ring(&self.d, self.bc.x_periodic())
            }
            _ => None,
        }
    }

    /// Whether [`Lattice::steps`] can sweep two steps in one: in place unless a link holds a
    /// population (the second half-step of a pair would need it before the sweep); with two
    /// copies where a ring fits.
    fn can_pair(&self) -> bool {
        match self.scheme {
            Scheme::InPlace => self.held.is_empty(),
            Scheme::TwoCopy => self.ring().is_some(),
        }
    }

    /// Finds what the boundaries' links hold (in place), sizes [`Lattice::held`] for it and
    /// marks it stale.
    fn hold_nothing(&mut self) {
        self.holds = match self.scheme {
            Scheme::InPlace => self.bc.held_terms::<M>(&self.d),
            Scheme::TwoCopy => Vec::new(),
        };
        let len = if self.holds.is_empty() {
            0
        } else {
            self.bc.interp.len() * TERMS_LEN
        };
        self.held = vec![T::default(); len];
        self.held_at = None;
    }

    /// In place, at the start of a half-step: holds the populations the interpolated links
    /// read beyond their sites' own slots ([`Boundaries::held_terms`]), from where the state
    /// keeps them ([`aa_source`]): read before the sweep, they are the values the two-copy
    /// scheme reads. A slab's step runs in parts, its bulk while the halos travel: a
    /// population in a halo column is held again at each part (only the border, after the
    /// halos arrived, reads one; nothing writes them during the step).
    fn hold_terms(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let first = self.held_at != Some(self.step);
        let (d, periodic) = (self.d, self.bc.x_periodic());
        let values: Vec<(usize, T)> = (self.holds.iter())
            .filter_map(|h| {
                let (p, x, s) = h.source::<M>(&d, self.odd, periodic);
                let in_halo = !(0..d.lx as isize).contains(&x);
                (first || in_halo).then(|| (h.at, self.value_at((L::index(&d, p, d.col(x), s), p))))
            })
            .collect();
        for (at, v) in values {
            self.held[at] = v;
        }
        self.held_at = Some(self.step);
    }

    /// Every site, halos included, at rest: `f_i = w_i`.
    fn fill_rest(&mut self) {
        let d = self.d;
        let mut bufs = vec![self.f.raw()];
        bufs.extend(self.g.as_mut().map(|g| g.raw()));
        let rest = &self.rest;
        for b in bufs {
            parallel::for_each(0..d.nlines(), &|line| {
                for y in 0..d.ly {
                    for (i, &w) in rest.iter().enumerate() {
                        b.set(L::line_index(&d, i, line, y), stored(w, rest, i));
                    }
                }
            });
        }
    }

    /// The shape of the fields' storage: one "population" per field of [`Model::FIELDS`].
    fn field_dims(&self) -> Dims {
        Dims {
            q: M::FIELDS.len(),
            ..self.d
        }
    }

    /// Gives field `name` (a parameter the model declares `field`) a value per site, indexed as
    /// [`Lattice::moment_field`] (`[x·LY + y]`, `[x·LY·LZ + z·LY + y]` in 3-D); until then a
    /// field is uniform, its value in the parameters. Fails before changing anything on an
    /// unknown name, a wrong length or a non-finite value.
    pub fn set_field(&mut self, name: &str, values: &[f64]) -> Result<(), LbmError> {
        let j = checked_field::<M>(name, values, (self.d.lx, self.d.plane()))?;
        let d = self.d;
        let fd = self.field_dims();
        if self.fields.is_none() {
            let mut buf = AlignedBuf::zeroed(fd.len());
            let raw = buf.raw();
            for (jj, v) in uniform_fields::<M>(&self.params).into_iter().enumerate() {
                for x in 0..d.lx {
                    for s in 0..d.plane() {
                        raw.set(L::index(&fd, jj, d.col(x as isize), s), T::from_f64(v));
                    }
                }
            }
            self.fields = Some(buf);
        }
        let raw = self.fields.as_mut().expect("allocated above").raw();
        let plane = d.plane();
        parallel::for_each(0..d.lx, &|x| {
            for (s, &v) in values[x * plane..(x + 1) * plane].iter().enumerate() {
                raw.set(L::index(&fd, j, d.col(x as isize), s), T::from_f64(v));
            }
        });
        Ok(())
    }

    /// The values of field `name` per site, indexed as [`Lattice::set_field`] gives them (the
    /// uniform value everywhere until a field is set).
    pub fn field(&self, name: &str) -> Result<Vec<f64>, LbmError> {
        let j = field_index::<M>(name)?;
        let d = self.d;
        Ok((0..d.lx)
            .flat_map(|x| (0..d.plane()).map(move |s| (x, s)))
            .map(|(x, s)| self.site_field(j, x, s))
            .collect())
    }

    /// Field `j` at site `(x, s)`.
    fn site_field(&self, j: usize, x: usize, s: usize) -> f64 {
        match &self.fields {
            Some(f) => f[L::index(&self.field_dims(), j, self.d.col(x as isize), s)].to_f64(),
            None => uniform_fields::<M>(&self.params)[j],
        }
    }

    /// Whether the fields were given values per site ([`Lattice::set_field`]).
    pub fn has_site_fields(&self) -> bool {
        self.fields.is_some()
    }

    /// The parameters of site `(x, s)`: the lattice's, with the site's field values.
    pub(crate) fn site_params(&self, x: usize, s: usize) -> M::Params {
        if self.fields.is_none() {
            return self.params.clone();
        }
        let values: Vec<f64> = (0..M::FIELDS.len())
            .map(|j| self.site_field(j, x, s))
            .collect();
        M::with_fields(&self.params, &values)
    }

    /// Sets the step counter (restart from a checkpoint).
    pub(crate) fn set_steps_done(&mut self, step: u64) {
        self.step = step;
        self.held_at = None;
    }

    /// The lattice's shape.
    pub fn dims(&self) -> Dims {
        self.d
    }

    /// The model parameters.
    pub fn params(&self) -> &M::Params {
        &self.params
    }

    /// The layout of the populations, as a value.
    pub fn layout(&self) -> LayoutKind {
        L::KIND
    }

    /// The streaming scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The memory access pattern of the next fused step (of every one, once the lattice has
    /// tuned its passes, module `prefetch`): in place, or a copy with non-temporal stores or
    /// with ordinary ones ([`crate::kernels::Stores`]).
    pub fn step_pattern(&self) -> Pattern {
        match (self.scheme, self.prefetch.choice(Pass::Fused).stores) {
            (Scheme::InPlace, _) => Pattern::InPlace,
            (Scheme::TwoCopy, Stores::Streamed) => Pattern::StreamedCopy,
            (Scheme::TwoCopy, Stores::Plain | Stores::Prefetched) => Pattern::Copy,
        }
    }

    /// Steps done so far.
    pub fn steps_done(&self) -> u64 {
        self.step
    }

    /// The compiled boundary conditions.
    pub fn boundaries(&self) -> &Boundaries<T> {
        &self.bc
    }

    /// Sets the Mach number `|u| / (cs √T)` beyond which [`Lattice::check`] reports divergence.
    pub fn set_max_mach(&mut self, mach: f64) {
        self.max_mach = mach;
    }

    /// Bytes of population storage (both copies for the two-copy scheme; not counting the
    /// rings of its paired sweep, a few planes per worker that fit together in half the
    /// last-level cache, `kernels::paired`).
    pub fn storage_bytes(&self) -> usize {
        let copies = if self.g.is_some() { 2 } else { 1 };
        copies * self.d.len() * T::BYTES
    }

    fn check_site(&self, x: usize, y: usize) -> Result<(), LbmError> {
        let d = &self.d;
        if x >= d.lx || y >= d.plane() {
            let size = if d.lz == 1 {
                format!("{}×{}", d.lx, d.ly)
            } else {
                format!("{}×{}×{} (plane sites 0..{})", d.lx, d.ly, d.lz, d.plane())
            };
            return Err(LbmError::Shape(format!(
                "site ({x}, {y}) outside the {size} lattice"
            )));
        }
        Ok(())
    }

    /// Where the post-collision populations `f*_i(x, y)` are stored in the current state
    /// ([`stored_slot`]).
    fn slot_of(&self, x: isize, y: usize) -> impl Fn(usize) -> (usize, usize) + '_ {
        stored_slot::<M, T>(
            (&self.d, &self.bc),
            L::line_index,
            L::cluster_lane,
            self.odd,
            (x, y),
        )
    }

    /// The value in element `e` of population `p`'s slots.
    fn value_at(&self, (e, p): (usize, usize)) -> T {
        value(self.f[e], &self.rest, p)
    }

    /// The post-collision populations `f*_i(x, y)` of the stored state, in the order of
    /// `M::VELOCITIES` (layout- and scheme-independent; checkpoints use this).
    pub fn populations(&self, x: usize, y: usize, out: &mut [T]) -> Result<(), LbmError> {
        self.check_site(x, y)?;
        check_len(out.len(), M::Q, "populations")?;
        let slot = self.slot_of(x as isize, y);
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.value_at(slot(i));
        }
        Ok(())
    }

    /// Sets the stored populations of site `(x, y)`; refuses non-finite values.
    pub fn set_populations(&mut self, x: usize, y: usize, f: &[T]) -> Result<(), LbmError> {
        self.check_site(x, y)?;
        check_len(f.len(), M::Q, "populations")?;
        if let Some((i, &v)) = f.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(non_finite(x, y, format!("population {i}"), v));
        }
        let slot = stored_slot::<M, T>(
            (&self.d, &self.bc),
            L::line_index,
            L::cluster_lane,
            self.odd,
            (x as isize, y),
        );
        for (i, &v) in f.iter().enumerate() {
            let (e, p) = slot(i);
            self.f[e] = stored(v, &self.rest, p);
        }
        self.held_at = None;
        Ok(())
    }

    /// Sets every site to the equilibrium of the moments `moments(x, y)` (order of
    /// `M::MOMENT_NAMES`; the lattice is left in the even state of the AA scheme, every site
    /// being written); refuses non-finite moments before changing anything. The velocity
    /// given is the bare `Σ f c / ρ` of the equilibrium: with a body force `a`
    /// ([`Model::acceleration`]) the physical velocity that [`Lattice::moments`] reports is
    /// `u + a/2`, so a fluid meant to be at rest is initialised with `u = −a/2`.
    pub fn set_equilibrium<F>(&mut self, moments: F) -> Result<(), LbmError>
    where
        F: Fn(usize, usize) -> Vec<f64> + Sync,
    {
        self.set_equilibrium_of(&moments)
    }

    /// [`Lattice::set_equilibrium`], compiled once per lattice rather than once per caller's
    /// closure.
    fn set_equilibrium_of(
        &mut self,
        moments: &dyn Fn(usize, usize) -> Vec<f64>,
    ) -> Result<(), LbmError> {
        let nm = M::MOMENT_NAMES.len();
        let mut feq = vec![T::default(); M::Q];
        for x in 0..self.d.lx {
            for y in 0..self.d.plane() {
                let m = moments(x, y);
                check_len(m.len(), nm, "moments")?;
                if let Some((j, v)) = m.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                    return Err(non_finite(x, y, M::MOMENT_NAMES[j].to_string(), *v));
                }
            }
        }
        let mut mt = vec![T::default(); nm];
        self.odd = false;
        self.held_at = None;
        for x in 0..self.d.lx {
            for y in 0..self.d.plane() {
                for (a, b) in mt.iter_mut().zip(moments(x, y)) {
                    *a = T::from_f64(b);
                }
                M::equilibrium(&mt, &self.site_params(x, y), &mut feq);
                self.set_populations(x, y, &feq)?;
            }
        }
        Ok(())
    }

    /// For each site `[x, y, z]` of `sites`, its post-collision populations
    /// ([`Lattice::populations`]) followed by its pre-collision ones at the next step
    /// ([`Lattice::pre_collision`]): `2Q` values a site, what momentum exchange measures the
    /// loads on bodies from — what leaves each site along a link cut by a wall, and what the
    /// wall sends back.
    pub fn exchanged(&self, sites: &[[usize; 3]]) -> Result<Vec<T>, LbmError> {
        let mut out = vec![T::default(); 2 * M::Q * sites.len()];
        for (&[x, y, z], f) in sites.iter().zip(out.chunks_exact_mut(2 * M::Q)) {
            let (post, pre) = f.split_at_mut(M::Q);
            let s = self.d.plane_site(y, z);
            self.populations(x, s, post)?;
            self.pre_collision(x, s, pre)?;
        }
        Ok(out)
    }

    /// The pre-collision populations of site `(x, y)` at the next step: the stored state
    /// streamed, with the boundary links and rules applied (what the collision will see). In
    /// the odd AA state they are the site's own elements `F_ī(x)`, as the local half-step
    /// reads them.
    pub fn pre_collision(&self, x: usize, y: usize, g: &mut [T]) -> Result<(), LbmError> {
        self.check_site(x, y)?;
        check_len(g.len(), M::Q, "populations")?;
        let d = &self.d;
        let Some(site) = self.bc.site::<L>(d, x, y) else {
            self.plain_pre_collision(x, y, g);
            return Ok(());
        };
        // `f*_p(x + c)` where the state keeps it: a lattice that is not periodic in x reads
        // across its edges from its halos (a slab's: its neighbours' borders), unless the term
        // `wraps`.
        let at = |p: usize, c: [i32; 3], wraps: bool| {
            let sx = x as isize + c[0] as isize;
            let sx = match self.bc.x_periodic() || wraps {
                true => sx.rem_euclid(d.lx as isize),
                false => sx,
            };
            self.value_at(self.slot_of(sx, d.shift(y, c))(p))
        };
        // Term `t` of link `i`, `f*_p(x + s c_i)`.
        let term = |i: usize, t: Term| at(t.pop.of::<M>(i), t.offset(M::VELOCITIES[i]), t.wraps());
        for (i, gi) in g.iter_mut().enumerate() {
            let bounced = site.bounced(i);
            *gi = if self.odd {
                let own = |p: usize| self.value_at((L::index(d, p, d.col(x as isize), y), p));
                let v = own(M::OPPOSITE[i]);
                // A curved wall's link reads what the local half-step reads
                // (`kernels::local_site_bc`): `f*_ī(x)` and `f*_ī(x + c_i)` in the site's own
                // slots, the other terms where the state keeps them.
                let v = match site.interp.filter(|_| bounced) {
                    Some(at) => self.bc.interp[at + i].apply(|k, t| match k {
                        0 => v,
                        1 => own(i),
                        _ => term(i, t),
                    }),
                    None => v,
                };
                match site.corr.filter(|_| bounced) {
                    Some(o) => v + self.bc.corr[o + i],
                    None => v,
                }
            } else if bounced {
                // The link's terms (`boundary::link`).
                let v = match site.interp.map(|at| &self.bc.interp[at + i]) {
                    Some(w) => w.apply(|_, t| term(i, t)),
                    None => term(i, TERMS[0]),
                };
                site.corr.map_or(v, |o| v + self.bc.corr[o + i])
            } else {
                at(i, M::VELOCITIES[i].map(|v| -v), false)
            };
        }
        self.bc
            .apply_rule::<M>(&site.rule, g, &mut Vec::new(), &self.params);
        Ok(())
    }

    /// [`Lattice::pre_collision`] of a site that is no boundary site (no bounced link, no
    /// rule): the streamed populations alone, addressed line by line (what the moments of a
    /// whole lattice and the divergence check read, site after site).
    fn plain_pre_collision(&self, x: usize, s: usize, g: &mut [T]) {
        let d = &self.d;
        let (y, z) = d.yz(s);
        if self.odd {
            // The site's own elements `F_ī(x)`, as the local half-step reads them.
            let line = d.line(d.col(x as isize), z);
            for (i, gi) in g.iter_mut().enumerate() {
                let p = M::OPPOSITE[i];
                *gi = value(self.f[L::line_index(d, p, line, y)], &self.rest, p);
            }
            return;
        }
        // `x − c_x`: its periodic image where x is periodic, else a halo column at the edges.
        let periodic = self.bc.x_periodic();
        for ((i, gi), c) in g.iter_mut().enumerate().zip(M::VELOCITIES) {
            let col = match periodic {
                true => d.col(d.wrap_x(x, -c[0] as isize) as isize),
                false => d.col(x as isize - c[0] as isize),
            };
            let line = d.line(col, d.wrap_z(z, -c[2] as isize));
            let e = L::line_index(d, i, line, d.wrap_y(y, -c[1] as isize));
            *gi = value(self.f[e], &self.rest, i);
        }
    }

    /// The macroscopic moments of site `(x, y)` (order of `M::MOMENT_NAMES`), from the
    /// pre-collision populations, so that the velocity is the physical one with a body force.
    pub fn moments(&self, x: usize, y: usize, m: &mut [T]) -> Result<(), LbmError> {
        check_len(m.len(), M::MOMENT_NAMES.len(), "moments")?;
        let mut g = vec![T::default(); M::Q];
        self.pre_collision(x, y, &mut g)?;
        M::moments(&g, &self.site_params(x, y), m);
        Ok(())
    }

    /// The field of moment `name` as `f64`, indexed `[x·LY + y]` (`[x·LY·LZ + z·LY + y]` in
    /// 3-D; solid sites hold 0).
    pub fn moment_field(&self, name: &str) -> Result<Vec<f64>, LbmError> {
        Ok(self.moment_field_at(moment_named::<M>(name)?))
    }

    /// The field of moment `j` (order of `M::MOMENT_NAMES`), as [`Lattice::moment_field`].
    pub(crate) fn moment_field_at(&self, j: usize) -> Vec<f64> {
        let plane: Vec<usize> = (0..self.d.plane()).collect();
        self.moment_fields_of(&[j], 0..self.d.lx, &plane)
            .swap_remove(0)
    }

    /// Every moment field (order of `M::MOMENT_NAMES`), as [`Lattice::moment_field`], in one
    /// pass over the sites.
    pub(crate) fn moment_fields(&self) -> Vec<Vec<f64>> {
        let plane: Vec<usize> = (0..self.d.plane()).collect();
        self.moment_fields_at(0..self.d.lx, &plane)
    }

    /// Every moment field of the plane sites `plane` of the columns `cols` (a block's own
    /// sites among its stored lines, a few columns at a time), indexed
    /// `[(x − cols.start)·plane.len() + k]` for `plane[k]`.
    pub(crate) fn moment_fields_at(&self, cols: Range<usize>, plane: &[usize]) -> Vec<Vec<f64>> {
        self.moment_fields_of(&(0..M::MOMENT_NAMES.len()).collect::<Vec<_>>(), cols, plane)
    }

    /// The fields of the moments `js` at the plane sites `plane` of the columns `cols`, each
    /// site's populations pulled once for all of them, the columns in parallel.
    fn moment_fields_of(&self, js: &[usize], cols: Range<usize>, plane: &[usize]) -> Vec<Vec<f64>> {
        let d = self.d;
        let n = plane.len();
        let mut out = vec![vec![0.0; cols.len() * n]; js.len()];
        let mut columns: Vec<Vec<&mut [f64]>> = cols.clone().map(|_| Vec::new()).collect();
        for field in &mut out {
            for (col, c) in columns.iter_mut().zip(field.chunks_mut(n.max(1))) {
                col.push(c);
            }
        }
        parallel::for_each_owned(columns, &|i, mut fields| {
            let x = cols.start + i;
            let mut g = vec![T::default(); M::Q];
            let mut m = vec![T::default(); M::MOMENT_NAMES.len()];
            for (k, &y) in plane.iter().enumerate() {
                if self.bc.is_solid(&d, x, y) {
                    continue;
                }
                self.pre_collision(x, y, &mut g)
                    .expect("site inside the lattice");
                M::moments(&g, &self.site_params(x, y), &mut m);
                for (f, &j) in fields.iter_mut().zip(js) {
                    f[k] = m[j].to_f64();
                }
            }
        });
        out
    }

    /// Total mass `Σ_x Σ_i f*_i(x)` over the fluid sites, accumulated in `f64`.
    pub fn mass(&self) -> f64 {
        let d = self.d;
        parallel::sum(0..d.lx, &|x| {
            let mut s = 0.0;
            for y in (0..d.plane()).filter(|&y| !self.bc.is_solid(&d, x, y)) {
                let slot = self.slot_of(x as isize, y);
                for i in 0..M::Q {
                    s += self.value_at(slot(i)).to_f64();
                }
            }
            s
        })
    }

    fn launch(&mut self, pass: Pass) {
        self.launch_cols(pass, 0..self.d.lx);
    }

    /// Runs `pass` on the site columns `cols` only.
    fn launch_cols(&mut self, pass: Pass, cols: std::ops::Range<usize>) {
        let job = self.job(pass, cols);
        let columns = job.cols.len();
        let start = Instant::now();
        L::dispatch(job);
        self.prefetch
            .record(pass, columns, start.elapsed().as_secs_f64());
    }

    /// The job of `pass` on the site columns `cols`, at the distance and kind of store its
    /// tuning gives now.
    fn job(&mut self, pass: Pass, cols: std::ops::Range<usize>) -> Job<'_, M, L, T> {
        let choice = self.prefetch.choice(pass);
        let rest = &self.rest;
        let (src, dst) = match self.g.as_mut() {
            Some(g) => (Pops::new(self.f.raw(), rest), Pops::new(g.raw(), rest)),
            None => {
                let r = Pops::new(self.f.raw(), rest);
                (r, r)
            }
        };
        Job {
            pass,
            src,
            dst,
            d: self.d,
            src_d: self.d,
            dst_d: self.d,
            bc: &self.bc,
            held: &self.held,
            params: &self.params,
            fields: self.fields.as_mut().map(|f| f.raw()),
            cols,
            stores: choice.stores,
            prefetch_bytes: choice.bytes,
            _layout: PhantomData,
        }
    }

    /// Two time steps in one sweep, bitwise those of two [`Lattice::step`]s.
    fn step_paired(&mut self) {
        match self.scheme {
            Scheme::InPlace => self.step_paired_in_place(),
            Scheme::TwoCopy => self.step_paired_copies(),
        }
        #[cfg(test)]
        {
            self.paired_sweeps += 1;
        }
    }

    /// Two fused two-copy steps in one sweep through rings of planes ([`PairedCopy`]).
    fn step_paired_copies(&mut self) {
        let ring = self
            .ring()
            .expect("a two-copy lattice pairs only where a ring fits");
        let n = PairedCopy::<M, L, T>::chunks(&self.d);
        let mut rings = std::mem::take(&mut self.rings);
        if rings.len() < n {
            rings.resize_with(n, || AlignedBuf::zeroed(ring.len()));
        }
        self.wrap_x(false);
        let periodic = self.bc.x_periodic();
        let first = self.job(Pass::Fused, 0..self.d.lx);
        let second = Job {
            cols: first.cols.clone(),
            ..first
        };
        L::dispatch(PairedCopy {
            first,
            second,
            rings: rings.iter_mut().take(n).map(|r| r.raw()).collect(),
            ring,
            periodic,
        });
        self.rings = rings;
        self.swap();
        self.step += 2;
    }

    /// The in-place scheme's local half-step and the pull half-step after it in one sweep
    /// ([`PairedSweep`]; the lattice in its odd state).
    fn step_paired_in_place(&mut self) {
        debug_assert!(self.scheme == Scheme::InPlace && self.odd);
        let (pull, periodic) = (self.prefetch.choice(Pass::AaPull), self.bc.x_periodic());
        let local = self.job(Pass::AaLocal, 0..self.d.lx);
        let pull = Job {
            pass: Pass::AaPull,
            cols: local.cols.clone(),
            stores: pull.stores,
            prefetch_bytes: pull.bytes,
            ..local
        };
        L::dispatch(PairedSweep {
            local,
            pull,
            periodic,
        });
        self.finish_step();
        self.finish_step();
        self.wrap_x(true);
    }

    /// Periodic in x, the lattice is its own neighbour there: fills its halo columns from
    /// its opposite borders (`fold` false: before a step that pulls), or moves what an AA
    /// pull half-step pushed into them to the opposite borders (`fold` true: after it). With
    /// walls in x, nothing: no link reads across them.
    pub(crate) fn wrap_x(&mut self, fold: bool) {
        if !self.bc.x_periodic() {
            return;
        }
        if fold {
            fold_halo::<M, L, T>(&self.f.raw(), &self.d, &self.bc);
        } else {
            fill_halo::<L, _>(&self.f.raw(), &self.d);
        }
    }

    /// One time step: fused propagate + bc + collide (two-copy), or one AA half-step
    /// (in-place; two half-steps are two full time steps of the lattice Boltzmann equation).
    pub fn step(&mut self) {
        if self.scheme.pulls(self.odd) {
            self.wrap_x(false);
        }
        self.update_columns(0..self.d.lx);
        self.finish_step();
        if self.scheme.pushed(self.odd) {
            self.wrap_x(true);
        }
    }

    /// The pass of the step taken from the current state.
    fn step_pass(&self) -> Pass {
        match (self.scheme, self.odd) {
            (Scheme::TwoCopy, _) => Pass::Fused,
            (Scheme::InPlace, false) => Pass::AaPull,
            (Scheme::InPlace, true) => Pass::AaLocal,
        }
    }

    /// In the AA scheme, whether the state is the odd one (after a pull half-step).
    pub(crate) fn is_odd(&self) -> bool {
        self.odd
    }

    fn swap(&mut self) {
        if let Some(g) = self.g.as_mut() {
            std::mem::swap(&mut self.f, g);
        }
    }

    /// One time step as Calore et al.'s separate kernels: propagate, bc, collide (two-copy scheme
    /// only; bitwise identical to [`Lattice::step`]).
    pub fn step_split(&mut self) -> Result<(), LbmError> {
        for k in [Kernel::Propagate, Kernel::Bc, Kernel::Collide] {
            self.run_kernel(k)?;
        }
        self.swap();
        self.step += 1;
        Ok(())
    }

    /// Runs one kernel of the two-copy pipeline without finishing the step (benchmarks;
    /// `Fused` is a whole [`Lattice::step`]). The separate kernels need the two-copy scheme.
    pub fn run_kernel(&mut self, k: Kernel) -> Result<(), LbmError> {
        if k == Kernel::Fused {
            self.step();
            return Ok(());
        }
        if self.scheme != Scheme::TwoCopy {
            return Err(LbmError::Shape(
                "the separate propagate/bc/collide kernels need the two-copy scheme".into(),
            ));
        }
        match k {
            Kernel::Propagate => {
                self.wrap_x(false);
                self.launch(Pass::Propagate);
            }
            Kernel::Bc => self.launch(Pass::Bc),
            Kernel::Collide => self.launch(Pass::Collide),
            Kernel::Fused => unreachable!("handled above"),
        }
        Ok(())
    }

    /// What this lattice's tuning kept for kernel `k` (module `prefetch`): the prefetch
    /// distance and kind of store of each of its passes, one for collide and the two-copy
    /// step, two for the in-place step (its pull and its local half-step, in that order).
    /// Empty for propagate and bc, which are not tuned, and until every pass of `k` has
    /// settled.
    pub fn tuned(&self, k: Kernel) -> Vec<Choice> {
        let passes: &[Pass] = match (k, self.scheme) {
            (Kernel::Fused, Scheme::TwoCopy) => &[Pass::Fused],
            (Kernel::Fused, Scheme::InPlace) => &[Pass::AaPull, Pass::AaLocal],
            (Kernel::Collide, _) => &[Pass::Collide],
            (Kernel::Propagate | Kernel::Bc, _) => &[],
        };
        let kept: Option<Vec<Choice>> = passes.iter().map(|&p| self.prefetch.kept(p)).collect();
        kept.unwrap_or_default()
    }

    /// Whether every pass this lattice has run has settled on its prefetch distance (see
    /// [`crate::prefetch`]) and [`Lattice::steps`] on its pairing:
    /// benchmarks time only the steps after this.
    pub(crate) fn tuning_settled(&self) -> bool {
        self.prefetch.settled() && self.paired().is_some()
    }

    /// Runs `steps` steps, checking for divergence every `check_every` steps (0: only at the
    /// end) and at the end.
    pub fn run(&mut self, steps: u64, check_every: u64) -> Result<(), LbmError> {
        let block = if check_every > 0 { check_every } else { steps };
        let mut done = 0;
        while done < steps {
            let n = block.min(steps - done);
            self.steps(n);
            done += n;
            if check_every > 0 && n == check_every {
                self.check()?;
            }
        }
        self.check()
    }

    /// `n` time steps ([`Lattice::step`] `n` times, with the same results). Two steps are
    /// swept together (`kernels::paired`: each column comes from memory once for the two)
    /// where that is faster on this machine and lattice: once the steps' prefetch distances
    /// have settled, the next pairs are timed both ways in turn, and the faster way is kept
    /// ([`Lattice::paired`]). In place a pair is a local half-step and the pull after it: from
    /// the even state (after a local half-step, or at the start) the first step is a pull
    /// alone. With two copies a pair is any two steps, the first one's results passing through
    /// a ring of a few planes per worker that stays in the caches.
    pub fn steps(&mut self, n: u64) {
        let mut left = n;
        while left > 0 {
            if left >= 2 && self.pairs_next() {
                let start = Instant::now();
                // A ring that fitted the caches with the workers of the pool the pairing was
                // chosen on may not with this pool's (`PairedCopy::ring`): then one by one.
                if self.pairing.next() == PAIRED && self.can_pair() {
                    self.step_paired();
                } else {
                    self.step();
                    self.step();
                }
                self.pairing.record(start.elapsed().as_secs_f64());
                if self.paired() == Some(false) {
                    self.rings = Vec::new();
                }
                left -= 2;
            } else {
                self.step();
                left -= 1;
            }
        }
    }

    /// Whether the next two steps may be a pair (in place: the odd state, a local half-step
    /// next), with the pairing chosen or the prefetch distances of the steps it pairs chosen
    /// (so that the pairs that tune it run at them).
    fn pairs_next(&self) -> bool {
        let passes: &[Pass] = match self.scheme {
            Scheme::InPlace if !self.odd => return false,
            Scheme::InPlace => &[Pass::AaLocal, Pass::AaPull],
            Scheme::TwoCopy => &[Pass::Fused],
        };
        self.pairing.chosen().is_some() || passes.iter().all(|&p| self.prefetch.kept(p).is_some())
    }

    /// Whether [`Lattice::steps`] sweeps this lattice's steps in pairs: `None` until its
    /// tuning has chosen (or [`Lattice::set_paired`] was called); `Some(false)` from the start
    /// for a two-copy lattice that cannot pair: periodic in x with an `LX` that no ring of a
    /// few planes divides, or with rings (one per worker) that would not fit together in half
    /// the last-level cache (`kernels::paired`).
    pub fn paired(&self) -> Option<bool> {
        self.pairing.chosen().map(|c| c == PAIRED)
    }

    /// Sweeps the steps in pairs (`true`) or one by one (`false`) from now on, instead of
    /// timing both ways ([`Lattice::steps`]); the results are the same either way, only the
    /// speed differs (for comparing the two, or for a run whose first steps must not be spent
    /// tuning). A lattice that cannot pair ([`Lattice::paired`]) stays unpaired.
    pub fn set_paired(&mut self, paired: bool) {
        let paired = paired && self.can_pair();
        self.pairing.settle(if paired { PAIRED } else { SEPARATE });
    }

    /// Checks every fluid site for NaN and for a Mach number `|u| / (cs √T)` beyond
    /// [`Lattice::set_max_mach`] (default: 0.5 for second-order equilibria, 1 otherwise).
    pub fn check(&self) -> Result<(), LbmError> {
        self.check_where(&|_| true)
    }

    /// [`Lattice::check`] of the sites whose plane site `s` has `own(s)` (a block's own, not
    /// its ghost lines).
    pub(crate) fn check_where(&self, own: &(dyn Fn(usize) -> bool + Sync)) -> Result<(), LbmError> {
        let d = self.d;
        let found = parallel::find_first(0..d.lx, &|x| self.check_column(x, own));
        match found {
            Some((x, y, reason)) => Err(LbmError::Diverged {
                step: self.step,
                x,
                y,
                reason,
            }),
            None => Ok(()),
        }
    }

    fn check_column(
        &self,
        x: usize,
        own: &(dyn Fn(usize) -> bool + Sync),
    ) -> Option<(usize, usize, String)> {
        let d = self.d;
        let (mut g, mut m) = (
            vec![T::default(); M::Q],
            vec![T::default(); M::MOMENT_NAMES.len()],
        );
        (0..d.plane())
            .filter(|&y| own(y) && !self.bc.is_solid(&d, x, y))
            .find_map(|y| {
                self.pre_collision(x, y, &mut g).ok()?;
                M::moments(&g, &self.site_params(x, y), &mut m);
                divergence::<M, T>(&m, self.max_mach).map(|r| (x, y, r))
            })
    }
}

/// What a slab of a decomposed lattice needs (see [`crate::domain`]): a slab is an ordinary
/// two-copy lattice whose x-halos are filled by its neighbours instead of the periodic copy,
/// and whose columns are updated in two parts, the bulk while the halos travel and the
/// borders after them (Calore et al. 2016 §4, Fig. 5).
impl<M: Model, L: Layout, T: Real> Lattice<M, L, T> {
    /// Replaces the compiled boundaries (a slab takes its slice of the global lattice's).
    pub(crate) fn replace_boundaries(&mut self, bc: Boundaries<T>) {
        self.bc = bc;
        self.hold_nothing();
        if !self.can_pair() {
            self.pairing.settle(SEPARATE);
        }
    }

    /// The step from the current state (fused two-copy, or the AA half-step) on the site
    /// columns `cols` only: no halo fill or fold (finish the step with
    /// [`Lattice::finish_step`]).
    pub(crate) fn update_columns(&mut self, cols: std::ops::Range<usize>) {
        self.hold_terms();
        self.launch_cols(self.step_pass(), cols);
    }

    /// Ends a step done with [`Lattice::update_columns`]: the new state becomes the current
    /// one.
    pub(crate) fn finish_step(&mut self) {
        match self.scheme {
            Scheme::TwoCopy => self.swap(),
            Scheme::InPlace => self.odd = !self.odd,
        }
        self.step += 1;
    }

    /// Marks the state even, before every site is written in even order (a slab's whole
    /// state imported: its odd state would keep some populations on the neighbours).
    pub(crate) fn set_even(&mut self) {
        self.odd = false;
        self.held_at = None;
    }

    /// The current copy's values in the storage box `[cols, ys, zs]` (storage columns, halos
    /// included; stored lines), into `out` (its memory reused), in logical order `[((c·nz + z)·ny + y)·Q + i]` from the box's
    /// corner, whatever the layout: the border layers a block's neighbours take into their
    /// ghost layers ([`crate::SlabBackend::borders`]), whole planes along x. A line
    /// `(c, z)` of the box at a time on every thread; a whole line cluster by cluster, each
    /// cluster's lanes in a run.
    pub(crate) fn read_lines(&self, [cols, ys, zs]: [Range<usize>; 3], out: &mut Vec<T>) {
        let (d, q) = (self.d, self.d.q);
        let per_line = (ys.len() * q).max(1);
        out.resize(cols.len() * ys.len() * zs.len() * q, T::default());
        let lines = lines_per_task(per_line);
        let tasks: Vec<&mut [T]> = out.chunks_mut(lines * per_line).collect();
        parallel::for_each_owned(tasks, &|t, task| {
            for (m, sites) in task.chunks_mut(per_line).enumerate() {
                let n = t * lines + m;
                let at = (cols.start + n / zs.len(), zs.start + n % zs.len());
                line_elements::<L>(&d, at, &ys, &mut |e, j, i| {
                    sites[j] = value(self.f[e], &self.rest, i);
                });
            }
        });
    }

    /// Writes values laid out as [`Lattice::read_lines`]' into the current copy's storage box
    /// `[cols, ys, zs]` (a neighbour's border lines into a block's ghost lines, its border
    /// planes into a slab's halos), as it reads them.
    pub(crate) fn write_lines(&mut self, [cols, ys, zs]: [Range<usize>; 3], values: &[T]) {
        let (d, q) = (self.d, self.d.q);
        let (rest, f) = (&self.rest, self.f.raw());
        let per_line = ys.len() * q;
        assert!(
            values.len() >= cols.len() * zs.len() * per_line,
            "a value per site"
        );
        // Each worker writes its own lines' sites only (RawBuf's contract 2).
        let (count, lines) = (cols.len() * zs.len(), lines_per_task(per_line));
        parallel::for_each(0..count.div_ceil(lines), &|t| {
            for n in t * lines..((t + 1) * lines).min(count) {
                let at = (cols.start + n / zs.len(), zs.start + n % zs.len());
                let sites = &values[n * per_line..(n + 1) * per_line];
                line_elements::<L>(&d, at, &ys, &mut |e, j, i| {
                    f.set(e, stored(sites[j], rest, i));
                });
            }
        });
    }

    /// Writes `v` to element `e` of population `i`'s slots of the current copy.
    pub(crate) fn set_stored_value(&mut self, e: usize, i: usize, v: T) {
        // Halos and folds, within a step: the held values stay those of the step's start.
        self.f[e] = stored(v, &self.rest, i);
    }
}

/// Visits the stored elements of the sites `ys` of line `(c, z)` (storage column, z) of a
/// lattice of dimensions `d` in layout `L`: `visit(e, j, i)` for element `e` of population `i`
/// of the site at `j = (y − ys.start)·Q + i` in the line's logical order. A whole line goes
/// cluster by cluster, each cluster's lanes in a run; part of one site by site.
fn line_elements<L: Layout>(
    d: &Dims,
    (c, z): (usize, usize),
    ys: &Range<usize>,
    visit: &mut impl FnMut(usize, usize, usize),
) {
    let q = d.q;
    if *ys == (0..d.ly) {
        let line = d.line(c, z);
        for k in 0..L::clusters(d) {
            for i in 0..q {
                let base = L::cluster_base(d, i, line, k);
                for l in 0..L::VL {
                    visit(base + l, L::site_y(d, k, l) * q + i, i);
                }
            }
        }
        return;
    }
    let line = d.line(c, z);
    for (n, y) in ys.clone().enumerate() {
        let (k, l) = L::cluster_lane(d, y);
        for i in 0..q {
            visit(L::cluster_base(d, i, line, k) + l, n * q + i, i);
        }
    }
}

/// Lines of `per_line` values each task of [`Lattice::read_lines`] and
/// [`Lattice::write_lines`] moves: enough for a few thousand values a task (a box of lines
/// along y is a site a line: a task a line would cost more than its copy).
fn lines_per_task(per_line: usize) -> usize {
    const VALUES_PER_TASK: usize = 4096;
    VALUES_PER_TASK.div_ceil(per_line.max(1))
}

/// The Mach number beyond which a model's equilibrium is out of its range: 0.5 for
/// second-order (isothermal D2Q9-like) equilibria, 1 for higher orders.
pub fn default_max_mach<M: Model>() -> f64 {
    if M::EQUILIBRIUM_ORDER <= 2 {
        0.5
    } else {
        1.0
    }
}

/// Refuses a lattice of `[LX, LY, LZ]` sites that model `M` in layout `layout` cannot run:
/// `LZ` not 1 for a 2-D model or below the halo for a 3-D one, `LY` not a multiple of `VL`,
/// sides smaller than the halo, or more populations (with their halos, in the widest real)
/// than this machine can address — before anything is allocated.
pub fn check_size<M: Model>(size: [usize; 3], layout: LayoutKind) -> Result<(), LbmError> {
    let vl = layout.vl();
    let [lx, ly, lz] = size;
    let bytes = lx
        .checked_add(2 * M::HALO)
        .and_then(|w| w.checked_mul(ly))
        .and_then(|s| s.checked_mul(lz.checked_add(2 * M::HALO)?))
        .and_then(|s| s.checked_mul(M::Q * std::mem::size_of::<f64>()))
        .filter(|&b| b <= isize::MAX as usize);
    if bytes.is_none() {
        return Err(LbmError::Shape(format!(
            "a lattice of {lx} × {ly} × {lz} sites of model {} holds more populations than \
             this machine can address: give a smaller lattice",
            M::NAME
        )));
    }
    match (M::D, lz) {
        (2, 1) => {}
        (2, _) => {
            return Err(LbmError::Shape(format!(
                "model {} is two-dimensional: give LZ = 1 (not {lz}), or use a 3-D model",
                M::NAME
            )))
        }
        (_, lz) if lz < M::HALO.max(1) => {
            return Err(LbmError::Shape(format!(
                "model {} is three-dimensional: LZ = {lz} must be at least {} (the model's halo)",
                M::NAME,
                M::HALO.max(1)
            )))
        }
        _ => {}
    }
    if ly % vl != 0 {
        return Err(LbmError::NotMultipleOfVl {
            layout: layout.name(),
            ly,
            vl,
        });
    }
    if lx < M::HALO.max(1) || ly / vl < M::HALO.max(1) {
        return Err(LbmError::TooSmall {
            model: M::NAME,
            lx,
            ly,
            halo: M::HALO,
            min_ly: M::HALO.max(1) * vl,
        });
    }
    Ok(())
}

/// The index of field `name` in [`Model::FIELDS`] for the per-site `values` of `columns`
/// planes of `plane` sites (`[x·plane + s]`), or why they cannot be set: an unknown field, a
/// wrong length, a non-finite value (the one check of every backend's `set_field`).
pub(crate) fn checked_field<M: Model>(
    name: &str,
    values: &[f64],
    (columns, plane): (usize, usize),
) -> Result<usize, LbmError> {
    let j = field_index::<M>(name)?;
    check_len(values.len(), columns * plane, &format!("field `{name}`"))?;
    if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(non_finite(
            k / plane,
            k % plane,
            format!("field `{name}`"),
            *v,
        ));
    }
    Ok(j)
}

/// The value of each field of [`Model::FIELDS`] while it is uniform: its parameter's in
/// `params`.
pub(crate) fn uniform_fields<M: Model>(params: &M::Params) -> Vec<f64> {
    let values = M::param_values(params);
    M::FIELD_PARAMS.iter().map(|&k| values[k].1).collect()
}

/// The index of field `name` in [`Model::FIELDS`], or an error that lists them.
pub(crate) fn field_index<M: Model>(name: &str) -> Result<usize, LbmError> {
    M::FIELDS.iter().position(|f| *f == name).ok_or_else(|| {
        LbmError::Shape(if M::FIELDS.is_empty() {
            format!(
                "model {} has no field `{name}`: it declares no `field` parameter",
                M::NAME
            )
        } else {
            format!(
                "model {} has no field `{name}` (its fields: {})",
                M::NAME,
                M::FIELDS.join(", ")
            )
        })
    })
}

fn check_len(got: usize, want: usize, what: &str) -> Result<(), LbmError> {
    if got != want {
        return Err(LbmError::Shape(format!(
            "{what}: got {got} values, expected {want}"
        )));
    }
    Ok(())
}

fn non_finite<T: Real>(x: usize, y: usize, what: String, v: T) -> LbmError {
    LbmError::NonFinite {
        x,
        y,
        what,
        value: v.to_f64(),
    }
}
/// The post-collision populations of the sites of `block` (`[xs, ys, zs]` of `lattice`),
/// `[((x − x0)·P + s)·Q + i]` (`P` sites per plane of the block, `s = (z − z0)·ny + y − y0`:
/// for whole planes, the plane site).
pub fn export_block<M: Model, L: Layout, T: Real>(
    lattice: &Lattice<M, L, T>,
    block: &[Range<usize>; 3],
) -> Result<Vec<T>, LbmError> {
    let (d, [xs, ys, zs]) = (lattice.dims(), block.clone());
    let (ny, plane) = (ys.len(), ys.len() * zs.len());
    let mut out = vec![T::default(); xs.len() * plane * M::Q];
    for (k, chunk) in out.chunks_mut(M::Q).enumerate() {
        let (x, s) = (xs.start + k / plane, k % plane);
        let s = d.plane_site(ys.start + s % ny, zs.start + s / ny);
        lattice.populations(x, s, chunk)?;
    }
    Ok(out)
}

/// Writes populations laid out as [`export_block`]'s into the sites of `block`.
pub fn import_block<M: Model, L: Layout, T: Real>(
    lattice: &mut Lattice<M, L, T>,
    block: &[Range<usize>; 3],
    values: &[T],
) -> Result<(), LbmError> {
    let (d, [xs, ys, zs]) = (lattice.dims(), block.clone());
    let (ny, plane) = (ys.len(), ys.len() * zs.len());
    check_len(values.len(), xs.len() * plane * M::Q, "block populations")?;
    for (k, f) in values.chunks(M::Q).enumerate() {
        let (x, s) = (xs.start + k / plane, k % plane);
        let s = d.plane_site(ys.start + s % ny, zs.start + s / ny);
        lattice.set_populations(x, s, f)?;
    }
    Ok(())
}
