use super::in_turn;

#[test]
fn ranks_of_a_node_take_the_best_adapters_in_turn() {
    // Two discrete GPUs with f64, then an integrated one and a CPU adapter.
    let keys = [(0, false), (0, false), (1, false), (4, true)];
    let taken: Vec<usize> = (0..5).map(|r| in_turn(&keys, r)).collect();
    assert_eq!(taken, [0, 1, 0, 1, 0]);
    assert_eq!(in_turn(&[(4, false)], 3), 0);
    assert_eq!(in_turn::<(u8, bool)>(&[], 3), 0);
}
