//! Two bodies placed from the API in a channel, and the loads the flow puts on each.
//!
//! A disc on the channel's axis and, behind it, a square above the axis, in a channel with a
//! parabolic inflow on the left and a pressure outflow on the right (D2Q9 TRT, the two-copy
//! scheme). Both bodies are the lattice's obstacles, with curved walls (interpolated
//! bounce-back at the exact surface); a momentum exchange per body reads the force on it and
//! its torque about its centre, averaged over two successive steps (the exchange alternates
//! from one step to the next). Alone on the axis the disc would take no lift and no torque;
//! the square behind it, off the axis, takes both (and gives the disc a little of each).
//!
//! Run with `cargo run --release --example two_bodies` (about ten seconds).

use lbm::geometry::{Body, Load, MomentumExchange, curved_obstacles};
use lbm::models::{D2Q9Trt, D2Q9TrtParams};
use lbm::{BoundarySpec, Lattice, Scheme, Soa, Wall};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (lx, ly) = (240, 64);
    let peak = 0.05;
    // A disc of diameter 16 and a square of side 16 (a box through the plane z = 0).
    let bodies = [
        ("disc", Body::circle([60.0, 31.5], 8.0)?, [60.0, 31.5, 0.0]),
        (
            "square",
            Body::cuboid([112.0, 28.0, -1.0], [128.0, 44.0, 1.0])?,
            [120.0, 36.0, 0.0],
        ),
    ];
    let all = Body::union(bodies.iter().map(|(_, b, _)| b.clone()).collect());
    let spec = BoundarySpec {
        left: Some(Wall::ParabolicInflow {
            peak: [peak, 0.0, 0.0],
        }),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        solid: Some(curved_obstacles(all)),
        ..BoundarySpec::channel()
    };
    let params = D2Q9TrtParams {
        tau: 0.8,
        magic: 3.0 / 16.0,
        ax: 0.0,
        ay: 0.0,
    };
    let mut lat = Lattice::<D2Q9Trt, Soa, f64>::new(lx, ly, params, Scheme::TwoCopy, &spec)?;
    lat.set_equilibrium(|_, _| vec![1.0, 0.0, 0.0])?;
    let exchanges: Vec<MomentumExchange> = bodies
        .iter()
        .map(|(_, body, centre)| {
            MomentumExchange::new::<D2Q9Trt>(body, &spec, [lx, ly, 1], *centre)
        })
        .collect();
    let loads = |lat: &Lattice<D2Q9Trt, Soa, f64>| -> Result<Vec<Load>, lbm::LbmError> {
        exchanges.iter().map(|e| e.on(lat)).collect()
    };
    // Drag and lift coefficients on the mean inflow 2U/3 and the bodies' height, 16 sites.
    let scale = 0.5 * (2.0 / 3.0 * peak).powi(2) * 16.0;
    println!("step      body    c_D      c_L      torque");
    for _ in 0..8 {
        lat.steps(2_499);
        let before = loads(&lat)?;
        lat.steps(1);
        let now = loads(&lat)?;
        for ((name, _, _), (a, b)) in bodies.iter().zip(before.iter().zip(&now)) {
            let mean = |f: fn(&Load) -> f64| 0.5 * (f(a) + f(b));
            println!(
                "{:>6}  {name:>6}  {:7.4}  {:7.4}  {:+.3e}",
                lat.steps_done(),
                mean(|l| l.force[0]) / scale,
                mean(|l| l.force[1]) / scale,
                mean(|l| l.torque[2])
            );
        }
    }
    Ok(())
}
