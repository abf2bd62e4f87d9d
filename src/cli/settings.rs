//! The settings of `lbm run`: every option is also a key of a TOML case file (`--config`),
//! spelled the same (`--output-every 500` ⇔ `output-every = 500`). Command-line options
//! override the file's keys; keys that are given to a case they do not apply to, unknown keys
//! and values outside what is allowed are reported by key, before any work is done.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use super::{CliError, LayoutArg, Precision, SchemeArg};

/// The shipped cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseName {
    /// D2Q37 Rayleigh–Taylor instability between thermal walls (the production case of
    /// Calore et al. 2019).
    RayleighTaylor,
    /// D2Q9 lid-driven cavity, compared with Ghia et al. (1982) at steady state.
    Cavity,
    /// The lid-driven cavity by finite differences (artificial compressibility, second-order
    /// central differences), compared with Ghia et al. (1982) at steady state.
    #[value(name = "fd-cavity")]
    #[serde(rename = "fd-cavity")]
    FdCavity,
    /// D2Q9 force-driven channel flow, compared with the parabolic profile.
    Poiseuille,
    /// D2Q9 decaying Taylor–Green vortex, its viscosity compared with cs²(τ − ½).
    TaylorGreen,
    /// D3Q19 MRT Taylor–Green vortex in a periodic cube at Re = 1600, its dissipation rate
    /// compared with the DNS of van Rees et al. (2011).
    #[value(name = "taylor-green-3d")]
    #[serde(rename = "taylor-green-3d")]
    TaylorGreen3d,
    /// D3Q19 TRT force-driven flow in a square duct, compared with the series solution.
    Duct,
    /// D3Q19 TRT lid-driven cube at steady state, its centre-line profiles written as CSV.
    #[value(name = "cavity-3d")]
    #[serde(rename = "cavity-3d")]
    Cavity3d,
    /// D2Q5 passive scalar: a Gaussian pulse advected by a uniform flow and diffusing,
    /// compared with the exact solution and its diffusivity with cs²(τ − ½).
    #[value(name = "advection-diffusion")]
    #[serde(rename = "advection-diffusion")]
    AdvectionDiffusion,
    /// D2Q9 flow + D2Q5 temperature, coupled (Boussinesq): convection between a hot bottom
    /// and a cold top wall, its Nusselt number compared with Clever & Busse (1974).
    #[value(name = "rayleigh-benard")]
    #[serde(rename = "rayleigh-benard")]
    RayleighBenard,
    /// D2Q9 MRT flow around a cylinder in a channel (Schäfer & Turek 1996): drag, lift and
    /// pressure difference at Re = 20, their histories and the Strouhal number at Re = 100.
    Cylinder,
    /// D3Q19 TRT flow around a cylinder spanning a square channel (Schäfer & Turek 1996,
    /// 3D-1Z): drag, lift and pressure difference at Re = 20.
    #[value(name = "cylinder-3d")]
    #[serde(rename = "cylinder-3d")]
    Cylinder3d,
    /// D3Q19 TRT force-driven flow through a porous medium of parallel capillaries, its
    /// permeability compared with the capillaric model φR²/8; a sparse domain under mpiexec
    /// with --block.
    Capillaries,
    /// D3Q19 TRT flow past a closed STL mesh (or the shipped sphere) in a channel: its drag
    /// and lift coefficients and their history, images, and VTK files with the body.
    Body,
}

impl CaseName {
    /// The name as written on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RayleighTaylor => "rayleigh-taylor",
            Self::Cavity => "cavity",
            Self::FdCavity => "fd-cavity",
            Self::Poiseuille => "poiseuille",
            Self::TaylorGreen => "taylor-green",
            Self::TaylorGreen3d => "taylor-green-3d",
            Self::Duct => "duct",
            Self::Cavity3d => "cavity-3d",
            Self::AdvectionDiffusion => "advection-diffusion",
            Self::RayleighBenard => "rayleigh-benard",
            Self::Cylinder => "cylinder",
            Self::Cylinder3d => "cylinder-3d",
            Self::Body => "body",
            Self::Capillaries => "capillaries",
        }
    }
}

