use super::*;

/// Every candidate gets its rounds, in turn, and the one with the fastest round wins even
/// when another's rounds are faster on average.
#[test]
fn keeps_the_best_round() {
    let mut t = Tuner::new(3);
    let mut seen = [0; 3];
    let costs = [[2.0, 2.0, 2.0], [1.5, 5.0, 5.0], [1.8, 1.8, 1.8]];
    for round in 0..ROUNDS * 3 {
        assert!(t.chosen().is_none());
        assert_eq!(t.settled(), round == 0);
        let c = t.next();
        t.record(costs[c][seen[c]]);
        seen[c] += 1;
    }
    assert_eq!(seen, [ROUNDS; 3]);
    assert_eq!(t.chosen(), Some(1));
    assert!(t.settled());
    t.record(0.0);
    assert_eq!(t.next(), 1, "the choice is final");
}

/// A tuning ended early keeps the candidate it is given.
#[test]
fn settles_when_told() {
    let mut t = Tuner::new(4);
    t.record(1.0);
    assert!(!t.settled());
    t.settle(2);
    assert_eq!((t.chosen(), t.next()), (Some(2), 2));
}
