//! The table of what runs where (the guide's *What runs where*): every boundary rule, the loads
//! on bodies and the finite differences, on each backend — the CPU, CPU ranks, the GPU, GPU
//! ranks (blocks on threads of one process, the ranks' code) and the host/device split — in
//! both streaming schemes. The test reads the table from the guide and builds and steps each
//! cell: a cell that says `both` must run in the two-copy and the in-place scheme, one that
//! says ``refused: `phrase` `` must be refused, in both, with a message that contains the
//! phrase. So a new refusal fails the suite until the table says why, and a refusal lifted
//! until the table says so.

use crate::gpu_support;

use lbm::backend::{Backend, Gpu, build};
use lbm::blocks::{Blocks, Cut};
use lbm::domain::GlobalSpec;
use lbm::fd::FdLayout;
use lbm::fd_cavity::FdCavity;
use lbm::group::{OneProcess, Threads};
use lbm::hetero::SplitChoice;
use lbm::models::*;
use lbm::{BoundarySpec, Interpolation, LayoutKind, Model, Obstacles, Scheme, Soa, Solver, Wall};

/// The backends, in the table's column order.
const BACKENDS: [&str; 5] = ["CPU", "CPU ranks", "GPU", "GPU ranks", "split"];

/// What a cell of the table says.
#[derive(Debug)]
enum Cell {
    /// Runs in both schemes.
    Both,
    /// Refused, with a message containing the phrase.
    Refused(String),
}

/// The table's rows: the rule and its cells, one per backend.
fn table() -> Vec<(String, Vec<Cell>)> {
    let guide = include_str!("../../../docs/guide.md");
    let start = guide
        .find("### What runs where")
        .expect("the guide has a section *What runs where*");
    let rows = guide[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2);
    rows.map(|l| {
        let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
        let parse = |c: &str| match c {
            "both" => Cell::Both,
            c => Cell::Refused(
                c.strip_prefix("refused: `")
                    .and_then(|c| c.strip_suffix('`'))
                    .unwrap_or_else(|| panic!("cell `{c}`: say `both` or refused: `phrase`"))
                    .to_string(),
            ),
        };
        (
            cells[0].to_string(),
            cells[1..].iter().map(|c| parse(c)).collect(),
        )
    })
    .collect()
}

/// A rule's lattice: a D2Q9 channel 24 × 16 with what `rule` names (a D2Q37 one with thermal
/// walls, a D2Q5 one with a scalar's walls), and the boundary sites whose loads it measures.
enum Case {
    D2q9(GlobalSpec<D2Q9Bgk>),
    D2q37(GlobalSpec<D2Q37>),
    D2q5(GlobalSpec<D2Q5AdvectionDiffusion>),
    Fd,
}

/// The obstacle of the rules with a body: a square across the ranks' and the split's cuts.
fn square(x: usize, y: usize) -> bool {
    (9..15).contains(&x) && (5..10).contains(&y)
}

/// The lattice of `rule`, or `None` for a rule the test does not know (add it here).
fn case(rule: &str) -> Option<(Case, bool)> {
    let d2q9 = |boundaries| {
        Case::D2q9(GlobalSpec {
            lx: 24,
            ly: 16,
            lz: 1,
            params: D2Q9BgkParams {
                tau: 0.8,
                ax: 1e-5,
                ay: 0.0,
            },
            boundaries,
        })
    };
    let channel = |solid| BoundarySpec {
        solid,
        ..BoundarySpec::channel()
    };
    let curved = |how| {
        Obstacles::new(square)
            .with_wall_distance(|_, _| Some(0.7))
            .with_wall_velocity(|p| [0.0, 0.01 * (p[0] - 12.0), 0.0])
            .with_interpolation(how)
    };
    let inflow = |left| BoundarySpec {
        left: Some(left),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        ..BoundarySpec::channel()
    };
    Some(match rule {
        "half-way bounce-back" => (d2q9(channel(Some(Obstacles::new(square)))), false),
        "moving walls" => (d2q9(BoundarySpec::cavity(0.05)), false),
        "curved walls, linear" => (d2q9(channel(Some(curved(Interpolation::Linear)))), false),
        "curved walls, quadratic" => (d2q9(channel(Some(curved(Interpolation::Quadratic)))), false),
        "Zou–He velocity and pressure" => (
            d2q9(inflow(Wall::ZouHeVelocity {
                velocity: [0.03, 0.0, 0.0],
            })),
            false,
        ),
        "parabolic inflow" => (
            d2q9(inflow(Wall::ParabolicInflow {
                peak: [0.04, 0.0, 0.0],
            })),
            false,
        ),
        "extrapolated outflow" => (d2q9(gpu_support::open_box()), false),
        "free slip" => (
            d2q9(BoundarySpec {
                bottom: Some(Wall::NO_SLIP),
                top: Some(Wall::FreeSlip),
                ..BoundarySpec::periodic()
            }),
            false,
        ),
        "thermal walls" => (
            Case::D2q37(GlobalSpec {
                lx: 24,
                ly: 16,
                lz: 1,
                params: D2Q37Params { tau: 0.8, g: 1e-5 },
                boundaries: BoundarySpec {
                    bottom: Some(Wall::Thermal { temperature: 1.02 }),
                    top: Some(Wall::Thermal { temperature: 0.98 }),
                    ..BoundarySpec::default()
                },
            }),
            false,
        ),
        "a scalar's walls" => (
            Case::D2q5(GlobalSpec {
                lx: 24,
                ly: 16,
                lz: 1,
                params: D2Q5AdvectionDiffusionParams {
                    tau: 0.7,
                    ux: 0.05,
                    uy: 0.0,
                },
                boundaries: BoundarySpec {
                    bottom: Some(Wall::Dirichlet { value: 1.0 }),
                    top: Some(Wall::Dirichlet { value: 0.0 }),
                    ..BoundarySpec::periodic()
                },
            }),
            false,
        ),
        "loads by momentum exchange" => (d2q9(channel(Some(curved(Interpolation::Linear)))), true),
        "finite differences, every layout" => (Case::Fd, false),
        _ => return None,
    })
}

