//! Unit tests of the lattice and kernels with the hand-written D2Q9 of [`crate::testing`].

use crate::layout::Dims;
use crate::testing::{initial, TestD2Q9, TestParams, P};
use crate::{
    Aos, BoundarySpec, CAoSoa, CSoa, F16s, InflowProfile, Kernel, Lattice, Layout, LbmError, Real,
    Scheme, Soa, Wall,
};

/// A spec with every kind of D2Q9 boundary: moving lid, side walls, an obstacle.
fn boxed(lx: usize, ly: usize) -> BoundarySpec {
    let mut spec = BoundarySpec::cavity(0.05);
    let mut solid = vec![false; lx * ly];
    for x in 3..6 {
        for y in 4..7 {
            solid[x * ly + y] = true;
        }
    }
    spec.solid = Some(crate::Obstacles::mask(ly, solid));
    spec
}

/// A channel with a Zou–He velocity inlet and pressure outlet.
fn zou_he_channel() -> BoundarySpec {
    BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.03, 0.0, 0.0],
        }),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        ..BoundarySpec::channel()
    }
}

/// All stored populations, in logical (layout-independent) order.
fn state<L: Layout, T: Real>(lat: &Lattice<TestD2Q9, L, T>) -> Vec<T> {
    let d = lat.dims();
    let mut out = Vec::new();
    let mut f = vec![T::default(); 9];
    for x in 0..d.lx {
        for y in 0..d.ly {
            lat.populations(x, y, &mut f).unwrap();
            out.extend_from_slice(&f);
        }
    }
    out
}

fn run<L: Layout, T: Real>(spec: &BoundarySpec, scheme: Scheme, steps: u64) -> Vec<T> {
    let (lx, ly) = (12, 32);
    let mut lat = Lattice::<TestD2Q9, L, T>::new(lx, ly, P, scheme, spec).unwrap();
    lat.set_equilibrium(initial).unwrap();
    for _ in 0..steps {
        lat.step();
    }
    state(&lat)
}

fn bits<T: Real>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// A channel with a no-slip bottom and a free-slip top.
fn half_channel() -> BoundarySpec {
    BoundarySpec {
        top: Some(Wall::FreeSlip),
        ..BoundarySpec::channel()
    }
}

fn specs() -> Vec<BoundarySpec> {
    vec![
        BoundarySpec::periodic(),
        BoundarySpec::channel(),
        boxed(12, 32),
        zou_he_channel(),
        half_channel(),
    ]
}

#[test]
fn layouts_are_bitwise_identical() {
    for spec in specs() {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            for steps in [7, 8] {
                let reference = bits(&run::<Aos, f64>(&spec, scheme, steps));
                assert_eq!(reference, bits(&run::<Soa, f64>(&spec, scheme, steps)));
                assert_eq!(reference, bits(&run::<CSoa<4>, f64>(&spec, scheme, steps)));
                assert_eq!(
                    reference,
                    bits(&run::<CAoSoa<4>, f64>(&spec, scheme, steps))
                );
                assert_eq!(
                    reference,
                    bits(&run::<CAoSoa<8>, f64>(&spec, scheme, steps))
                );
                let r32 = bits(&run::<Aos, f32>(&spec, scheme, steps));
                assert_eq!(r32, bits(&run::<CAoSoa<16>, f32>(&spec, scheme, steps)));
                assert_eq!(r32, bits(&run::<CSoa<8>, f32>(&spec, scheme, steps)));
                // Binary16 storage: the vector conversions (8 and 16 lanes) round as the
                // scalar ones (AoS, and CSoA⟨4⟩ below the F16C width).
                let r16 = bits(&run::<Aos, F16s>(&spec, scheme, steps));
                assert_eq!(r16, bits(&run::<CAoSoa<16>, F16s>(&spec, scheme, steps)));
                assert_eq!(r16, bits(&run::<CSoa<8>, F16s>(&spec, scheme, steps)));
                assert_eq!(r16, bits(&run::<CSoa<4>, F16s>(&spec, scheme, steps)));
            }
        }
    }
}

#[test]
fn in_place_is_bitwise_identical_to_two_copy() {
    for spec in specs() {
        for steps in [1, 2, 9, 10] {
            let two = bits(&run::<CAoSoa<8>, f64>(&spec, Scheme::TwoCopy, steps));
            let aa = bits(&run::<CAoSoa<8>, f64>(&spec, Scheme::InPlace, steps));
            assert_eq!(two, aa, "{spec:?} after {steps} steps");
            let two = bits(&run::<CAoSoa<16>, F16s>(&spec, Scheme::TwoCopy, steps));
            let aa = bits(&run::<CAoSoa<16>, F16s>(&spec, Scheme::InPlace, steps));
            assert_eq!(two, aa, "f16s, {spec:?} after {steps} steps");
        }
    }
}

