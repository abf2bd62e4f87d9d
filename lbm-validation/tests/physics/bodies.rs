//! Bodies placed from shapes (`lbm::geometry`) in a force-driven periodic channel (D2Q9):
//! at the steady state the walls and a disc take from the fluid, by momentum exchange (Ladd
//! 1994), exactly the momentum the body force gives it each step, `Σ_fluid ρ a`, over two
//! steps (the exchange alternates about its mean from one step to the next, by 3·10⁻⁵ here:
//! the populations' staggered modes, excited where the flow meets the disc); the disc,
//! centred between the walls, feels no lift and no torque; with half-way and with
//! interpolated walls. Curved walls, at rest (a pipe) and moving (circular Couette flow),
//! converge to the exact profiles with the second power of the resolution, and the torque on
//! the turning cylinder is the exact one within 0.2 %.

use lbm::geometry::{Body, MomentumExchange, curved_obstacles, obstacles};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams};
use lbm::{BoundarySpec, CAoSoa, Interpolation, Lattice, Obstacles, Scheme};

#[test]
fn the_walls_and_a_disc_take_the_momentum_the_body_force_gives() {
    let (lx, ly, a) = (32, 40, 1e-6);
    // Rows 0–3 and 37–39 solid: the channel's fluid is rows 4–36, symmetric about y = 20.
    let walls = Body::union(vec![
        Body::cuboid([-1.0, -1.0, -1.0], [lx as f64, 3.2, 1.0]).unwrap(),
        Body::cuboid([-1.0, 36.8, -1.0], [lx as f64, ly as f64, 1.0]).unwrap(),
    ]);
    let disc = Body::circle([16.0, 20.0], 5.0).unwrap();
    let both = Body::union(vec![walls.clone(), disc.clone()]);
    let size = [lx, ly, 1];
    let centre = [16.0, 20.0, 0.0];
    // Half-way and interpolated walls (the walls at y = 3.2 and 36.8, the disc's circle), in
    // both schemes.
    for (scheme, curved) in [
        (Scheme::TwoCopy, false),
        (Scheme::InPlace, false),
        (Scheme::TwoCopy, true),
        (Scheme::InPlace, true),
    ] {
        let solid = match curved {
            true => curved_obstacles(both.clone()),
            false => obstacles(both.clone()),
        };
        let spec = BoundarySpec {
            solid: Some(solid),
            ..BoundarySpec::periodic()
        };
        let (on_walls, on_disc) = (
            MomentumExchange::new::<D2Q9Bgk>(&walls, &spec, size, centre),
            MomentumExchange::new::<D2Q9Bgk>(&disc, &spec, size, centre),
        );
        // Every row of the walls' surface: 3 links a site (D2Q9) over 2 × 32 sites.
        assert_eq!(on_walls.len(), 2 * 3 * lx);
        assert!(on_disc.len() > 40, "{}", on_disc.len());
        let params = D2Q9BgkParams {
            tau: 0.8,
            ax: a,
            ay: 0.0,
        };
        let mut lat =
            Lattice::<D2Q9Bgk, CAoSoa<8>, f64>::new(lx, ly, params, scheme, &spec).unwrap();
        // About 27 of the slowest mode's decay times, H²/(π²ν) ≈ 1,100 steps.
        lat.run(30_000, 1000).unwrap();
        let (walls, disc) = (on_walls.on(&lat).unwrap(), on_disc.on(&lat).unwrap());
        lat.step();
        let next = on_walls.on(&lat).unwrap().force[0] + on_disc.on(&lat).unwrap().force[0];
        let given = lat.mass() * a;
        let taken = (walls.force[0] + disc.force[0] + next) / 2.0;
        assert!(
            (taken / given - 1.0).abs() < 1e-6,
            "{scheme:?}, curved {curved}: the walls and the disc take {taken:e}, the force gives \
             {given:e}"
        );
        assert!(disc.force[0] > 0.2 * given, "{scheme:?}: {disc:?}");
        assert!(
            disc.force[1].abs() < 1e-9 * disc.force[0]
                && disc.torque[2].abs() < 1e-9 * disc.force[0],
            "{scheme:?}: lift or torque on a symmetric disc: {disc:?}"
        );
        // The walls pull the fluid back as much above as below: no net force across.
        assert!(walls.force[1].abs() < 1e-9 * walls.force[0], "{walls:?}");
    }
}

