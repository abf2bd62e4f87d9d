//! Rayleigh–Bénard convection on two coupled lattices (D2Q9 flow + D2Q5 temperature): the
//! onset against linear stability and the Nusselt number against Clever & Busse (1974).

use lbm::cases::{CLEVER_BUSSE_NUSSELT, CRITICAL_RAYLEIGH, RayleighBenard, growth_rate, onset};
use lbm::{CAoSoa, Scheme, Soa};

/// The growth rate `σ H²/κ` of the critical mode at `ra` (H = `height`, two rolls), between 1
/// and 2.5 diffusion times (the other modes have decayed by then).
fn growth(height: usize, ra: f64) -> f64 {
    let case = RayleighBenard::new(height, ra);
    let mut c = case.lattices::<Soa, f64>(Scheme::TwoCopy).unwrap();
    let t = case.diffusion_time();
    c.advance(t as u64).unwrap();
    let a = case.measure(&mut c).unwrap();
    c.advance((1.5 * t) as u64).unwrap();
    let b = case.measure(&mut c).unwrap();
    growth_rate(&case, &a, &b, (1.5 * t) as u64 as f64)
}

#[test]
fn onset_of_convection_matches_linear_stability() {
    let below = (1550.0, growth(16, 1550.0));
    let above = (1850.0, growth(16, 1850.0));
    let ra_c = onset(below, above);
    println!(
        "H = 16: σH²/κ = {:.4} at Ra = {}, {:.4} at Ra = {}; Ra_c = {ra_c:.1} ({:+.2} % from {CRITICAL_RAYLEIGH})",
        below.1,
        below.0,
        above.1,
        above.0,
        (ra_c / CRITICAL_RAYLEIGH - 1.0) * 100.0
    );
    // Decay below, growth above, at the rate of the amplitude equation, σ ≈ 11.4 ε κ/H² at
    // Pr = 0.71 (Cross & Hohenberg 1993), ε = Ra/Ra_c − 1, within 15 %.
    for (ra, sigma) in [below, above] {
        let expected = 11.4 * (ra / CRITICAL_RAYLEIGH - 1.0);
        assert!(
            (sigma / expected - 1.0).abs() < 0.15,
            "σ = {sigma} at Ra = {ra}, expected {expected}"
        );
    }
    assert!((ra_c / CRITICAL_RAYLEIGH - 1.0).abs() < 0.02);
}

#[test]
fn nusselt_number_at_ra_1e4_matches_clever_and_busse() {
    // H = 32 (65 × 32), Pr = 0.71: the rolls settle within one diffusion time H²/κ.
    let case = RayleighBenard {
        perturbation: 1e-2,
        ..RayleighBenard::new(32, 1e4)
    };
    let mut c = case.lattices::<CAoSoa<8>, f64>(Scheme::InPlace).unwrap();
    let t = case.diffusion_time();
    c.advance(t as u64).unwrap();
    let settled = case.measure(&mut c).unwrap();
    c.advance((t / 4.0) as u64).unwrap();
    c.check().unwrap();
    let last = case.measure(&mut c).unwrap();
    let (ra, want) = CLEVER_BUSSE_NUSSELT[2];
    assert_eq!(ra, 1e4);
    println!(
        "Ra = 1e4, Pr = 0.71, H = 32: Nu = {:.4} (Clever & Busse {want}: {:+.2} %), Re = {:.2}; \
         a quarter diffusion time earlier Nu = {:.4}",
        last.nusselt,
        (last.nusselt / want - 1.0) * 100.0,
        last.reynolds,
        settled.nusselt
    );
    assert!((last.nusselt - settled.nusselt).abs() < 1e-3, "not steady");
    assert!((last.nusselt / want - 1.0).abs() < 0.01);
}