/// The states after 5 fused steps and after 5 steps of the split kernels.
fn fused_and_split<L: Layout, T: Real>(spec: &BoundarySpec) -> [Vec<T>; 2] {
    [false, true].map(|split| {
        let mut lat = Lattice::<TestD2Q9, L, T>::new(12, 32, P, Scheme::TwoCopy, spec).unwrap();
        lat.set_equilibrium(initial).unwrap();
        for _ in 0..5 {
            if split {
                lat.step_split().unwrap();
            } else {
                lat.step();
            }
        }
        state(&lat)
    })
}

#[test]
fn split_kernels_match_fused_step() {
    for spec in specs() {
        let [fused, split] = fused_and_split::<CSoa<4>, f64>(&spec);
        assert_eq!(bits(&fused), bits(&split), "{spec:?}");
    }
}

/// A lattice larger than the last-level cache: its two-copy kernels write the second array
/// with non-temporal stores or with write-prefetched ones ([`crate::kernels::Stores`]; the
/// steps run every candidate of the tuning, [`crate::prefetch`]), and end bitwise where the
/// in-place scheme (which never streams) and the split kernels end.
fn streamed_steps_match<L: Layout, T: Real>() {
    let Some(llc) = crate::machine::last_level_cache() else {
        return;
    };
    let ly = 256;
    let lx = 2 * llc / (ly * 9 * T::BYTES) + 1;
    assert!(crate::kernels::streams_pay(lx * ly * 9 * T::BYTES));
    let spec = BoundarySpec::channel();
    let run = |scheme, split: bool| {
        let mut lat = Lattice::<TestD2Q9, L, T>::new(lx, ly, P, scheme, &spec).unwrap();
        lat.set_equilibrium(initial).unwrap();
        for _ in 0..crate::prefetch::CANDIDATES_MAX {
            if split {
                lat.step_split().unwrap();
            } else {
                lat.step();
            }
        }
        bits(&state(&lat))
    };
    let streamed = run(Scheme::TwoCopy, false);
    assert_eq!(
        streamed,
        run(Scheme::InPlace, false),
        "{} {}",
        L::NAME,
        T::NAME
    );
    assert_eq!(
        streamed,
        run(Scheme::TwoCopy, true),
        "{} {}",
        L::NAME,
        T::NAME
    );
}

#[test]
fn streamed_two_copy_steps_match_in_place_and_split() {
    streamed_steps_match::<CSoa<8>, f64>();
    streamed_steps_match::<CAoSoa<16>, f32>();
    streamed_steps_match::<CAoSoa<16>, F16s>();
}

/// In f16s the split pipeline stores the bc kernel's output (rounded to binary16) before the
/// collide kernel reads it, where the fused step collides it unrounded: the two agree bitwise
/// without boundaries, and to the storage's round-off with them.
#[test]
fn split_kernels_match_fused_step_in_f16s_to_its_round_off() {
    for spec in specs() {
        let [fused, split] = fused_and_split::<CSoa<16>, F16s>(&spec);
        if spec.left.is_none() && spec.bottom.is_none() {
            assert_eq!(bits(&fused), bits(&split), "{spec:?}");
        }
        let worst = fused
            .iter()
            .zip(&split)
            .map(|(a, b)| (a.to_f64() - b.to_f64()).abs())
            .fold(0.0, f64::max);
        println!("f16s {spec:?}: fused and split differ by {worst:e} at most");
        assert!(
            worst < 1e-4,
            "{spec:?}: fused and split differ by {worst:e}"
        );
    }
}

#[test]
fn mass_is_conserved_in_closed_domains() {
    for spec in [
        BoundarySpec::periodic(),
        BoundarySpec::channel(),
        boxed(12, 32),
    ] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let mut lat =
                Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(12, 32, P, scheme, &spec).unwrap();
            lat.set_equilibrium(initial).unwrap();
            let m0 = lat.mass();
            lat.run(200, 50).unwrap();
            let rel = (lat.mass() - m0).abs() / m0;
            assert!(
                rel < 1e-13,
                "{spec:?} {scheme:?}: relative mass change {rel:e}"
            );
        }
    }
}

/// Binary16 storage rounds every population as it is stored, so the mass is conserved to the
/// storage's round-off only: each rounding moves a population by at most half a unit in the
/// last place of its deviation from rest, and the roundings of a site and of its neighbours
/// are independent (ties to even: unbiased). Over 200 steps of 384 sites of 9 populations,
/// whose deviations from rest are of order 10⁻² (a unit in the last place of 2⁻¹⁷), that is a
/// random walk of standard deviation `√(200·3456)·2⁻¹⁷/√12 ≈ 1.8·10⁻³`, `5·10⁻⁶` of the mass
/// (measured: 9·10⁻⁶ and 1.0·10⁻⁵); the test allows six of them.
#[test]
fn f16s_conserves_mass_to_its_storage_round_off() {
    for spec in [BoundarySpec::periodic(), boxed(12, 32)] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let mut lat =
                Lattice::<TestD2Q9, CAoSoa<16>, F16s>::new(12, 32, P, scheme, &spec).unwrap();
            lat.set_equilibrium(initial).unwrap();
            let m0 = lat.mass();
            lat.run(200, 50).unwrap();
            let rel = (lat.mass() - m0).abs() / m0;
            println!("f16s {spec:?} {scheme:?}: relative mass change {rel:e}");
            assert!(
                rel < 3e-5,
                "{spec:?} {scheme:?}: relative mass change {rel:e}"
            );
        }
    }
}

