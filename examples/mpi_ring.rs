//! The lattice distributed over MPI ranks in a ring (Calore et al. 2016 §4–5). Run with
//! `cargo run --release --features mpi --example mpi_ring -- …` under `mpiexec -n N`:
//!
//! ```text
//! mpi_ring check MODEL LAYOUT LX LY STEPS [BACKEND [SCHEME [CUT]]]  distributed run vs
//!                            the single-process CPU run on rank 0: populations and moment fields
//! mpi_ring resume MODEL LAYOUT LX LY STEPS [BACKEND [SCHEME [CUT]]]  the same, the first half
//!                            of the steps run on one lattice on rank 0 and scattered over the ranks
//! mpi_ring heat3 CUT STEPS [gpu|hetero LAYOUT] [checkpoint PATH AT | resume PATH]  the 3-D
//!                            finite-difference heat grid cut `AxBxC` (one block a rank): every
//!                            node's value after STEPS steps printed by rank 0, bit for bit (each
//!                            host rank checks the halo nodes it traded against the cut's formula);
//!                            `gpu` runs each block on its rank's GPU, `hetero` split between the
//!                            host and the GPU (three parts a block on threads: cut along z alone),
//!                            the unknowns in LAYOUT (soa, aos, caosoa); `checkpoint` writes one at
//!                            step AT and goes on, `resume` continues from one
//! mpi_ring sparse STEPS [SCHEME]  a cross of two channels (D2Q9 BGK, forced along x and y)
//!                            in a 32 × 32 box in blocks of 8 × 8, only the 7 that hold fluid
//!                            allocated, spread over the ranks (several a rank on threads: a
//!                            sparse domain on up to 7 ranks): the fluid's populations
//!                            and every site's moments on rank 0 bit for bit the single process's
//! ```
//! CUT: the blocks per axis, `AxB` (one a rank; default: the ring of slabs along x, `Nx1`);
//! cuts along y run on CPU and GPU ranks.
//! BACKEND: what each rank runs its slab on, `cpu` (the default: the comparison is bitwise),
//! `gpu` (each rank's GPU, the halo columns passing through the host) or `hetero` /
//! `hetero:M` (the slab's borders on the host, its bulk on the GPU, `M` columns a side or
//! tuned per rank); with a GPU every value is within 1e-12 of the CPU run's, relative to its
//! size or 1, in f64. SCHEME: the ranks' streaming
//! scheme, `two-copy` (the default) or `in-place` (AA; the reference run is two-copy).
//! MODEL: `d2q9` (BGK: channel with a body force around a block that straddles the slab
//! cuts), `d2q9curved` (TRT: the same channel around a disc with curved walls that straddles
//! them; the load on the disc, summed over the ranks, is compared too, within 1e-12 of its
//! largest component), `d2q9mrt` (MRT: lid-driven cavity) or `d2q37` (thermal walls, gravity);
//! LAYOUT: `aos`, `soa`, `csoa8`, `caosoa4`, `caosoa8`. Errors are printed by every rank
//! (exit code 2). The benchmark of the ring and the scaling model is `lbm bench --ranks`.

use std::io::Write;
use std::process::ExitCode;

use lbm::backend::{Gpu, RingJob, build_fd, on_ring};
use lbm::blocks::Cut;
use lbm::blocks::{Blocks, halo_nodes};
use lbm::distributed::DistLattice;
use lbm::domain::GlobalSpec;
use lbm::fd::{FdGrid, FdLayout, FdRun, FdScheme, FdSpec, Rule, Side};
use lbm::fd_scheme;
use lbm::geometry::{Body, MomentumExchange, V3, curved_obstacles};
use lbm::gpu::GpuOptions;
use lbm::group::{Group, RankThreads, Ranks};
use lbm::hetero::SplitChoice;
use lbm::models::{
    D2Q9Bgk, D2Q9BgkParams, D2Q9Mrt, D2Q9MrtParams, D2Q9Trt, D2Q9TrtParams, D2Q37, D2Q37Params,
};
use lbm::mpi_ring;
use lbm::mpi_ring::mpi::topology::{Communicator, SimpleCommunicator};
use lbm::{
    Aos, Block, BoundarySpec, CAoSoa, CSoa, Error, Lattice, Layout, Model, Obstacles, Real, Scheme,
    SlabBackend, Soa, Solver, Wall,
};