/// Where the run executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendArg {
    /// The CPU kernels, parallel over columns with rayon.
    Cpu,
    /// The GPU (wgpu; any Vulkan, Metal or DX12 adapter, lavapipe included).
    Gpu,
    /// Host and device together (Calore et al. 2019 §5–6): the border columns on the CPU, the bulk on
    /// the GPU, concurrently; the split is tuned at start-up unless `host-columns` or
    /// `host-share` fixes it.
    Hetero,
}

/// Collision operator of the cavity (D2Q9: bgk, mrt, central-mrt, smagorinsky) and of the 3-D
/// Taylor–Green vortex (D3Q19: mrt, smagorinsky).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Collision {
    /// Single relaxation time.
    Bgk,
    /// Multiple relaxation times (Lallemand & Luo 2000).
    Mrt,
    /// Multiple relaxation times of the central moments (Geier et al. 2006).
    CentralMrt,
    /// BGK with the non-equilibrium regularized to its stress (Latt & Chopard 2006).
    Regularized,
    /// Smagorinsky's eddy viscosity (Hou et al. 1996) on BGK (cavity) or MRT
    /// (taylor-green-3d), constant from --smagorinsky.
    Smagorinsky,
}

/// How a body's curved walls are bounced back (cylinder, cylinder-3d, body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Walls {
    /// Linear interpolation of two populations along each link (Bouzidi et al. 2001).
    Linear,
    /// Quadratic interpolation of three (Bouzidi et al. 2001): on one process and one device.
    Quadratic,
}

/// The outflow side of an open channel (cylinder, cylinder-3d, body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outflows {
    /// A Zou–He pressure side: holds the pressure, reflects pressure waves whole.
    Pressure,
    /// Zero-gradient extrapolation: lets vortices leave, reflects a quarter of a pressure
    /// wave; the two-copy scheme.
    Extrapolated,
}

impl From<Outflows> for lbm::cases::Outflow {
    fn from(o: Outflows) -> Self {
        match o {
            Outflows::Pressure => lbm::cases::Outflow::Pressure,
            Outflows::Extrapolated => lbm::cases::Outflow::Extrapolated,
        }
    }
}

impl From<Walls> for lbm::Interpolation {
    fn from(w: Walls) -> Self {
        match w {
            Walls::Linear => lbm::Interpolation::Linear,
            Walls::Quadratic => lbm::Interpolation::Quadratic,
        }
    }
}