#[test]
fn zou_he_imposes_velocity_and_density() {
    let mut lat = Lattice::<TestD2Q9, Soa, f64>::new(
        16,
        16,
        TestParams {
            tau: 0.8,
            ax: 0.0,
            ay: 0.0,
        },
        Scheme::TwoCopy,
        &zou_he_channel(),
    )
    .unwrap();
    lat.run(300, 100).unwrap();
    let mut m = [0.0; 3];
    for y in 1..15 {
        lat.moments(0, y, &mut m).unwrap();
        assert!(
            (m[1] - 0.03).abs() < 1e-12 && m[2].abs() < 1e-12,
            "inlet y={y}: {m:?}"
        );
        lat.moments(15, y, &mut m).unwrap();
        assert!(
            (m[0] - 1.0).abs() < 1e-12 && m[2].abs() < 1e-12,
            "outlet y={y}: {m:?}"
        );
    }
}

#[test]
fn bad_input_is_refused_before_work() {
    let spec = BoundarySpec::periodic();
    let e = Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(8, 20, P, Scheme::TwoCopy, &spec).err();
    assert!(
        matches!(e, Some(LbmError::NotMultipleOfVl { ly: 20, vl: 8, .. })),
        "{e:?}"
    );
    let e = Lattice::<TestD2Q9, Aos, f64>::new(0, 8, P, Scheme::TwoCopy, &spec).err();
    assert!(matches!(e, Some(LbmError::TooSmall { .. })), "{e:?}");
    let bad = TestParams { tau: 0.5, ..P };
    let e = Lattice::<TestD2Q9, Aos, f64>::new(8, 8, bad, Scheme::TwoCopy, &spec).err();
    assert!(matches!(e, Some(LbmError::Param(_))), "{e:?}");
    let half = BoundarySpec {
        left: Some(Wall::NO_SLIP),
        ..BoundarySpec::default()
    };
    let e = Lattice::<TestD2Q9, Aos, f64>::new(8, 8, P, Scheme::TwoCopy, &half).err();
    assert!(matches!(e, Some(LbmError::Boundary(_))), "{e:?}");
    let thermal = BoundarySpec {
        bottom: Some(Wall::Thermal { temperature: 1.0 }),
        top: Some(Wall::Thermal { temperature: 1.0 }),
        ..BoundarySpec::default()
    };
    let e = Lattice::<TestD2Q9, Aos, f64>::new(8, 8, P, Scheme::TwoCopy, &thermal).err();
    assert!(matches!(e, Some(LbmError::Boundary(_))), "{e:?}");

    let mut lat = Lattice::<TestD2Q9, Aos, f64>::new(8, 8, P, Scheme::TwoCopy, &spec).unwrap();
    let e =
        lat.set_equilibrium(|x, y| vec![1.0, if (x, y) == (3, 5) { f64::NAN } else { 0.0 }, 0.0]);
    assert!(
        matches!(e, Err(LbmError::NonFinite { x: 3, y: 5, .. })),
        "{e:?}"
    );
    assert!(
        (lat.mass() - 64.0).abs() < 1e-12,
        "a refused initial state leaves the lattice untouched"
    );
}

#[test]
fn divergence_stops_with_step_and_site() {
    let spec = BoundarySpec::periodic();
    let p = TestParams {
        tau: 0.5001,
        ax: 0.0,
        ay: 0.0,
    };
    let mut lat =
        Lattice::<TestD2Q9, CSoa<4>, f64>::new(16, 16, p, Scheme::TwoCopy, &spec).unwrap();
    lat.set_equilibrium(|x, y| vec![1.0, if (x, y) == (5, 9) { 0.4 } else { 0.0 }, 0.0])
        .unwrap();
    match lat.run(5000, 10) {
        Err(LbmError::Diverged { step, .. }) => assert!(step > 0 && step % 10 == 0),
        other => panic!("expected divergence, got {other:?}"),
    }
}

#[test]
fn split_kernels_need_two_copies() {
    let spec = BoundarySpec::periodic();
    let mut lat = Lattice::<TestD2Q9, Aos, f32>::new(8, 8, P, Scheme::InPlace, &spec).unwrap();
    assert!(lat.run_kernel(Kernel::Collide).is_err());
    assert!(lat.run_kernel(Kernel::Fused).is_ok());
}

