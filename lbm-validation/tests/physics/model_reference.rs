//! The generated models against plain hand-written reference implementations, and the
//! physics every collide must respect: conservation of mass, momentum (and energy for D2Q37)
//! to round-off, a momentum change of exactly ρa per step under a body force, and the
//! Maxwellian moments of D2Q37's equilibrium through 4th order (Philippi et al. 2006; Shan 2010).

use lbm::models::*;
use lbm::{ClusterAccess, Model, Real};
use proptest::prelude::*;

// ---------------------------------------------------------------- reference implementations

const D2Q9_C: [[f64; 2]; 9] = [
    [0., 0.],
    [1., 0.],
    [0., 1.],
    [-1., 0.],
    [0., -1.],
    [1., 1.],
    [-1., 1.],
    [-1., -1.],
    [1., -1.],
];
const D2Q9_W: [f64; 9] = [
    4. / 9.,
    1. / 9.,
    1. / 9.,
    1. / 9.,
    1. / 9.,
    1. / 36.,
    1. / 36.,
    1. / 36.,
    1. / 36.,
];

/// `w ρ (1 + 3 c·u + 9/2 (c·u)² − 3/2 u²)`.
fn d2q9_feq(rho: f64, u: [f64; 2]) -> Vec<f64> {
    (0..9)
        .map(|i| {
            let cu = D2Q9_C[i][0] * u[0] + D2Q9_C[i][1] * u[1];
            D2Q9_W[i] * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * (u[0] * u[0] + u[1] * u[1]))
        })
        .collect()
}

fn d2q9_moments(f: &[f64]) -> (f64, [f64; 2]) {
    let rho: f64 = f.iter().sum();
    let jx: f64 = f.iter().zip(&D2Q9_C).map(|(f, c)| f * c[0]).sum();
    let jy: f64 = f.iter().zip(&D2Q9_C).map(|(f, c)| f * c[1]).sum();
    (rho, [jx / rho, jy / rho])
}

/// Exact-difference forcing: `f_eq(ρ, u + a) − f_eq(ρ, u)`.
fn d2q9_edm(rho: f64, u: [f64; 2], a: [f64; 2]) -> Vec<f64> {
    let (new, old) = (d2q9_feq(rho, [u[0] + a[0], u[1] + a[1]]), d2q9_feq(rho, u));
    new.iter().zip(&old).map(|(n, o)| n - o).collect()
}

fn ref_d2q9_bgk(f: &[f64], tau: f64, a: [f64; 2]) -> Vec<f64> {
    let (rho, u) = d2q9_moments(f);
    let (feq, df) = (d2q9_feq(rho, u), d2q9_edm(rho, u, a));
    (0..9)
        .map(|i| f[i] - (f[i] - feq[i]) / tau + df[i])
        .collect()
}

const D2Q9_OPP: [usize; 9] = [0, 3, 4, 1, 2, 7, 8, 5, 6];

fn ref_d2q9_trt(f: &[f64], tau: f64, magic: f64, a: [f64; 2]) -> Vec<f64> {
    let (rho, u) = d2q9_moments(f);
    let (feq, df) = (d2q9_feq(rho, u), d2q9_edm(rho, u, a));
    let wp = 1.0 / tau;
    let wm = 1.0 / (magic / (tau - 0.5) + 0.5);
    (0..9)
        .map(|i| {
            let j = D2Q9_OPP[i];
            let (fp, fm) = ((f[i] + f[j]) / 2.0, (f[i] - f[j]) / 2.0);
            let (ep, em) = ((feq[i] + feq[j]) / 2.0, (feq[i] - feq[j]) / 2.0);
            f[i] - wp * (fp - ep) - wm * (fm - em) + df[i]
        })
        .collect()
}

/// Lallemand & Luo's basis, written out numerically: row k is moment k, column i velocity i.
fn mrt_matrix() -> Vec<Vec<f64>> {
    let rows = D2Q9_C.map(|[x, y]| {
        let c2 = x * x + y * y;
        [
            1.0,
            -4.0 + 3.0 * c2,
            4.0 - 10.5 * c2 + 4.5 * c2 * c2,
            x,
            (-5.0 + 3.0 * c2) * x,
            y,
            (-5.0 + 3.0 * c2) * y,
            x * x - y * y,
            x * y,
        ]
    });
    (0..9)
        .map(|k| rows.iter().map(|r| r[k]).collect())
        .collect()
}

/// Gauss–Jordan inverse.
fn inverse(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m
        .iter()
        .enumerate()
        .map(|(i, r)| {
            r.iter()
                .copied()
                .chain((0..n).map(|j| f64::from(u8::from(i == j))))
                .collect()
        })
        .collect();
    for col in 0..n {
        let p = (col..n)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap();
        a.swap(col, p);
        let pivot = a[col][col];
        a[col].iter_mut().for_each(|x| *x /= pivot);
        for k in 0..n {
            if k != col {
                let factor = a[k][col];
                let row = a[col].clone();
                a[k].iter_mut()
                    .zip(&row)
                    .for_each(|(x, r)| *x -= factor * r);
            }
        }
    }
    a.into_iter().map(|r| r[n..].to_vec()).collect()
}

