use super::*;
use crate::blocks::{Blocks, Cut};
use crate::LbmError;

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
        let me = t.rank() as f64;
        let x = t.swap(blocks.neighbours(t.rank, 0), [vec![me], vec![10.0 + me]]);
        let y = t.swap(blocks.neighbours(t.rank, 1), [vec![me], vec![10.0 + me]]);
        let max = t.max(vec![me, -me]);
        let all = Transfers::<f64>::gather(t, vec![me; t.rank + 1]);
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
    let [below, above] = Transfers::<f64>::swap(&OneProcess, [Some(0); 2], [vec![1.0], vec![2.0]]);
    assert_eq!((below, above), (vec![2.0], vec![1.0]));
}

#[test]
fn a_thread_that_panics_stops_the_others_instead_of_hanging_them() {
    let got = on_threads(3, |t| {
        assert!(t.rank != 1, "part 1 fails");
        t.max(vec![1.0])
    });
    assert!(got.iter().all(Option::is_none), "every part stopped");
}

#[test]
fn a_failure_is_agreed_by_every_thread() {
    let got = on_threads(3, |t| {
        let mine = (t.rank >= 1).then(|| format!("part {}'s device", t.rank));
        let first = t.first_failure(mine.clone());
        let agreed = agree::<(), Error>(t, mine.map_or(Ok(()), |m| Err(LbmError::Shape(m).into())));
        (first, agreed.map_err(|e| e.to_string()))
    });
    let got: Vec<_> = got.into_iter().map(Option::unwrap).collect();
    // Every part hears of the lowest one that failed.
    for (first, _) in &got {
        assert_eq!(first, &Some((1, "part 1's device".to_string())));
    }
    // Each failing part keeps its own error; the others are told which part failed.
    assert_eq!(got[0].1, Err("rank 1 failed: part 1's device".to_string()));
    assert_eq!(got[2].1, Err("part 2's device".to_string()));
    let none = on_threads(2, |t| t.first_failure(None));
    assert!(none.iter().all(|r| r == &Some(None)));
}

#[test]
fn the_threads_agree_on_sums_counts_and_the_roots_word() {
    let got = on_threads(3, |t| {
        let r = t.rank() as u64;
        (
            t.sum(vec![r as f64, 1.0]),
            t.each(10 + r),
            t.min(5 + r),
            t.any(r == 2),
            t.any(false),
            t.root_says(r == 0),
            t.agree_chunk(100 - r, r),
            t.max_counts(vec![(1 << 62) + r, 7]),
            t.min_counts(vec![(1 << 62) + r, 7 - r]),
        )
    });
    for g in got {
        let g = g.unwrap();
        assert_eq!(g.0, [3.0, 3.0]);
        assert_eq!(g.1, [10, 11, 12]);
        assert_eq!(g.2, 5);
        assert!(g.3 && !g.4 && g.5);
        // The shortest chunk, the largest request.
        assert_eq!(g.6, (98, 2));
        assert_eq!(g.7, [(1 << 62) + 2, 7]);
        assert_eq!(g.8, [1 << 62, 5]);
    }
}

#[test]
fn a_side_with_no_process_gets_back_what_it_would_have_sent() {
    // Three threads in a row 0 - 1 - 2 (not closing): the ends have no process beyond.
    let got = on_threads(3, |t| {
        let r = t.rank();
        let peers = [r.checked_sub(1), (r < 2).then_some(r + 1)];
        t.swap(peers, [vec![10.0 * r as f64], vec![10.0 * r as f64 + 1.0]])
    });
    assert_eq!(got[0], Some([vec![0.0], vec![10.0]]));
    assert_eq!(got[1], Some([vec![1.0], vec![20.0]]));
    assert_eq!(got[2], Some([vec![11.0], vec![21.0]]));
    // Its own neighbour above, none below.
    assert_eq!(
        Transfers::<f64>::swap(&OneProcess, [None, Some(0)], [vec![1.0], vec![2.0]]),
        [vec![1.0], vec![1.0]]
    );
}

#[test]
fn work_beside_a_swap_covers_its_parts_and_its_error_comes_after_the_transfer() {
    let mut parts = Vec::new();
    let mut halo = Halo {
        to: [vec![1.0], vec![2.0]],
        from: Default::default(),
    };
    let got =
        Transfers::<f64>::swap_during(&OneProcess, [Some(0); 2], &mut halo, 3, &mut |k, n| {
            parts.push((k, n));
            Ok(())
        });
    got.unwrap();
    assert_eq!(halo.from, [vec![2.0], vec![1.0]]);
    // The values move between the buffers, which the next exchange reuses: nothing allocated.
    let sent = halo.from.each_ref().map(|v| v.as_ptr());
    halo.to = std::mem::take(&mut halo.from);
    Transfers::<f64>::swap_during(&OneProcess, [Some(0); 2], &mut halo, 0, &mut |_, _| Ok(()))
        .unwrap();
    assert_eq!(halo.from, [vec![1.0], vec![2.0]]);
    assert_eq!(halo.from.each_ref().map(|v| v.as_ptr()), [sent[1], sent[0]]);
    // Nothing travels between the parts of one process: all of them in one call.
    assert_eq!(parts, [(0..3, 3)]);
    // A part that fails on one thread: both threads still trade, the failing one reports.
    let got = on_threads(2, |t| {
        let mut work = |_: std::ops::Range<usize>, _: usize| -> Result<(), Error> {
            match t.rank() {
                1 => Err(LbmError::Shape("the bulk failed".into()).into()),
                _ => Ok(()),
            }
        };
        let mut halo = Halo {
            to: [vec![t.rank() as f32], vec![9.0]],
            from: Default::default(),
        };
        t.swap_during([Some(1 - t.rank()); 2], &mut halo, 2, &mut work)
            .map(|()| halo.from)
            .map_err(|e| e.to_string())
    });
    assert_eq!(got[0].clone().unwrap(), Ok([vec![9.0], vec![1.0]]));
    assert_eq!(got[1].clone().unwrap(), Err("the bulk failed".to_string()));
}