/// The parameters of a flow driven by the acceleration `a` along x.
fn driven(tau: f64, a: f64) -> TestParams {
    TestParams {
        tau,
        ax: a,
        ay: 0.0,
    }
}

/// The relative L2 error of the profile `u` (row `y` at `u[y]`) against `exact(y + ½)`, the
/// distance from a half-way wall at `y = −½`.
fn profile_error(u: &[f64], exact: impl Fn(f64) -> f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (y, u) in u.iter().enumerate() {
        let e = exact(y as f64 + 0.5);
        num += (u - e).powi(2);
        den += e * e;
    }
    (num / den).sqrt()
}

/// Force-driven Poiseuille flow between bounce-back walls at y = −½ and y = LY − ½:
/// `u(y) = a/(2ν) (y + ½)(LY − y − ½)`, `ν = cs²(τ − ½)`.
#[test]
fn poiseuille_profile() {
    let (ly, a, tau) = (24usize, 1e-6, 0.9);
    let p = driven(tau, a);
    let mut lat = Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(
        2,
        ly,
        p,
        Scheme::InPlace,
        &BoundarySpec::channel(),
    )
    .unwrap();
    lat.run(12_000, 1000).unwrap();
    let nu = (tau - 0.5) / 3.0;
    let ux = lat.moment_field("ux").unwrap();
    let err = profile_error(&ux[..ly], |y| a / (2.0 * nu) * y * (ly as f64 - y));
    assert!(err < 1e-3, "relative L2 error {err:e}");
}

/// A free-slip top is the symmetry plane of a channel twice as high: the force-driven flow under
/// it is the lower half of the flow between two no-slip walls `2 LY − 1` sites apart, to
/// round-off, in both schemes — the half of Poiseuille's profile,
/// `u(y) = a/(2ν) (y + ½)(2H − y − ½)` with the plane at `H − ½ = LY − 1`.
#[test]
fn a_free_slip_top_is_the_symmetry_plane_of_the_channel() {
    let (ly, a, tau) = (16usize, 1e-6, 0.9);
    let p = driven(tau, a);
    let profile = |ly: usize, spec: &BoundarySpec, scheme: Scheme| {
        let mut lat = Lattice::<TestD2Q9, Aos, f64>::new(2, ly, p.clone(), scheme, spec).unwrap();
        lat.run(6_000, 1000).unwrap();
        lat.moment_field("ux").unwrap()[..ly].to_vec()
    };
    let nu = (tau - 0.5) / 3.0;
    let h = ly as f64 - 0.5;
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        let half = profile(ly, &half_channel(), scheme);
        let full = profile(2 * ly - 1, &BoundarySpec::channel(), scheme);
        for (y, (u, w)) in half.iter().zip(&full).enumerate() {
            assert!(
                (u - w).abs() <= 1e-12 * w.abs(),
                "{scheme:?} y = {y}: {u:e} against {w:e}"
            );
        }
        let err = profile_error(&half, |y| a / (2.0 * nu) * y * (2.0 * h - y));
        assert!(err < 1e-2, "{scheme:?}: relative L2 error {err:e}");
        // No shear at the plane: the profile is flat across it.
        let top = (half[ly - 1] - half[ly - 2]) / half[ly - 1];
        assert!(top.abs() < 0.01, "{scheme:?}: {top:e}");
    }
}

