//! Boundary conditions: what the user asks for ([`BoundarySpec`]) and the per-site rules the
//! kernels apply ([`Boundaries`]).
//!
//! # How they act
//! Streaming pulls population `i` of site `x` from `x − c_i`. A *link* whose source lies
//! beyond a wall (across the y-wrap when the bottom and top are walls, beyond `x = 0` or
//! `x = LX − 1` when the sides are, across the z-wrap when the back and front are, or inside
//! an obstacle of the mask) is *bounced*: half-way
//! bounce-back (Szőke et al. 2017 §2) replaces the pulled value by the site's own outgoing
//! population,
//!
//! ```text
//! f_i(x, t+1) = f*_ī(x, t) + 2 w_i ρ_w (c_i · u_w) / cs²,      ī = opposite of i, ρ_w = 1,
//! ```
//!
//! the wall sitting half-way along the link; the correction term moves the wall with velocity
//! `u_w` (the cavity lid). After the links, a site may carry a *rule* that rewrites its
//! pre-collision populations: Zou–He velocity or pressure (module `zou_he`), the thermal
//! wall of Calore et al. 2019 §5 (the `HALO` outermost rows set to equilibrium at the wall
//! temperature and zero velocity, their `bc` kernel on the three uppermost and lowermost rows
//! for D2Q37), the Dirichlet wall of a transported scalar (anti-bounce-back), a free-slip
//! plane (specular reflection), or a solid site (reset to rest). The body force is part of the model's collision. Each rule is written
//! once, as a program (module `program`), which the CPU kernels evaluate and the GPU shader
//! generator writes out as WGSL.
//!
//! Every boundary is a list of sites with a bit mask of bounced links, kept line by line (a
//! column in 2-D, a line of constant `(x, z)` in 3-D, see [`crate::layout`]); the bulk stays a
//! plain vectorised pull. The masks are symmetric — link `i` of `x` is bounced exactly when
//! link `ī` of `x − c_i` is — which is what makes the in-place AA scheme possible with walls
//! (see `kernels`).

mod link;
pub(crate) mod program;
mod zou_he;

use std::ops::Range;
use std::sync::Arc;

pub use link::Interpolation;
#[cfg(feature = "gpu")]
pub(crate) use link::TERMS_LEN;
pub(crate) use link::{Interp, Term, OWN_SLOTS, TERMS};
pub(crate) use zou_he::{Closure, Target as ZouHeTarget};

use program::{Kind, Program, NORMALS};

use crate::{layout::Dims, moment_index, Layout, LbmError, Model, Real, Role};

/// One side of the domain, or an obstacle surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wall {
    /// Half-way bounce-back; a non-zero `velocity` makes it a moving wall (the cavity lid).
    BounceBack {
        /// Wall velocity `u_w` in lattice units (`u_z` is ignored by 2-D models).
        velocity: [f64; 3],
    },
    /// Zou–He velocity boundary on the outermost row, column or plane (models whose
    /// velocities have components in {−1, 0, 1}: D2Q9, D3Q15, D3Q19, D3Q27): the unknown
    /// populations are set so that the site has velocity `velocity`, with
    /// `ρ = (Σ_{c·n=0} f + 2 Σ_{c·n<0} f) / (1 − u·n)` (n the inward normal, Zou & He 1997;
    /// the closure in 3-D is Hecht & Harting's, see `boundary::zou_he`).
    ZouHeVelocity {
        /// Imposed velocity (`u_z` is ignored by 2-D models).
        velocity: [f64; 3],
    },
    /// Zou–He velocity boundary whose velocity follows the parabola of fully developed flow
    /// between the walls across the side: at the outermost site `p`,
    ///
    /// ```text
    /// u(p) = peak · Π_t 4 s_t (1 − s_t),      s_t = (p_t + ½) / L_t,
    /// ```
    ///
    /// the product over the tangential axes `t` closed by walls at both ends (half-way walls at
    /// `−½` and `L_t − ½`); uniform along a periodic one. In a channel it is Poiseuille's
    /// profile, `4 U y (H − y)/H²`; in a square duct Schäfer & Turek's (1996) inflow
    /// `16 U y z (H − y)(H − z)/H⁴`. Same models as [`Wall::ZouHeVelocity`].
    ParabolicInflow {
        /// The velocity at the centre of the side (`u_z` is ignored by 2-D models).
        peak: [f64; 3],
    },
    /// Zou–He velocity boundary whose velocity at each outermost site is what the user's
    /// function gives there ([`BoundarySpec::inflow`], asked for the global site): any inflow
    /// profile, e.g. a measured one or a boundary layer. Same models as
    /// [`Wall::ZouHeVelocity`].
    Inflow,
    /// Zou–He pressure boundary (density `ρ`, zero tangential velocity), same models. It
    /// holds the density on the side, so a pressure wave that reaches it is reflected whole
    /// (with its sign turned): for flows that shed vortices, [`Wall::Outflow`] lets them leave.
    ZouHePressure {
        /// Imposed density (pressure `p = cs² ρ`).
        density: f64,
    },
    /// An outflow by zero-gradient extrapolation: each population entering through the side
    /// is the one the site's inner neighbour `x + n` receives (`n` the inward normal),
    ///
    /// ```text
    /// f_i(x, t+1) = f_i(x + n, t+1) = f*_i(x + n − c_i, t),      c_i·n > 0,
    /// ```
    ///
    /// so that neither the density nor the velocity is held on the side and pressure waves and
    /// vortices pass it with little reflection (module `boundary::link`). The pressure level is
    /// then set by the inflow and the initial state, not by the side. Models whose velocities
    /// have components in {−1, 0, 1}; both schemes (in place, the neighbours' post-collision
    /// populations its links read are held before each half-step,
    /// `Boundaries::held_terms`).
    Outflow,
    /// Thermal wall (Calore et al. 2019 §5): the `M::HALO` outermost rows or columns are set to
    /// the equilibrium at their density, zero velocity and temperature `temperature` (thermal
    /// models, with a moment named `T`).
    Thermal {
        /// Wall temperature, in the model's units (1 is the lattice reference).
        temperature: f64,
    },
    /// Fixed value of a transported scalar (a temperature or a concentration: the model's
    /// temperature or scalar moment; models without a velocity moment) on the wall, half-way
    /// along the links, by anti-bounce-back (Ginzburg 2005; Krüger et al. 2017, §8.5.2):
    ///
    /// ```text
    /// f_i(x, t+1) = −f*_ī(x, t) + f_eq_i(φ_w) + f_eq_ī(φ_w)        (= −f*_ī + 2 w_i φ_w)
    /// ```
    ///
    /// with `f_eq(φ_w)` the equilibrium at the wall's value and zero velocity (a `field`
    /// parameter takes its uniform value there: the wall is at rest). Second-order accurate, at
    /// the same place as the bounce-back of the flow beside it. (A `BounceBack` wall is a
    /// zero-flux wall for such a model.) Where two such walls of different values meet, a
    /// site's links take the value of the first one the site crosses (bottom/top, back/front,
    /// left/right).
    Dirichlet {
        /// The scalar's value on the wall.
        value: f64,
    },
    /// A symmetry plane through the outermost row, column or plane (free slip: no normal
    /// velocity and no shear; no flux of a transported scalar), by specular reflection: the
    /// populations entering through the side are the mirror images of those leaving it,
    ///
    /// ```text
    /// f_i(x) = f_m(i)(x),      c_m(i) = c_i − 2 (c_i·n) n,      for c_i·n > 0,
    /// ```
    ///
    /// `n` the inward normal — what the mirror image of the flow beyond the plane would send
    /// (Krüger et al. 2017, §5.3.4). Models whose velocities have components in {−1, 0, 1}.
    FreeSlip,
}

