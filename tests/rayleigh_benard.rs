//! Rayleigh–Bénard convection on two coupled lattices (D2Q9 flow + D2Q5 temperature): the
//! onset against linear stability and the Nusselt number against Clever & Busse (1974).

use lbm::cases::{growth_rate, onset, RayleighBenard, CLEVER_BUSSE_NUSSELT, CRITICAL_RAYLEIGH};
use lbm::{CAoSoa, Scheme, Soa};

/// The growth rate `σ H²/κ` of the critical mode at `ra`, between 1 and 2.5 diffusion times.
fn growth(height: usize, ra: f64) -> f64 {
    let case = RayleighBenard::new(height, ra);
    let mut c = case.lattices::<Soa, f64>(Scheme::TwoCopy).unwrap();
    let t = case.diffusion_time();
    c.advance(t as u64).unwrap();
    let a = case.measure(&c).unwrap();
    c.advance((1.5 * t) as u64).unwrap();
    let b = case.measure(&c).unwrap();
    growth_rate(&case, &a, &b, (1.5 * t) as u64 as f64)
}

#[test]
fn onset_of_convection_matches_linear_stability() {
    let below = (1550.0, growth(16, 1550.0));
    let above = (1850.0, growth(16, 1850.0));
    let ra_c = onset(below, above);
    println!("σH²/κ: {below:?} {above:?}; Ra_c = {ra_c:.1} ({:+.2} %)", (ra_c / CRITICAL_RAYLEIGH - 1.0) * 100.0);
    assert!(below.1 < 0.0 && above.1 > 0.0);
    assert!((ra_c / CRITICAL_RAYLEIGH - 1.0).abs() < 0.02);
}

#[test]
fn nusselt_number_at_ra_1e4() {
    let case = RayleighBenard { perturbation: 1e-2, ..RayleighBenard::new(32, 1e4) };
    let mut c = case.lattices::<CAoSoa<8>, f64>(Scheme::InPlace).unwrap();
    let t = case.diffusion_time();
    let mut last = case.measure(&c).unwrap();
    for k in 0..8 {
        c.advance((t / 4.0) as u64).unwrap();
        let m = case.measure(&c).unwrap();
        println!("t = {:.2}: Nu {:.4}, Re {:.3}", (k + 1) as f64 / 4.0, m.nusselt, m.reynolds);
        last = m;
    }
    let want = CLEVER_BUSSE_NUSSELT[2].1;
    println!("Nu = {:.4} vs {want} ({:+.2} %)", last.nusselt, (last.nusselt / want - 1.0) * 100.0);
}