fn ref_d2q9_mrt(f: &[f64], p: &D2Q9MrtParams) -> Vec<f64> {
    let (rho, u) = d2q9_moments(f);
    let (feq, df) = (d2q9_feq(rho, u), d2q9_edm(rho, u, [p.ax, p.ay]));
    let m = mrt_matrix();
    let minv = inverse(&m);
    let s = [
        0.0,
        p.s_e,
        p.s_eps,
        0.0,
        p.s_q,
        0.0,
        p.s_q,
        1.0 / p.tau,
        1.0 / p.tau,
    ];
    let dm: Vec<f64> = (0..9)
        .map(|k| s[k] * (0..9).map(|i| m[k][i] * (f[i] - feq[i])).sum::<f64>())
        .collect();
    (0..9)
        .map(|i| f[i] - (0..9).map(|k| minv[i][k] * dm[k]).sum::<f64>() + df[i])
        .collect()
}

/// The product-form equilibrium `w ρ Π_α (1 + 3 c_α u_α + (9/2 c_α² − 3/2) u_α²)`.
fn d2q9_product_feq(rho: f64, u: [f64; 2]) -> Vec<f64> {
    let axis = |c: f64, u: f64| 1.0 + 3.0 * c * u + (4.5 * c * c - 1.5) * u * u;
    (0..9)
        .map(|i| D2Q9_W[i] * rho * axis(D2Q9_C[i][0], u[0]) * axis(D2Q9_C[i][1], u[1]))
        .collect()
}

/// BGK with the product-form equilibrium, and its exact-difference force.
fn ref_d2q9_product_bgk(f: &[f64], tau: f64, a: [f64; 2]) -> Vec<f64> {
    let (rho, u) = d2q9_moments(f);
    let feq = d2q9_product_feq(rho, u);
    let forced = d2q9_product_feq(rho, [u[0] + a[0], u[1] + a[1]]);
    (0..9)
        .map(|i| f[i] + (feq[i] - f[i]) / tau + forced[i] - feq[i])
        .collect()
}

/// The D2Q9 central-moment basis (1, x, y, x² + y², x² − y², xy, x²y, xy², x²y²) at `(x, y)`.
fn d2q9_central_basis(x: f64, y: f64) -> [f64; 9] {
    [
        1.0,
        x,
        y,
        x * x + y * y,
        x * x - y * y,
        x * y,
        x * x * y,
        x * y * y,
        x * x * y * y,
    ]
}

/// Central-moment MRT with the product-form equilibrium done numerically: `κ = T(u) f` with `T_ki = P_k(c_i − u)`, relaxed, and
/// `T(u)⁻¹` by Gauss–Jordan (no shift matrix).
fn ref_d2q9_central(f: &[f64], p: &D2Q9CentralMrtParams) -> Vec<f64> {
    let (rho, u) = d2q9_moments(f);
    let feq = d2q9_product_feq(rho, u);
    let forced = d2q9_product_feq(rho, [u[0] + p.ax, u[1] + p.ay]);
    let cols: Vec<[f64; 9]> = D2Q9_C
        .iter()
        .map(|c| d2q9_central_basis(c[0] - u[0], c[1] - u[1]))
        .collect();
    let t: Vec<Vec<f64>> = (0..9)
        .map(|k| cols.iter().map(|c| c[k]).collect())
        .collect();
    let s = [
        0.0,
        0.0,
        0.0,
        p.s_bulk,
        1.0 / p.tau,
        1.0 / p.tau,
        p.s3,
        p.s3,
        p.s4,
    ];
    let post: Vec<f64> = (0..9)
        .map(|k| {
            let kappa: f64 = (0..9).map(|i| t[k][i] * f[i]).sum();
            let kappa_eq: f64 = (0..9).map(|i| t[k][i] * feq[i]).sum();
            kappa - s[k] * (kappa - kappa_eq)
        })
        .collect();
    let tinv = inverse(&t);
    (0..9)
        .map(|i| (0..9).map(|k| tinv[i][k] * post[k]).sum::<f64>() + forced[i] - feq[i])
        .collect()
}