/// Steps swept in pairs (`Lattice::steps`, see `kernels::paired`) are bitwise the steps swept
/// one by one, in both schemes (in place: a local half-step and the next pull; two copies:
/// two steps through rings of planes): every kind of boundary (periodic x, whose halo is
/// filled before the sweep, and in place folded after; walls, an obstacle, Zou–He sides, whose
/// rings take the halo planes of the other copy), several layouts and precisions, 1, 2 and 3
/// workers (as many chunks, meeting inside the lattice), an odd and an even number of steps (a
/// pair cut by the end).
#[test]
fn paired_steps_are_bitwise_the_separate_ones() {
    let (lx, ly) = (40, 32);
    let specs = [
        BoundarySpec::periodic(),
        BoundarySpec::channel(),
        boxed(lx, ly),
        zou_he_channel(),
    ];
    fn both<L: Layout, T: Real>(spec: &BoundarySpec, size: (usize, usize), steps: u64) {
        for scheme in [Scheme::InPlace, Scheme::TwoCopy] {
            let lattice = || {
                let mut lat =
                    Lattice::<TestD2Q9, L, T>::new(size.0, size.1, P, scheme, spec).unwrap();
                lat.set_equilibrium(initial).unwrap();
                lat
            };
            let mut separate = lattice();
            (0..steps).for_each(|_| separate.step());
            let mut paired = lattice();
            paired.set_paired(true);
            paired.steps(steps);
            assert_eq!(paired.paired(), Some(true));
            // In place a pair starts from each odd state.
            let pairs = match scheme {
                Scheme::InPlace => (steps - 1) / 2,
                Scheme::TwoCopy => steps / 2,
            };
            assert_eq!(paired.paired_sweeps, pairs, "{scheme:?}");
            let what = format!(
                "{} {} {scheme:?} {spec:?} after {steps} steps",
                L::NAME,
                T::NAME
            );
            assert_eq!(bits(&state(&separate)), bits(&state(&paired)), "{what}");
            assert_eq!(paired.steps_done(), steps);
        }
    }
    let workers = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build();
    for pool in [1, 2, 3].map(|n| workers(n).unwrap()) {
        pool.install(|| {
            for spec in &specs {
                for steps in [9, 10] {
                    both::<CAoSoa<8>, f64>(spec, (lx, ly), steps);
                    both::<CSoa<4>, f64>(spec, (lx, ly), steps);
                    both::<Aos, f32>(spec, (lx, ly), steps);
                    both::<CAoSoa<16>, F16s>(spec, (lx, ly), steps);
                }
                // Narrower than two chunks' seams and wave: one chunk, all seam; a ring as
                // wide as the lattice.
                if spec.solid.is_none() {
                    both::<CAoSoa<8>, f64>(spec, (3, ly), 8);
                }
            }
        });
    }
}

/// A lattice times its steps both ways once their prefetch distances have settled, and keeps
/// one, in either scheme; a periodic two-copy lattice whose `LX` no small ring divides never
/// pairs.
#[test]
fn pairing_is_tuned_after_the_prefetch_distances() {
    let spec = BoundarySpec::channel();
    for scheme in [Scheme::InPlace, Scheme::TwoCopy] {
        let mut lat = Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(16, 64, P, scheme, &spec).unwrap();
        assert_eq!(lat.paired(), None);
        lat.steps(200);
        assert!(lat.tuning_settled());
        assert!(
            lat.paired().is_some(),
            "{scheme:?} settled within 200 steps"
        );
    }
    // 37 is prime: a ring of 3 to 12 planes cannot hold site x and x ± 37 in one plane.
    let mut prime =
        Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(37, 64, P, Scheme::TwoCopy, &spec).unwrap();
    assert_eq!(prime.paired(), Some(false));
    prime.set_paired(true);
    prime.steps(4);
    assert_eq!((prime.paired(), prime.paired_sweeps), (Some(false), 0));
    // With walls in x the ring need not divide LX.
    let walled =
        Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(37, 64, P, Scheme::TwoCopy, &boxed(37, 64));
    assert_eq!(walled.unwrap().paired(), None);
}

/// The paired two-copy sweep's rings, one per worker, must fit together in half the last-level
/// cache (`kernels::ring_budget`). A lattice whose ring fits alone but not beside a
/// second one pairs on one worker; stepped on two, it steps one by one, with the bits of the
/// steps it would have taken. A lattice whose ring alone is too large never pairs, even when
/// asked. Where the cache's size cannot be read, both pair. (The lattices take up to 8 times the
/// cache's size.)
#[test]
fn rings_pair_only_within_the_last_level_cache() {
    type Lat = Lattice<TestD2Q9, CAoSoa<8>, f64>;
    let spec = BoundarySpec::channel();
    let workers = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let (one, two) = (workers(1), workers(2));
    // Periodic x, LX = 16: two chunks on two workers, rings of 4 planes of this many bytes.
    let lx = 16;
    let ring_bytes = |ly| Dims::of::<TestD2Q9>([lx, ly, 1]).ring_of(4).len() * 8;
    let budget = crate::kernels::ring_budget();
    let most = budget.unwrap_or(1 << 20);
    let mut ly = most / ring_bytes(8) * 8;
    while ring_bytes(ly) > most {
        ly -= 8;
    }
    assert!(2 * ring_bytes(ly) > most);

    let lattice = || {
        let mut lat = Lat::new(lx, ly, P, Scheme::TwoCopy, &spec).unwrap();
        lat.set_equilibrium(initial).unwrap();
        lat
    };
    let mut paired = one.install(|| {
        let mut lat = lattice();
        lat.set_paired(true);
        lat.steps(2);
        lat
    });
    assert_eq!((paired.paired(), paired.paired_sweeps), (Some(true), 1));
    two.install(|| paired.steps(4));
    let pairs_on_two = if budget.is_some() { 1 } else { 3 };
    assert_eq!(paired.paired_sweeps, pairs_on_two);
    let mut separate = lattice();
    (0..6).for_each(|_| separate.step());
    assert_eq!(bits(&state(&separate)), bits(&state(&paired)));
    drop((paired, separate));

    // LX = 4: one chunk, a ring of 4 planes, about twice the budget.
    let wide = one.install(|| {
        let mut lat = Lat::new(4, 2 * ly, P, Scheme::TwoCopy, &spec).unwrap();
        lat.set_paired(true);
        lat.paired()
    });
    assert_eq!(wide, Some(budget.is_none()));
}