/// Every setting of a run; each is optional, unset ones take the case's default.
#[derive(Debug, Clone, Default, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Settings {
    /// The case to run.
    #[arg(value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<CaseName>,
    /// Lattice width LX; the cube's side (taylor-green-3d, cavity-3d), the duct's length
    /// (duct), the capillaries' (capillaries) [default: per case].
    #[arg(long, value_parser = whole::<usize>, help_heading = "Lattice")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lx: Option<usize>,
    /// Lattice height LY, a multiple of the layout's VL; the side of the duct's square
    /// section, LY = LZ (duct), of the capillaries' box (capillaries) [default: per case].
    #[arg(long, value_parser = whole::<usize>, help_heading = "Lattice")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ly: Option<usize>,
    /// Steps in total; a resumed run continues up to this step [default: per case].
    #[arg(long, value_parser = whole::<u64>, help_heading = "Lattice")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Precision: f64, f32, or f16s (binary16 storage, f32 arithmetic)
    /// [default: f64].
    #[arg(long, value_enum, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// Data layout [default: caosoa].
    #[arg(long, value_enum, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutArg>,
    /// Cluster width VL of csoa and caosoa: 4, 8 or 16 [default: one 64-byte vector of the
    /// arithmetic, 8 in f64 and 16 in f32 and f16s]; on the cpu and hetero backends other
    /// widths need the program built with `--features widths`.
    #[arg(long, value_parser = whole::<usize>, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vl: Option<usize>,
    /// Streaming scheme [default: in-place on the CPU (two-copy for the cylinders), two-copy on
    /// the GPU].
    #[arg(long, value_enum, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<SchemeArg>,
    /// Backend [default: cpu].
    #[arg(long, value_enum, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendArg>,
    /// GPU adapter: `best`, a device type (`discrete`, `integrated`, `virtual`, `cpu`) or part
    /// of an adapter's name [default: $LBM_GPU_ADAPTER, else best]. On MPI ranks the ranks of
    /// a node take the best adapters (or those of the type) in turn; a named one is shared.
    #[arg(long, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// Backend hetero: M, the border columns on each side run on the host (fd-cavity: rows)
    /// [default: tuned at start-up by the model of Calore et al. 2019, eq. 4–8; fd-cavity: 3].
    #[arg(long, value_parser = whole::<usize>, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_columns: Option<usize>,
    /// Backend hetero: the host's share 2M/LX of the columns, in [0, 1] [default: tuned].
    #[arg(long, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_share: Option<f64>,
    /// Under mpiexec: the blocks per axis the lattice or grid is cut into, one a rank, as AxB
    /// (2-D) or AxBxC (3-D) [default: the ranks balanced over the axes, as MPI_Dims_create
    /// does; fd-cavity on hetero ranks along y, the axis its host/device split cuts].
    #[arg(long, value_name = "AxB", help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// A sparse domain (the `mpi` feature): the box cut into blocks of about N sites per axis
    /// (N, or AxBxC), those that hold no fluid (solid within a site all round) not allocated,
    /// spread over the processes (`mpiexec -n`), several a process on threads where they
    /// outnumber them; a run on more processes than blocks is refused, saying how many. On the
    /// cpu backend; instead of --cut.
    #[arg(long, value_name = "N|AxBxC", help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// Check for divergence (NaN, Mach beyond the model's range, T ≤ 0) every N steps
    /// [default: 500].
    #[arg(long, value_parser = whole::<u64>, help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_every: Option<u64>,
    /// Stop when steady: the velocity changes by less than TOL × the case's velocity scale
    /// over `check-every` steps [default: 1e-6 for the cavity, off otherwise].
    #[arg(long, value_name = "TOL", help_heading = "Execution")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_steady: Option<f64>,
    /// Output directory [default: out/<case>].
    #[arg(long, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out: Option<PathBuf>,
    /// Write images, VTK files and a diagnostics row every N steps, besides the first and the
    /// last step (0: only those) [default: per case].
    #[arg(long, value_parser = whole::<u64>, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_every: Option<u64>,
    /// Append a diagnostics row (no image, no VTK) every N steps besides the outputs (0:
    /// only with them) [default: per case, 0 for most].
    #[arg(long, value_parser = whole::<u64>, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics_every: Option<u64>,
    /// Fields drawn as PNG images, comma-separated: the model's moments (rho, ux, uy, T),
    /// speed, vorticity; an empty list draws none [default: per case].
    #[arg(long, value_delimiter = ',', num_args = 0.., help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    /// The plane x = N of a 3-D lattice drawn as the PNG images instead of the case's (a
    /// plane of constant z; capillaries: x = LX/2) (y to the right, z up).
    #[arg(long, value_parser = whole::<usize>, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice_x: Option<usize>,
    /// The plane y = N of a 3-D lattice drawn as the PNG images instead of the case's (x to
    /// the right, z up).
    #[arg(long, value_parser = whole::<usize>, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice_y: Option<usize>,
    /// The plane z = N of a 3-D lattice drawn as the PNG images (x to the right, y up)
    /// [default: LZ/2, but x = LX/2 for capillaries].
    #[arg(long, value_parser = whole::<usize>, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice_z: Option<usize>,
    /// Write VTK files (true or false): a piece per rank or block (`.vti`), a `.pvti` per
    /// output step (a `.vtm` on a sparse domain) and the run's `.pvd` series [default: true].
    #[arg(long, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vtk: Option<bool>,
    /// Compress the VTK pieces with zlib (true or false) [default: false].
    #[arg(long, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vtk_zlib: Option<bool>,
    /// Write a checkpoint every N steps, at the end and when a signal stops the run (0: never)
    /// [default: 0].
    #[arg(long, value_parser = whole::<u64>, help_heading = "Output")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_every: Option<u64>,
    /// Relaxation time τ > ½ (rayleigh-taylor, poiseuille, taylor-green, duct,
    /// advection-diffusion, capillaries) [default: 0.55, 0.8, 0.8, 1, 0.8, 0.8].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau: Option<f64>,
    /// Atwood number, in (0, 1): the walls hold T = 1 ± A (rayleigh-taylor) [default: 0.2].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atwood: Option<f64>,
    /// Gravity along −y, lattice units (rayleigh-taylor) [default: 2e-4].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gravity: Option<f64>,
    /// Initial displacement of the interface, sites (rayleigh-taylor) [default: 4].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amplitude: Option<f64>,
    /// Width of the interface's tanh profile, sites (rayleigh-taylor) [default: 2].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<f64>,
    /// Reynolds number U·N/ν (cavity, cavity-3d; Ghia's tables have 100 and 400), U₀L/ν with
    /// L = N/2π (taylor-green-3d), ŪD/ν with the mean inflow Ū (cylinder; Schäfer & Turek's
    /// benchmarks are 20, steady, and 100, shedding), UD/ν (body) [default: 100, 1600, 20].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub re: Option<f64>,
    /// Sites across the cylinder's diameter D, a multiple of 10: the channel is 22 D + 1 sites
    /// long and 4.1 D high, and deep in 3-D (cylinder, cylinder-3d); across the largest side
    /// of the body's box (body: its channel is 12 D long, 5 D wide and deep unless lx and ly
    /// say); across each capillary, at most the pitch less 2 (capillaries) [default: 40, 10,
    /// 10, 12].
    #[arg(long, value_parser = whole::<usize>, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diameter: Option<usize>,
    /// How the body's curved walls are bounced back: linear or quadratic interpolation along
    /// each link, both second-order; quadratic runs on one process and one device (cylinder,
    /// cylinder-3d, body) [default: linear].
    #[arg(long, value_enum, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walls: Option<Walls>,
    /// The channel's outflow: a Zou–He pressure side, or a zero-gradient extrapolation that
    /// lets the vortices of a wake leave with a quarter of the pressure waves' echo
    /// (cylinder, cylinder-3d, body) [default: pressure].
    #[arg(long, value_enum, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outflow: Option<Outflows>,
    /// The cylinder's turn about its axis: its surface speed over the mean inflow, α = ωR/Ū,
    /// counterclockwise positive (cylinder, cylinder-3d) [default: 0, at rest].
    #[arg(long, allow_hyphen_values = true, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spin: Option<f64>,
    /// The body's closed triangle mesh, an STL file, binary or ASCII (body) [default: the
    /// shipped sphere].
    #[arg(long, value_name = "FILE", help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stl: Option<PathBuf>,
    /// The body's turn about the centre of its box: degrees about x, then y, then z,
    /// e.g. `--rotate 0,0,30` (body) [default: 0,0,0].
    #[arg(
        long,
        value_delimiter = ',',
        allow_hyphen_values = true,
        value_name = "X,Y,Z",
        help_heading = "Physics"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotate: Option<Vec<f64>>,
    /// Where the centre of the body's box goes, sites, e.g. `--at 40,30,30` (body)
    /// [default: its front 2 D from the inlet, in the middle of the section].
    #[arg(
        long,
        value_delimiter = ',',
        allow_hyphen_values = true,
        value_name = "X,Y,Z",
        help_heading = "Physics"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Vec<f64>>,
    /// Lid speed U, lattice units, at most 0.3 (cavity, cavity-3d) [default: 0.1].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lid: Option<f64>,
    /// Collision operator (cavity, taylor-green-3d) [default: bgk for cavity, mrt for
    /// taylor-green-3d].
    #[arg(long, value_enum, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collision: Option<Collision>,
    /// Smagorinsky constant C of `--collision smagorinsky` (cavity, taylor-green-3d)
    /// [default: 0.1].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smagorinsky: Option<f64>,
    /// Body acceleration along x, lattice units (poiseuille, duct, capillaries) [default:
    /// 1e-6].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acceleration: Option<f64>,
    /// Initial velocity amplitude u₀, at most 0.25 (taylor-green, taylor-green-3d); the flow's
    /// speed along x, at most 0.2 (advection-diffusion); the free-fall velocity √(gβΔT H), at
    /// most 0.2 (rayleigh-benard); the inflow's peak, at most 0.2 (cylinder, cylinder-3d); the
    /// uniform inflow, at most 0.2 (body) [default: 0.05; 0.1 for rayleigh-benard and
    /// cylinder-3d].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub velocity: Option<f64>,
    /// Rayleigh number gβΔT H³/(νκ) (rayleigh-benard; linear stability puts the onset at
    /// 1707.76) [default: 1e4].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rayleigh: Option<f64>,
    /// Prandtl number ν/κ (rayleigh-benard) [default: 0.71].
    #[arg(long, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prandtl: Option<f64>,
    /// The distance between neighbouring capillaries' axes, sites; the box's side (ly) is a
    /// multiple of it (capillaries) [default: 32].
    #[arg(long, value_parser = whole::<usize>, help_heading = "Physics")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pitch: Option<usize>,
}