/// Regularized BGK: `f_eq + (1 − 1/τ) w/(2 cs⁴) (c c − cs² I) : Π⁽¹⁾` (Latt & Chopard 2006).
fn ref_d2q9_regularized(f: &[f64], tau: f64, a: [f64; 2]) -> Vec<f64> {
    let (rho, u) = d2q9_moments(f);
    let (feq, df) = (d2q9_feq(rho, u), d2q9_edm(rho, u, a));
    let mut pi = [[0.0; 2]; 2];
    for i in 0..9 {
        for (x, row) in pi.iter_mut().enumerate() {
            for (y, v) in row.iter_mut().enumerate() {
                *v += D2Q9_C[i][x] * D2Q9_C[i][y] * (f[i] - feq[i]);
            }
        }
    }
    (0..9)
        .map(|i| {
            let mut h = 0.0;
            for (x, row) in pi.iter().enumerate() {
                for (y, v) in row.iter().enumerate() {
                    let delta = if x == y { 1.0 / 3.0 } else { 0.0 };
                    h += (D2Q9_C[i][x] * D2Q9_C[i][y] - delta) * v;
                }
            }
            feq[i] + (1.0 - 1.0 / tau) * D2Q9_W[i] * 4.5 * h + df[i]
        })
        .collect()
}

/// D2Q37 weights by shell (Philippi et al. 2006; Shan 2010), keyed by the sorted absolute components; the
/// published digits are kept verbatim.
#[allow(clippy::excessive_precision)]
fn d2q37_weight(c: [i32; 3]) -> f64 {
    let (a, b) = (c[0].abs().max(c[1].abs()), c[0].abs().min(c[1].abs()));
    match (a, b) {
        (0, 0) => 0.23315066913235250228650,
        (1, 0) => 0.10730609154221900241246,
        (1, 1) => 0.05766785988879488203006,
        (2, 0) => 0.01420821615845075026469,
        (2, 1) => 0.00535304900051377523273,
        (2, 2) => 0.00101193759267357547541,
        (3, 0) => 0.00024530102775771734547,
        (3, 1) => 0.00028341425299419821740,
        _ => panic!("not a D2Q37 velocity"),
    }
}

/// The lattice scale r of Philippi et al. 2006, cs² = 1/r², digits as published.
#[allow(clippy::excessive_precision)]
const R: f64 = 1.19697977039307435897239;

/// The 4th-order Hermite equilibrium (Shan, Yuan & Chen 2006), in scaled units ξ = r c, v = r u.
fn d2q37_feq(rho: f64, u: [f64; 2], t: f64) -> Vec<f64> {
    let d = 2.0;
    let th = t - 1.0;
    let v = [R * u[0], R * u[1]];
    let v2 = v[0] * v[0] + v[1] * v[1];
    D2Q37::VELOCITIES
        .iter()
        .map(|&c| {
            let xi = [R * f64::from(c[0]), R * f64::from(c[1])];
            let xv = xi[0] * v[0] + xi[1] * v[1];
            let x2 = xi[0] * xi[0] + xi[1] * xi[1];
            let s = 1.0
                + xv
                + 0.5 * (xv * xv - v2 + th * (x2 - d))
                + xv / 6.0 * (xv * xv - 3.0 * v2 + 3.0 * th * (x2 - d - 2.0))
                + (xv.powi(4) - 6.0 * xv * xv * v2
                    + 3.0 * v2 * v2
                    + 6.0 * th * (xv * xv * (x2 - d - 4.0) + v2 * (d + 2.0 - x2))
                    + 3.0 * th * th * (x2 * x2 - 2.0 * (d + 2.0) * x2 + d * (d + 2.0)))
                    / 24.0;
            d2q37_weight(c) * rho * s
        })
        .collect()
}

fn d2q37_moments(f: &[f64]) -> (f64, [f64; 2], f64) {
    let c = D2Q37::VELOCITIES;
    let rho: f64 = f.iter().sum();
    let u = [0, 1].map(|a| {
        f.iter()
            .zip(c)
            .map(|(f, c)| f * f64::from(c[a]))
            .sum::<f64>()
            / rho
    });
    let e: f64 = f
        .iter()
        .zip(c)
        .map(|(f, c)| f * ((f64::from(c[0]) - u[0]).powi(2) + (f64::from(c[1]) - u[1]).powi(2)))
        .sum();
    (rho, u, e * R * R / (2.0 * rho))
}

fn ref_d2q37(f: &[f64], tau: f64, g: f64) -> Vec<f64> {
    let (rho, u, t) = d2q37_moments(f);
    let feq = d2q37_feq(rho, u, t);
    let shifted = d2q37_feq(rho, [u[0], u[1] - g], t);
    (0..37)
        .map(|i| f[i] - (f[i] - feq[i]) / tau + shifted[i] - feq[i])
        .collect()
}

// ---------------------------------------------------------------- helpers

/// A non-equilibrium state: the equilibrium perturbed by up to ±5% per population.
fn perturb(feq: Vec<f64>, noise: &[f64]) -> Vec<f64> {
    feq.iter()
        .zip(noise.iter().cycle())
        .map(|(f, e)| f * (1.0 + e))
        .collect()
}

fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

fn generated<M: Model>(f: &[f64], p: &M::Params) -> Vec<f64> {
    let mut g = f.to_vec();
    M::collide(&mut g, p);
    g
}

