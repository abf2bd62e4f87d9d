//! A finite-difference grid split between the host and a device ([`HeteroFdGrid`]): the
//! planes of the outermost axis cut into a low border `[0, M)`, the bulk `[M, N − M)` and a
//! high border `[N − M, N)`, the borders on the host ([`FdGrid`]) and the bulk on the device
//! ([`GpuFdGrid`]), as the lattice's split cuts its columns.
//!
//! Each part runs in a thread of its own, the three a group of threads ([`Threads`]) holding
//! the blocks of a cut along the outermost axis ([`Blocks::along`]): after every stage each
//! part trades its edge planes with its neighbours, so
//! the parts compute concurrently (the device's stage is submitted, the host's borders
//! computed beside it) and every node gets the single grid's operations. The split matches
//! the host grid to the GPU-vs-CPU tolerance.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::blocks::Blocks;
use crate::fd::{FdError, FdGrid, FdRun, FdScheme, Side};
use crate::gpu::{GpuContext, GpuFdGrid};
use crate::group::Threads;
use crate::{Error, Real};

/// One part of the split, on the host or on the device.
enum Part<S: FdScheme, T: Real> {
    Host(Box<FdGrid<S, T>>),
    Device(Box<GpuFdGrid<S, T>>),
}

impl<S: FdScheme, T: Real> Part<S, T> {
    fn run(&mut self) -> &mut dyn FdRun {
        match self {
            Part::Host(g) => g.as_mut(),
            Part::Device(g) => g.as_mut(),
        }
    }

    fn set_whole(&mut self, u: usize, values: &[f64]) -> Result<(), Error> {
        match self {
            Part::Host(g) => {
                g.set_whole(u, values);
                Ok(())
            }
            Part::Device(g) => g.set_whole(u, values),
        }
    }
}

/// Work for a part's thread.
type Job<S, T> = Box<dyn FnOnce(&mut Part<S, T>) + Send>;

/// A part's thread and the way to give it work.
struct Worker<S: FdScheme, T: Real> {
    jobs: Option<Sender<Job<S, T>>>,
    thread: Option<JoinHandle<()>>,
}

/// A finite-difference grid whose border planes run on the host and bulk on a device.
pub struct HeteroFdGrid<S: FdScheme, T: Real> {
    workers: Vec<Worker<S, T>>,
    n: [usize; 3],
    h: f64,
    host_planes: usize,
    steps: u64,
    time: f64,
    bytes_per_node: usize,
    device: String,
}

impl<S: FdScheme, T: Real> HeteroFdGrid<S, T> {
    /// [`FdGrid::new`]'s grid, its first and last `host_planes` planes of the outermost axis
    /// on the host and the others on the device of `ctx`, the unknowns zero. Refuses borders
    /// thinner than the stencils reach, a bulk thinner than that, and what either grid refuses.
    pub fn new(
        ctx: Arc<GpuContext>,
        n: [usize; 3],
        h: f64,
        params: S::Params,
        sides: Vec<Side>,
        host_planes: usize,
    ) -> Result<Self, Error> {
        let outer = S::DIM - 1;
        let planes = n[outer];
        let least = Self::least_planes();
        let axis = ["x", "y", "z"][outer];
        if host_planes < least || planes < 2 * host_planes + least {
            return Err(FdError::Setup(format!(
                "{}: the host/device split needs at least {least} planes along {axis} on the host at each end and {least} on the device (its stencils reach {}); {planes} planes cannot be cut so with {host_planes} on the host: give between {least} and {} host planes{}",
                S::NAME,
                S::REACH,
                planes.saturating_sub(least) / 2,
                if planes < 3 * least {
                    ", and more nodes"
                } else {
                    ""
                }
            ))
            .into());
        }
        let blocks = Blocks::along(n, outer, vec![0, host_planes, planes - host_planes, planes]);
        let device = ctx.describe();
        let (built, done) = channel();
        let workers = Threads::group(3)
            .into_iter()
            .enumerate()
            .map(|(k, ring)| {
                let (jobs, inbox) = channel::<Job<S, T>>();
                let (built, ctx, sides) = (built.clone(), ctx.clone(), sides.clone());
                let blocks = blocks.clone();
                let thread = std::thread::spawn(move || {
                    // Should this part panic, the others stop at their next meeting.
                    let _guard = ring.guard();
                    let ring = Box::new(ring);
                    let part = if k == 1 {
                        GpuFdGrid::on_blocks(ctx, n, h, params, sides, ring, blocks)
                            .map(|g| Part::Device(Box::new(g)))
                    } else {
                        FdGrid::on_blocks(n, h, params, sides, ring, blocks)
                            .map(|g| Part::Host(Box::new(g)))
                            .map_err(Error::from)
                    };
                    match part {
                        Ok(part) => {
                            let _ = built.send((k, Ok(())));
                            serve(part, inbox);
                        }
                        Err(e) => {
                            let _ = built.send((k, Err(e)));
                        }
                    }
                });
                Worker {
                    jobs: Some(jobs),
                    thread: Some(thread),
                }
            })
            .collect();
        // The parts' threads hold the only senders: a thread that stops unreported ends the
        // wait below.
        drop(built);
        let mut grid = Self {
            workers,
            n,
            h,
            host_planes,
            steps: 0,
            time: 0.0,
            bytes_per_node: 0,
            device,
        };
        let mut outcomes: Vec<(usize, Result<(), Error>)> = (0..3)
            .map(|_| done.recv().expect("a part's thread reports"))
            .collect();
        outcomes.sort_by_key(|(k, _)| *k);
        outcome(outcomes.into_iter().map(|(_, r)| r).collect())?;
        grid.bytes_per_node = grid.each(|p| p.run().bytes_per_node())[0];
        Ok(grid)
    }

