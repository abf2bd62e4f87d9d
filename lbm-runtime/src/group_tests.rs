use super::*;
use crate::blocks::{Blocks, Cut};

/// Runs `body` on each thread of a group of `parts` threads and returns what each gave, or
/// `None` where it panicked.
fn on_threads<R: Send + 'static>(
    parts: usize,
    body: impl Fn(&Threads) -> R + Send + Sync + Copy + 'static,
) -> Vec<Option<R>> {
    let threads: Vec<_> = Threads::group(parts)
        .into_iter()
        .map(|t| {
            std::thread::spawn(move || {
                let _guard = t.guard();
                body(&t)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().ok()).collect()
}

#[test]
fn the_threads_trade_with_their_neighbours_and_reduce() {
    // Blocks 2 × 2: along y rank 0's neighbours below and above are both rank 2.
    let got = on_threads(4, |t| {
        let blocks = Blocks::even([8, 6, 1], Cut([2, 2, 1]));
        let me = Group::<f64>::rank(t) as f64;
        let x = t.swap(blocks.neighbours(t.rank, 0), [vec![me], vec![10.0 + me]]);
        let y = t.swap(blocks.neighbours(t.rank, 1), [vec![me], vec![10.0 + me]]);
        let max = Group::<f64>::max(t, vec![me, -me]);
        let all = Group::<f64>::gather(t, vec![me; t.rank + 1]);
        (x, y, max, all)
    });
    let got: Vec<_> = got.into_iter().map(Option::unwrap).collect();
    // Rank 1 hears along x from rank 0 (below: its upward value) and rank 0 (above, the row
    // closing: its downward value).
    assert_eq!(got[1].0, [vec![10.0], vec![0.0]]);
    // Rank 3 hears along y from rank 1 both ways.
    assert_eq!(got[3].1, [vec![11.0], vec![1.0]]);
    assert_eq!(got[1].2, [3.0, 0.0]);
    assert_eq!(
        got[0].3,
        Some(vec![0.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0])
    );
    assert_eq!(got[1].3, None);
}

#[test]
fn one_process_is_its_own_neighbour() {
    let [below, above] = Group::<f64>::swap(&OneProcess, (0, 0), [vec![1.0], vec![2.0]]);
    assert_eq!((below, above), (vec![2.0], vec![1.0]));
}

#[test]
fn a_thread_that_panics_stops_the_others_instead_of_hanging_them() {
    let got = on_threads(3, |t| {
        assert!(t.rank != 1, "part 1 fails");
        Group::<f64>::max(t, vec![1.0])
    });
    assert!(got.iter().all(Option::is_none), "every part stopped");
}

#[test]
fn a_failure_is_agreed_by_every_thread() {
    let got = on_threads(3, |t| {
        let mine = (t.rank >= 1).then(|| format!("part {}'s device", t.rank));
        Group::<f64>::first_failure(t, mine)
    });
    // Each failing part keeps its own message; the others hear the lowest one's.
    assert_eq!(got[0].clone().flatten().as_deref(), Some("part 1's device"));
    assert_eq!(got[2].clone().flatten().as_deref(), Some("part 2's device"));
    let none = on_threads(2, |t| Group::<f64>::first_failure(t, None));
    assert!(none.iter().all(|r| r == &Some(None)));
}
