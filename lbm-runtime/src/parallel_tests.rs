use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn every_item_is_visited_once_and_results_keep_their_order() {
    let seen: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
    for_each(0..1000, &|k| {
        seen[k].fetch_add(1, Ordering::Relaxed);
    });
    for_each_init(0..1000, &Vec::<usize>::new, &|s, k| {
        s.push(k);
        seen[k].fetch_add(1, Ordering::Relaxed);
    });
    for_each_owned((0..1000).collect(), &|k, item: usize| {
        assert_eq!(k, item);
        seen[k].fetch_add(1, Ordering::Relaxed);
    });
    assert!(seen.iter().all(|n| n.load(Ordering::Relaxed) == 3));
    assert_eq!(sum(0..1000, &|k| k as f64), 499_500.0);
    assert_eq!(
        map(0..1000, &|k| 2 * k),
        (0..2000).step_by(2).collect::<Vec<_>>()
    );
    let odd_after_500 = |k: usize| (k > 500 && k % 2 == 1).then_some(k);
    assert_eq!(find_first(0..1000, &odd_after_500), Some(501));
    assert_eq!(find_first(0..500, &odd_after_500), None);
}