/// Hagen–Poiseuille flow in a circular pipe along x (D3Q19 TRT, driven by a body force `a`):
/// `u_x(r) = a (R² − r²) / 4ν`. The pipe's wall cuts the lattice's links at every distance
/// from the sites, so half-way bounce-back makes it a staircase, first-order accurate; with
/// the wall where the circle crosses each link (interpolated bounce-back, Bouzidi et al.
/// 2001) the L2 error falls with the second power of the resolution (2.3 measured over three
/// radii, each twice the last; the staircase 1.5, its error 16 times the curved wall's at
/// R = 8.6); with the quadratic interpolation as well (2.1 over the two coarser radii; the
/// pipe is periodic in x, so its links also read across the periodic edge). In the two-copy
/// scheme; the in-place one runs both walls bitwise alike (`lbm-runtime`'s lattice tests, and
/// here the quadratic walls of the pipe over a few steps).
#[test]
fn pipe_flow_converges_to_second_order_with_curved_walls() {
    use lbm::models::{D3Q19Trt, D3Q19TrtParams};
    let radii = [4.3, 8.6, 17.2];
    // `None`: the staircase (half-way bounce-back).
    let error = |radius: f64, how: Option<Interpolation>| {
        // A multiple of the layout's cluster width, with two rows of wall outside the pipe.
        let n = ((2.0 * radius).ceil() as usize + 4).next_multiple_of(8);
        let centre = (n as f64 - 1.0) / 2.0 + 0.17;
        let r2 =
            move |y: usize, z: usize| (y as f64 - centre).powi(2) + (z as f64 - centre).powi(2);
        let pipe = Obstacles::voxels(move |_, y, z| r2(y, z) > radius * radius);
        // From a fluid site `p` along `c` (its far end outside the circle): `|p + q c| = R`.
        let crossing = move |[_, y, z]: [usize; 3], c: [i32; 3]| {
            let (py, pz) = (y as f64 - centre, z as f64 - centre);
            let (cy, cz) = (f64::from(c[1]), f64::from(c[2]));
            let (a, b) = (cy * cy + cz * cz, py * cy + pz * cz);
            let q = (-b + (b * b - a * (py * py + pz * pz - radius * radius)).sqrt()) / a;
            (q > 0.0 && q <= 1.0).then_some(q)
        };
        let pipe = pipe.with_interpolation(how.unwrap_or_default());
        let spec = periodic_around(pipe, how.map(|_| crossing));
        let (tau, u_max) = (0.8, 0.01);
        let nu = (tau - 0.5) / 3.0;
        let ax = 4.0 * nu * u_max / (radius * radius);
        let params = D3Q19TrtParams {
            tau,
            magic: 3.0 / 16.0,
            ax,
            ay: 0.0,
            az: 0.0,
        };
        let size = [4, n, n];
        if how == Some(Interpolation::Quadratic) {
            // In place, the same bits (the links two sites long across the periodic edge).
            let state = |scheme| {
                let mut lat =
                    Lattice::<D3Q19Trt, CAoSoa<8>, f64>::with_size(size, params, scheme, &spec)
                        .unwrap();
                lat.steps(7);
                ["rho", "ux"].map(|m| lat.moment_field(m).unwrap())
            };
            assert!(
                state(Scheme::InPlace) == state(Scheme::TwoCopy),
                "quadratic walls in place"
            );
        }
        let mut lat =
            Lattice::<D3Q19Trt, CAoSoa<8>, f64>::with_size(size, params, Scheme::TwoCopy, &spec)
                .unwrap();
        // Three decay times of the slowest mode, R²/(5.78 ν), beyond the transient of the
        // finest pipe (e^-17).
        let steps = (3.0 * radius * radius / nu).ceil() as u64;
        lat.run(steps, 1000).unwrap();
        let ux = lat.moment_field("ux").unwrap();
        let (mut diff, mut norm) = (0.0, 0.0);
        for y in 0..n {
            for z in 0..n {
                let r = r2(y, z);
                if r <= radius * radius {
                    let exact = ax * (radius * radius - r) / (4.0 * nu);
                    diff += (ux[z * n + y] - exact).powi(2);
                    norm += exact * exact;
                }
            }
        }
        (diff / norm).sqrt()
    };
    let order = |e: &[f64]| (e[0] / e[e.len() - 1]).log2() / (e.len() - 1) as f64;
    let curved: Vec<f64> = radii
        .iter()
        .map(|&r| error(r, Some(Interpolation::Linear)))
        .collect();
    // The staircase and the quadratic walls on the two coarser pipes (the finest costs as
    // much as all the rest).
    let staircase: Vec<f64> = radii[..2].iter().map(|&r| error(r, None)).collect();
    let quadratic: Vec<f64> = (radii[..2].iter())
        .map(|&r| error(r, Some(Interpolation::Quadratic)))
        .collect();
    eprintln!(
        "pipe flow, L2 errors at R = {radii:?}: curved {curved:?} (order {:.2}), staircase \
         {staircase:?} (order {:.2}), quadratic {quadratic:?} (order {:.2})",
        order(&curved),
        order(&staircase),
        order(&quadratic)
    );
    assert!(
        order(&quadratic) >= 1.8 && quadratic[1] < staircase[1] / 5.0,
        "quadratic walls: errors {quadratic:?} (order {:.2}), staircase {staircase:?}",
        order(&quadratic)
    );
    assert!(
        order(&curved) >= 1.8 && curved[1] < staircase[1] / 5.0,
        "curved walls: errors {curved:?} (order {:.2}), staircase {staircase:?} (order {:.2})",
        order(&curved),
        order(&staircase)
    );
}