/// A parabolic inflow imposes Poiseuille's profile on the inlet column, `4 U s (1 − s)` with
/// `s = (y + ½)/LY` between the half-way walls: the moments of its sites after a step.
#[test]
fn a_parabolic_inflow_imposes_the_parabola() {
    let (lx, ly, peak) = (12, 16, 0.04);
    let spec = BoundarySpec {
        left: Some(Wall::ParabolicInflow {
            peak: [peak, 0.0, 0.0],
        }),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        ..BoundarySpec::channel()
    };
    let mut lat = Lattice::<TestD2Q9, Soa, f64>::new(lx, ly, P, Scheme::TwoCopy, &spec).unwrap();
    lat.set_equilibrium(|_, _| vec![1.0, 0.0, 0.0]).unwrap();
    lat.steps(3);
    let (ux, uy) = (
        lat.moment_field("ux").unwrap(),
        lat.moment_field("uy").unwrap(),
    );
    for y in 0..ly {
        let s = (y as f64 + 0.5) / ly as f64;
        let want = 4.0 * peak * s * (1.0 - s);
        // Within the half step of the test model's body force (`a/2`, 5e-6).
        let (u, v) = (ux[y], uy[y]);
        assert!((u - want).abs() < 1e-5, "row {y}: u = {u}, want {want}");
        assert!(v.abs() < 1e-5, "row {y}: v = {v}");
    }
}