impl Wall {
    /// A wall at rest.
    pub const NO_SLIP: Wall = Wall::BounceBack { velocity: [0.0; 3] };

    fn bounce_velocity(&self) -> [f64; 3] {
        match *self {
            Wall::BounceBack { velocity } => velocity,
            _ => [0.0; 3],
        }
    }

    /// Whether the side lets the flow through (an inflow or an outflow).
    fn is_open(&self) -> bool {
        matches!(
            self,
            Wall::ZouHeVelocity { .. }
                | Wall::ParabolicInflow { .. }
                | Wall::Inflow
                | Wall::ZouHePressure { .. }
                | Wall::Outflow
        )
    }
}

/// Which sites are solid: a function of the global site `(x, y)` (or voxel `(x, y, z)`),
/// evaluated only for the sites a lattice holds — a rank of a distributed run asks it for its
/// own planes, so no process builds a mask of the whole lattice — or a mask given whole.
///
/// With [`Obstacles::with_wall_distance`] the wall lies where the body's surface does, not
/// half-way along each link: its links are bounced back by interpolation (Bouzidi, Firdaouss &
/// Lallemand 2001), second-order accurate on curved walls where half-way bounce-back turns them
/// into staircases.
///
/// With [`Obstacles::with_wall_velocity`] their surface moves (a rotating cylinder): each
/// bounced link carries the wall's momentum where it crosses the surface.
#[derive(Clone)]
pub struct Obstacles {
    solid: Solid,
    distance: Option<WallDistance>,
    interpolation: Interpolation,
    velocity: Option<WallVelocity>,
}

/// The wall's distance along a link: for a fluid site (global `[x, y, z]`) and a velocity `c`
/// whose neighbour `x + c` is solid, the share `q ∈ (0, 1]` of the link at which it crosses
/// the surface; `None` where it is not known (the link is then bounced half-way).
pub type WallDistance = Arc<dyn Fn([usize; 3], [i32; 3]) -> Option<f64> + Send + Sync>;

/// The velocity of an obstacle's surface at a point (global lattice coordinates).
pub type WallVelocity = Arc<dyn Fn([f64; 3]) -> [f64; 3] + Send + Sync>;

#[derive(Clone)]
enum Solid {
    /// `solid[(x·LZ + z)·LY + y]` of a lattice `ly × lz` sites across.
    Mask {
        ly: usize,
        lz: usize,
        solid: Arc<[bool]>,
    },
    Shape(Arc<dyn Fn(usize, usize, usize) -> bool + Send + Sync>),
}

impl Obstacles {
    /// The sites where `solid(x, y)` holds (global coordinates; every plane `z` alike in 3-D).
    pub fn new(solid: impl Fn(usize, usize) -> bool + Send + Sync + 'static) -> Self {
        Self::voxels(move |x, y, _| solid(x, y))
    }

    /// The voxels where `solid(x, y, z)` holds (global coordinates).
    pub fn voxels(solid: impl Fn(usize, usize, usize) -> bool + Send + Sync + 'static) -> Self {
        Self::of(Solid::Shape(Arc::new(solid)))
    }

    fn of(solid: Solid) -> Self {
        Self {
            solid,
            distance: None,
            interpolation: Interpolation::Linear,
            velocity: None,
        }
    }

    /// The mask `solid[x·LY + y]` of a 2-D lattice `ly` sites high (its size is checked
    /// against the lattice's when the boundaries are compiled).
    pub fn mask(ly: usize, solid: Vec<bool>) -> Self {
        Self::voxel_mask(ly, 1, solid)
    }

    /// The voxel mask `solid[(x·LZ + z)·LY + y]` of a lattice `ly × lz` sites across (x
    /// slowest, y fastest: the order of a lattice's planes, see [`crate::layout`]).
    pub fn voxel_mask(ly: usize, lz: usize, solid: Vec<bool>) -> Self {
        Self::of(Solid::Mask {
            ly,
            lz,
            solid: solid.into(),
        })
    }

    /// These obstacles with their surface where `q(site, c)` puts it along each link that
    /// crosses it (see [`WallDistance`]); their links are then bounced back by interpolation
    /// (Bouzidi et al. 2001; linear unless [`Obstacles::with_interpolation`] says otherwise):
    /// with `f*` the post-collision populations, `ī` opposite to `i` and the wall at
    /// `x + q c_ī` (a fluid site `x` whose neighbour `x − c_i` is solid),
    ///
    /// ```text
    /// q < ½:  f_i(x, t+1) = 2q f*_ī(x) + (1 − 2q) f*_ī(x + c_i)
    /// q ≥ ½:  f_i(x, t+1) = f*_ī(x) / 2q + (2q − 1)/2q · f*_i(x)
    /// ```
    ///
    /// exact for a linear velocity profile that vanishes on the wall, so the wall is
    /// second-order accurate wherever it lies (half-way bounce-back is the case `q = ½`). A
    /// link with `q < ½` whose second fluid site `x + c_i` is solid or beyond a wall falls
    /// back to half-way bounce-back. Runs on every backend (a whole lattice, blocks on MPI
    /// ranks, each compiling them for its sites, the host/device split) in both schemes.
    pub fn with_wall_distance(
        self,
        q: impl Fn([usize; 3], [i32; 3]) -> Option<f64> + Send + Sync + 'static,
    ) -> Self {
        Self {
            distance: Some(Arc::new(q)),
            ..self
        }
    }

    /// These obstacles with their curved walls ([`Obstacles::with_wall_distance`]) bounced
    /// back by the interpolation `how`. [`Interpolation::Quadratic`] weighs three populations
    /// along each link (Bouzidi et al. 2001, see [`Interpolation`]), falling back to the linear
    /// one where its stencil lacks a fluid site. It reads two sites beyond the wall's first
    /// fluid site, further than a slab's halo reaches: it runs on a whole lattice (CPU or
    /// GPU), and MPI ranks and the host/device split refuse it.
    pub fn with_interpolation(self, how: Interpolation) -> Self {
        Self {
            interpolation: how,
            ..self
        }
    }

    /// How the curved walls are bounced back ([`Obstacles::with_interpolation`]).
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// These obstacles with their surface moving at `velocity(p)` at the point `p` (a rigid
    /// rotation about an axis: `ω × (p − centre)`, tangent to the surface). A bounced link
    /// takes the wall's momentum where it crosses the surface, `2 w_i (c_i · u_w) / c_s²`
    /// (Ladd 1994) — divided by `2q` where an interpolated link's wall lies at `q ≥ ½`
    /// (Bouzidi et al. 2001) — at the point half-way along the link, or at `q` with
    /// [`Obstacles::with_wall_distance`]. The solid sites stay where they are: the surface
    /// moves within itself.
    pub fn with_wall_velocity(
        self,
        velocity: impl Fn([f64; 3]) -> [f64; 3] + Send + Sync + 'static,
    ) -> Self {
        Self {
            velocity: Some(Arc::new(velocity)),
            ..self
        }
    }