/// Circular Couette flow (D2Q9 BGK): the inner of two coaxial cylinders turns at `ω`, the
/// outer one rests; between them `u_θ(r) = A r + B / r`, `A = ω R₁² / (R₁² − R₂²)`,
/// `B = −A R₂²`. Both walls cut the links at every distance and the inner one moves along its
/// surface: with the walls where the circles cross the links and the wall's momentum taken
/// there (`Obstacles::with_wall_distance`, `with_wall_velocity`), the L2 error of the velocity
/// falls with the second power of the resolution (R₂ = 8.3, 16.6, 33.2; R₁ = R₂ / 2), with
/// the linear interpolation and with the quadratic one (`Interpolation::Quadratic`), whose
/// error is the smaller.
#[test]
fn circular_couette_flow_converges_to_second_order_with_curved_moving_walls() {
    // `None`: the staircase (half-way bounce-back).
    let error = |outer: f64, how: Option<Interpolation>| {
        let inner = outer / 2.0;
        let n = ((2.0 * outer).ceil() as usize + 4).next_multiple_of(8);
        let centre = (n as f64 - 1.0) / 2.0 + 0.21;
        let radius = move |x: f64, y: f64| (x - centre).hypot(y - centre);
        let (tau, u_wall) = (0.8, 0.01);
        let omega = u_wall / inner;
        let walls = Obstacles::new(move |x, y| {
            let r = radius(x as f64, y as f64);
            r < inner || r > outer
        })
        .with_wall_velocity(
            move |[x, y, _]| match radius(x, y) < (inner + outer) / 2.0 {
                true => [-omega * (y - centre), omega * (x - centre), 0.0],
                false => [0.0; 3],
            },
        );
        // From a fluid site `p` along `c`: the first `q ∈ (0, 1]` where `|p + q c|` meets
        // either circle.
        let crossing = move |[x, y, _]: [usize; 3], c: [i32; 3]| {
            let (px, py) = (x as f64 - centre, y as f64 - centre);
            let (cx, cy) = (f64::from(c[0]), f64::from(c[1]));
            let (a, b) = (cx * cx + cy * cy, px * cx + py * cy);
            [inner, outer]
                .into_iter()
                .flat_map(|r| {
                    let disc = (b * b - a * (px * px + py * py - r * r)).max(0.0).sqrt();
                    [(-b - disc) / a, (-b + disc) / a]
                })
                .filter(|&q| q > 0.0 && q <= 1.0)
                .min_by(f64::total_cmp)
        };
        let walls = walls.with_interpolation(how.unwrap_or_default());
        let spec = periodic_around(walls, how.map(|_| crossing));
        let params = D2Q9BgkParams {
            tau,
            ax: 0.0,
            ay: 0.0,
        };
        let mut lat =
            Lattice::<D2Q9Bgk, CAoSoa<8>, f64>::new(n, n, params, Scheme::TwoCopy, &spec).unwrap();
        // Five diffusion times across the gap, (R₂ − R₁)²/ν.
        let nu = (tau - 0.5) / 3.0;
        lat.run((5.0 * (outer - inner).powi(2) / nu).ceil() as u64, 1000)
            .unwrap();
        // The torque on the turning cylinder, two steps averaged.
        let cylinder = Body::circle([centre, centre], inner).unwrap();
        let on_cylinder =
            MomentumExchange::new::<D2Q9Bgk>(&cylinder, &spec, [n, n, 1], [centre, centre, 0.0]);
        let mut torque = on_cylinder.on(&lat).unwrap().torque[2];
        lat.step();
        torque = (torque + on_cylinder.on(&lat).unwrap().torque[2]) / 2.0;
        let (ux, uy) = (
            lat.moment_field("ux").unwrap(),
            lat.moment_field("uy").unwrap(),
        );
        let a = omega * inner * inner / (inner * inner - outer * outer);
        let b = -a * outer * outer;
        // The shear stress ρν r d(u/r)/dr = −2ρν b/r² over the cylinder's 2πR₁, arm R₁.
        let exact_torque = -4.0 * std::f64::consts::PI * nu * b;
        let (mut diff, mut norm) = (0.0, 0.0);
        for x in 0..n {
            for y in 0..n {
                let (dx, dy) = (x as f64 - centre, y as f64 - centre);
                let r = dx.hypot(dy);
                if r > inner && r < outer {
                    let u = a * r + b / r;
                    let exact = [-u * dy / r, u * dx / r];
                    let got = [ux[x * n + y], uy[x * n + y]];
                    diff += (got[0] - exact[0]).powi(2) + (got[1] - exact[1]).powi(2);
                    norm += u * u;
                }
            }
        }
        ((diff / norm).sqrt(), torque / exact_torque - 1.0)
    };
    let outer = [8.3, 16.6, 33.2];
    let order = |e: &[f64]| (e[0] / e[e.len() - 1]).log2() / (e.len() - 1) as f64;
    let linear = Some(Interpolation::Linear);
    let (curved, torque): (Vec<f64>, Vec<f64>) = outer.iter().map(|&r| error(r, linear)).unzip();
    let quadratic = Some(Interpolation::Quadratic);
    let (quad, quad_torque): (Vec<f64>, Vec<f64>) =
        outer.iter().map(|&r| error(r, quadratic)).unzip();
    let (staircase, stair_torque): (Vec<f64>, Vec<f64>) =
        outer[..2].iter().map(|&r| error(r, None)).unzip();
    eprintln!(
        "circular Couette flow, L2 errors at R₂ = {outer:?}: linear {curved:?} (order {:.2}), \
         quadratic {quad:?} (order {:.2}), staircase {staircase:?} (order {:.2}); the inner \
         cylinder's torque against the exact one, relative: linear {torque:?}, quadratic \
         {quad_torque:?}, staircase {stair_torque:?}",
        order(&curved),
        order(&quad),
        order(&staircase)
    );
    assert!(
        order(&quad) >= 1.8 && quad[1] < staircase[1] / 5.0,
        "quadratic walls: errors {quad:?} (order {:.2}), staircase {staircase:?}",
        order(&quad)
    );
    // The torque with quadratic walls: 1 % off on the coarsest grid (a gap of four sites),
    // 0.07 % on the finest.
    assert!(
        quad_torque.iter().all(|e| e.abs() < 1.5e-2) && quad_torque[2].abs() < 1e-3,
        "the inner cylinder's torque with quadratic walls, relative error: {quad_torque:?}"
    );
    // The torque on the turning cylinder by momentum exchange (Wen et al.'s form, each wall
    // where the link crosses it): within 0.2 % of the exact one on every grid (0.04 % on the
    // finest); the staircase's is 4–5 % off.
    assert!(
        torque.iter().all(|e| e.abs() < 5e-3) && torque[1].abs() < stair_torque[1].abs(),
        "the inner cylinder's torque, relative error: curved {torque:?}, staircase \
         {stair_torque:?}"
    );
    assert!(
        order(&curved) >= 1.8 && curved[1] < staircase[1],
        "curved walls: errors {curved:?} (order {:.2}), staircase {staircase:?} (order {:.2})",
        order(&curved),
        order(&staircase)
    );
}

/// A periodic lattice's boundaries with `solid` as its obstacles, their walls where `crossing`
/// puts them along each link when given (interpolated bounce-back), else half-way.
fn periodic_around(
    solid: Obstacles,
    crossing: Option<impl Fn([usize; 3], [i32; 3]) -> Option<f64> + Send + Sync + 'static>,
) -> BoundarySpec {
    let solid = match crossing {
        Some(q) => solid.with_wall_distance(q),
        None => solid,
    };
    BoundarySpec {
        solid: Some(solid),
        ..BoundarySpec::periodic()
    }
}
