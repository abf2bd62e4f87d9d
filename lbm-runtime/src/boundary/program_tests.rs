use super::*;
use crate::testing::{TestD2Q9, TestParams};

type M = TestD2Q9;
const P: TestParams = TestParams {
    tau: 0.8,
    ax: 0.0,
    ay: 0.0,
};

/// Populations near rest, uneven so that no sum vanishes by symmetry.
fn populations() -> Vec<f64> {
    (0..M::Q)
        .map(|i| M::WEIGHTS[i] * (1.0 + 0.01 * (i as f64 * 1.7).sin()))
        .collect()
}

fn run(kind: Kind, values: [f64; 3], links: u64) -> Vec<f64> {
    let mut g: Vec<[f64; 1]> = populations().into_iter().map(|v| [v]).collect();
    kind.program::<M>()
        .run::<M, f64, 1>(&mut g, &[values], links, &mut Vec::new(), &P);
    g.into_iter().map(|[v]| v).collect()
}

fn density_velocity(g: &[f64]) -> (f64, [f64; 2]) {
    let rho: f64 = g.iter().sum();
    let m = |a: usize| {
        (0..M::Q)
            .map(|i| g[i] * f64::from(M::VELOCITIES[i][a]))
            .sum::<f64>()
    };
    (rho, [m(0) / rho, m(1) / rho])
}

#[test]
fn codes_name_each_kind_once() {
    let kinds: Vec<Kind> = Kind::all().collect();
    assert_eq!(kinds.len(), 21);
    for k in kinds {
        assert!((1..Kind::CODES as u32).contains(&k.code()));
        assert_eq!(Kind::from_code(k.code()), Some(k));
    }
    assert_eq!(Kind::from_code(0), None);
}

/// Zou–He imposes exactly the velocity (or the density) it is given, on every side.
#[test]
fn zou_he_imposes_its_target_on_every_side() {
    for (n, normal) in NORMALS.iter().enumerate().take(4) {
        let u = [0.03, -0.02, 0.0];
        let (_, v) = density_velocity(&run(Kind::ZouHeVelocity(n), u, 0));
        assert!(
            (v[0] - u[0]).abs() < 1e-15 && (v[1] - u[1]).abs() < 1e-15,
            "{n}: {v:?}"
        );
        let (rho, v) = density_velocity(&run(Kind::ZouHeDensity(n), [1.01, 0.0, 0.0], 0));
        assert!((rho - 1.01).abs() < 1e-15, "{n}: {rho}");
        let tangential = normal.iter().position(|&c| c == 0).unwrap();
        assert!(v[tangential].abs() < 1e-15, "{n}: {v:?}");
        // Only the unknown populations, those entering through the side, change.
        let g = run(Kind::ZouHeDensity(n), [1.01, 0.0, 0.0], 0);
        for (i, (new, old)) in g.iter().zip(populations()).enumerate() {
            let entering = dot(&M::VELOCITIES[i], *normal) > 0;
            assert_eq!(new != &old, entering, "side {n}, population {i}");
        }
    }
}

/// The solid site rests; the thermal wall keeps the density at rest; anti-bounce-back
/// changes only its links, to `f_eq_i + f_eq_ī − g_i`.
#[test]
fn solid_thermal_and_link_rules_do_what_they_say() {
    assert_eq!(run(Kind::Solid, [0.0; 3], 0), M::WEIGHTS.to_vec());
    let rho: f64 = populations().iter().sum();
    let g = run(Kind::Thermal, [1.0, 0.0, 0.0], 0);
    let (r, v) = density_velocity(&g);
    assert!((r - rho).abs() < 1e-15 && v[0].abs() < 1e-15 && v[1].abs() < 1e-15);
    // TestD2Q9 has no scalar moment: the wall's equilibrium is the one at zero moments.
    let mut feq = [0.0; 9];
    M::equilibrium(&[0.0; 3], &P, &mut feq);
    let links = 1 << 2 | 1 << 6;
    let g = run(Kind::Dirichlet, [0.7, 0.0, 0.0], links);
    let old = populations();
    for i in 0..M::Q {
        let want = match links >> i & 1 {
            1 => feq[i] + feq[M::OPPOSITE[i]] - old[i],
            _ => old[i],
        };
        assert_eq!(g[i], want, "{i}");
    }
}

/// Every output is live, and so is what it reads; a program reads no result before it
/// is computed.
#[test]
fn programs_are_well_formed() {
    let two_d = |k: &Kind| {
        !matches!(
            k,
            Kind::ZouHeVelocity(4..) | Kind::ZouHeDensity(4..) | Kind::FreeSlip(4..)
        )
    };
    for kind in Kind::all().filter(two_d) {
        let p = kind.program::<M>();
        assert!(
            p.live().iter().all(|&l| l),
            "{kind:?}: an instruction reaches no output"
        );
        for (r, op) in p.ops.iter().enumerate() {
            let reads = match *op {
                Op::Add(a, b) | Op::Sub(a, b) | Op::Mul(a, b) | Op::Div(a, b) => vec![a, b],
                Op::IfLink(_, a, b) => vec![a, b],
                Op::Feq(_) => p.moments.clone(),
                _ => vec![],
            };
            assert!(reads.iter().all(|&a| (a as usize) < r), "{kind:?} {r}");
        }
    }
}