    /// Whether these obstacles place their walls by [`Obstacles::with_wall_distance`].
    pub fn is_curved(&self) -> bool {
        self.distance.is_some()
    }

    /// The velocity of the obstacles' surface at the point `p` ([`Obstacles::with_wall_velocity`];
    /// `None` where the obstacles rest).
    pub fn wall_velocity(&self, p: [f64; 3]) -> Option<[f64; 3]> {
        self.velocity.as_ref().map(|v| v(p))
    }

    /// The share `q ∈ (0, 1]` of the link from the fluid site `site` along `c` at which the
    /// wall lies ([`Obstacles::with_wall_distance`], clamped to that range); `None` for
    /// obstacles without wall distances, or where the crossing is not known (half-way
    /// bounce-back).
    pub fn wall_distance(&self, site: [usize; 3], c: [i32; 3]) -> Option<f64> {
        let q = self.distance.as_ref().and_then(|q| q(site, c))?;
        Some(q.clamp(f64::MIN_POSITIVE, 1.0))
    }

    /// Whether the global voxel `(x, y, z)` is solid (`z = 0` in 2-D).
    pub fn is_solid(&self, x: usize, y: usize, z: usize) -> bool {
        match &self.solid {
            Solid::Mask { ly, lz, solid } => {
                solid.get((x * lz + z) * ly + y).copied().unwrap_or(false)
            }
            Solid::Shape(f) => f(x, y, z),
        }
    }

    /// Whether the global site `(x, s)`, `s` the plane site of a lattice of shape `d`, is solid.
    fn at(&self, d: &Dims, x: usize, s: usize) -> bool {
        let (y, z) = d.yz(s);
        self.is_solid(x, y, z)
    }

    /// A mask's size is that of the lattice `d`.
    fn check(&self, d: &Dims) -> Result<(), LbmError> {
        match &self.solid {
            Solid::Mask { ly, lz, solid }
                if (*ly != d.ly || *lz != d.lz || solid.len() != d.sites()) =>
            {
                Err(LbmError::Boundary(format!(
                    "the solid mask has {} entries for planes of {ly}×{lz} sites, but the lattice \
                     is {}×{}×{} = {} sites: give one entry per site, in the order (x·LZ + z)·LY + y",
                    solid.len(),
                    d.lx,
                    d.ly,
                    d.lz,
                    d.sites()
                )))
            }
            _ => Ok(()),
        }
    }
}

impl std::fmt::Debug for Obstacles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.solid {
            Solid::Mask { ly, lz, solid } => {
                write!(
                    f,
                    "Obstacles::voxel_mask({ly}, {lz}, {} sites)",
                    solid.len()
                )
            }
            Solid::Shape(_) => write!(f, "Obstacles::voxels(<fn>)"),
        }?;
        if self.distance.is_some() {
            write!(f, ".with_wall_distance(<fn>)")?;
        }
        if self.interpolation != Interpolation::Linear {
            write!(f, ".with_interpolation({:?})", self.interpolation)?;
        }
        if self.velocity.is_some() {
            write!(f, ".with_wall_velocity(<fn>)")?;
        }
        Ok(())
    }
}

impl PartialEq for Obstacles {
    /// Masks are equal when their sites are; shapes, wall distances and wall velocities when
    /// they are the same functions.
    fn eq(&self, other: &Self) -> bool {
        let same = |a: Option<*const ()>, b: Option<*const ()>| a == b;
        let distance = |o: &Self| o.distance.as_ref().map(|f| Arc::as_ptr(f) as *const ());
        let velocity = |o: &Self| o.velocity.as_ref().map(|f| Arc::as_ptr(f) as *const ());
        same(distance(self), distance(other))
            && self.interpolation == other.interpolation
            && same(velocity(self), velocity(other))
            && match (&self.solid, &other.solid) {
                (
                    Solid::Mask { ly, lz, solid },
                    Solid::Mask {
                        ly: b,
                        lz: c,
                        solid: t,
                    },
                ) => (ly, lz) == (b, c) && solid == t,
                (Solid::Shape(f), Solid::Shape(g)) => Arc::ptr_eq(f, g),
                _ => false,
            }
    }
}

/// The boundary conditions of a lattice. A direction with no walls is periodic.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundarySpec {
    /// The side at `x = 0` (with `right`: both or neither; neither is periodic in x).
    pub left: Option<Wall>,
    /// The side at `x = LX − 1`.
    pub right: Option<Wall>,
    /// The side at `y = 0` (with `top`: both or neither; neither is periodic in y).
    pub bottom: Option<Wall>,
    /// The side at `y = LY − 1`.
    pub top: Option<Wall>,
    /// The side at `z = 0` in 3-D (with `front`: both or neither; neither is periodic in z).
    /// The axes are right-handed: x to the right, y up, z towards the viewer.
    pub back: Option<Wall>,
    /// The side at `z = LZ − 1` in 3-D.
    pub front: Option<Wall>,
    /// Obstacles: the solid sites (bounce-back on their surface).
    pub solid: Option<Obstacles>,
    /// The velocity of the sides that are [`Wall::Inflow`], at each of their outermost sites.
    pub inflow: Option<InflowProfile>,
}

/// An inflow's velocity as a function of the global site `[x, y, z]` of the side
/// ([`Wall::Inflow`]), in lattice units (`u_z` is ignored by 2-D models). It is asked once
/// per site when the boundaries are compiled (each MPI rank for its own columns), and each
/// value is checked: finite and below the lattice's speed of sound.
#[derive(Clone)]
pub struct InflowProfile(Arc<dyn Fn([usize; 3]) -> [f64; 3] + Send + Sync>);

impl InflowProfile {
    /// The profile `velocity(site)`.
    pub fn new(velocity: impl Fn([usize; 3]) -> [f64; 3] + Send + Sync + 'static) -> Self {
        Self(Arc::new(velocity))
    }

    /// The velocity at the global site `site`.
    pub fn at(&self, site: [usize; 3]) -> [f64; 3] {
        (self.0)(site)
    }
}

impl std::fmt::Debug for InflowProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InflowProfile(<fn>)")
    }
}

impl PartialEq for InflowProfile {
    /// Profiles are equal when they are the same function.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl BoundarySpec {
    /// Periodic in every direction.
    pub fn periodic() -> Self {
        Self::default()
    }

    /// Periodic in x, no-slip walls at the bottom and top (a channel).
    pub fn channel() -> Self {
        Self {
            bottom: Some(Wall::NO_SLIP),
            top: Some(Wall::NO_SLIP),
            ..Self::default()
        }
    }

    /// Periodic in x, no-slip walls on the four other sides: a square duct along x (3-D).
    pub fn duct() -> Self {
        Self {
            back: Some(Wall::NO_SLIP),
            front: Some(Wall::NO_SLIP),
            ..Self::channel()
        }
    }

    /// The lid-driven cavity: no-slip walls, the top moving with velocity `(lid, 0)`.
    pub fn cavity(lid: f64) -> Self {
        Self {
            left: Some(Wall::NO_SLIP),
            right: Some(Wall::NO_SLIP),
            bottom: Some(Wall::NO_SLIP),
            top: Some(Wall::BounceBack {
                velocity: [lid, 0.0, 0.0],
            }),
            ..Self::default()
        }
    }

