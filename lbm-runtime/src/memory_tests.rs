use super::*;
use crate::testing::TestD2Q9 as D2Q9;

#[test]
fn populations_count_copies_and_halos() {
    let two = populations::<D2Q9, f64>(10, 8, Scheme::TwoCopy, false);
    assert_eq!(two, 2 * (10 + 2) * 8 * 9 * 8);
    assert_eq!(
        populations::<D2Q9, f64>(10, 8, Scheme::InPlace, false),
        two / 2
    );
    assert_eq!(
        populations::<D2Q9, f32>(10, 8, Scheme::InPlace, true),
        two / 2,
        "on a device: the host's copy and the staging buffer"
    );
}

#[test]
fn a_run_too_large_is_refused_with_the_remedy() {
    let need = Need::new()
        .with("program", 0)
        .with("populations", 3 << 30)
        .with("boundaries", 1 << 20)
        .with("outputs", 1 << 29)
        .with("checkpoint", 1 << 29);
    let avail = Some(Available {
        bytes: 6 << 30,
        source: "MemAvailable",
    });
    assert!(check(&need, 1, avail).is_ok());
    let e = check(&need, 2, avail)
        .unwrap_err()
        .with_remedy("use f32")
        .to_string();
    assert!(
        e.starts_with(
            "the run needs 4.0 GiB (program 0.0, populations 3.0, boundaries 0.0, \
             outputs 0.5, checkpoint 0.5)"
        ) && e.contains("8.0 GiB for the 2 ranks on this node, 6.0 GiB available")
            && e.ends_with("(MemAvailable): use f32"),
        "{e}"
    );
    assert!(check(&need, 64, None).is_ok(), "nothing to compare with");
}

/// Sizes of any magnitude give an estimate that saturates instead of wrapping around to a
/// small number (a lattice 2⁶¹ sites high once passed the check and crashed).
#[test]
fn estimates_of_huge_lattices_saturate() {
    let huge = 1usize << 61;
    assert_eq!(
        populations::<D2Q9, f64>(8, huge, Scheme::TwoCopy, false),
        u64::MAX
    );
    assert_eq!(boundaries::<D2Q9, f64>(usize::MAX, huge, true), u64::MAX);
    let need = Need::new().with("a", u64::MAX).with("b", 1);
    assert_eq!(need.total(), u64::MAX);
    let avail = Some(Available {
        bytes: u64::MAX - 1,
        source: "MemAvailable",
    });
    assert!(check(&need, 1, avail).is_err());
}

#[test]
fn this_machine_reports_what_it_has() {
    if cfg!(target_os = "linux") {
        let a = available().expect("/proc/meminfo is readable on Linux");
        assert!(a.bytes > 0, "{a:?}");
        let before = peak_resident().expect("/proc/self/status is readable on Linux");
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let after = peak_resident().unwrap();
        std::hint::black_box(&block);
        assert!(
            after >= before && after >= block.len() as u64,
            "{before} → {after}"
        );
    }
}
