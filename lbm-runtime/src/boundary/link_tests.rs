use super::*;

/// Where each term's population lies, along the link from `x` (in units of `c_i`), when
/// the link is taken: `f*_ī` of the sites `x + s c_i` is interpolated at `1 − 2q` before it
/// meets the wall (`q < ½`); at `q ≥ ½`, `f*_ī(x)` has met the wall and lies at `1 − 2q`,
/// `f*_i(x + s c_i)` at `s + 1`, and the link's value is wanted at `0`.
fn interpolated(w: &Interp<f64>, q: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    let at = |t: Term| match (t.pop, q < 0.5) {
        (Pop::Opposite, true) => f(f64::from(t.step)),
        (Pop::Opposite, false) => f(1.0 - 2.0 * q),
        (Pop::Same, _) => f(f64::from(t.step) + 1.0),
    };
    let target = if q < 0.5 { f(1.0 - 2.0 * q) } else { f(0.0) };
    (w.apply(|_, t| at(t)), target)
}

/// Each interpolation is the Lagrange interpolation of its order through the populations
/// it reads: exact for a linear profile along the link (linear) or a parabola (quadratic),
/// not for the next order; its weights sum to 1; its share of the wall's momentum is the
/// weight of the population that met the wall.
#[test]
fn the_interpolations_are_exact_to_their_order() {
    let line = |s: f64| 0.3 - 1.7 * s;
    let parabola = |s: f64| 0.3 - 1.7 * s + 0.9 * s * s;
    let cubic = |s: f64| s * s * s;
    for k in 1..=20 {
        let q = f64::from(k) / 20.0;
        for (how, exact) in [
            (Interpolation::Linear, &line as &dyn Fn(f64) -> f64),
            (Interpolation::Quadratic, &parabola),
        ] {
            let (w, share) = Interp::<f64>::new(how, q, [true, true]);
            let (got, want) = interpolated(&w, q, exact);
            assert!(
                (got - want).abs() < 1e-13,
                "{how:?} at q = {q}: {got} ≠ {want}"
            );
            assert!(
                (w.w.iter().sum::<f64>() - 1.0).abs() < 1e-14,
                "{how:?} at q = {q}"
            );
            assert_eq!(share, if q < 0.5 { 1.0 } else { w.w[0] }, "{how:?} at {q}");
            let next = if how == Interpolation::Linear {
                &parabola as &dyn Fn(f64) -> f64
            } else {
                &cubic
            };
            let (got, want) = interpolated(&w, q, next);
            assert!(
                q == 0.5 || (got - want).abs() > 1e-6,
                "{how:?} at q = {q} is exact for the next order"
            );
        }
    }
}

/// A stencil that lacks a fluid site falls back: quadratic to linear, linear at `q < ½` to
/// half-way; and the reach follows.
#[test]
fn a_short_stencil_falls_back() {
    let quadratic = |q, fluid| Interp::<f64>::new(Interpolation::Quadratic, q, fluid).0;
    let linear = |q, fluid| Interp::<f64>::new(Interpolation::Linear, q, fluid).0;
    assert_eq!(quadratic(0.3, [true, false]), linear(0.3, [true, true]));
    assert_eq!(quadratic(0.3, [false, false]), Interp::halfway());
    assert_eq!(quadratic(0.7, [false, false]), linear(0.7, [true, true]));
    assert_eq!(linear(0.3, [false, true]), Interp::halfway());
    assert_eq!(quadratic(0.3, [true, true]).reach(), 2);
    assert_eq!(quadratic(0.7, [true, true]).reach(), 1);
    assert_eq!(linear(0.3, [true, true]).reach(), 1);
    assert_eq!(linear(0.7, [true, true]).reach(), 0);
    assert_eq!(Interp::<f64>::halfway().reach(), 0);
}