    /// The fewest planes a part may hold ([`FdGrid::least_planes`]).
    pub fn least_planes() -> usize {
        FdGrid::<S, T>::least_planes()
    }

    /// The planes at each end on the host.
    pub fn host_planes(&self) -> usize {
        self.host_planes
    }

    /// Sets unknown `u` at every node to `f(x)`, `x = (i h, j h, k h)`, then applies the
    /// walls.
    pub fn set(&mut self, u: usize, f: impl Fn([f64; 3]) -> f64) -> Result<(), Error> {
        let [nx, ny, nz] = self.n;
        let h = self.h;
        let values: Arc<Vec<f64>> = Arc::new(
            (0..nz)
                .flat_map(|k| (0..ny).flat_map(move |j| (0..nx).map(move |i| [i, j, k])))
                .map(|node| f(node.map(|c| c as f64 * h)))
                .collect(),
        );
        outcome(self.each(move |p| p.set_whole(u, &values)))
    }

    /// Runs `job` on every part at once and returns what each gave, in ring order.
    fn each<R: Send + 'static>(
        &self,
        job: impl Fn(&mut Part<S, T>) -> R + Send + Clone + 'static,
    ) -> Vec<R> {
        let (tx, rx) = channel();
        for (k, w) in self.workers.iter().enumerate() {
            let (tx, job) = (tx.clone(), job.clone());
            let sent = w.jobs.as_ref().map(|jobs| {
                jobs.send(Box::new(move |p: &mut Part<S, T>| {
                    let _ = tx.send((k, job(p)));
                }))
            });
            assert!(
                matches!(sent, Some(Ok(()))),
                "the thread of part {k} of the split has stopped"
            );
        }
        drop(tx);
        let mut out: Vec<(usize, R)> = rx.iter().collect();
        assert_eq!(
            out.len(),
            self.workers.len(),
            "a part of the split stopped in a collective call"
        );
        out.sort_by_key(|(k, _)| *k);
        out.into_iter().map(|(_, r)| r).collect()
    }

    /// Runs `job` on every part and keeps their [`outcome`].
    fn collective<R: Send + 'static>(
        &self,
        job: impl Fn(&mut dyn FdRun) -> Result<R, Error> + Send + Clone + 'static,
    ) -> Result<R, Error> {
        outcome(self.each(move |p| job(p.run())))
    }

    /// Steps and time, as every part has them after a collective call.
    fn update(&mut self) {
        let (steps, time) = self.each(|p| (p.run().steps(), p.run().time()))[0];
        (self.steps, self.time) = (steps, time);
    }
}

/// Serves the jobs for `part` until the grid is dropped.
fn serve<S: FdScheme, T: Real>(mut part: Part<S, T>, inbox: Receiver<Job<S, T>>) {
    for job in inbox {
        job(&mut part);
    }
}

/// Whether `e` only reports another part's failure.
fn other_part(e: &Error) -> bool {
    matches!(e, Error::Fd(FdError::OtherRank(_)))
}

/// The parts' outcome, in ring order: the error of the first part that failed on its own,
/// else the first error (another part's, reported), else the first part's value.
fn outcome<R>(mut all: Vec<Result<R, Error>>) -> Result<R, Error> {
    let first = |own: bool| {
        all.iter()
            .position(|r| matches!(r, Err(e) if !own || !other_part(e)))
    };
    let k = first(true).or_else(|| first(false)).unwrap_or(0);
    all.swap_remove(k)
}

impl<S: FdScheme, T: Real> Drop for HeteroFdGrid<S, T> {
    fn drop(&mut self) {
        for w in &mut self.workers {
            w.jobs = None;
        }
        for w in &mut self.workers {
            if let Some(t) = w.thread.take() {
                let _ = t.join();
            }
        }
    }
}

impl<S: FdScheme, T: Real> FdRun for HeteroFdGrid<S, T> {
    fn nodes(&self) -> [usize; 3] {
        self.n
    }
    fn steps(&self) -> u64 {
        self.steps
    }
    fn time(&self) -> f64 {
        self.time
    }
    fn advance(&mut self, steps: u64, dt: f64) -> Result<(), Error> {
        let done = self.collective(move |g| g.advance(steps, dt));
        self.update();
        done
    }
    fn max_rates(&mut self) -> Result<Vec<f64>, Error> {
        self.collective(|g| g.max_rates())
    }
    fn gather(&mut self, u: usize) -> Result<Option<Vec<f64>>, Error> {
        self.collective(move |g| g.gather(u))
    }
    fn bytes_per_node(&self) -> usize {
        self.bytes_per_node
    }
    fn checkpoint(&mut self, path: &Path) -> Result<(), Error> {
        let path: PathBuf = path.into();
        self.collective(move |g| g.checkpoint(&path))
    }
    fn resume(&mut self, path: &Path) -> Result<(), Error> {
        let path: PathBuf = path.into();
        let done = self.collective(move |g| g.resume(&path));
        self.update();
        done
    }
    fn set_unknown(&mut self, u: usize, f: &dyn Fn([f64; 3]) -> f64) -> Result<(), Error> {
        self.set(u, f)
    }
    /// The device's description and the split.
    fn describe(&self) -> String {
        let outer = ["x", "y", "z"][S::DIM - 1];
        format!(
            "on {} (planes {outer} < {m} and ≥ {} on the host)",
            self.device,
            self.n[S::DIM - 1] - self.host_planes,
            m = self.host_planes
        )
    }
}
