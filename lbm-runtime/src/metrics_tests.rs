use super::*;
use crate::testing::{TestD2Q9, TestParams};
use crate::{BoundarySpec, CAoSoa};

const P: TestParams = TestParams {
    tau: 0.8,
    ax: 0.0,
    ay: 0.0,
};

#[test]
fn bandwidth_probe_reports_positive_rates() {
    // An odd size: the non-temporal copy's last task is short.
    let bw = measure_bandwidth((1 << 22) + 4096, 2);
    for p in [bw.rmw, bw.copy, bw.streamed_copy] {
        assert!(p.best > 0.0 && p.best.is_finite(), "{bw:?}");
        assert!((0.0..1.0).contains(&p.spread) && p.reps == 2, "{bw:?}");
    }
}

#[test]
fn the_fused_two_copy_step_streams_only_beyond_the_last_level_cache() {
    assert_eq!(step_pattern(Scheme::InPlace, 1 << 40), Pattern::InPlace);
    assert_eq!(step_pattern(Scheme::TwoCopy, 4096), Pattern::Copy);
    let big = step_pattern(Scheme::TwoCopy, 1 << 40);
    assert_eq!(
        big == Pattern::StreamedCopy,
        crate::machine::last_level_cache().is_some()
    );
    // A lattice reports the pattern its fused step follows, and its timings carry it.
    let spec = BoundarySpec::periodic();
    let mut lat =
        Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(8, 64, P, Scheme::TwoCopy, &spec).unwrap();
    assert_eq!(lat.step_pattern(), Pattern::Copy);
    let timing = |lat: &mut Lattice<TestD2Q9, CAoSoa<8>, f64>, k: Kernel| {
        time_kernel(lat, k, 1).unwrap().pattern
    };
    assert_eq!(timing(&mut lat, Kernel::Fused), Pattern::Copy);
    assert_eq!(timing(&mut lat, Kernel::Collide), Pattern::InPlace);
    assert_eq!(timing(&mut lat, Kernel::Propagate), Pattern::Copy);
}

/// Lattices timed in turn each get their own timing, each after its own warm-up, and
/// each runs the kernel once per timed iteration.
#[test]
fn lattices_timed_in_turn_each_get_their_own_timing() {
    let spec = BoundarySpec::periodic();
    let lattice =
        |scheme| Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(8, 64, P, scheme, &spec).unwrap();
    let (mut two, mut aa) = (lattice(Scheme::TwoCopy), lattice(Scheme::InPlace));
    let [t, a] = time_in_turn([&mut two, &mut aa], Kernel::Fused, 5).unwrap();
    assert_eq!((t.scheme, a.scheme), (Scheme::TwoCopy, Scheme::InPlace));
    assert_eq!((t.pattern, a.pattern), (Pattern::Copy, Pattern::InPlace));
    assert!(t.seconds > 0.0 && a.seconds > 0.0, "{t:?} {a:?}");
    // Each ran its warm-up (until its prefetch distances settled) and then 5 timed
    // iterations of two steps.
    let warm_up = |lat: &Lattice<TestD2Q9, CAoSoa<8>, f64>| lat.steps_done() - 10;
    let mut alone = lattice(Scheme::TwoCopy);
    time_kernel(&mut alone, Kernel::Fused, 5).unwrap();
    assert_eq!(warm_up(&two), warm_up(&alone));
    assert!(two.tuning_settled() && aa.tuning_settled());
    assert!(two.paired().is_some() && aa.paired().is_some());
    // Each timing names what its lattice's tuning kept: one pass for the two-copy step, the
    // two half-steps for the in-place one, every distance a candidate; this small lattice
    // fits in the caches, so the two-copy step does not stream.
    assert_eq!((t.tuned.len(), a.tuned.len()), (1, 2), "{t:?} {a:?}");
    assert_eq!(
        (t.tuned.clone(), a.tuned.clone()),
        (two.tuned(Kernel::Fused), aa.tuned(Kernel::Fused))
    );
    for c in t.tuned.iter().chain(&a.tuned) {
        assert!(crate::PREFETCH_DISTANCES.contains(&c.bytes), "{c:?}");
    }
    assert_ne!(t.tuned[0].stores, crate::Stores::Streamed);
    assert!(a.tuned.iter().all(|c| c.stores == crate::Stores::Plain));
    assert!(
        lattice(Scheme::TwoCopy).tuned(Kernel::Fused).is_empty(),
        "not before tuning"
    );
    assert!(two.tuned(Kernel::Propagate).is_empty());
}

#[test]
fn peak_flops_probe_reports_positive_rates() {
    for p in [measure_peak_flops::<f64>(3), measure_peak_flops::<f32>(3)] {
        assert!(p.best > 0.0 && p.best.is_finite() && p.reps == 3, "{p:?}");
        assert!((0.0..1.0).contains(&p.spread), "{p:?}");
    }
}

#[test]
fn a_probe_is_its_best_rate_and_the_spread_below_it() {
    let p = Probe::of(&[90.0, 100.0, 80.0]);
    assert_eq!((p.best, p.reps), (100.0, 3));
    assert!((p.spread - 0.2).abs() < 1e-12, "{p:?}");
    assert_eq!(Probe::of(&[]).best, 0.0);
}

#[test]
fn an_unstable_probe_says_so() {
    let quiet = Probe {
        best: 80.0,
        spread: 0.03,
        reps: 5,
    };
    assert_eq!(quiet.how(), "best of 5, spread 3%");
    let busy = Probe {
        spread: 0.4,
        ..quiet
    };
    assert!(
        busy.is_unstable() && busy.how().contains("UNSTABLE"),
        "{}",
        busy.how()
    );
}

#[test]
fn kernel_timing_counts_bytes_sites_and_flops() {
    let spec = BoundarySpec::periodic();
    let mut lat =
        Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(8, 64, P, Scheme::InPlace, &spec).unwrap();
    let t = time_kernel(&mut lat, Kernel::Fused, 3).unwrap();
    assert_eq!(
        (t.sites, t.bytes_per_site, t.flops_per_site),
        (512, 144, 150)
    );
    assert_eq!(t.pattern, Pattern::InPlace);
    let probe = |best| Probe {
        best,
        spread: 0.0,
        reps: 1,
    };
    let bw = Bandwidth {
        rmw: probe(72.0),
        copy: probe(36.0),
        streamed_copy: probe(54.0),
    };
    assert!((t.mlups_limit(&bw) - 500.0).abs() < 1e-9);
    assert!((t.gbs() / t.mlups() - 0.144).abs() < 1e-12);
}