/// The keys that only some cases take.
const CASE_KEYS: &[(&str, &[CaseName])] = &[
    (
        "tau",
        &[
            CaseName::RayleighTaylor,
            CaseName::Poiseuille,
            CaseName::TaylorGreen,
            CaseName::Duct,
            CaseName::AdvectionDiffusion,
            CaseName::Capillaries,
        ],
    ),
    ("atwood", &[CaseName::RayleighTaylor]),
    ("gravity", &[CaseName::RayleighTaylor]),
    ("amplitude", &[CaseName::RayleighTaylor]),
    ("width", &[CaseName::RayleighTaylor]),
    (
        "re",
        &[
            CaseName::Cavity,
            CaseName::FdCavity,
            CaseName::TaylorGreen3d,
            CaseName::Cavity3d,
            CaseName::Cylinder,
            CaseName::Cylinder3d,
            CaseName::Body,
        ],
    ),
    (
        "diameter",
        &[
            CaseName::Cylinder,
            CaseName::Cylinder3d,
            CaseName::Body,
            CaseName::Capillaries,
        ],
    ),
    (
        "walls",
        &[CaseName::Cylinder, CaseName::Cylinder3d, CaseName::Body],
    ),
    (
        "outflow",
        &[CaseName::Cylinder, CaseName::Cylinder3d, CaseName::Body],
    ),
    ("spin", &[CaseName::Cylinder, CaseName::Cylinder3d]),
    ("stl", &[CaseName::Body]),
    ("rotate", &[CaseName::Body]),
    ("at", &[CaseName::Body]),
    ("lid", &[CaseName::Cavity, CaseName::Cavity3d]),
    ("collision", &[CaseName::Cavity, CaseName::TaylorGreen3d]),
    ("smagorinsky", &[CaseName::Cavity, CaseName::TaylorGreen3d]),
    (
        "acceleration",
        &[CaseName::Poiseuille, CaseName::Duct, CaseName::Capillaries],
    ),
    ("pitch", &[CaseName::Capillaries]),
    (
        "velocity",
        &[
            CaseName::TaylorGreen,
            CaseName::TaylorGreen3d,
            CaseName::AdvectionDiffusion,
            CaseName::RayleighBenard,
            CaseName::Cylinder,
            CaseName::Cylinder3d,
            CaseName::Body,
        ],
    ),
    ("rayleigh", &[CaseName::RayleighBenard]),
    ("prandtl", &[CaseName::RayleighBenard]),
];