    /// The lid-driven cube (3-D): [`BoundarySpec::cavity`] closed by no-slip walls in z.
    pub fn cavity_3d(lid: f64) -> Self {
        Self {
            back: Some(Wall::NO_SLIP),
            front: Some(Wall::NO_SLIP),
            ..Self::cavity(lid)
        }
    }
}

/// What a boundary site does to its pre-collision populations after the links.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rule {
    None,
    Solid,
    ZouHe {
        normal: [i32; 3],
        target: ZouHeTarget,
    },
    Thermal {
        temperature: f64,
    },
    /// Anti-bounce-back of the links `links` (bit `i`: link `i` crosses a Dirichlet wall).
    Dirichlet {
        value: f64,
        links: u64,
    },
    FreeSlip {
        normal: [i32; 3],
    },
}

impl Rule {
    /// The rule's program, the values its site carries and its link set (`None`: no rule).
    pub(crate) fn parts(&self) -> Option<(Kind, [f64; 3], u64)> {
        let normal = |n: [i32; 3]| NORMALS.iter().position(|&m| m == n).unwrap_or(0);
        Some(match *self {
            Rule::None => return None,
            Rule::Solid => (Kind::Solid, [0.0; 3], 0),
            Rule::ZouHe {
                normal: n,
                target: ZouHeTarget::Velocity(u),
            } => (Kind::ZouHeVelocity(normal(n)), u, 0),
            Rule::ZouHe {
                normal: n,
                target: ZouHeTarget::Density(rho),
            } => (Kind::ZouHeDensity(normal(n)), [rho, 0.0, 0.0], 0),
            Rule::Thermal { temperature } => (Kind::Thermal, [temperature, 0.0, 0.0], 0),
            Rule::Dirichlet { value, links } => (Kind::Dirichlet, [value, 0.0, 0.0], links),
            Rule::FreeSlip { normal: n } => (Kind::FreeSlip(normal(n)), [0.0; 3], 0),
        })
    }
}

/// Where the post-collision population `f*_i(x, s)` (`s` the plane site) lies between
/// steps, as the population `p`, the column `x'` and the shift `c` (the plane site `s` moved
/// by its `c_y`, `c_z`) of the site whose slot `F_p(x', s + c)` holds it:
/// `F_i(x)` between steps of the two-copy scheme and in the even state of the AA scheme; in
/// its odd state (after a pull half-step, see [`crate::kernels`]) `F_ī(x + c_i)`, or `F_i(x)`
/// where the site's link `ī` is bounced (`redirected`) and the population was redirected.
/// With periodic x a population that crossed an edge is at its periodic image (the halos
/// were folded back); otherwise it is in the halo column it was pushed into (`x'` is then −1
/// or `LX`; a slab's neighbour holds its own copy). Every backend that runs the AA scheme
/// reads and writes its logical view through this one rule: the CPU's storage slots
/// (`lattice::stored_slot`) and the GPU's table of held populations (`gpu::bc`).
pub(crate) fn aa_source<M: Model>(
    d: &Dims,
    (odd, redirected, periodic): (bool, bool, bool),
    (i, x): (usize, isize),
) -> (usize, isize, [i32; 3]) {
    if !odd || redirected {
        return (i, x, [0; 3]);
    }
    let c = M::VELOCITIES[i];
    let mut xs = x + c[0] as isize;
    if periodic {
        xs = xs.rem_euclid(d.lx as isize);
    }
    (M::OPPOSITE[i], xs, c)
}

/// A population that a bounced, interpolated link reads and the in-place scheme holds before
/// each half-step ([`Boundaries::held_terms`]): `f*_pop(x, s)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeldTerm {
    /// Where it is held: `(o + i)·TERMS_LEN + k` for term `k` of link `i` of the site whose
    /// interpolations start at `o` in [`Boundaries::interp`].
    pub at: usize,
    /// The population.
    pub pop: usize,
    /// Its site's column (−1 or `LX` in a halo) and plane site.
    pub x: isize,
    pub s: usize,
    /// Whether that site's pull half-step redirects the population (its link `p̄` bounced).
    pub redirected: bool,
}

impl HeldTerm {
    /// The population and the site whose slot holds it in the even (`odd` false) or the odd
    /// state of the in-place scheme ([`aa_source`]).
    pub fn source<M: Model>(&self, d: &Dims, odd: bool, periodic: bool) -> (usize, isize, usize) {
        let flags = (odd, self.redirected, periodic);
        let (p, x, c) = aa_source::<M>(d, flags, (self.pop, self.x));
        (p, x, d.shift(self.s, c))
    }
}

/// A site with bounced links or a rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Site {
    /// Local column.
    pub x: usize,
    /// Plane site `z·LY + y` (the row `y` in 2-D), what [`Layout::index`] takes.
    pub y: usize,
    /// Cluster and lane of the site's row within its line.
    pub k: usize,
    pub lane: usize,
    /// Bit `i` set: link `i` is bounced.
    pub mask: u64,
    /// Offset of this site's `Q` corrections in [`Boundaries::corr`], if any is non-zero.
    pub corr: Option<usize>,
    /// Offset of this site's `Q` interpolations in [`Boundaries::interp`], if a link of it
    /// crosses a curved wall ([`Obstacles::with_wall_distance`]).
    pub interp: Option<usize>,
    pub rule: Rule,
}

impl Site {
    #[inline(always)]
    pub fn bounced(&self, i: usize) -> bool {
        self.mask >> i & 1 == 1
    }
}

/// Whether the boundary sites `sites` of a cluster fill its `VL` lanes alike: each with the
/// same bounced links and the same rule kind, none solid, interpolated or corrected by a
/// moving wall (the clusters of an inflow or outflow plane, or of a flat wall). Such a
/// cluster's bounced links read its own slots (half-way bounce-back, [`TERMS`]`[0]`) a
/// vector at a time, and its rule runs on its lanes at once ([`Boundaries::apply_rules`]).
#[inline(always)]
pub(crate) fn uniform<const VL: usize>(sites: &[Site]) -> bool {
    let kind = |s: &Site| s.rule.parts().map(|(k, _, links)| (k, links));
    sites.len() == VL
        && sites.iter().all(|s| {
            s.mask == sites[0].mask
                && s.interp.is_none()
                && s.corr.is_none()
                && s.rule != Rule::Solid
                && kind(s) == kind(&sites[0])
        })
}

/// The compiled boundary conditions of one lattice, for one layout.
#[derive(Debug, Clone)]
pub struct Boundaries<T: Real> {
    pub(crate) sites: Vec<Site>,
    /// `sites[col_start[j]..col_start[j + 1]]` are the sites of line `j = x·LZ + z` (column
    /// `x` in 2-D), by cluster.
    pub(crate) col_start: Vec<usize>,
    /// Lines per plane (`LZ`).
    lz: usize,
    pub(crate) corr: Vec<T>,
    /// The interpolations of the sites' links, `Q` per site that has one.
    pub(crate) interp: Vec<Interp<T>>,
    /// The most links along its own an interpolated link reads beyond its site (0, 1 or 2).
    link_reach: i32,
    /// Whether links cross an extrapolated outflow ([`Wall::Outflow`]).
    outflow: bool,
    pub(crate) x_periodic: bool,
    pub(crate) solid: Vec<bool>,
    /// The programs of the sites' rules, by [`Kind::code`].
    programs: Vec<Option<Program>>,
}