/// A test case: the global lattice and an initial state with structure everywhere.
trait Case: Model + Sized {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self>;
    fn initial(x: usize, y: usize) -> Vec<f64>;
    /// A body whose load is compared too, with the point its torque is taken about.
    fn body(_lx: usize, _ly: usize) -> Option<(Body, V3)> {
        None
    }
}

impl Case for D2Q9Bgk {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self> {
        GlobalSpec {
            lx,
            ly,
            lz: 1,
            params: D2Q9BgkParams {
                tau: 0.8,
                ax: 1e-5,
                ay: 0.0,
            },
            boundaries: BoundarySpec {
                solid: Some(block(lx, ly)),
                ..BoundarySpec::channel()
            },
        }
    }
    fn initial(x: usize, y: usize) -> Vec<f64> {
        d2q9_initial(x, y)
    }
}

impl Case for D2Q9Trt {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self> {
        let (disc, _) = Self::body(lx, ly).expect("a disc");
        GlobalSpec {
            lx,
            ly,
            lz: 1,
            params: D2Q9TrtParams {
                tau: 0.8,
                magic: 3.0 / 16.0,
                ax: 1e-5,
                ay: 0.0,
            },
            boundaries: BoundarySpec {
                solid: Some(curved_obstacles(disc)),
                ..BoundarySpec::channel()
            },
        }
    }
    fn initial(x: usize, y: usize) -> Vec<f64> {
        d2q9_initial(x, y)
    }
    /// A disc of radius `LX/4 + 0.1` off the sites, centred near `(LX/2, LY/2)`: it straddles
    /// the cuts of 2 and 3 ranks.
    fn body(lx: usize, ly: usize) -> Option<(Body, V3)> {
        let centre = [lx as f64 / 2.0 - 0.3, ly as f64 / 2.0 + 0.2];
        let disc = Body::circle(centre, lx as f64 / 4.0 + 0.1).ok()?;
        Some((disc, [centre[0], centre[1], 0.0]))
    }
}

/// A solid block over the middle half of the columns, `[LX/4, 3LX/4)`, and the rows
/// `[LY/3, LY/2)`: it straddles the cut of every rank count up to 3 and of the host/device
/// splits.
fn block(lx: usize, ly: usize) -> Obstacles {
    Obstacles::new(move |x, y| (lx / 4..3 * lx / 4).contains(&x) && (ly / 3..ly / 2).contains(&y))
}

/// A D2Q9 initial state with structure everywhere (ρ, u).
fn d2q9_initial(x: usize, y: usize) -> Vec<f64> {
    let (xf, yf) = (x as f64, y as f64);
    vec![
        1.0 + 0.01 * (0.3 * xf + 0.2 * yf).sin(),
        0.05 * (0.4 * yf).sin(),
        0.03 * (0.5 * xf + 0.1 * yf).cos(),
    ]
}

impl Case for D2Q9Mrt {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self> {
        GlobalSpec {
            lx,
            ly,
            lz: 1,
            params: D2Q9MrtParams {
                tau: 0.7,
                s_e: 1.64,
                s_eps: 1.54,
                s_q: 1.2,
                ax: 0.0,
                ay: 0.0,
            },
            boundaries: BoundarySpec::cavity(0.05),
        }
    }
    fn initial(x: usize, y: usize) -> Vec<f64> {
        d2q9_initial(x, y)
    }
}

impl Case for D2Q37 {
    fn spec(lx: usize, ly: usize) -> GlobalSpec<Self> {
        GlobalSpec {
            lx,
            ly,
            lz: 1,
            params: D2Q37Params { tau: 0.9, g: 1e-4 },
            boundaries: BoundarySpec {
                bottom: Some(Wall::Thermal { temperature: 1.05 }),
                top: Some(Wall::Thermal { temperature: 0.95 }),
                ..BoundarySpec::default()
            },
        }
    }
    fn initial(x: usize, y: usize) -> Vec<f64> {
        let (xf, yf) = (x as f64, y as f64);
        vec![
            1.0 + 0.02 * (0.3 * xf).sin() * (0.2 * yf).cos(),
            0.02 * (0.25 * yf).sin(),
            0.01 * (0.4 * xf).cos(),
            1.0 + 0.03 * (0.35 * xf + 0.15 * yf).sin(),
        ]
    }
}

