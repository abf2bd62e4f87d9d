use super::*;
use crate::group::{Group, Threads};

/// Field `j`'s value at the global site `[x, y, z]`.
fn value(j: usize, [x, y, z]: [usize; 3]) -> f64 {
    (j * 1_000_000 + x * 10_000 + y * 100 + z) as f64
}

/// Blocks cut along one, two and three axes moved to the planes in messages of one plane, of a
/// few planes and of every plane at once: every process gets every site of its planes.
#[test]
fn blocks_moved_to_planes_in_messages_of_any_size_give_every_site() {
    let size = [11, 6, 4];
    let (ly, plane) = (size[1], size[1] * size[2]);
    for cut in [[1, 2, 1], [2, 2, 1], [1, 2, 2], [3, 1, 2], [2, 2, 2]] {
        let dec = Blocks::even(size, Cut(cut));
        let n = dec.count();
        let boxes: Vec<_> = (0..n).map(|r| dec.block(r)).collect();
        let planes: Vec<_> = (0..n)
            .map(|r| output_planes(&boxes[r], size, (r, n)))
            .collect();
        for bytes in [1, 3 * 2 * 8 * 6, 1 << 20] {
            let runs = Threads::run(n, |t| {
                let me = t.rank();
                let b = boxes[me].clone();
                let mut fields = |cols: Range<usize>| -> Vec<Vec<f64>> {
                    (0..2)
                        .map(|j| {
                            let (ys, zs) = (b[1].clone(), b[2].clone());
                            (cols.clone())
                                .flat_map(|c| {
                                    let x = b[0].start + c;
                                    let ys = ys.clone();
                                    zs.clone().flat_map(move |z| {
                                        ys.clone().map(move |y| value(j, [x, y, z]))
                                    })
                                })
                                .collect()
                        })
                        .collect()
                };
                moved(&t, (&boxes, &planes), size, (2, &mut fields), bytes)
            });
            for (me, out) in runs.iter().enumerate() {
                let xs = planes[me].clone();
                for (j, field) in out.iter().enumerate() {
                    assert_eq!(field.len(), xs.len() * plane);
                    for (k, &v) in field.iter().enumerate() {
                        let (x, s) = (xs.start + k / plane, k % plane);
                        let want = value(j, [x, s % ly, s / ly]);
                        assert_eq!(v, want, "cut {cut:?}, {bytes} B a message, process {me}");
                    }
                }
            }
        }
    }
}