impl<T: Real> Boundaries<T> {
    /// Bytes of the record of one boundary site (without its corrections).
    pub const SITE_BYTES: usize = std::mem::size_of::<Site>();

    /// Whether the x direction is periodic (no left/right walls).
    pub fn x_periodic(&self) -> bool {
        self.x_periodic
    }

    /// Whether site `(x, y)` is solid (an obstacle; `y` the plane site in 3-D).
    pub fn is_solid(&self, d: &Dims, x: usize, y: usize) -> bool {
        !self.solid.is_empty() && self.solid[x * d.plane() + y]
    }

    /// Number of boundary sites (sites with a bounced link or a rule).
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    /// Whether there is no boundary site (fully periodic, no obstacle).
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// The most links along its own that an interpolated link reads beyond its site: 2 where
    /// a quadratic one reads `x + 2c_i` ([`Interpolation::Quadratic`]), beyond the reach of a
    /// sweep that keeps `H` planes behind another (the two-copy paired sweep).
    pub(crate) fn link_reach(&self) -> usize {
        self.link_reach as usize
    }

    /// The boundary sites, `[x, y, z]` by column and line: those with a link bounced by a wall
    /// or a rule (where momentum exchange reads, [`crate::Lattice::exchanged`]).
    pub fn sites(&self, d: &Dims) -> Vec<[usize; 3]> {
        (0..d.lx)
            .flat_map(|x| {
                self.column(x).iter().map(move |s| {
                    let (y, z) = d.yz(s.y);
                    [x, y, z]
                })
            })
            .collect()
    }

    /// The boundary sites of line `z` of column `x`, by cluster.
    pub(crate) fn line(&self, x: usize, z: usize) -> &[Site] {
        let j = x * self.lz + z;
        &self.sites[self.col_start[j]..self.col_start[j + 1]]
    }

    /// The boundary sites of column `x`, all its lines.
    pub(crate) fn column(&self, x: usize) -> &[Site] {
        &self.sites[self.col_start[x * self.lz]..self.col_start[(x + 1) * self.lz]]
    }

    /// The boundary site at `(x, y)` (`y` the plane site in 3-D), if it is one.
    pub(crate) fn site<L: Layout>(&self, d: &Dims, x: usize, y: usize) -> Option<&Site> {
        self.site_at(d, x, y, L::cluster_lane)
    }

    /// As [`Boundaries::site`], in a layout whose rows lie in the (cluster, lane)
    /// `lanes(d, y)`.
    pub(crate) fn site_at(
        &self,
        d: &Dims,
        x: usize,
        y: usize,
        lanes: impl Fn(&Dims, usize) -> (usize, usize),
    ) -> Option<&Site> {
        let (y, z) = d.yz(y);
        let col = self.line(x, z);
        let key = lanes(d, y);
        col.binary_search_by_key(&key, |s| (s.k, s.lane))
            .ok()
            .map(|j| &col[j])
    }

    /// The populations the in-place scheme holds before each half-step: of each bounced,
    /// interpolated link, every term of non-zero weight beyond the two it reads from its
    /// site's own slots ([`link::OWN_SLOTS`]) — its own leaving population (linear walls at
    /// `q ≥ ½`), the quadratic walls' site two links away, the outflow's neighbours — whose
    /// slots another site's half-step may overwrite before the link reads them. Held, they are
    /// the values the two-copy scheme reads, so every link runs in both schemes alike.
    pub(crate) fn held_terms<M: Model>(&self, d: &Dims) -> Vec<HeldTerm> {
        let zero = T::from_f64(0.0);
        let periodic = self.x_periodic();
        let mut out = Vec::new();
        for s in &self.sites {
            let Some(o) = s.interp else { continue };
            for i in (0..M::Q).filter(|&i| s.bounced(i)) {
                let terms = TERMS.iter().enumerate().skip(link::OWN_SLOTS);
                for (k, t) in terms.filter(|&(k, _)| self.interp[o + i].w[k] != zero) {
                    let pop = t.pop.of::<M>(i);
                    let off = t.offset(M::VELOCITIES[i]);
                    let mut x = s.x as isize + off[0] as isize;
                    if periodic || t.wraps() {
                        x = x.rem_euclid(d.lx as isize);
                    }
                    let at = d.shift(s.y, off);
                    let (_, z) = d.yz(at);
                    let redirected = (0..d.lx as isize).contains(&x)
                        && (self.line(x as usize, z).iter())
                            .any(|t| t.y == at && t.bounced(M::OPPOSITE[pop]));
                    out.push(HeldTerm {
                        at: (o + i) * TERMS_LEN + k,
                        pop,
                        x,
                        s: at,
                        redirected,
                    });
                }
            }
        }
        out
    }

    /// Compiles `spec` for model `M` on a lattice of shape `d` stored in layout `L`.
    pub fn compile<M: Model, L: Layout>(spec: &BoundarySpec, d: &Dims) -> Result<Self, LbmError> {
        Self::compile_with::<M>(spec, d, &L::cluster_lane)
    }

    /// Compiles `spec` for model `M` on a lattice of shape `d` whose layout puts row `y` in
    /// the (cluster, lane) `lanes(d, y)` ([`Layout::cluster_lane`], or a layout known only at
    /// run time).
    pub fn compile_with<M: Model>(
        spec: &BoundarySpec,
        d: &Dims,
        lanes: &dyn Fn(&Dims, usize) -> (usize, usize),
    ) -> Result<Self, LbmError> {
        check_spec::<M>(spec, d)?;
        Ok(Self::compile_block::<M>(
            spec,
            d,
            (0..d.lx, d, [0, 0]),
            spec.left.is_none(),
            lanes,
        ))
    }