/// A configuration error about `key`.
pub fn bad(key: &str, message: impl Into<String>) -> CliError {
    CliError::Config {
        key: key.into(),
        message: message.into(),
    }
}

/// The most a case file may hold: a few hundred keys are a few kilobytes.
pub const CASE_FILE_LIMIT: u64 = 1 << 20;

impl Settings {
    /// The settings of the TOML file at `path` (a regular file of at most [`CASE_FILE_LIMIT`]
    /// bytes).
    pub fn from_file(path: &Path) -> Result<Self, CliError> {
        let path_text = path.display().to_string();
        let bytes = lbm::io::read_bounded(path, CASE_FILE_LIMIT).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData => {
                CliError::ConfigFile {
                    path: path_text.clone(),
                    message: format!("{e}: give a TOML case file (see lbm run --help)"),
                }
            }
            _ => CliError::Io {
                path: path_text.clone(),
                source: e,
            },
        })?;
        let text = String::from_utf8(bytes).map_err(|_| CliError::ConfigFile {
            path: path.display().to_string(),
            message: "it is not text (binary data): give a TOML case file (see lbm run --help)"
                .into(),
        })?;
        Self::from_toml(&text).map_err(|message| CliError::ConfigFile {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses a TOML case file; the error names the key and what it allows.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// `self`'s keys over `base`'s (the command line over the file).
    pub fn over(self, base: Settings) -> Settings {
        let table = |s: &Settings| match toml::Table::try_from(s) {
            Ok(t) => t,
            Err(e) => unreachable!("settings are plain data: {e}"),
        };
        let mut merged = table(&base);
        merged.extend(table(&self));
        match merged.try_into() {
            Ok(s) => s,
            Err(e) => unreachable!("merged settings have the same keys: {e}"),
        }
    }

    /// The keys that are set.
    pub fn keys(&self) -> Vec<String> {
        toml::Table::try_from(self)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Refuses keys that do not apply to `case`.
    pub fn check_keys(&self, case: CaseName) -> Result<(), CliError> {
        let mut c = Checks::default();
        for key in self.keys() {
            if let Some((_, cases)) = CASE_KEYS.iter().find(|(k, _)| *k == key)
                && !cases.contains(&case)
            {
                let names: Vec<&str> = cases.iter().map(|c| c.as_str()).collect();
                c.keep(bad(
                    &key,
                    format!(
                        "does not apply to case {}; it is a key of {}",
                        case.as_str(),
                        names.join(", ")
                    ),
                ));
            }
        }
        c.done()
    }
}

/// The problems of settings checked independently, reported together (as the model DSL's
/// checks are): every bad setting in one message instead of one per attempt.
#[derive(Debug, Default)]
pub struct Checks(Vec<CliError>);

impl Checks {
    /// The value of `r`, or (keeping its error for [`Checks::done`]) a placeholder.
    pub fn take<T: Default>(&mut self, r: Result<T, CliError>) -> T {
        self.option(r).unwrap_or_default()
    }

    /// The value of `r`, or `None` (keeping its error for [`Checks::done`]).
    pub fn option<T>(&mut self, r: Result<T, CliError>) -> Option<T> {
        r.map_err(|e| self.keep(e)).ok()
    }

    /// Keeps `e` (the errors of an earlier [`Checks`] one by one).
    pub fn keep(&mut self, e: CliError) {
        match e {
            CliError::Several(v) => self.0.extend(v),
            e => self.0.push(e),
        }
    }

    /// `Ok` when every check passed, else their errors together.
    pub fn done(self) -> Result<(), CliError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.into_error())
        }
    }

    /// The errors kept, as one.
    fn into_error(mut self) -> CliError {
        match self.0.len() {
            1 => self.0.remove(0),
            _ => CliError::Several(self.0),
        }
    }
}

