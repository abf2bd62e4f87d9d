use super::*;

/// The vector conversions round exactly as the scalar ones, on values across binary16's
/// range: normal, subnormal, ties, overflow to infinity.
#[test]
fn lane_conversions_round_as_the_scalar_ones() {
    let mut x = 1.0e-9f32;
    let mut values = Vec::new();
    while x < 1.0e6 {
        values.extend([x, -x, x * (1.0 + 1.0 / 2048.0), x * (1.0 + 3.0 / 4096.0)]);
        x *= 1.37;
    }
    for chunk in values.chunks_exact(16) {
        let v: [F16s; 16] = std::array::from_fn(|l| F16s(chunk[l]));
        let stored = F16s::to_stored_lanes(v);
        assert_eq!(stored, v.map(F16s::to_stored));
        let back = F16s::from_stored_lanes(stored);
        assert_eq!(back, stored.map(F16s::from_stored));
        let half: [F16s; 8] = std::array::from_fn(|l| v[l]);
        assert_eq!(F16s::to_stored_lanes(half)[..], stored[..8]);
    }
}

/// Clusters of several conversion widths (8 lanes: F16C; 16: AVX-512F; 24: three F16C
/// chunks; 32: two AVX-512F chunks; 12: the scalar path) convert every lane, in place,
/// exactly as the scalar conversions do.
#[test]
fn every_chunk_of_a_cluster_converts_in_place() {
    fn check<const VL: usize>() {
        let v: [F16s; VL] = std::array::from_fn(|l| F16s(0.1 + l as f32 * 0.37 - 3.0));
        let stored = F16s::to_stored_lanes(v);
        assert_eq!(stored, v.map(F16s::to_stored), "VL = {VL}");
        assert_eq!(
            F16s::from_stored_lanes(stored),
            stored.map(F16s::from_stored),
            "VL = {VL}"
        );
    }
    check::<8>();
    check::<12>();
    check::<16>();
    check::<24>();
    check::<32>();
}

/// Binary16 keeps 11 significant bits: a value comes back within `2⁻¹¹` of itself, and a
/// value already in binary16 comes back exactly.
#[test]
fn a_stored_value_is_rounded_to_eleven_bits() {
    for &x in &[0.1f32, 0.444_444_45, 1.0e-3, 2.0e-4, 1234.5] {
        let back = F16s::from_stored(F16s(x).to_stored()).0;
        assert!(((back - x) / x).abs() <= 1.0 / 2048.0, "{x} → {back}");
        assert_eq!(F16s::from_stored(F16s(back).to_stored()).0, back);
    }
}