fn moment(f: &[f64], c: &[[i32; 3]], k: impl Fn([i32; 3]) -> f64) -> f64 {
    f.iter().zip(c).map(|(f, &c)| f * k(c)).sum()
}

fn noise() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-0.05..0.05f64, 37)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn d2q9_bgk_matches_reference(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, tau in 0.51..2.0f64,
                                  ax in -1e-3..1e-3f64, ay in -1e-3..1e-3f64, e in noise()) {
        let f = perturb(d2q9_feq(rho, [ux, uy]), &e);
        let p = D2Q9BgkParams { tau, ax, ay };
        let err = max_rel_diff(&generated::<D2Q9Bgk>(&f, &p), &ref_d2q9_bgk(&f, tau, [ax, ay]));
        prop_assert!(err < 1e-13, "relative difference {err:e}");
    }

    #[test]
    fn d2q9_trt_matches_reference(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, tau in 0.51..2.0f64,
                                  magic in 0.01..1.0f64, ax in -1e-3..1e-3f64, e in noise()) {
        let f = perturb(d2q9_feq(rho, [ux, uy]), &e);
        let p = D2Q9TrtParams { tau, magic, ax, ay: -ax };
        let err = max_rel_diff(&generated::<D2Q9Trt>(&f, &p), &ref_d2q9_trt(&f, tau, magic, [ax, -ax]));
        prop_assert!(err < 1e-13, "relative difference {err:e}");
    }

    #[test]
    fn d2q9_mrt_matches_reference(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, tau in 0.51..2.0f64,
                                  s in 0.5..1.9f64, ax in -1e-3..1e-3f64, e in noise()) {
        let f = perturb(d2q9_feq(rho, [ux, uy]), &e);
        let p = D2Q9MrtParams { tau, s_e: s, s_eps: 2.0 - s * 0.5, s_q: 1.2, ax, ay: 0.5 * ax };
        let err = max_rel_diff(&generated::<D2Q9Mrt>(&f, &p), &ref_d2q9_mrt(&f, &p));
        prop_assert!(err < 1e-13, "relative difference {err:e}");
    }

    #[test]
    fn d2q9_central_mrt_matches_reference(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, tau in 0.51..2.0f64,
                                          s in 0.5..1.9f64, ax in -1e-3..1e-3f64, e in noise()) {
        let f = perturb(d2q9_feq(rho, [ux, uy]), &e);
        let p = D2Q9CentralMrtParams { tau, s_bulk: s, s3: 2.0 - s * 0.5, s4: 1.3, ax, ay: -0.5 * ax };
        let err = max_rel_diff(&generated::<D2Q9CentralMrt>(&f, &p), &ref_d2q9_central(&f, &p));
        prop_assert!(err < 1e-12, "relative difference {err:e}");
    }

    /// With one rate for every moment, the central-moment collision is BGK's with its
    /// equilibrium (the shift and its inverse cancel).
    #[test]
    fn d2q9_central_mrt_with_one_rate_is_bgk(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, tau in 0.51..2.0f64,
                                             ax in -1e-3..1e-3f64, e in noise()) {
        let f = perturb(d2q9_feq(rho, [ux, uy]), &e);
        let w = 1.0 / tau;
        let p = D2Q9CentralMrtParams { tau, s_bulk: w, s3: w, s4: w, ax, ay: ax };
        let err = max_rel_diff(&generated::<D2Q9CentralMrt>(&f, &p), &ref_d2q9_product_bgk(&f, tau, [ax, ax]));
        prop_assert!(err < 1e-12, "relative difference {err:e}");
    }

    #[test]
    fn d2q9_regularized_matches_reference(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, tau in 0.51..2.0f64,
                                          ax in -1e-3..1e-3f64, ay in -1e-3..1e-3f64, e in noise()) {
        let f = perturb(d2q9_feq(rho, [ux, uy]), &e);
        let p = D2Q9RegularizedParams { tau, ax, ay };
        let err = max_rel_diff(&generated::<D2Q9Regularized>(&f, &p), &ref_d2q9_regularized(&f, tau, [ax, ay]));
        prop_assert!(err < 1e-13, "relative difference {err:e}");
    }

    #[test]
    fn d2q37_matches_reference(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, t in 0.8..1.2f64,
                               tau in 0.51..2.0f64, g in 0.0..1e-3f64, e in noise()) {
        let f = perturb(d2q37_feq(rho, [ux, uy], t), &e);
        let p = D2Q37Params { tau, g };
        let err = max_rel_diff(&generated::<D2Q37>(&f, &p), &ref_d2q37(&f, tau, g));
        prop_assert!(err < 1e-13, "relative difference {err:e}");
    }

    /// Without force, collide conserves mass, momentum and energy (Σ f |c|²) to round-off.
    #[test]
    fn d2q37_conserves_mass_momentum_energy(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64,
                                             t in 0.8..1.2f64, tau in 0.51..2.0f64, e in noise()) {
        let f = perturb(d2q37_feq(rho, [ux, uy], t), &e);
        let g = generated::<D2Q37>(&f, &D2Q37Params { tau, g: 0.0 });
        let c = D2Q37::VELOCITIES;
        let invariants: [&dyn Fn([i32; 3]) -> f64; 4] = [&|_| 1.0, &|c| f64::from(c[0]), &|c| f64::from(c[1]), &|c| f64::from(c[0] * c[0] + c[1] * c[1])];
        for k in invariants {
            let (before, after) = (moment(&f, c, k), moment(&g, c, k));
            prop_assert!((after - before).abs() <= 1e-14 * before.abs().max(rho), "{before} → {after}");
        }
    }

    /// With gravity, mass is conserved and the momentum changes by exactly ρ g per step.
    #[test]
    fn d2q37_gravity_changes_momentum_by_rho_g(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64,
                                                t in 0.8..1.2f64, tau in 0.51..2.0f64, g in 1e-5..1e-3f64, e in noise()) {
        let f = perturb(d2q37_feq(rho, [ux, uy], t), &e);
        let after = generated::<D2Q37>(&f, &D2Q37Params { tau, g });
        let c = D2Q37::VELOCITIES;
        let mass = moment(&f, c, |_| 1.0);
        prop_assert!((moment(&after, c, |_| 1.0) - mass).abs() <= 1e-14 * mass);
        let dx = moment(&after, c, |c| f64::from(c[0])) - moment(&f, c, |c| f64::from(c[0]));
        let dy = moment(&after, c, |c| f64::from(c[1])) - moment(&f, c, |c| f64::from(c[1]));
        prop_assert!(dx.abs() <= 1e-14 * mass, "Δjx = {dx:e}");
        prop_assert!((dy + mass * g).abs() <= 1e-14 * mass, "Δjy = {dy:e}, −ρg = {:e}", -mass * g);
    }

    /// Every D2Q9 collision conserves mass and gives momentum ρa per step.
    #[test]
    fn d2q9_collisions_conserve(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, tau in 0.51..2.0f64,
                                ax in -1e-3..1e-3f64, ay in -1e-3..1e-3f64, e in noise()) {
        let f = perturb(d2q9_feq(rho, [ux, uy]), &e);
        let outs = [
            generated::<D2Q9Bgk>(&f, &D2Q9BgkParams { tau, ax, ay }),
            generated::<D2Q9Trt>(&f, &D2Q9TrtParams { tau, magic: 0.25, ax, ay }),
            generated::<D2Q9Mrt>(&f, &D2Q9MrtParams { tau, s_e: 1.1, s_eps: 1.2, s_q: 1.3, ax, ay }),
            generated::<D2Q9CentralMrt>(&f, &D2Q9CentralMrtParams { tau, s_bulk: 1.1, s3: 1.2, s4: 1.3, ax, ay }),
            generated::<D2Q9Regularized>(&f, &D2Q9RegularizedParams { tau, ax, ay }),
        ];
        let c = D2Q9Bgk::VELOCITIES;
        let mass = moment(&f, c, |_| 1.0);
        for g in &outs {
            prop_assert!((moment(g, c, |_| 1.0) - mass).abs() <= 1e-14 * mass);
            for (a, acc) in [(0, ax), (1, ay)] {
                let d = moment(g, c, |c| f64::from(c[a])) - moment(&f, c, |c| f64::from(c[a]));
                prop_assert!((d - mass * acc).abs() <= 1e-14 * mass, "Δj = {d:e}, ρa = {:e}", mass * acc);
            }
        }
    }

    /// The generated equilibrium has the Maxwellian's moments through 4th order, in scaled units
    /// ξ = c/cs, v = u/cs: ⟨ξ_a ξ_b ξ_c ξ_d⟩ = ρ(v v v v + T Σ_6 v v δ + T² Σ_3 δ δ).
    #[test]
    fn d2q37_equilibrium_has_maxwellian_moments(rho in 0.5..2.0f64, ux in -0.2..0.2f64, uy in -0.2..0.2f64, t in 0.7..1.3f64) {
        let mut feq = vec![0.0; 37];
        D2Q37::equilibrium(&[rho, ux, uy, t], &D2Q37Params { tau: 1.0, g: 0.0 }, &mut feq);
        let cs = D2Q37::CS2.sqrt();
        let v = [ux / cs, uy / cs];
        let xi = |c: [i32; 3], a: usize| f64::from(c[a]) / cs;
        let delta = |a: usize, b: usize| f64::from(u8::from(a == b));
        let c = D2Q37::VELOCITIES;
        let check = |got: f64, want: f64| (got - want).abs() <= 1e-12 * rho.max(want.abs());
        prop_assert!(check(moment(&feq, c, |_| 1.0), rho));
        for a in 0..2 {
            prop_assert!(check(moment(&feq, c, |c| xi(c, a)), rho * v[a]));
            for b in 0..2 {
                prop_assert!(check(moment(&feq, c, |c| xi(c, a) * xi(c, b)), rho * (v[a] * v[b] + t * delta(a, b))));
                for cc in 0..2 {
                    let want = rho * (v[a] * v[b] * v[cc] + t * (v[a] * delta(b, cc) + v[b] * delta(a, cc) + v[cc] * delta(a, b)));
                    prop_assert!(check(moment(&feq, c, |c| xi(c, a) * xi(c, b) * xi(c, cc)), want));
                    for d in 0..2 {
                        let vv = |p: usize, q: usize| v[p] * v[q];
                        let want = rho * (v[a] * v[b] * v[cc] * v[d]
                            + t * (vv(a, b) * delta(cc, d) + vv(a, cc) * delta(b, d) + vv(a, d) * delta(b, cc)
                                + vv(b, cc) * delta(a, d) + vv(b, d) * delta(a, cc) + vv(cc, d) * delta(a, b))
                            + t * t * (delta(a, b) * delta(cc, d) + delta(a, cc) * delta(b, d) + delta(a, d) * delta(b, cc)));
                        let got = moment(&feq, c, |c| xi(c, a) * xi(c, b) * xi(c, cc) * xi(c, d));
                        prop_assert!(check(got, want), "4th moment {a}{b}{cc}{d}: {got} vs {want}");
                    }
                }
            }
        }
    }

    /// The moments of the equilibrium are the moments it was built from (ρ, u, T round-trip).
    #[test]
    fn moments_of_equilibrium_round_trip(rho in 0.5..2.0f64, ux in -0.1..0.1f64, uy in -0.1..0.1f64, t in 0.8..1.2f64) {
        let mut feq = vec![0.0; 37];
        D2Q37::equilibrium(&[rho, ux, uy, t], &D2Q37Params { tau: 1.0, g: 0.0 }, &mut feq);
        let mut m = [0.0; 4];
        D2Q37::moments(&feq, &D2Q37Params { tau: 1.0, g: 0.0 }, &mut m);
        for (got, want) in m.iter().zip([rho, ux, uy, t]) {
            prop_assert!((got - want).abs() <= 1e-13 * want.abs().max(1.0));
        }
        let (r, u, tt) = d2q37_moments(&feq);
        prop_assert!((r - rho).abs() < 1e-13 && (u[0] - ux).abs() < 1e-13 && (tt - t).abs() < 1e-13);
    }
}