/// The values of two independent checks, or the errors of both together (`a`'s first).
pub fn both<A, B>(a: Result<A, CliError>, b: Result<B, CliError>) -> Result<(A, B), CliError> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (a, b) => {
            let mut c = Checks::default();
            c.option(a);
            c.option(b);
            Err(c.into_error())
        }
    }
}

/// Checks that `value` of `key` satisfies `ok`, or reports what is allowed.
pub fn require<T: std::fmt::Display + Copy>(
    key: &str,
    value: T,
    ok: impl Fn(T) -> bool,
    allowed: &str,
) -> Result<T, CliError> {
    if ok(value) {
        Ok(value)
    } else {
        Err(bad(key, format!("{value} is not allowed: {allowed}")))
    }
}

/// The largest whole number a setting takes: a case file's integers are TOML's, 64-bit signed,
/// and the command line takes what the file can hold.
pub const MAX_WHOLE: u64 = i64::MAX as u64;

/// Parses a whole number in `0..=MAX_WHOLE` (for clap), saying what is wrong with anything
/// else: a negative number, a fraction, a word, a number too large.
pub fn whole<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    let t = s.trim();
    let digits = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits {
        return Err(if t.starts_with('-') {
            "a negative number: a whole number ≥ 0 is expected".to_string()
        } else {
            "not a whole number (digits only, e.g. 256)".to_string()
        });
    }
    match t.parse::<u64>() {
        Ok(v) if v <= MAX_WHOLE => T::try_from(v).map_err(|_| "too large for this machine".into()),
        _ => Err(format!("too large: at most {MAX_WHOLE}")),
    }
}

/// As [`whole`], at least 1.
pub fn positive<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    match whole::<u64>(s)? {
        0 => Err("0: at least 1 is expected".into()),
        v => T::try_from(v).map_err(|_| "too large for this machine".into()),
    }
}
