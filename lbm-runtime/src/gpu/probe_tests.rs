use super::*;

#[test]
fn chains_start_apart_in_the_unit_interval() {
    let mut starts: Vec<f64> = (0..FMA_CHAINS)
        .flat_map(|c| (0..4).map(move |l| fma_start(5, c, l)))
        .collect();
    assert!(starts.iter().all(|s| (0.0..1.0).contains(s)));
    starts.sort_by(f64::total_cmp);
    starts.dedup();
    assert_eq!(starts.len(), 4 * FMA_CHAINS);
}

#[test]
fn batches_fill_their_time_from_the_first_batch_rate() {
    // 1 ms per unit: a first batch of 4 units sizes the batches to 100 ms of units.
    let mut calls = Vec::new();
    let (rate, units) = batched(4, |k| {
        calls.push(k);
        Ok(k as f64 * 1e-3)
    })
    .unwrap();
    assert_eq!(units, (BATCH_SECONDS * 1e3).ceil() as u64);
    assert_eq!(calls, [vec![4], vec![units; BATCHES]].concat());
    assert!(
        (rate.best - 1e3).abs() < 1e-6 && rate.spread < 1e-9,
        "{rate:?}"
    );
}

#[test]
fn batches_keep_at_least_the_asked_units_and_at_most_the_cap() {
    // Slower than the batch time: the asked units; far faster: the cap.
    assert_eq!(batched(7, |k| Ok(k as f64)).unwrap().1, 7);
    assert_eq!(batched(1, |k| Ok(k as f64 * 1e-9)).unwrap().1, MAX_BATCH);
    assert_eq!(
        batched(MAX_BATCH + 1, |k| Ok(k as f64 * 1e-9)).unwrap().1,
        MAX_BATCH + 1
    );
}