/// The accessor of a cluster that reads one copy and writes another, and counts its stores.
struct Copy<'a, T, const VL: usize> {
    from: &'a [[T; VL]],
    to: Vec<[T; VL]>,
    stored: Vec<u32>,
}

impl<'a, T: Real, const VL: usize> Copy<'a, T, VL> {
    fn new(from: &'a [[T; VL]]) -> Self {
        Self {
            from,
            to: vec![[T::from_f64(f64::NAN); VL]; from.len()],
            stored: vec![0; from.len()],
        }
    }
}

impl<T: Real, const VL: usize> ClusterAccess<T, VL> for Copy<'_, T, VL> {
    fn load(&mut self, i: usize) -> [T; VL] {
        self.from[i]
    }
    fn store(&mut self, i: usize, v: [T; VL]) {
        self.to[i] = v;
        self.stored[i] += 1;
    }
}

/// The collision through an accessor (the kernels' interior path) computes its results in
/// groups and stores each group as soon as it is computed; the collision of a buffer (their
/// boundary path) computes them in one loop. For every kind of model — 2-D and 3-D, BGK to
/// central-moment MRT, forced and unforced, with rates from the local state, with fields
/// uniform and per site — in f64 and f32, at the kernels' cluster widths, the two give
/// bitwise the same populations, and the accessor stores each population exactly once.
#[test]
fn the_accessor_collision_stores_the_buffer_collision_once_per_population() {
    fn check<M: Model, T: Real, const VL: usize>(values: &[f64]) {
        let p = M::params_from_values(values).expect("one value per parameter");
        let cluster: Vec<[T; VL]> = (0..M::Q)
            .map(|i| {
                std::array::from_fn(|l| {
                    let e = 0.05 * (1.3 * i as f64 + 0.7 * l as f64).sin();
                    T::from_f64(M::WEIGHTS[i] * (1.0 + e))
                })
            })
            .collect();
        // Per-site fields: the uniform value, varied from lane to lane.
        let fl: Vec<[T; VL]> = M::FIELD_PARAMS
            .iter()
            .map(|&k| std::array::from_fn(|l| T::from_f64(values[k] + 0.01 * (l as f64 - 3.0))))
            .collect();
        let mut cases = vec![None];
        if !fl.is_empty() {
            cases.push(Some(&fl[..]));
        }
        for fields in cases {
            let mut access = Copy::new(&cluster);
            M::collide_access::<T, VL, _>(&mut access, &p, fields);
            let mut buffer = cluster.clone();
            M::collide_cluster::<T, VL>(&mut buffer, &p, fields);
            assert!(
                access.stored.iter().all(|&n| n == 1),
                "{}: stores {:?}",
                M::NAME,
                access.stored
            );
            for (i, (a, b)) in access.to.iter().zip(&buffer).enumerate() {
                let bits = |v: &[T; VL]| v.map(|x| x.to_f64().to_bits());
                assert_eq!(
                    bits(a),
                    bits(b),
                    "{} {} VL {VL} fields {}: population {i}",
                    M::NAME,
                    T::NAME,
                    fields.is_some()
                );
            }
        }
    }
    fn both<M: Model>(values: &[f64]) {
        check::<M, f64, 1>(values);
        check::<M, f64, 8>(values);
        check::<M, f32, 16>(values);
    }
    both::<D2Q37>(&[0.8, 0.0]);
    both::<D2Q37>(&[0.8, 1e-4]);
    both::<D2Q9Bgk>(&[0.7, 0.0, 1e-4]);
    both::<D2Q9Mrt>(&[0.7, 1.1, 1.1, 1.2, 0.0, 0.0]);
    both::<D2Q9Smagorinsky>(&[0.51, 0.17, 1e-4, 0.0]);
    both::<D2Q9Boussinesq>(&[0.7, 0.1875, 1e-3, 1.0, 1.02]);
    both::<D2Q5AdvectionDiffusion>(&[0.7, 0.02, -0.01]);
    both::<D3Q19Bgk>(&[0.8, 0.0, 0.0, 0.0]);
    both::<D3Q19Trt>(&[0.8, 0.1875, 1e-4, 0.0, 0.0]);
    both::<D3Q27Bgk>(&[0.8, 0.0, 0.0, 1e-4]);
    both::<D3Q27CentralMrt>(&[0.8, 1.1, 1.2, 1.3, 1.4, 1.5, 0.0, 0.0, 0.0]);
    both::<D3Q7AdvectionDiffusion>(&[0.7, 0.02, -0.01, 0.01]);
}