    /// Compiles `spec` (checked for the global lattice of shape `global`) for a block of it:
    /// the global columns `xs`, renumbered from 0, each of the lines of `window` (whose `LY`
    /// and `LZ` may differ from the global ones) — local line `(y, z)` being the global line
    /// `((y0 + y) mod LY, (z0 + z) mod LZ)` for `origin = [y0, z0]`. A slab's boundaries
    /// (`window` the global lines, `origin` 0), a block cut along y or z too (its ghost lines
    /// wrapped onto the global lines they copy), or a part of either. The cost is in
    /// proportion to the boundary (the lines within reach of a wall, and the sites when there
    /// are obstacles), with no allocation per site.
    pub(crate) fn compile_block<M: Model>(
        spec: &BoundarySpec,
        global: &Dims,
        (xs, window, origin): (Range<usize>, &Dims, [usize; 2]),
        x_periodic: bool,
        lanes: &dyn Fn(&Dims, usize) -> (usize, usize),
    ) -> Self {
        let local = Dims {
            lx: xs.len(),
            ..*window
        };
        let gy = move |y: usize| (origin[0] + y) % global.ly;
        let gz = move |z: usize| (origin[1] + z) % global.lz;
        // The global plane site of local plane site `s`.
        let gs = move |s: usize| {
            let (y, z) = local.yz(s);
            global.plane_site(gy(y), gz(z))
        };
        let mut out = Self {
            sites: Vec::new(),
            col_start: Vec::with_capacity(xs.len() * local.lz + 1),
            corr: Vec::new(),
            interp: Vec::new(),
            link_reach: 0,
            outflow: false,
            x_periodic,
            lz: local.lz,
            solid: Vec::new(),
            programs: vec![None; Kind::CODES],
        };
        if let Some(o) = &spec.solid {
            out.solid = xs
                .clone()
                .flat_map(|x| (0..local.plane()).map(move |s| o.at(global, x, gs(s))))
                .collect();
        }
        // Links reach `max |c|` sites; the thermal wall's rule, `HALO` rows.
        let reach = M::VELOCITIES
            .iter()
            .flat_map(|c| c.iter().map(|v| v.unsigned_abs() as usize))
            .max()
            .unwrap_or(0)
            .max(M::HALO);
        let near = |i: usize, n: usize| i < reach || i + reach >= n;
        let y_walls = spec.bottom.is_some();
        let x_walls = spec.left.is_some();
        let z_walls = spec.back.is_some();
        for (x, z) in xs.clone().flat_map(|x| (0..local.lz).map(move |z| (x, z))) {
            out.col_start.push(out.sites.len());
            let first = out.sites.len();
            let every_row = spec.solid.is_some()
                || (x_walls && near(x, global.lx))
                || (z_walls && near(gz(z), global.lz));
            for y in (0..local.ly).filter(|_| every_row || y_walls) {
                if every_row || near(gy(y), global.ly) {
                    let s = local.plane_site(y, z);
                    out.add_site::<M>(spec, (global, &local), (x, xs.start), (gs(s), s), lanes);
                }
            }
            out.sites[first..].sort_by_key(|s| (s.k, s.lane));
        }
        out.col_start.push(out.sites.len());
        for (kind, _, _) in out.sites.iter().filter_map(|s| s.rule.parts()) {
            out.programs[kind.code() as usize].get_or_insert_with(|| kind.program::<M>());
        }
        out
    }

    /// Applies a site's rule to its pre-collision populations `g` (`M::Q` values), with
    /// `regs` as scratch space.
    #[inline(never)]
    pub(crate) fn apply_rule<M: Model>(
        &self,
        rule: &Rule,
        g: &mut [T],
        regs: &mut Vec<[T; 1]>,
        params: &M::Params,
    ) {
        if let Some((kind, values, links)) = rule.parts() {
            let program = self.programs[kind.code() as usize].as_ref();
            let g: &mut [[T; 1]] = bytemuck::cast_slice_mut(g);
            program.expect("compiled with the sites").run::<M, T, 1>(
                g,
                &[values],
                links,
                regs,
                params,
            );
        }
    }

    /// Applies the rule of the `VL` lanes `sites` of a cluster to their pre-collision
    /// populations `g[i][lane]` at once, lane by lane as [`Boundaries::apply_rule`] does; the
    /// lanes share one rule kind and link set ([`uniform`]), their values may differ (a
    /// parabolic inflow's).
    #[inline(never)]
    pub(crate) fn apply_rules<M: Model, const VL: usize>(
        &self,
        sites: &[Site],
        g: &mut [[T; VL]],
        regs: &mut Vec<[T; VL]>,
        params: &M::Params,
    ) {
        let Some((kind, _, links)) = sites.first().and_then(|s| s.rule.parts()) else {
            return;
        };
        let mut values = [[0.0; 3]; VL];
        for (s, (_, v, _)) in sites.iter().filter_map(|s| Some((s, s.rule.parts()?))) {
            values[s.lane] = v;
        }
        let program = self.programs[kind.code() as usize].as_ref();
        program
            .expect("compiled with the sites")
            .run::<M, T, VL>(g, &values, links, regs, params);
    }

    /// Adds global site `(x, s)` (plane site `s`; local column `x − x0`, local plane site
    /// `local_s`) if it has a bounced link or a rule.
    fn add_site<M: Model>(
        &mut self,
        spec: &BoundarySpec,
        (global, local): (&Dims, &Dims),
        (x, x0): (usize, usize),
        (s, local_s): (usize, usize),
        lanes: &dyn Fn(&Dims, usize) -> (usize, usize),
    ) {
        let (k, lane) = lanes(local, local.yz(local_s).0);
        let mut site = Site {
            x: x - x0,
            y: local_s,
            k,
            lane,
            mask: 0,
            corr: None,
            interp: None,
            rule: Rule::None,
        };
        if spec.solid.as_ref().is_some_and(|o| o.at(global, x, s)) {
            site.mask = u64::MAX >> (64 - M::Q);
            site.rule = Rule::Solid;
            self.sites.push(site);
            return;
        }
        let mut corr = [0.0f64; 64];
        let mut interp = [Interp::halfway(); 64];
        let mut curved = false;
        let mut dirichlet: Option<(f64, u64)> = None;
        for (i, c) in M::VELOCITIES.iter().enumerate() {
            if let Some((wall, obstacle)) = crossed(spec, global, x, s, *c) {
                site.mask |= 1 << i;
                // The wall lies along the opposite link, `x − c_i = x + c_ī` being solid.
                let (y, z) = global.yz(s);
                let obstacles = spec.solid.as_ref().filter(|_| obstacle);
                let q = obstacles.and_then(|o| o.wall_distance([x, y, z], c.map(|v| -v)));
                let mut share = 1.0;
                if wall == Wall::Outflow && !obstacle {
                    interp[i] = outflow_link(spec, global, [x, y, z], *c);
                    self.outflow = true;
                    curved = true;
                }
                if let (Some(q), Some(o)) = (q, obstacles) {
                    let fluid = fluid_along(spec, global, [x, y, z], *c);
                    (interp[i], share) = Interp::new(o.interpolation(), q, fluid);
                    self.link_reach = self.link_reach.max(interp[i].reach());
                    curved = true;
                }
                if let Wall::Dirichlet { value } = wall {
                    let (_, links) = dirichlet.get_or_insert((value, 0));
                    *links |= 1 << i;
                }
                // The wall's momentum where the link crosses it (times the interpolation's
                // share, `Interp::new`).
                let qh = q.unwrap_or(0.5);
                let at = std::array::from_fn(|a| [x, y, z][a] as f64 - qh * f64::from(c[a]));
                let (u, share) = match obstacles.and_then(|o| o.wall_velocity(at)) {
                    Some(u) => (u, share),
                    None => (wall.bounce_velocity(), 1.0),
                };
                let cu: f64 = c.iter().zip(u).map(|(&c, u)| f64::from(c) * u).sum();
                corr[i] = share * 2.0 * M::WEIGHTS[i] * cu / M::CS2;
            }
        }
        let corr = &corr[..M::Q];
        if corr.iter().any(|&c| c != 0.0) {
            site.corr = Some(self.corr.len());
            self.corr.extend(corr.iter().map(|&c| T::from_f64(c)));
        }
        if curved {
            site.interp = Some(self.interp.len());
            self.interp.extend_from_slice(&interp[..M::Q]);
        }
        site.rule = site_rule(spec, global, M::HALO, x, s);
        if let (Rule::None, Some((value, links))) = (site.rule, dirichlet) {
            site.rule = Rule::Dirichlet { value, links };
        }
        if site.mask != 0 || site.rule != Rule::None {
            self.sites.push(site);
        }
    }
}

