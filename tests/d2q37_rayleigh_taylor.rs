//! Rayleigh–Taylor instability with D2Q37 in the linear regime (the seeds' production case,
//! seed 000 §3): a cold, dense fluid above a hot, light one between thermal walls, under gravity,
//! with a cosine perturbation of the interface. The perturbation grows exponentially; its rate is
//! compared with linear theory.
//!
//! For a sharp interface between viscous fluids (Chandrasekhar 1961, with equal kinematic
//! viscosities ν) the rate is `σ_sharp = √(A g k + ν²k⁴) − ν k²`, A the Atwood number. Here the
//! interface is diffuse and thickens by thermal diffusion (κ = ν, reference/d2q37.md), which
//! slows the growth; for a density profile of gradient length L the classical estimate
//! (Le Levier et al. 1955, Duff et al. 1962) is `σ² ≈ A g k / (1 + k L)`, which with the
//! viscous term gives `σ_diffuse = √(A g k / (1 + k L) + ν²k⁴) − ν k²`. The measured rate must lie
//! below the sharp-interface rate and within 15% of the diffuse-interface estimate, with L taken
//! from the simulated mean temperature profile halfway through the fit window.

use std::f64::consts::PI;

use lbm::models::{D2Q37Params, D2Q37};
use lbm::{BoundarySpec, Lattice, Model, Scheme, Soa, Wall};

const LX: usize = 64;
const LY: usize = 256;
const TAU: f64 = 0.51;
const G: f64 = 5e-4;
const T_HOT: f64 = 1.1;
const T_COLD: f64 = 0.9;

/// The amplitude of the interface's cos(kx) mode: the height where T crosses its mean value,
/// per column, projected on cos(kx).
fn interface_amplitude(t: &[f64], k: f64) -> f64 {
    let mid = 0.5 * (T_HOT + T_COLD);
    let heights = (0..LX).map(|x| {
        let col = &t[x * LY..(x + 1) * LY];
        let y = (3..LY - 4)
            .find(|&y| col[y] >= mid && col[y + 1] < mid)
            .expect("one crossing per column");
        y as f64 + (col[y] - mid) / (col[y] - col[y + 1])
    });
    2.0 / LX as f64
        * heights
            .enumerate()
            .map(|(x, h)| h * (k * x as f64).cos())
            .sum::<f64>()
}

/// Gradient length of the horizontally averaged temperature: ΔT / (2 max |dT/dy|) (the
/// half-width of a tanh profile).
fn gradient_length(t: &[f64]) -> f64 {
    let mean: Vec<f64> = (0..LY)
        .map(|y| (0..LX).map(|x| t[x * LY + y]).sum::<f64>() / LX as f64)
        .collect();
    let max = mean
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f64::max);
    (T_HOT - T_COLD) / (2.0 * max)
}

/// Least-squares slope of ln(a) against t.
fn growth_rate(samples: &[(f64, f64)]) -> f64 {
    let n = samples.len() as f64;
    let (st, sl) = samples
        .iter()
        .fold((0.0, 0.0), |(st, sl), (t, a)| (st + t, sl + a.ln()));
    let (mt, ml) = (st / n, sl / n);
    let cov: f64 = samples.iter().map(|(t, a)| (t - mt) * (a.ln() - ml)).sum();
    let var: f64 = samples.iter().map(|(t, _)| (t - mt).powi(2)).sum();
    cov / var
}

#[test]
fn linear_growth_rate_agrees_with_theory() {
    let k = 2.0 * PI / LX as f64;
    let atwood = (T_HOT - T_COLD) / (T_HOT + T_COLD);
    let nu = D2Q37::CS2 * (TAU - 0.5);
    let walls = BoundarySpec {
        bottom: Some(Wall::Thermal { temperature: T_HOT }),
        top: Some(Wall::Thermal {
            temperature: T_COLD,
        }),
        ..BoundarySpec::periodic()
    };
    let mut lat = Lattice::<D2Q37, Soa, f64>::new(
        LX,
        LY,
        D2Q37Params { tau: TAU, g: G },
        Scheme::TwoCopy,
        &walls,
    )
    .unwrap();
    let temp = |x: usize, y: usize| {
        let eta = 0.5 * (k * x as f64).cos();
        0.5 * (T_HOT + T_COLD) - 0.5 * (T_HOT - T_COLD) * (y as f64 - LY as f64 / 2.0 - eta).tanh()
    };
    // Hydrostatic balance dp/dy = −ρ g with p = ρT, integrated up the unperturbed profile.
    let mut p = vec![1.0; LY];
    for y in 1..LY {
        let t = 0.5 * (temp(LX / 4, y - 1) + temp(LX / 4, y));
        p[y] = p[y - 1] * (1.0 - G / (2.0 * t)) / (1.0 + G / (2.0 * t));
    }
    // The equilibrium takes the bare velocity: −a/2 = (0, g/2) puts the fluid at rest.
    lat.set_equilibrium(|x, y| vec![p[y] / temp(x, y), 0.0, G / 2.0, temp(x, y)])
        .unwrap();

    lat.run(500, 100).unwrap();
    let mut samples = Vec::new();
    let mut length = 0.0;
    for n in 0..=10 {
        let t = lat.moment_field("T").unwrap();
        samples.push((lat.steps_done() as f64, interface_amplitude(&t, k)));
        if n == 5 {
            length = gradient_length(&t);
        }
        lat.run(100, 0).unwrap();
    }
    let sigma = growth_rate(&samples);
    let sharp = (atwood * G * k + nu * nu * k.powi(4)).sqrt() - nu * k * k;
    let diffuse = (atwood * G * k / (1.0 + k * length) + nu * nu * k.powi(4)).sqrt() - nu * k * k;
    println!(
        "Rayleigh–Taylor, A = {atwood:.3}, g = {G:e}, k = {k:.4}, ν = {nu:.5}: measured σ = {sigma:.4e}; \
         sharp interface σ = {sharp:.4e} (ratio {:.3}); diffuse interface (L = {length:.2}) σ = {diffuse:.4e} (ratio {:.3})",
        sigma / sharp,
        sigma / diffuse
    );
    assert!(
        samples.windows(2).all(|w| w[1].1 > w[0].1),
        "the perturbation grows: {samples:?}"
    );
    assert!(
        sigma < sharp,
        "diffusion can only slow the growth: σ = {sigma:e}, sharp-interface σ = {sharp:e}"
    );
    assert!(
        (sigma / diffuse - 1.0).abs() < 0.15,
        "σ = {sigma:e} vs diffuse-interface theory {diffuse:e}"
    );
}