/// A cluster of VL lanes gives bitwise the results of VL single-site collides, and the
/// cluster collision through an accessor (the kernels' interior path) bitwise those of the
/// cluster collision on a buffer (their boundary path).
#[test]
fn cluster_collide_equals_site_collide() {
    fn check<M: Model>(p: &M::Params, feq: impl Fn(usize) -> Vec<f64>) {
        const VL: usize = 8;
        let sites: Vec<Vec<f64>> = (0..VL).map(feq).collect();
        let mut cluster: Vec<[f64; VL]> = (0..M::Q)
            .map(|i| std::array::from_fn(|l| sites[l][i]))
            .collect();
        let from = cluster.clone();
        let mut access = Copy::new(&from);
        M::collide_access::<f64, VL, _>(&mut access, p, None);
        M::collide_cluster::<f64, VL>(&mut cluster, p, None);
        for (i, (a, b)) in access.to.iter().zip(&cluster).enumerate() {
            let bits = |v: &[f64; VL]| v.map(f64::to_bits);
            assert_eq!(bits(a), bits(b), "{} accessor, population {i}", M::NAME);
        }
        for (l, site) in sites.iter().enumerate() {
            let mut s = site.clone();
            M::collide(&mut s, p);
            for i in 0..M::Q {
                assert_eq!(
                    s[i].to_bits(),
                    cluster[i][l].to_bits(),
                    "{} lane {l} population {i}",
                    M::NAME
                );
            }
        }
    }
    let noise: Vec<f64> = (0..37).map(|k| 0.03 * (k as f64 * 1.7).sin()).collect();
    let d2q9 = |l: usize| {
        perturb(
            d2q9_feq(1.0 + 0.1 * l as f64, [0.01 * l as f64, -0.02]),
            &noise[l..],
        )
    };
    check::<D2Q9Bgk>(
        &D2Q9BgkParams {
            tau: 0.7,
            ax: 1e-4,
            ay: 0.0,
        },
        d2q9,
    );
    check::<D2Q9Trt>(
        &D2Q9TrtParams {
            tau: 0.7,
            magic: 0.1875,
            ax: 0.0,
            ay: 0.0,
        },
        d2q9,
    );
    check::<D2Q9Mrt>(
        &D2Q9MrtParams {
            tau: 0.7,
            s_e: 1.1,
            s_eps: 1.1,
            s_q: 1.2,
            ax: 0.0,
            ay: 1e-4,
        },
        d2q9,
    );
    check::<D2Q9CentralMrt>(
        &D2Q9CentralMrtParams {
            tau: 0.7,
            s_bulk: 1.2,
            s3: 1.1,
            s4: 1.3,
            ax: 1e-4,
            ay: 0.0,
        },
        d2q9,
    );
    check::<D2Q9Regularized>(
        &D2Q9RegularizedParams {
            tau: 0.7,
            ax: 0.0,
            ay: 1e-4,
        },
        d2q9,
    );
    check::<D2Q37>(&D2Q37Params { tau: 0.8, g: 1e-4 }, |l| {
        perturb(
            d2q37_feq(1.0, [0.01 * l as f64, 0.0], 1.0 + 0.01 * l as f64),
            &noise,
        )
    });
}

