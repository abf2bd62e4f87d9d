use super::*;

#[test]
fn balance_point_solves_eq_8() {
    // t_d = 1, t_h = 3, no MPI: (LX − 2M)·1 = 2M·3 → M* = LX/8.
    let m = SplitModel::concurrent(800, 10, 1, 1e-9, 3e-9, 0.0);
    assert!((m.balance_point() - 100.0).abs() < 1e-9);
    assert_eq!(m.optimal_m(), 100);
    assert!((m.t_acc(100) - m.t_host(100)).abs() < 1e-15);
    // With MPI, t_c = 40 site-times per row: (800 − 2M) = 6M + 40 → M* = 95.
    let m = SplitModel::concurrent(800, 10, 1, 1e-9, 3e-9, 40e-9);
    assert!((m.balance_point() - 95.0).abs() < 1e-9);
    assert_eq!(m.optimal_m(), 95);
}

#[test]
fn optimum_is_the_least_predicted_time_and_admissible() {
    // M* = 100/7 ≈ 14.29: the integer neighbours are compared by T_exe.
    let m = SplitModel::concurrent(100, 8, 3, 1e-9, 2.5e-9, 0.0);
    let best = m.optimal_m();
    assert_eq!(best, 14);
    for k in (2..=48).filter(|&k| admissible(100, 3, k)) {
        assert!(m.t_exe(best) <= m.t_exe(k) + 1e-18);
    }
    // A host far slower than the device: the device alone wins.
    assert_eq!(
        SplitModel::concurrent(100, 8, 3, 1e-9, 1e3, 0.0).optimal_m(),
        0
    );
    // A device sharing the host's cores: the host alone is faster than any split.
    // A device sharing the host's cores: each side at half speed beside the other. At
    // M = 40 both run 160 ns, then the host finishes its 480 ns left alone, 0.3× faster.
    let shared = SplitModel {
        t_swap: 1e-9,
        t_d_alone: 0.7e-9,
        t_h_alone: 0.3e-9,
        ..SplitModel::concurrent(100, 8, 3, 1e-9, 1e-9, 0.0)
    };
    assert!((shared.t_exe(40) - (160e-9 + 480e-9 * 0.3 + 8e-9)).abs() < 1e-18);
    assert!((shared.t_exe(0) - 800e-9 * 0.7).abs() < 1e-18);
    assert!((shared.t_exe(50) - 800e-9 * 0.3).abs() < 1e-18);
    // The host alone is faster than any split.
    assert_eq!(shared.optimal_m(), 50);
}

#[test]
fn probes_are_interior_splits() {
    assert_eq!(nearest_interior(64, 1, 16.0), Some(16));
    assert_eq!(nearest_interior(64, 3, 0.4), Some(3));
    assert_eq!(nearest_interior(64, 3, 40.0), Some(30));
    assert_eq!(nearest_interior(3, 3, 1.0), None);
    // Each part at least H = 3 wide: 9 columns split as 3 + 3 + 3, 8 cannot be split.
    assert_eq!(nearest_interior(9, 3, 2.0), Some(3));
    assert_eq!(nearest_interior(8, 3, 2.0), None);
}
