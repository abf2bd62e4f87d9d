use super::threads_per_rank;

#[test]
fn a_nodes_cores_are_shared_out_among_its_ranks() {
    // 2 ranks on 2 cores: one each (not two each, four threads on two cores).
    assert_eq!(threads_per_rank(2, 2, 2, 0), Some(1));
    assert_eq!(threads_per_rank(2, 2, 2, 1), Some(1));
    // 3 ranks on 8 cores: 3 + 3 + 2, every core used once.
    let shares: Vec<_> = (0..3).map(|r| threads_per_rank(8, 8, 3, r)).collect();
    assert_eq!(shares, [Some(3), Some(3), Some(2)]);
    // More ranks than cores: one each.
    assert_eq!(threads_per_rank(2, 2, 8, 7), Some(1));
    // One rank, or a rank the launcher bound to some cores: rayon's default.
    assert_eq!(threads_per_rank(64, 64, 1, 0), None);
    assert_eq!(threads_per_rank(64, 4, 16, 3), None);
}