/// Builds `spec` on `backend` over `members` members of a group cut along x (one process
/// where 1), steps it and, for `loads`, reads the walls' populations at the boundary sites of
/// the square it holds; the first member's error, if any.
fn runs<M: Model>(
    spec: &GlobalSpec<M>,
    backend: &Backend,
    members: usize,
    scheme: Scheme,
    loads: bool,
) -> Result<(), String> {
    let initial = gpu_support::initial::<M>(spec.size());
    let member = |group: Box<dyn lbm::group::Carrier<f64>>| -> Result<(), lbm::Error> {
        let cut = Cut::along(0, members).into();
        let mut lat = build::<M, Soa, f64>(group, spec.clone(), cut, scheme, backend)?;
        lat.set_equilibrium_at(&initial)?;
        lat.advance(3)?;
        if loads {
            let xs = lat.local_box()[0].clone();
            let sites: Vec<[usize; 3]> = (xs.flat_map(|x| (0..spec.ly).map(move |y| (x, y))))
                .filter(|&(x, y)| !square(x, y) && (8..16).contains(&x) && (4..11).contains(&y))
                .filter(|&(x, y)| {
                    square(x + 1, y) || square(x - 1, y) || square(x, y + 1) || square(x, y - 1)
                })
                .map(|(x, y)| [x, y, 0])
                .collect();
            lat.exchanged(&sites)?;
        }
        Ok(())
    };
    first_error(members, |t| match t {
        Some(t) => member(Box::new(t)),
        None => member(Box::new(OneProcess)),
    })
}

/// `member` run by each of `n` members of a group (one process where 1, given `None`; else
/// threads): the first member's error, in words.
fn first_error(
    n: usize,
    member: impl Fn(Option<Threads>) -> Result<(), lbm::Error> + Sync,
) -> Result<(), String> {
    let results = match n {
        1 => vec![member(None)],
        n => Threads::run(n, |t| member(Some(t))),
    };
    let first = results.into_iter().next().expect("one member at least");
    first.map_err(|e| e.to_string())
}

/// The finite-difference cavity on `backend` over `members` members cut along y (three a
/// block on the split), in every layout, stepped.
fn fd_runs(backend: &Backend, members: usize) -> Result<(), String> {
    let c = FdCavity::new(33, 100.0);
    let parts = lbm::backend::fd_parts(backend);
    for layout in [FdLayout::Soa, FdLayout::Aos, FdLayout::Clustered] {
        let member = |group: Box<dyn lbm::group::Transfers<f64>>| -> Result<(), lbm::Error> {
            let blocks = Blocks::even(c.nodes(), Cut([1, members, 1]));
            let mut g = c.build::<f64>(group, blocks, layout, backend)?;
            g.advance(3, c.time_step())
        };
        first_error(members * parts, |t| match t {
            Some(t) => member(Box::new(t)),
            None => member(Box::new(OneProcess)),
        })?;
    }
    Ok(())
}

#[test]
fn every_cell_of_the_table_of_what_runs_where_holds() {
    let Some(ctx) = gpu_support::context() else {
        return;
    };
    let gpu = Gpu::from(ctx);
    let device = Backend::Device {
        gpu: gpu.clone(),
        layout: LayoutKind::Soa,
    };
    let split = Backend::Split {
        gpu,
        choice: SplitChoice::Columns(4),
    };
    let columns = [
        (Backend::Host, 1),
        (Backend::Host, 3),
        (device.clone(), 1),
        (device, 2),
        (split, 1),
    ];
    let rows = table();
    assert!(rows.len() >= 12, "the table has {} rows", rows.len());
    for (rule, cells) in &rows {
        let (case, loads) = case(rule).unwrap_or_else(|| {
            panic!("the table's rule `{rule}` is not one the test knows: add it to `case`")
        });
        assert_eq!(cells.len(), BACKENDS.len(), "{rule}");
        for ((backend, members), (cell, name)) in columns.iter().zip(cells.iter().zip(BACKENDS)) {
            for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
                let got = match &case {
                    Case::D2q9(s) => runs(s, backend, *members, scheme, loads),
                    Case::D2q37(s) => runs(s, backend, *members, scheme, loads),
                    Case::D2q5(s) => runs(s, backend, *members, scheme, loads),
                    Case::Fd if scheme == Scheme::TwoCopy => fd_runs(backend, *members),
                    Case::Fd => continue,
                };
                let what = format!("{rule} on {name}, {}", scheme.name());
                match (cell, got) {
                    (Cell::Both, Ok(())) => {}
                    (Cell::Both, Err(e)) => {
                        panic!("{what}: the table says it runs, it is refused: {e}")
                    }
                    (Cell::Refused(why), Err(e)) => {
                        assert!(e.contains(why.as_str()), "{what}: refused otherwise: {e}")
                    }
                    (Cell::Refused(why), Ok(())) => {
                        panic!("{what}: the table says refused (`{why}`), it runs: say so")
                    }
                }
            }
        }
    }
}
