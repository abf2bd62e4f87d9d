//! Bodies placed from shapes (`lbm::geometry`) in a force-driven periodic channel (D2Q9):
//! at the steady state the walls and a disc take from the fluid, by momentum exchange (Ladd
//! 1994), exactly the momentum the body force gives it each step, `Σ_fluid ρ a`, over two
//! steps (the exchange alternates about its mean from one step to the next, by 3·10⁻⁵ here:
//! the populations' staggered modes, excited where the flow meets the disc); the disc,
//! centred between the walls, feels no lift and no torque.

use lbm::geometry::{Body, MomentumExchange, obstacles};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams};
use lbm::{BoundarySpec, CAoSoa, Lattice, Scheme};

#[test]
fn the_walls_and_a_disc_take_the_momentum_the_body_force_gives() {
    let (lx, ly, a) = (32, 40, 1e-6);
    // Rows 0–3 and 37–39 solid: the channel's fluid is rows 4–36, symmetric about y = 20.
    let walls = Body::union(vec![
        Body::cuboid([-1.0, -1.0, -1.0], [lx as f64, 3.2, 1.0]).unwrap(),
        Body::cuboid([-1.0, 36.8, -1.0], [lx as f64, ly as f64, 1.0]).unwrap(),
    ]);
    let disc = Body::circle([16.0, 20.0], 5.0).unwrap();
    let spec = BoundarySpec {
        solid: Some(obstacles(Body::union(vec![walls.clone(), disc.clone()]))),
        ..BoundarySpec::periodic()
    };
    let size = [lx, ly, 1];
    let centre = [16.0, 20.0, 0.0];
    let (on_walls, on_disc) = (
        MomentumExchange::new::<D2Q9Bgk>(&walls, &spec, size, centre),
        MomentumExchange::new::<D2Q9Bgk>(&disc, &spec, size, centre),
    );
    // Every row of the walls' surface: 3 links a site (D2Q9) over 2 × 32 sites.
    assert_eq!(on_walls.len(), 2 * 3 * lx);
    assert!(on_disc.len() > 40, "{}", on_disc.len());
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
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
            "{scheme:?}: the walls and the disc take {taken:e}, the force gives {given:e}"
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