/// f32 kernels agree with f64 ones to single precision.
#[test]
fn f32_collide_agrees_with_f64() {
    let noise: Vec<f64> = (0..37).map(|k| 0.03 * (k as f64 * 0.9).cos()).collect();
    let f = perturb(d2q37_feq(1.1, [0.03, -0.02], 1.05), &noise);
    let p = D2Q37Params { tau: 0.8, g: 1e-4 };
    let mut f32s: Vec<f32> = f.iter().map(|&x| x as f32).collect();
    D2Q37::collide(&mut f32s, &p);
    let g = generated::<D2Q37>(&f, &p);
    let err = max_rel_diff(&f32s.iter().map(|&x| f64::from(x)).collect::<Vec<_>>(), &g);
    assert!(err < 1e-5, "f32 vs f64: {err:e}");
}

/// Relaxation times τ ≤ ½ and non-finite parameters are refused with a message naming them.
#[test]
fn invalid_parameters_are_refused() {
    let e = D2Q9Bgk::validate(&D2Q9BgkParams {
        tau: 0.5,
        ax: 0.0,
        ay: 0.0,
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("τ") && e.to_string().contains("raise τ"),
        "{e}"
    );
    assert!(
        D2Q9Bgk::validate(&D2Q9BgkParams {
            tau: 0.6,
            ax: 0.0,
            ay: 0.0
        })
        .is_ok()
    );
    assert!(
        D2Q9Bgk::validate(&D2Q9BgkParams {
            tau: 0.6,
            ax: f64::NAN,
            ay: 0.0
        })
        .unwrap_err()
        .name
            == "ax"
    );
    assert!(D2Q37::validate(&D2Q37Params { tau: 0.3, g: 0.0 }).is_err());
    assert!(
        D2Q9Trt::validate(&D2Q9TrtParams {
            tau: 0.8,
            magic: -0.1,
            ax: 0.0,
            ay: 0.0
        })
        .is_err(),
        "Λ < 0 gives ω⁻ outside (0, 2)"
    );
    assert!(
        D2Q9Trt::validate(&D2Q9TrtParams {
            tau: 0.8,
            magic: 0.1875,
            ax: 0.0,
            ay: 0.0
        })
        .is_ok()
    );
    let e = D2Q9Mrt::validate(&D2Q9MrtParams {
        tau: 0.8,
        s_e: 2.5,
        s_eps: 1.0,
        s_q: 1.0,
        ax: 0.0,
        ay: 0.0,
    })
    .unwrap_err();
    assert!(e.name.contains("MRT rate 1"), "{e}");
    assert_eq!(
        D2Q9Mrt::params_from_values(&[0.8, 1.0, 1.0, 1.0, 0.0, 0.0])
            .unwrap()
            .s_q,
        1.0
    );
    assert!(D2Q37::params_from_values(&[0.8]).is_none());
}

/// The checked properties the macro records, and D2Q37's flop budget against the ≈ 6600 of Calore et al.'s hand-written code.
#[test]
fn recorded_model_properties() {
    assert_eq!(
        (D2Q9Bgk::Q, D2Q9Bgk::HALO, D2Q9Bgk::EQUILIBRIUM_ORDER),
        (9, 1, 2)
    );
    assert_eq!(D2Q9Bgk::ISOTROPY_ORDER, 5);
    assert_eq!(
        (D2Q37::Q, D2Q37::HALO, D2Q37::EQUILIBRIUM_ORDER),
        (37, 3, 4)
    );
    const { assert!(D2Q37::ISOTROPY_ORDER >= 8) };
    assert!((D2Q37::CS2 - 0.6979533220196831).abs() < 1e-15);
    const {
        assert!(
            D2Q37::COLLIDE_FLOPS_FORCED < 6600
                && D2Q37::COLLIDE_FLOPS < D2Q37::COLLIDE_FLOPS_FORCED
        )
    };
    assert!(
        D2Q37::force_on(&D2Q37Params { tau: 1.0, g: 1e-4 })
            && !D2Q37::force_on(&D2Q37Params { tau: 1.0, g: 0.0 })
    );
    for (i, &j) in D2Q37::OPPOSITE.iter().enumerate() {
        let (a, b) = (D2Q37::VELOCITIES[i], D2Q37::VELOCITIES[j]);
        assert_eq!([a[0], a[1]], [-b[0], -b[1]]);
    }
    assert!((D2Q37::WEIGHTS.iter().sum::<f64>() - 1.0).abs() < 1e-15);
}