/// The link `c` of the global site `p` that crosses an outflow side: the zero-gradient term
/// along the side's normal ([`Interp::outflow`]), or half-way bounce-back where the link's
/// source lies beyond another closed side too (at an edge or corner the outflow shares with a
/// wall that [`crossed`] does not rank first).
fn outflow_link<T: Real>(spec: &BoundarySpec, d: &Dims, p: [usize; 3], c: [i32; 3]) -> Interp<T> {
    let closed = [spec.left, spec.bottom, spec.back].map(|w| w.is_some());
    let n = [d.lx, d.ly, d.lz];
    let beyond = |a: usize| {
        let s = p[a] as isize - c[a] as isize;
        closed[a] && (s < 0 || s >= n[a] as isize)
    };
    match (0..3).filter(|&a| beyond(a)).collect::<Vec<_>>()[..] {
        [a] => Interp::outflow(a),
        _ => Interp::halfway(),
    }
}

/// Whether the sites `x + c` and `x + 2c` beyond the global site `x` are fluid and joined to
/// it (no wall or obstacle between them): what an interpolated link's stencil needs.
fn fluid_along(spec: &BoundarySpec, d: &Dims, [x, y, z]: [usize; 3], c: [i32; 3]) -> [bool; 2] {
    let back = c.map(|v| -v);
    let near = crossed(spec, d, x, d.plane_site(y, z), back).is_none();
    let wrap = |p: usize, k: usize, n: usize| (p as isize + c[k] as isize).rem_euclid(n as isize);
    let [nx, ny, nz] = [(x, 0, d.lx), (y, 1, d.ly), (z, 2, d.lz)].map(|(p, k, n)| wrap(p, k, n));
    let far = near
        && crossed(
            spec,
            d,
            nx as usize,
            d.plane_site(ny as usize, nz as usize),
            back,
        )
        .is_none();
    [near, far]
}

/// The wall (or obstacle surface) that link `c` of the global site `(x, s)` (plane site `s`)
/// of a lattice of shape `d` crosses, if any. A link that crosses a y-wall counts for it even
/// at an edge or corner (then a z-wall, then an x-wall), so that the lid's corrections of a
/// corner site cancel in pairs and mass is conserved. With it, whether the wall is an
/// obstacle's surface (not a side's).
fn crossed(spec: &BoundarySpec, d: &Dims, x: usize, s: usize, c: [i32; 3]) -> Option<(Wall, bool)> {
    let (y, z) = d.yz(s);
    let source = |p: usize, k: usize| p as isize - c[k] as isize;
    let (sx, sy, sz) = (source(x, 0), source(y, 1), source(z, 2));
    let wrap = |p: isize, n: usize| p.rem_euclid(n as isize) as usize;
    let solid = |[x, y, z]: [usize; 3]| spec.solid.as_ref().is_some_and(|o| o.is_solid(x, y, z));
    let mut at = [wrap(sx, d.lx), wrap(sy, d.ly), wrap(sz, d.lz)];
    let sides = [
        (spec.bottom, spec.top, sy, d.ly, 1),
        (spec.back, spec.front, sz, d.lz, 2),
        (spec.left, spec.right, sx, d.lx, 0),
    ];
    for (low, high, p, n, axis) in sides {
        if let (Some(low), Some(high)) = (low, high) {
            let (wall, edge) = match p {
                p if p < 0 => (low, 0),
                p if p >= n as isize => (high, n - 1),
                _ => continue,
            };
            // A wall along the flow (the solid rows that pad a channel, which the open sides
            // allow) reaches through an opening: a link from beyond it that crosses the wall's
            // rows is the wall's, as at a lattice's edge.
            at[axis] = edge;
            if wall.is_open() && solid(at) {
                return Some((Wall::NO_SLIP, true));
            }
            return Some((wall, false));
        }
    }
    solid(at).then_some((Wall::NO_SLIP, true))
}

/// The sides of a lattice of shape `d` with the distance of global site `(x, y, z)` from each
/// and its inward normal, in the order of precedence at edges and corners: the bottom and
/// top, then the back and front, then the left and right.
fn sides(
    spec: &BoundarySpec,
    d: &Dims,
    [x, y, z]: [usize; 3],
) -> [(Option<Wall>, usize, [i32; 3]); 6] {
    [
        (spec.bottom, y, [0, 1, 0]),
        (spec.top, (d.ly - 1).saturating_sub(y), [0, -1, 0]),
        (spec.back, z, [0, 0, 1]),
        (spec.front, (d.lz - 1).saturating_sub(z), [0, 0, -1]),
        (spec.left, x, [1, 0, 0]),
        (spec.right, (d.lx - 1).saturating_sub(x), [-1, 0, 0]),
    ]
}

/// The rule of site `(x, s)` (`s` the plane site): Zou–He on the outermost row, column or
/// plane of its side, the thermal wall on the `halo` outermost ones (precedence as in
/// [`sides`]).
fn site_rule(spec: &BoundarySpec, d: &Dims, halo: usize, x: usize, s: usize) -> Rule {
    let (y, z) = d.yz(s);
    for (wall, depth, normal) in sides(spec, d, [x, y, z]) {
        match wall {
            Some(Wall::ZouHeVelocity { velocity }) if depth == 0 => {
                return Rule::ZouHe {
                    normal,
                    target: ZouHeTarget::Velocity(velocity),
                }
            }
            Some(Wall::ParabolicInflow { peak }) if depth == 0 => {
                let closed = [
                    (spec.left.is_some(), x, d.lx),
                    (spec.bottom.is_some(), y, d.ly),
                    (spec.back.is_some(), z, d.lz),
                ];
                let shape: f64 = (closed.iter().zip(normal))
                    .filter(|&(&(walls, _, _), n)| walls && n == 0)
                    .map(|(&(_, p, l), _)| {
                        let s = (p as f64 + 0.5) / l as f64;
                        4.0 * s * (1.0 - s)
                    })
                    .product();
                return Rule::ZouHe {
                    normal,
                    target: ZouHeTarget::Velocity(peak.map(|u| u * shape)),
                };
            }
            Some(Wall::Inflow) if depth == 0 => {
                let u = spec.inflow.as_ref().map_or([0.0; 3], |p| p.at([x, y, z]));
                return Rule::ZouHe {
                    normal,
                    target: ZouHeTarget::Velocity(u),
                };
            }
            Some(Wall::ZouHePressure { density }) if depth == 0 => {
                return Rule::ZouHe {
                    normal,
                    target: ZouHeTarget::Density(density),
                }
            }
            Some(Wall::Thermal { temperature }) if depth < halo => {
                return Rule::Thermal { temperature };
            }
            Some(Wall::FreeSlip) if depth == 0 => return Rule::FreeSlip { normal },
            _ => {}
        }
    }
    Rule::None
}

