use super::*;
use crate::tuner::ROUNDS;

/// A pass whose sweeps are fastest at one candidate settles on it after its rounds,
/// whatever the order of the noise, and keeps it; untimed passes do not hold back
/// `settled`.
#[test]
fn settles_on_the_fastest_candidate() {
    let mut p = Prefetch::new(&[Stores::Plain]);
    assert!(p.settled());
    let cost = |bytes: usize| if bytes == 16 << 10 { 1.0 } else { 2.0 };
    for sweep in 0..ROUNDS * CANDIDATES.len() {
        assert!(!p.settled() || sweep == 0);
        let bytes = p.choice(Pass::AaPull).bytes;
        // Noise: every other sweep is slowed by a third.
        let noise = if sweep % 2 == 0 { 1.0 } else { 1.33 };
        p.record(Pass::AaPull, 10, 10.0 * cost(bytes) * noise);
    }
    assert!(p.settled());
    assert_eq!(p.kept(Pass::AaPull).map(|c| c.bytes), Some(16 << 10));
    assert_eq!(p.choice(Pass::AaPull).bytes, 16 << 10);
    p.record(Pass::AaPull, 10, 0.001);
    assert_eq!(
        p.choice(Pass::AaPull).bytes,
        16 << 10,
        "the choice is final"
    );
    assert_eq!(p.kept(Pass::AaLocal), None);
    assert_eq!(p.kept(Pass::Propagate), None);
    assert_eq!(p.choice(Pass::Propagate).bytes, 0);
}

/// Each candidate, every distance with every kind of store, is timed the same number of
/// times before the choice.
#[test]
fn every_candidate_gets_its_rounds() {
    let stores = &[Stores::Streamed, Stores::Prefetched];
    let mut p = Prefetch::new(stores);
    let mut seen = [[0; CANDIDATES.len()]; 2];
    for _ in 0..ROUNDS * CANDIDATES_MAX {
        let c = p.choice(Pass::Fused);
        let s = stores.iter().position(|&s| s == c.stores).unwrap();
        seen[s][CANDIDATES.iter().position(|&b| b == c.bytes).unwrap()] += 1;
        p.record(Pass::Fused, 1, 1.0);
    }
    assert_eq!(seen, [[ROUNDS; CANDIDATES.len()]; 2]);
    assert!(p.kept(Pass::Fused).is_some());
    // The other passes store plainly.
    assert_eq!(p.choice(Pass::AaPull).stores, Stores::Plain);
}

/// The fused step keeps the kind of store of its fastest candidate.
#[test]
fn chooses_the_kind_of_store_with_the_distance() {
    let mut p = Prefetch::new(&[Stores::Streamed, Stores::Prefetched]);
    for _ in 0..ROUNDS * CANDIDATES_MAX {
        let c = p.choice(Pass::Fused);
        let fast = c.stores == Stores::Prefetched && c.bytes == 4 << 10;
        p.record(Pass::Fused, 1, if fast { 1.0 } else { 1.5 });
    }
    assert_eq!(
        p.choice(Pass::Fused),
        Choice {
            bytes: 4 << 10,
            stores: Stores::Prefetched
        }
    );
}
