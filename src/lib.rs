//! # lbm — lattice Boltzmann models in a few lines, run on CPUs and GPUs
//!
//! A model is declared with [`lbm_model!`]: the velocity set, the weights, `cs²`, run-time
//! parameters, the moments, the equilibrium, the collision and an optional body force. At
//! compile time the macro proves the model consistent and generates its kernels; the runtime
//! ([`Lattice`] and friends, re-exported here from `lbm-runtime`) runs them.
//!
//! New here? The [user guide](guide) walks from declaring a model, through running it on the CPU
//! and the GPU, to reading the outputs.
//!
//! ## Declaring a model
//!
//! ```
//! use lbm::{lbm_model, Model};
//!
//! // `lbm_model!` generates code that names this crate as `::lbm`.
//! lbm_model! {
//!     /// Isothermal D2Q9 with single-relaxation-time collision.
//!     pub model MyD2Q9 {
//!         dim = 2;
//!         velocities = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)];
//!         weights = [4/9, 1/9, 1/9, 1/9, 1/9, 1/36, 1/36, 1/36, 1/36];
//!         cs2 = 1/3;
//!         params { tau: real }
//!         moments { rho = sum(f); u = sum(f * c) / rho; }
//!         equilibrium = w * rho * (1 + dot(c, u) / cs2 + dot(c, u)^2 / (2 * cs2^2) - dot(u, u) / (2 * cs2));
//!         collision = bgk(tau = tau);
//!     }
//! }
//!
//! let params = MyD2Q9Params { tau: 0.8 };
//! MyD2Q9::validate(&params).unwrap();
//! let mut f = [0.0f64; 9];
//! MyD2Q9::equilibrium(&[1.0, 0.05, 0.0], &params, &mut f); // ρ, u_x, u_y
//! MyD2Q9::collide(&mut f, &params);                  // at equilibrium, collide changes nothing
//! assert!((f.iter().sum::<f64>() - 1.0).abs() < 1e-15);
//! ```
//!
//! ### The items
//! | item | meaning |
//! |---|---|
//! | `dim = 2;` | spatial dimension, 2 or 3 |
//! | `velocities = [(cx, cy), …];` | the velocity set, or `shells![(0,0), (1,0), (1,1), …]`: every signed permutation of each shell vector (D2Q37 is 8 shells) |
//! | `weights = [4/9, …];` | one weight per velocity (or per shell): exact rationals, or decimals with up to 25+ significant digits, kept exact |
//! | `cs2 = 1/3;` | the squared sound speed; must equal `Σ w c_x²` |
//! | `params { tau: real, … }` | run-time parameters: they become the struct `<Name>Params` of `f64` fields |
//! | `moments { rho = sum(f); u = sum(f * c) / rho; T = …; }` | density, velocity, and for thermal models the temperature `T = sum(f * dot(c - u, c - u)) / (dim * rho * cs2)`; any name with a role, `phi: scalar = sum(f);` (roles `density`, `velocity`, `temperature`, `scalar`, `vector`; `rho`, `u`, `T` have theirs by default) |
//! | `conserved = [phi];` | the moments the collision conserves (all when absent); the others relax |
//! | `equilibrium = <formula>;` or `hermite(order = N);` | a polynomial in the moments and parameters written with `c`, `w`, `cs2`, `dim`, `dot(a, b)`, `norm2(a)` (= `dot(a, a)`), `+ - * /` and `^` (a power, binding tighter than `*`), or the built-in Hermite expansion of order 1–4 |
//! | `collision = bgk(tau = …)` | also `bgk(omega = …)`; `trt(tau = …, magic = Λ)` or `trt(omega_plus = …, omega_minus = …)`; `mrt(basis = [Q polynomials in c, cx, cy], rates = [Q rates])`. A rate is an expression of the parameters and of the site's state: the moments, `neq(φ)` (the non-equilibrium moment `Σ φ(c) (f − f_eq)`), `sqrt(x)`, and `smagorinsky(tau = τ₀, c = C)`, Smagorinsky's relaxation time from the local stress (Hou et al. 1996); `validate` checks it at rest |
//! | `force = (ax, ay);` | a body acceleration of the parameters, applied by the exact-difference method (Kupershtokh 2004): momentum changes by exactly ρa per step; the velocity reported by `moments` is `Σfc/ρ + a/2` |
//!
//! ### What is checked at compile time
//! Each failure is a compile error pointing at the offending tokens: dimensions; duplicate
//! velocities; closure under negation; one positive weight per velocity, summing to 1, with
//! `w(c) = w(−c)`; `Σ w c c = cs² I`; the lattice's isotropy against the equilibrium's order
//! (order N needs isotropy through 2N); conservation of every conserved moment by the
//! equilibrium (mass, momentum, energy, a scalar), proved on exact polynomials in the moments and
//! parameters; moment roles, and names defined, not shadowing built-ins or each other's
//! components; the MRT basis square and invertible with one rate per moment;
//! collision operators and their arguments; and the generated WGSL against naga.
//!
//! ### What is generated
//! The unit struct `Name`, the parameter struct `NameParams`, and `impl Model for Name`:
//! constants (Q, velocities, weights, opposites, halo width, `cs²`, orders, the flop count of
//! collide), `validate` (relaxation rates in (0, 2), i.e. τ > ½), `moments`, `equilibrium`,
//! `collide` for one site and `collide_cluster` for VL sites at once (straight-line code over
//! lanes that vectorises), `collide_access`, the same cluster collision over an accessor that
//! loads and stores the populations where the streaming pattern puts them (the CPU kernels'
//! interior path; it stores each group of about eight results as soon as it is computed, so
//! that a large model's stores overlap its arithmetic), all generic over `f32`/`f64`, and the
//! WGSL source for the GPU.
//!
//! ## Finite differences
//!
//! [`fd_scheme!`] declares an explicit finite-difference scheme through the same pipeline:
//! unknowns, parameters, difference operators whose order of accuracy the macro proves from
//! their Taylor expansion, and the rates `∂t φ = R(φ)`; [`fd::FdGrid`] runs it on the CPU, in
//! one process or cut into blocks along 1, 2 or 3 axes over MPI ranks
//! ([`fd::FdGrid::on_blocks`]), and [`gpu::GpuFdGrid`] on a GPU (the [user guide](guide) has the grammar).
//!
//! ```
//! use lbm::fd::{FdGrid, Side};
//! use lbm::fd_scheme;
//!
//! fd_scheme! {
//!     /// The heat equation, second-order Laplacian, forward Euler.
//!     pub scheme Heat {
//!         dim = 2;
//!         fields { T }
//!         params { alpha: real }
//!         operators { lap = laplacian(order = 2, stencil = [1, -2, 1]); }
//!         rates { T = alpha * lap(T); }
//!     }
//! }
//!
//! let n = 32;
//! let h = 1.0 / n as f64;
//! let mut g: FdGrid<Heat, f64> =
//!     FdGrid::new([n, n, 1], h, HeatParams { alpha: 1.0 }, vec![Side::Periodic; 4]).unwrap();
//! let k = 2.0 * std::f64::consts::PI;
//! g.set(0, |x| (k * x[0]).sin());
//! g.advance(100, 0.2 * h * h).unwrap();
//! // The mode decays as exp(−k² α t).
//! let exact = (-k * k * g.time()).exp() * (k * 8.0 * h).sin();
//! assert!((g.value(0, [8, 0, 0]) - exact).abs() < 5e-3);
//! ```

//! ## Running
//!
//! [`driver::drive`] is the loop of every run the `lbm` program makes — a lattice, coupled
//! lattices, a finite-difference grid, on any backend and number of processes: steps in
//! chunks to the next output, checkpoint or check of a [`driver::Schedule`], divergence and
//! steady-state checks, and a clean stop on SIGINT, SIGTERM and SIGHUP agreed by every
//! process. An application implements [`driver::Run`] for what it steps and writes.

pub mod guide;

pub use lbm_macros::{fd_scheme, lbm_model};
pub use lbm_models as models;
pub use lbm_runtime::*;

pub mod cases;
pub mod cavity;
pub mod driver;
pub mod fd_cavity;
pub mod geometry;
pub mod output;