/// The parsed command line.
struct Args {
    command: String,
    model: String,
    layout: String,
    lx: usize,
    ly: usize,
    steps: usize,
    backend: Backend,
    scheme: Scheme,
    /// The blocks per axis (`None`: the ring of slabs along x).
    cut: Option<Cut>,
}

impl Args {
    /// The cut over `ranks` processes.
    fn cut(&self, ranks: usize) -> Cut {
        self.cut.unwrap_or(Cut::along(0, ranks))
    }
}

/// What each rank runs its slab on.
#[derive(Clone, Copy, PartialEq)]
enum Backend {
    Cpu,
    Gpu,
    Hetero(SplitChoice),
}

fn parse() -> Result<Args, String> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 6 {
        return Err(
            "usage: mpi_ring check|resume MODEL LAYOUT LX LY STEPS [cpu|gpu|hetero[:M] \
             [two-copy|in-place [AxB]]]"
                .into(),
        );
    }
    let num = |s: &String| s.parse::<usize>().map_err(|e| format!("`{s}`: {e}"));
    Ok(Args {
        command: a[0].clone(),
        model: a[1].clone(),
        layout: a[2].clone(),
        lx: num(&a[3])?,
        ly: num(&a[4])?,
        steps: num(&a[5])?,
        backend: match a.get(6).map(String::as_str) {
            None | Some("cpu") => Backend::Cpu,
            Some("gpu") => Backend::Gpu,
            Some("hetero") => Backend::Hetero(SplitChoice::Auto),
            Some(other) => match other.strip_prefix("hetero:").map(str::parse) {
                Some(Ok(m)) => Backend::Hetero(SplitChoice::Columns(m)),
                _ => {
                    return Err(format!(
                        "unknown backend `{other}` (cpu, gpu, hetero, hetero:M)"
                    ));
                }
            },
        },
        scheme: match a.get(7).map(String::as_str) {
            None | Some("two-copy") => Scheme::TwoCopy,
            Some("in-place") => Scheme::InPlace,
            Some(other) => return Err(format!("unknown scheme `{other}` (two-copy, in-place)")),
        },
        cut: a.get(8).map(|c| c.parse::<Cut>()).transpose()?,
    })
}

type Outcome = Result<bool, String>;

fd_scheme! {
    /// Heat diffusion with a mixed third derivative ∂³T/∂x∂y∂z, whose stencil reaches the
    /// corners of the 3 × 3 × 3 cube around a node: what blocks cut along three axes trade.
    pub scheme Heat3 {
        dim = 3;
        fields { T }
        params { alpha: real, beta: real }
        operators {
            lap = laplacian(order = 2, stencil = [1, -2, 1]);
            d = derivative(1, order = 2, stencil = [-1/2, 0, 1/2]);
        }
        rates { T = alpha * lap(T) + beta * d(d(d(T, x), y), z); }
    }
}