/// Rejects specifications the kernels cannot honour, with the reason.
pub(crate) fn check_spec<M: Model>(spec: &BoundarySpec, d: &Dims) -> Result<(), LbmError> {
    let err = |m: String| Err(LbmError::Boundary(m));
    if spec.left.is_some() != spec.right.is_some() {
        return err("give both `left` and `right` walls, or neither (periodic in x)".into());
    }
    if spec.bottom.is_some() != spec.top.is_some() {
        return err("give both `bottom` and `top` walls, or neither (periodic in y)".into());
    }
    if spec.back.is_some() != spec.front.is_some() {
        return err("give both `back` and `front` walls, or neither (periodic in z)".into());
    }
    if spec.back.is_some() && M::D != 3 {
        return err(format!(
            "`back` and `front` walls close the z direction of a 3-D lattice; {} is {}-D: \
             leave them out",
            M::NAME,
            M::D
        ));
    }
    if M::Q > 64 {
        return err(format!(
            "model {} has Q = {} > 64 links per site",
            M::NAME,
            M::Q
        ));
    }
    if let Some(o) = &spec.solid {
        o.check(d)?;
        open_side_blocked(spec, o, d)?;
    }
    for (w, _, normal) in sides(spec, d, [0; 3]) {
        match w {
            Some(
                Wall::ZouHeVelocity { .. }
                | Wall::ParabolicInflow { .. }
                | Wall::ZouHePressure { .. },
            ) => {
                Closure::check::<M>(normal).map_err(LbmError::Boundary)?;
            }
            Some(Wall::Inflow) => {
                Closure::check::<M>(normal).map_err(LbmError::Boundary)?;
                check_inflow::<M>(spec, d, normal)?;
            }
            Some(Wall::FreeSlip) if M::VELOCITIES.iter().any(|c| c.iter().any(|v| v.abs() > 1)) => {
                return err(format!(
                    "a free-slip wall mirrors the populations of the outermost sites only, which \
                     needs velocities with components in {{−1, 0, 1}}; {} reaches further: use \
                     bounce-back walls, or periodic sides",
                    M::NAME
                ));
            }
            Some(Wall::Outflow) if M::VELOCITIES.iter().any(|c| c.iter().any(|v| v.abs() > 1)) => {
                return err(format!(
                    "an outflow side extrapolates the populations of the outermost sites only, \
                     which needs velocities with components in {{−1, 0, 1}}; {} reaches \
                     further: use a periodic x direction or bounce-back walls",
                    M::NAME
                ));
            }
            Some(Wall::Thermal { .. }) if moment_index::<M>(Role::Temperature).is_none() => {
                return err(format!(
                    "a thermal wall needs a model with a temperature moment; {} has none",
                    M::NAME
                ));
            }
            Some(Wall::Dirichlet { .. }) if dirichlet_moment::<M>().is_none() => {
                return err(format!(
                    "a Dirichlet wall holds the scalar of a transport model (a temperature or \
                     scalar moment and no velocity moment, e.g. D2Q5AdvectionDiffusion); {} \
                     has {}: use `BounceBack` or `Thermal` walls",
                    M::NAME,
                    if moment_index::<M>(Role::Velocity(0)).is_some() {
                        "a velocity moment"
                    } else {
                        "no temperature or scalar moment"
                    }
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks the inflow profile of the side with inward normal `normal` at each of its outermost
/// sites: there is one ([`BoundarySpec::inflow`]), and its velocities are finite and below the
/// speed of sound `c_s` (the Zou–He closure divides by `1 − u·n`).
fn check_inflow<M: Model>(spec: &BoundarySpec, d: &Dims, normal: [i32; 3]) -> Result<(), LbmError> {
    let Some(profile) = &spec.inflow else {
        return Err(LbmError::Boundary(
            "a side is Wall::Inflow but BoundarySpec::inflow gives no profile: set it to \
             InflowProfile::new(|[x, y, z]| [u_x, u_y, u_z])"
                .into(),
        ));
    };
    let axis = normal.iter().position(|&n| n != 0).unwrap_or(0);
    let n = [d.lx, d.ly, d.lz];
    let at = if normal[axis] > 0 { 0 } else { n[axis] - 1 };
    let [xs, ys, zs] = std::array::from_fn(|a| if a == axis { at..at + 1 } else { 0..n[a] });
    let cs = M::CS2.sqrt();
    for x in xs {
        for y in ys.clone() {
            for z in zs.clone() {
                let u = profile.at([x, y, z]);
                let speed = u[..M::D].iter().map(|v| v * v).sum::<f64>().sqrt();
                if !speed.is_finite() || speed >= cs {
                    return Err(LbmError::Boundary(format!(
                        "the inflow profile gives {u:?} at the site ({x}, {y}, {z}): give a \
                         finite velocity below the lattice's speed of sound, {cs:.4} (lattice \
                         units; below 0.1 keeps the flow nearly incompressible)"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The sites `x ∈ 0, y ∈ 1, z ∈ 2` of a box of the lattice.
type Box3 = [Range<usize>; 3];

/// Refuses obstacles on the outermost sites of an open side (an inflow or outflow): the
/// side's rule would set a velocity or pressure inside the body (an outflow would extrapolate
/// from it), and a body that fills the inlet lets no flow in. A solid site whose whole line
/// across the lattice along the side's normal is solid is a wall along the flow, not a body
/// in the opening (the solid rows that pad a channel to a layout's cluster width): allowed.
fn open_side_blocked(spec: &BoundarySpec, o: &Obstacles, d: &Dims) -> Result<(), LbmError> {
    let open = |w: Option<Wall>| w.is_some_and(|w| w.is_open());
    let (lx, ly, lz) = (d.lx, d.ly, d.lz);
    let faces: [(&str, Option<Wall>, Box3); 6] = [
        ("left", spec.left, [0..1, 0..ly, 0..lz]),
        ("right", spec.right, [lx - 1..lx, 0..ly, 0..lz]),
        ("bottom", spec.bottom, [0..lx, 0..1, 0..lz]),
        ("top", spec.top, [0..lx, ly - 1..ly, 0..lz]),
        ("back", spec.back, [0..lx, 0..ly, 0..1]),
        ("front", spec.front, [0..lx, 0..ly, lz - 1..lz]),
    ];
    for (axis, (name, wall, [xs, ys, zs])) in faces.into_iter().enumerate() {
        if !open(wall) {
            continue;
        }
        let along = |(x, y, z): (usize, usize, usize)| {
            let n = [lx, ly, lz][axis / 2];
            (0..n).all(|k| {
                let mut p = [x, y, z];
                p[axis / 2] = k;
                o.is_solid(p[0], p[1], p[2])
            })
        };
        let blocked = |&(x, y, z): &(usize, usize, usize)| o.is_solid(x, y, z) && !along((x, y, z));
        let mut sites = xs.flat_map(|x| {
            let zs = zs.clone();
            ys.clone()
                .flat_map(move |y| zs.clone().map(move |z| (x, y, z)))
        });
        if let Some((x, y, z)) = sites.find(blocked) {
            let n = sites.filter(blocked).count() + 1;
            return Err(LbmError::Boundary(format!(
                "the obstacles cover {n} site(s) of the {name} side, the first at ({x}, {y}, \
                 {z}), where its {} rule sets the flow: move the body at least one site away \
                 from that side (or shrink it)",
                match wall {
                    Some(Wall::ZouHePressure { .. }) => "Zou–He pressure",
                    Some(Wall::Outflow) => "outflow",
                    _ => "Zou–He velocity",
                }
            )));
        }
    }
    Ok(())
}

/// The moment a Dirichlet wall fixes: the temperature, else the (first) scalar, of a model
/// without a velocity moment.
pub(crate) fn dirichlet_moment<M: Model>() -> Option<usize> {
    if moment_index::<M>(Role::Velocity(0)).is_some() {
        return None;
    }
    moment_index::<M>(Role::Temperature).or_else(|| moment_index::<M>(Role::Scalar))
}