/// An inflow given as a function of the site (`Wall::Inflow`, `InflowProfile`) imposes that
/// function: the parabola gives the lattice of `Wall::ParabolicInflow` bit for bit, and a
/// sheared plug that no wall gives, `U (0.5 + s)` with `s = (y + ½)/LY`, is the velocity of
/// the inlet column's sites after a few steps. A side without a profile, and a profile above
/// the speed of sound or not finite, are refused before any step, saying what to give.
#[test]
fn an_inflow_profile_imposes_the_function() {
    let (lx, ly, peak) = (12, 16, 0.04);
    let channel = |left: Wall, inflow: Option<InflowProfile>| BoundarySpec {
        left: Some(left),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        inflow,
        ..BoundarySpec::channel()
    };
    let run = |spec: &BoundarySpec| {
        let mut lat = Lattice::<TestD2Q9, Soa, f64>::new(lx, ly, P, Scheme::TwoCopy, spec).unwrap();
        lat.set_equilibrium(|_, _| vec![1.0, 0.0, 0.0]).unwrap();
        lat.steps(3);
        lat
    };
    let share = move |y: usize| (y as f64 + 0.5) / ly as f64;
    let parabola = InflowProfile::new(move |[_, y, _]| {
        let s = share(y);
        [peak * (4.0 * s * (1.0 - s)), 0.0, 0.0]
    });
    let given = run(&channel(Wall::Inflow, Some(parabola)));
    let parabolic = run(&channel(
        Wall::ParabolicInflow {
            peak: [peak, 0.0, 0.0],
        },
        None,
    ));
    assert_eq!(
        given.moment_field("ux").unwrap(),
        parabolic.moment_field("ux").unwrap()
    );
    let sheared = InflowProfile::new(move |[_, y, _]| [peak * (0.5 + share(y)), 0.0, 0.0]);
    let lat = run(&channel(Wall::Inflow, Some(sheared)));
    let (ux, uy) = (
        lat.moment_field("ux").unwrap(),
        lat.moment_field("uy").unwrap(),
    );
    for y in 0..ly {
        let want = peak * (0.5 + share(y));
        // Within the half step of the test model's body force (`a/2`, 5e-6).
        assert!(
            (ux[y] - want).abs() < 1e-5,
            "row {y}: u = {}, want {want}",
            ux[y]
        );
        assert!(uy[y].abs() < 1e-5, "row {y}: v = {}", uy[y]);
    }
    let refused = |spec: &BoundarySpec| {
        Lattice::<TestD2Q9, Soa, f64>::new(lx, ly, P, Scheme::TwoCopy, spec)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let message = refused(&channel(Wall::Inflow, None));
    assert!(message.contains("InflowProfile::new"), "{message}");
    let fast = InflowProfile::new(|[_, y, _]| [if y == 7 { 0.7 } else { 0.05 }, 0.0, 0.0]);
    let message = refused(&channel(Wall::Inflow, Some(fast)));
    assert!(
        message.contains("(0, 7, 0)") && message.contains("speed of sound"),
        "{message}"
    );
    let broken = InflowProfile::new(|_| [f64::NAN, 0.0, 0.0]);
    let message = refused(&channel(Wall::Inflow, Some(broken)));
    assert!(
        message.contains("NaN") && message.contains("finite"),
        "{message}"
    );
}

/// A body on an inflow or outflow side is refused before any step, with the side and where.
#[test]
fn a_body_on_an_open_side_is_refused() {
    let (lx, ly) = (12, 16);
    let mut solid = vec![false; lx * ly];
    for y in 5..9 {
        solid[(lx - 1) * ly + y] = true;
    }
    let spec = BoundarySpec {
        solid: Some(crate::Obstacles::mask(ly, solid)),
        ..zou_he_channel()
    };
    let e = Lattice::<TestD2Q9, Soa, f64>::new(lx, ly, P, Scheme::TwoCopy, &spec)
        .err()
        .expect("refused");
    let m = e.to_string();
    assert!(
        m.contains("4 site(s) of the right side, the first at (11, 5, 0)")
            && m.contains("Zou–He pressure")
            && m.contains("move the body"),
        "{m}"
    );
}

/// Outflow sides ([`Wall::Outflow`]) — the right one of a channel, and the top of a box open
/// on two sides, whose corner with the right one bounces its diagonal link back — give the
/// same bits in every layout, with the split kernels, with paired sweeps and in place (the
/// populations they read from their neighbours held before each half-step).
#[test]
fn outflows_are_bitwise_in_every_layout_and_in_place() {
    let inlet = Some(Wall::ZouHeVelocity {
        velocity: [0.03, 0.0, 0.0],
    });
    let specs = [
        BoundarySpec {
            left: inlet,
            right: Some(Wall::Outflow),
            ..BoundarySpec::channel()
        },
        BoundarySpec {
            left: inlet,
            right: Some(Wall::Outflow),
            bottom: Some(Wall::NO_SLIP),
            top: Some(Wall::Outflow),
            ..BoundarySpec::periodic()
        },
    ];
    for spec in &specs {
        for steps in [7, 8] {
            let reference = bits(&run::<Aos, f64>(spec, Scheme::TwoCopy, steps));
            assert_eq!(
                reference,
                bits(&run::<Soa, f64>(spec, Scheme::TwoCopy, steps))
            );
            assert_eq!(
                reference,
                bits(&run::<CSoa<4>, f64>(spec, Scheme::TwoCopy, steps))
            );
            assert_eq!(
                reference,
                bits(&run::<CAoSoa<8>, f64>(spec, Scheme::TwoCopy, steps))
            );
            let r32 = bits(&run::<Aos, f32>(spec, Scheme::TwoCopy, steps));
            assert_eq!(
                r32,
                bits(&run::<CAoSoa<16>, f32>(spec, Scheme::TwoCopy, steps))
            );
        }
        let [fused, split] = fused_and_split::<CSoa<4>, f64>(spec);
        assert_eq!(bits(&fused), bits(&split), "{spec:?}");
        let lattice = || {
            let mut lat =
                Lattice::<TestD2Q9, CAoSoa<8>, f64>::new(40, 32, P, Scheme::TwoCopy, spec).unwrap();
            lat.set_equilibrium(initial).unwrap();
            lat
        };
        let (mut separate, mut paired) = (lattice(), lattice());
        (0..10).for_each(|_| separate.step());
        paired.set_paired(true);
        paired.steps(10);
        assert_eq!(paired.paired_sweeps, 5);
        assert_eq!(bits(&state(&separate)), bits(&state(&paired)), "{spec:?}");
        for steps in [7, 8] {
            let two = bits(&run::<CAoSoa<8>, f64>(spec, Scheme::TwoCopy, steps));
            assert_eq!(two, bits(&run::<Soa, f64>(spec, Scheme::InPlace, steps)));
            assert_eq!(
                two,
                bits(&run::<CAoSoa<8>, f64>(spec, Scheme::InPlace, steps))
            );
        }
    }
}

/// A pressure wave is reflected whole, its sign turned, by a Zou–He pressure side, which holds
/// the density, and about a quarter of it by an outflow side: a Gaussian pulse
/// `δρ = 10⁻³ e^{−(x−x₀)²/2σ²}` (σ = 8) splits into two halves that run at `c_s`; after the
/// right one has reached the right side and could have come back 60 sites, the largest `δρ`
/// within reach of its echo is −0.88 of the half's amplitude with the pressure side, −0.24
/// with the outflow. The outflow's share is that of long waves, `(√3 − 1)/(√3 + 1) = 0.27`:
/// extrapolating the entering population `f_ī ∝ (1 − √3) R + (1 + √3) L` (D1Q3's, with `R`
/// and `L` the right- and left-running waves) with a zero gradient makes `L′ = 0.27 R′`
/// there.
#[test]
fn a_pressure_wave_leaves_through_an_outflow_and_is_reflected_by_a_pressure_side() {
    let (lx, ly, x0, amp) = (300, 4, 200.0, 1e-3);
    let reflected = |right: Wall| {
        let spec = BoundarySpec {
            left: Some(Wall::Outflow),
            right: Some(right),
            ..BoundarySpec::periodic()
        };
        let params = TestParams {
            tau: 0.6,
            ax: 0.0,
            ay: 0.0,
        };
        let mut lat =
            Lattice::<TestD2Q9, Soa, f64>::new(lx, ly, params, Scheme::TwoCopy, &spec).unwrap();
        lat.set_equilibrium(|x, _| {
            let s = (x as f64 - x0) / 8.0;
            vec![1.0 + amp * (-0.5 * s * s).exp(), 0.0, 0.0]
        })
        .unwrap();
        // 99 sites to the side and 60 back, at c_s = 1/√3 site per step.
        let steps = ((99.0 + 60.0) * 3f64.sqrt()) as u64;
        lat.steps(steps);
        let rho = lat.moment_field("rho").unwrap();
        // The echo lies near x = 239; the left half has left the window x ≥ 150.
        let window = (150..lx).map(|x| rho[x * ly] - 1.0);
        window.fold(0.0, |m: f64, v| if v.abs() > m.abs() { v } else { m }) / (amp / 2.0)
    };
    let outflow = reflected(Wall::Outflow);
    let pressure = reflected(Wall::ZouHePressure { density: 1.0 });
    assert!(
        (-0.3..-0.2).contains(&outflow),
        "the outflow reflects {outflow:.3}"
    );
    assert!(pressure < -0.8, "the pressure side reflects {pressure:.3}");
}

/// Discs with curved walls (linear interpolated bounce-back, wall distances spread over
/// `(0, 1]` so that links of both kinds, `q < ½` and `q ≥ ½`, are taken; one disc across the
/// periodic edge x = 0, one turning) in a forced channel.
fn curved_discs(interpolation: crate::Interpolation) -> BoundarySpec {
    let disc = |x: usize, y: usize| {
        let edge = (x as f64 - 0.3).abs().min((x as f64 - 12.3).abs());
        (x as f64 - 6.5).hypot(y as f64 - 17.0) < 3.3 || edge.hypot(y as f64 - 7.0) < 2.2
    };
    let spread = |[x, y, _]: [usize; 3], c: [i32; 3]| {
        let k = (x * 7 + y * 3) as i32 + c[0] * 5 + c[1] * 11;
        Some(0.05 + 0.95 * f64::from(k.rem_euclid(10)) / 9.0)
    };
    let turning = |p: [f64; 3]| [-0.01 * (p[1] - 17.0), 0.01 * (p[0] - 6.5), 0.0];
    BoundarySpec {
        solid: Some(
            crate::Obstacles::new(disc)
                .with_wall_distance(spread)
                .with_wall_velocity(turning)
                .with_interpolation(interpolation),
        ),
        ..BoundarySpec::channel()
    }
}

/// Curved walls, linear and quadratic, run in place bitwise as with two copies, every layout
/// and both precisions, after odd and even numbers of half-steps (the odd state's moments
/// too).
#[test]
fn curved_walls_run_in_place_bitwise_as_with_two_copies() {
    for how in [
        crate::Interpolation::Linear,
        crate::Interpolation::Quadratic,
    ] {
        curved_walls_in_place(&curved_discs(how));
    }
}

/// The checks of [`curved_walls_run_in_place_bitwise_as_with_two_copies`] on `spec`.
fn curved_walls_in_place(spec: &BoundarySpec) {
    let spec = spec.clone();
    for steps in [1, 2, 9, 10] {
        let two = bits(&run::<CAoSoa<8>, f64>(&spec, Scheme::TwoCopy, steps));
        assert_eq!(
            two,
            bits(&run::<CAoSoa<8>, f64>(&spec, Scheme::InPlace, steps))
        );
        assert_eq!(two, bits(&run::<Soa, f64>(&spec, Scheme::InPlace, steps)));
        assert_eq!(
            two,
            bits(&run::<CSoa<4>, f64>(&spec, Scheme::InPlace, steps))
        );
        let two = bits(&run::<Aos, f32>(&spec, Scheme::TwoCopy, steps));
        assert_eq!(two, bits(&run::<Aos, f32>(&spec, Scheme::InPlace, steps)));
        assert_eq!(
            two,
            bits(&run::<CAoSoa<16>, f32>(&spec, Scheme::InPlace, steps))
        );
    }
    let moments = |scheme| {
        let mut lat = Lattice::<TestD2Q9, Soa, f64>::new(12, 32, P, scheme, &spec).unwrap();
        lat.set_equilibrium(initial).unwrap();
        lat.steps(7);
        ["rho", "ux", "uy"].map(|m| lat.moment_field(m).unwrap())
    };
    assert_eq!(moments(Scheme::TwoCopy), moments(Scheme::InPlace));
}
