use super::*;

const C: Coefficients = Coefficients {
    alpha: 1e-8,
    beta: 1e-7,
    gamma: 6e-8,
    delta: 4e-8,
    lambda: 3e-6,
};

/// While the bulk hides the communication, strong scaling is linear; beyond the crossing
/// `α (Lx/n) Ly + β Lx/n = (γ + δ) Ly + λ` the step time stops falling.
#[test]
fn strong_scaling_is_linear_until_communication_dominates() {
    let p = strong_scaling(&C, (1000, 1000), 3, &[1, 2, 10, 100, 250, 500], None);
    assert_eq!(p.len(), 5, "500 ranks leave 2 columns per slab: {p:?}");
    assert_eq!(p[0].relative, 1.0);
    assert!((p[1].relative - 2.0).abs() < 1e-12, "{:?}", p[1]);
    assert!((p[2].relative - 10.0).abs() < 1e-12, "{:?}", p[2]);
    // n = 100: T_a = 1e-8·10·1000 + 1e-7·10 = 1.01e-4, T_b = 1e-4 + 3e-6: T_b dominates.
    assert!(p[3].t_b > p[3].t_a && p[3].t == p[3].t_b, "{:?}", p[3]);
    assert_eq!(p[4].t, p[3].t);
}

/// A cut along x alone is the ring's model; a 3-D cut of a large cube on many ranks
/// exchanges far less than its slabs two planes thick, which are all border and halo.
#[test]
fn cuts_in_three_dimensions_beat_slabs() {
    use crate::blocks::Cut;
    let ring = C.terms(600, 400 * 300, 6);
    let cut = C.cut_terms([600, 400, 300], Cut([6, 1, 1]), 1);
    assert!((ring.0 - cut.0).abs() < 1e-15 && (ring.1 - cut.1).abs() < 1e-12);
    let n = [1024; 3];
    let (slab_a, slab_b) = C.cut_terms(n, Cut([512, 1, 1]), 1);
    let (cube_a, cube_b) = C.cut_terms(n, Cut([8, 8, 8]), 1);
    assert!(
        (slab_a - cube_a).abs() < 1e-3 * slab_a,
        "the same sites a rank"
    );
    assert!(slab_b > 10.0 * cube_b, "slabs {slab_b} s, cubes {cube_b} s");
    assert!(cube_b < cube_a, "the cube's exchange hides behind its bulk");
}

/// Weak scaling keeps the slab fixed: the efficiency is 1 while `T_a ≥ T_b`.
#[test]
fn weak_scaling_efficiency() {
    let p = weak_scaling(&C, (512, 1000), &[1, 4, 64], None);
    assert!(p.iter().all(|q| (q.relative - 1.0).abs() < 1e-12), "{p:?}");
    let thin = weak_scaling(&C, (4, 1000), &[1, 8], None);
    let expect = C.step_time(4, 1000, 1) / ((C.gamma + C.delta) * 1000.0 + C.lambda);
    assert!((thin[1].relative - expect).abs() < 1e-12, "{thin:?}");
}

/// Outputs under weak scaling: the file system's aggregate bandwidth caps the writes once
/// `n B_r > B_fs` (here beyond 50 ranks), and the metadata server adds `n / R`.
#[test]
fn outputs_stop_scaling_at_the_file_systems_bandwidth() {
    let fs = FileSystem::PARALLEL;
    let o = Outputs {
        every: 100,
        checkpoint_every: 0,
        mu: 1e-9,
        kappa: 0.0,
        vtk_bytes: 32,
        checkpoint_bytes: 72,
    };
    let (w, ly) = (1000, 1000);
    let s = (w * ly) as f64;
    let at = |n: usize| o.seconds_per_step(&fs, n * w, ly, n);
    let expect = |n: f64, b: f64| (1e-9 * s + 1e-2 + n / 2e4 + n * 32.0 * s / b) / 100.0;
    assert!((at(1) - expect(1.0, 2e9)).abs() < 1e-15, "{}", at(1));
    assert!(
        (at(1024) - expect(1024.0, 100e9)).abs() < 1e-12,
        "{}",
        at(1024)
    );
    let p = weak_scaling(&C, (w, ly), &[1, 16, 1024], Some((&o, &fs)));
    assert!(p[1].relative > 0.99 * p[0].relative, "{p:?}");
    assert!(p[2].relative < 0.9, "{p:?}");
    assert_eq!(p[2].t_io, at(1024));
}

/// The network terms: two messages of `H·Q` values per row each way.
#[test]
fn network_terms() {
    let c = C.with_network(&Network::INFINIBAND_EDR, 3, 37, 8);
    assert!((c.delta - 2.0 * 3.0 * 37.0 * 8.0 / 12e9).abs() < 1e-20);
    assert_eq!(c.lambda, 3e-6);
    let n = Network::from_loopback(1000, 2e-6 + 2e-7, 1e-6);
    assert!((n.bandwidth - 2000.0 / 2e-7).abs() / n.bandwidth < 1e-9);
}