/// `heat3 CUT STEPS [gpu|hetero LAYOUT] [checkpoint PATH AT | resume PATH]` (the arguments
/// after `heat3`): the 3-D heat grid, periodic along x, walls of every rule along y and z,
/// cut `CUT` over the ranks, on the host (one block a rank, which checks the halo nodes it
/// traded against the cut's formula), each rank's GPU, or split (three parts a block, on
/// threads of each rank: its first and last planes along z on the host, its bulk on the
/// GPU), the unknowns in `LAYOUT` (`soa`, `aos`, `caosoa`) on every part; rank 0 prints the
/// bits of every node's value after STEPS steps.
fn heat3(world: &SimpleCommunicator, a: &[String]) -> Outcome {
    let usage = "usage: mpi_ring heat3 CUT STEPS [gpu|hetero LAYOUT] [checkpoint PATH AT | \
                 resume PATH]";
    let (Some(cut), Some(steps)) = (a.first(), a.get(1)) else {
        return Err(usage.into());
    };
    let cut: Cut = cut.parse()?;
    let steps: u64 = steps.parse().map_err(|e| format!("`{steps}`: {e}"))?;
    let (device, rest) = match (a.get(2).map(String::as_str), a.get(3).map(String::as_str)) {
        (Some(backend @ ("gpu" | "hetero")), Some(layout)) => {
            let layout = match layout {
                "soa" => FdLayout::Soa,
                "aos" => FdLayout::Aos,
                "caosoa" => FdLayout::Clustered,
                _ => return Err(usage.into()),
            };
            (Some((backend == "hetero", layout)), &a[4..])
        }
        _ => (None, &a[2..]),
    };
    let nodes = [12, 9, 18];
    let spec = || FdSpec::<Heat3> {
        nodes,
        h: 0.1,
        params: Heat3Params {
            alpha: 1.0,
            beta: 0.05,
        },
        sides: vec![
            Side::Periodic,
            Side::Periodic,
            Side::Wall(vec![Rule::ZeroGradient]),
            Side::Wall(vec![Rule::Value(1.0)]),
            Side::Wall(vec![Rule::Extrapolated]),
            Side::Wall(vec![Rule::Value(0.5)]),
        ],
    };
    let blocks = Blocks::even(nodes, cut);
    let start = |x: [f64; 3]| {
        (2.0 * std::f64::consts::PI * x[0]).sin() * x[1] + x[2] * x[2] + x[0] * x[1] * x[2]
    };
    let dt = 1e-3;
    // Marches `g` (set to the start) as `rest` says, and prints on the first member.
    let march = |g: &mut dyn FdRun| -> Result<(), String> {
        let fail = |e: Error| e.to_string();
        g.set_unknown(0, &start).map_err(fail)?;
        match (rest.first().map(String::as_str), rest.get(1), rest.get(2)) {
            (None, ..) => {}
            (Some("checkpoint"), Some(path), Some(at)) => {
                let at: u64 = at.parse().map_err(|e| format!("`{at}`: {e}"))?;
                g.advance(at, dt).map_err(fail)?;
                g.checkpoint(std::path::Path::new(path)).map_err(fail)?;
            }
            (Some("resume"), Some(path), None) => {
                g.resume(std::path::Path::new(path)).map_err(fail)?;
            }
            _ => return Err(usage.into()),
        }
        g.advance(steps.saturating_sub(g.steps()), dt)
            .map_err(fail)?;
        if let Some(values) = g.gather(0).map_err(fail)? {
            let bits: Vec<String> = values
                .iter()
                .map(|v| format!("{:016x}", v.to_bits()))
                .collect();
            println!(
                "heat3 {:?} nodes, {} steps: {}",
                nodes,
                g.steps(),
                bits.join(" ")
            );
        }
        Ok(())
    };
    let Some((split, layout)) = device else {
        let FdSpec {
            nodes,
            h,
            params,
            sides,
        } = spec();
        let group = Box::new(Ranks::new(world));
        let mut g = FdGrid::<Heat3, f64>::on_blocks(nodes, h, params, sides, group, blocks)
            .map_err(|e| e.to_string())?;
        march(&mut g)?;
        // What each block traded is the engine's count for its cut.
        let l = g.block().map(|r| r.len());
        let want = halo_nodes(l, cut, Heat3::REACH, [true; 3]);
        if g.halo_nodes() != want {
            println!(
                "DIFFERENT: block {:?} traded {} halo nodes, the cut's formula says {want}",
                g.block(),
                g.halo_nodes()
            );
            return Ok(false);
        }
        return Ok(true);
    };
    let gpu = Gpu::open(GpuOptions {
        node_rank: mpi_ring::node_rank(world),
        ..GpuOptions::default()
    });
    let backend = match split {
        true => lbm::backend::Backend::Split {
            gpu,
            choice: SplitChoice::Auto,
        },
        false => lbm::backend::Backend::Device {
            gpu,
            layout: lbm::LayoutKind::Soa,
        },
    };
    let parts = vec![lbm::backend::fd_parts(&backend); world.size() as usize];
    let run = |[group]: [RankThreads; 1]| -> Result<(), String> {
        let built =
            build_fd::<Heat3, f64>(Box::new(group), spec(), blocks.clone(), layout, &backend);
        march(&mut *built.map_err(|e| e.to_string())?)
    };
    let runs = RankThreads::run(world, &parts, run).map_err(|e| e.to_string())?;
    runs.into_iter().collect::<Result<Vec<()>, String>>()?;
    Ok(true)
}

/// `sparse STEPS [SCHEME]` (the arguments after `sparse`): the cross of two channels 6 sites
/// wide (y in 9..15 and x in 9..15) in a periodic 32 × 32 box, the rest solid, in blocks of
/// 8 × 8 of which the 7 within a site of the fluid exist, spread over the ranks (several a
/// rank on threads, [`RankThreads`]); rank 0 compares the
/// gathered fluid populations and moments with one process's, bit for bit.
fn cross(world: &SimpleCommunicator, a: &[String]) -> Outcome {
    let usage = "usage: mpi_ring sparse STEPS [two-copy|in-place]";
    let steps: u64 = a.first().and_then(|s| s.parse().ok()).ok_or(usage)?;
    let scheme = match a.get(1).map(String::as_str) {
        None | Some("two-copy") => Scheme::TwoCopy,
        Some("in-place") => Scheme::InPlace,
        Some(_) => return Err(usage.into()),
    };
    let arm = 9..15;
    let solid = move |x: usize, y: usize| !arm.contains(&x) && !arm.contains(&y);
    let spec = GlobalSpec::<D2Q9Bgk> {
        lx: 32,
        ly: 32,
        lz: 1,
        params: D2Q9BgkParams {
            tau: 0.8,
            ax: 1e-5,
            ay: 2e-5,
        },
        boundaries: BoundarySpec {
            solid: Some(Obstacles::new(solid.clone())),
            ..BoundarySpec::periodic()
        },
    };
    let block = [8, 8, 1];
    let ranks = world.size();
    let counts =
        lbm::domain::sparse_spread(&spec, block, ranks as usize).map_err(|e| e.to_string())?;
    let blocks = lbm::blocks::Decomposition::Sparse(block);
    let run = |[group]: [RankThreads; 1]| -> Result<bool, Error> {
        let mut dist =
            DistLattice::<D2Q9Bgk, Soa, f64>::new(Box::new(group), spec.clone(), blocks, scheme)?;
        dist.set_equilibrium_at(&d2q9_initial)?;
        dist.advance(steps)?;
        let Some(mut gathered) = dist.gather()? else {
            return Ok(true);
        };
        let mut single = spec.lattice::<Soa, f64>(Scheme::TwoCopy)?;
        single.set_equilibrium(d2q9_initial)?;
        single.advance(steps)?;
        // The fluid's populations, then every site's moments (solid: 0).
        let bits = |lat: &mut Lattice<D2Q9Bgk, Soa, f64>| -> Result<Vec<u64>, Error> {
            let f = lat.local_populations()?;
            let fluid = (f.chunks_exact(D2Q9Bgk::Q).enumerate())
                .filter(|&(s, _)| !solid(s / 32, s % 32))
                .flat_map(|(_, f)| f.iter().map(|v| v.to_bits()));
            let moments = lat.local_moments()?.into_iter().flatten().map(f64::to_bits);
            Ok(fluid.chain(moments).collect())
        };
        let same = bits(&mut gathered)? == bits(&mut single)?;
        println!(
            "sparse cross on {ranks} ranks ({}): {}",
            dist.describe(),
            if same {
                "bitwise identical"
            } else {
                "DIFFERENT"
            }
        );
        Ok(same)
    };
    let runs = RankThreads::run(world, &counts, run).map_err(|e| e.to_string())?;
    runs.into_iter()
        .try_fold(true, |all, same| Ok(all && same?))
        .map_err(|e: Error| e.to_string())
}

fn main() -> ExitCode {
    let code = match mpi_ring::init() {
        Ok(universe) => {
            let world = universe.world();
            let args: Vec<String> = std::env::args().skip(1).collect();
            let outcome = match args.split_first() {
                Some((heat, rest)) if heat == "heat3" => heat3(&world, rest),
                Some((sparse, rest)) if sparse == "sparse" => cross(&world, rest),
                _ => parse().and_then(|a| by_layout(&world, &a)),
            };
            let code = report(&world, outcome);
            drop(universe);
            code
        }
        Err(e) => report_error(0, 1, &e.to_string()),
    };
    ExitCode::from(code)
}

fn report(world: &SimpleCommunicator, outcome: Outcome) -> u8 {
    match outcome {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => report_error(world.rank(), world.size(), &e),
    }
}

/// Prints the error with one write, so that the lines of several ranks do not interleave.
fn report_error(rank: i32, size: i32, e: &str) -> u8 {
    let line = format!("rank {rank} of {size}: error: {e}\n");
    // Nothing better to do if stderr itself fails: the exit code still says it.
    let _ = std::io::stderr().write_all(line.as_bytes());
    2
}

fn by_layout(world: &SimpleCommunicator, a: &Args) -> Outcome {
    match a.layout.as_str() {
        "aos" => by_model::<Aos>(world, a),
        "soa" => by_model::<Soa>(world, a),
        "csoa8" => by_model::<CSoa<8>>(world, a),
        "caosoa4" => by_model::<CAoSoa<4>>(world, a),
        "caosoa8" => by_model::<CAoSoa<8>>(world, a),
        other => Err(format!(
            "unknown layout `{other}` (aos, soa, csoa8, caosoa4, caosoa8)"
        )),
    }
}

fn by_model<L: Layout>(world: &SimpleCommunicator, a: &Args) -> Outcome {
    match a.model.as_str() {
        "d2q9" => by_command::<D2Q9Bgk, L>(world, a),
        "d2q9curved" => by_command::<D2Q9Trt, L>(world, a),
        "d2q9mrt" => by_command::<D2Q9Mrt, L>(world, a),
        "d2q37" => by_command::<D2Q37, L>(world, a),
        other => Err(format!(
            "unknown model `{other}` (d2q9, d2q9curved, d2q9mrt, d2q37)"
        )),
    }
}

fn by_command<M: Case, L: Layout>(world: &SimpleCommunicator, a: &Args) -> Outcome {
    let gpu = || {
        Gpu::open(GpuOptions {
            node_rank: mpi_ring::node_rank(world),
            ..GpuOptions::default()
        })
    };
    let backend = match a.backend {
        Backend::Cpu => lbm::backend::Backend::Host,
        Backend::Gpu => lbm::backend::Backend::Device {
            gpu: gpu(),
            layout: L::KIND,
        },
        Backend::Hetero(choice) => lbm::backend::Backend::Split { gpu: gpu(), choice },
    };
    let group = Box::new(Ranks::new(world));
    let cut = a.cut(group.ranks());
    on_ring::<M, L, f64, _>(
        group,
        M::spec(a.lx, a.ly),
        cut.into(),
        a.scheme,
        &backend,
        Check(a),
    )
    .map_err(|e| e.to_string())
}

/// The run of [`run`] on a ring of any backend.
struct Check<'a>(&'a Args);

impl<M: Case> RingJob<M, f64> for Check<'_> {
    type Output = bool;

    fn run<L: Layout, P: SlabBackend<Model = M, Real = f64> + 'static>(
        self,
        ring: DistLattice<M, L, f64, P>,
    ) -> Result<bool, Error> {
        run(ring, self.0)
    }
}

/// Runs `a.command` on the distributed lattice `dist` and compares it with one process.
fn run<M: Case, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>>(
    mut dist: DistLattice<M, L, T, P>,
    a: &Args,
) -> Result<bool, Error> {
    let first = match a.command.as_str() {
        "check" => {
            dist.set_equilibrium_at(&M::initial)?;
            0
        }
        "resume" => {
            let half = a.steps / 2;
            let single = match dist.group().rank() {
                0 => Some(single_run::<M, L, T>(a, half)?),
                _ => None,
            };
            dist.scatter(single.as_ref())?;
            half
        }
        other => {
            return Err(
                lbm::LbmError::Shape(format!("unknown command `{other}` (check, resume)")).into(),
            );
        }
    };
    for _ in first..a.steps {
        dist.step()?;
    }
    let load = match M::body(a.lx, a.ly) {
        Some((body, centre)) => {
            let spec = M::spec(a.lx, a.ly);
            let size = [a.lx, a.ly, 1];
            let nodes = dist.local_box();
            let mine = MomentumExchange::on_box::<M>(&body, &spec.boundaries, size, centre, &nodes)
                .of(&mut dist)?;
            let all = dist
                .group()
                .sum(mine.force.into_iter().chain(mine.torque).collect());
            Some(all)
        }
        None => None,
    };
    compare(&dist, a, load)
}

/// The load on the case's body in the single-process run (force, then torque), and how far
/// the distributed run's, `load`, lies from it, relative to the load's largest component (the
/// ranks add their links in another order: a component near zero differs by round-off of the
/// others' size).
fn load_difference<M: Case, L: Layout, T: Real>(
    single: &Lattice<M, L, T>,
    a: &Args,
    load: &[f64],
) -> Result<f64, Error> {
    let Some((body, centre)) = M::body(a.lx, a.ly) else {
        return Ok(0.0);
    };
    let spec = M::spec(a.lx, a.ly);
    let e = MomentumExchange::new::<M>(&body, &spec.boundaries, [a.lx, a.ly, 1], centre);
    let want = e.on(single)?;
    let want: Vec<f64> = want.force.into_iter().chain(want.torque).collect();
    let size = want.iter().fold(0.0, |m: f64, w| m.max(w.abs()));
    Ok(want
        .iter()
        .zip(load)
        .map(|(w, g)| (g - w).abs() / size)
        .fold(0.0, f64::max))
}

/// All populations in logical order, then every moment field.
fn state<M: Model, L: Layout, T: Real>(lat: &Lattice<M, L, T>) -> Result<Vec<f64>, Error> {
    let mut out: Vec<f64> = lat
        .local_populations()?
        .iter()
        .map(|v| v.to_f64())
        .collect();
    for name in M::MOMENT_NAMES {
        out.extend(lat.moment_field(name)?);
    }
    Ok(out)
}

/// The single-process lattice after `steps` steps.
fn single_run<M: Case, L: Layout, T: Real>(
    a: &Args,
    steps: usize,
) -> Result<Lattice<M, L, T>, Error> {
    let mut single = M::spec(a.lx, a.ly).lattice::<L, T>(Scheme::TwoCopy)?;
    single.set_equilibrium(M::initial)?;
    for _ in 0..steps {
        single.step();
    }
    Ok(single)
}

/// Gathers `dist` on rank 0 and compares it with the single-process run of `a.steps` steps
/// (collective; `true` on the other ranks): bit by bit, or within 1e-12 with GPU ranks.
fn compare<M: Case, L: Layout, T: Real, P: SlabBackend<Model = M, Real = T>>(
    dist: &DistLattice<M, L, T, P>,
    a: &Args,
    load: Option<Vec<f64>>,
) -> Result<bool, Error> {
    let mass = dist.totals()?.mass;
    let Some(gathered) = dist.gather()? else {
        return Ok(true);
    };
    let single = single_run::<M, L, T>(a, a.steps)?;
    let (got, want) = (state(&gathered)?, state(&single)?);
    let gpu = a.backend != Backend::Cpu;
    let tol = if gpu { 1e-12 } else { 0.0 };
    let off = |g: f64, w: f64| (g - w).abs() / w.abs().max(1.0);
    let worst = got
        .iter()
        .zip(&want)
        .map(|(g, w)| off(*g, *w))
        .fold(0.0, f64::max);
    let differ = got
        .iter()
        .zip(&want)
        .filter(|(g, w)| {
            let o = off(**g, **w);
            g.to_bits() != w.to_bits() && (o.is_nan() || o > tol)
        })
        .count();
    let what = format!(
        "{} {} {}×{}, {} steps, {} ranks on {}",
        M::NAME,
        dist.layout_name(),
        a.lx,
        a.ly,
        a.steps,
        dist.decomposition().count(),
        match a.backend {
            Backend::Cpu => "cpu".to_string(),
            Backend::Gpu => "gpu".to_string(),
            Backend::Hetero(_) => format!("hetero ({})", dist.slab().describe()),
        }
    );
    let how = if gpu {
        format!("within {tol:e} (largest difference {worst:.1e})")
    } else {
        "bitwise identical".into()
    };
    let load_off = match &load {
        Some(l) => load_difference(&single, a, l)?,
        None => 0.0,
    };
    if load_off > 1e-12 {
        println!("DIFFERENT: {what}: the load on the body differs by {load_off:.1e} (relative)");
        Ok(false)
    } else if differ == 0 && got.len() == want.len() {
        let loads = match load {
            Some(l) => format!(
                "; the load on the body within {load_off:.1e} of the single process's (force \
                 {:.6e}, {:.6e})",
                l[0], l[1]
            ),
            None => String::new(),
        };
        println!(
            "{how}: {what}: {} values (populations and moment fields); mass {mass} (single \
             process {}){loads}",
            got.len(),
            single.mass()
        );
        Ok(true)
    } else {
        println!(
            "DIFFERENT: {what}: {differ} of {} values differ (largest {worst:.1e})",
            want.len()
        );
        Ok(false)
    }
}
