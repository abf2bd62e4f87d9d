//! How far ahead the CPU passes prefetch, and how the fused two-copy step stores, chosen by
//! timing the passes themselves.
//!
//! Every interior load of a pass is preceded by a software prefetch of the element `D` bytes
//! further along the line. The AA pull half-step reads each cluster's `Q` elements from
//! `2H + 1` lines, a pattern the hardware prefetchers do not follow (without software
//! prefetches D2Q9's pull can run at a fraction of its speed), so `D` matters, and its best
//! value is a property of the machine, not of the code: it differs between cores with
//! different L1 caches, between models and between layouts. The prefetches go into L2
//! (`prefetcht1`, see `RawBuf::prefetch`): against L1 that moved the best distance out and
//! the speed up; hence the candidates below, 1 to 64 KiB.
//!
//! No software prefetch at all is not a candidate: with none (each load prefetching its own
//! line), the fused steps of CAoSoA lost 20–45 % of their speed; only CSoA, whose
//! populations are separate streams the hardware prefetchers follow, ran nearly as fast.
//! (The measurements behind this module: see docs/performance.md.)
//!
//! No constant serves every machine, so a lattice tunes `D` per pass while it runs
//! ([`crate::tuner`]): the first `ROUNDS × CANDIDATES.len()` sweeps of each pass cycle through
//! the candidate distances, and the fastest (best of its rounds, per site column) is used from
//! then on. A prefetch is a
//! hint: the distance changes no result, so tuning during the real steps costs nothing but
//! the slower candidates' sweeps. Passes that do not prefetch (propagate, bc) are not tuned.
//!
//! The fused two-copy step's candidates are the distances times the kinds of store open to
//! its lattice ([`Stores::candidates`]): non-temporal stores are best for a memory-bound model
//! and write-prefetched ones may be for a compute-bound one, whose clusters end in bursts of
//! `Q` stores (see [`Stores`]); the choice, like the distance, is the machine's.
//! [`crate::Lattice::tuned`] says what a lattice kept, and `lbm bench` prints it beside each
//! row. The distance kept differs between layouts and precisions, and on a shared machine,
//! where candidates lie within the noise of each other, from one run to the next.

use crate::kernels::{Pass, Stores};
use crate::tuner::Tuner;

/// The candidate distances, in bytes ahead of the cluster being computed, per stream.
pub const CANDIDATES: [usize; 4] = [1 << 10, 4 << 10, 16 << 10, 64 << 10];

/// The most candidates a pass has (the fused two-copy step's distances times two kinds of
/// store): a lattice that runs a pass this many times has timed every candidate once.
#[cfg(test)]
pub(crate) const CANDIDATES_MAX: usize = 2 * CANDIDATES.len();

/// What one sweep of a pass uses: its prefetch distance in bytes, and its kind of store; once
/// a pass has settled, what its tuning kept ([`crate::Lattice::tuned`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// How far ahead each interior load prefetches, in bytes (one of [`CANDIDATES`]).
    pub bytes: usize,
    /// How the pass stores (only the fused two-copy step has a choice).
    pub stores: Stores,
}

/// As reports print it: `16 KiB`, with the kind of store where it is not plain
/// (`16 KiB non-temporal`).
impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} KiB", self.bytes >> 10)?;
        match self.stores {
            Stores::Plain => Ok(()),
            s => write!(f, " {}", s.name()),
        }
    }
}

/// The prefetch distance (and, for the fused step, the kind of store) of each tuned pass of
/// one lattice.
#[derive(Debug, Clone)]
pub(crate) struct Prefetch {
    fused: Tuning,
    collide: Tuning,
    aa_pull: Tuning,
    aa_local: Tuning,
}

/// The tuning of one pass: its sweeps are the [`Tuner`]'s rounds.
#[derive(Debug, Clone)]
struct Tuning {
    /// The kinds of store tried, each with every distance: candidate `c` is distance
    /// `CANDIDATES[c % CANDIDATES.len()]` with `stores[c / CANDIDATES.len()]`.
    stores: &'static [Stores],
    tuner: Tuner,
}

impl Tuning {
    fn new(stores: &'static [Stores]) -> Self {
        Self {
            stores,
            tuner: Tuner::new(stores.len() * CANDIDATES.len()),
        }
    }

    fn choice(&self, c: usize) -> Choice {
        Choice {
            bytes: CANDIDATES[c % CANDIDATES.len()],
            stores: self.stores[c / CANDIDATES.len()],
        }
    }
}

impl Prefetch {
    /// The tuning of a lattice whose fused step may store with any of `fused_stores`
    /// ([`Stores::candidates`]); the other passes store plainly.
    pub(crate) fn new(fused_stores: &'static [Stores]) -> Self {
        let plain = || Tuning::new(&[Stores::Plain]);
        Self {
            fused: Tuning::new(fused_stores),
            collide: plain(),
            aa_pull: plain(),
            aa_local: plain(),
        }
    }

    fn tuning(&self, pass: Pass) -> Option<&Tuning> {
        match pass {
            Pass::Fused => Some(&self.fused),
            Pass::Collide => Some(&self.collide),
            Pass::AaPull => Some(&self.aa_pull),
            Pass::AaLocal => Some(&self.aa_local),
            Pass::Propagate | Pass::Bc => None,
        }
    }

    fn tuning_mut(&mut self, pass: Pass) -> Option<&mut Tuning> {
        match pass {
            Pass::Fused => Some(&mut self.fused),
            Pass::Collide => Some(&mut self.collide),
            Pass::AaPull => Some(&mut self.aa_pull),
            Pass::AaLocal => Some(&mut self.aa_local),
            Pass::Propagate | Pass::Bc => None,
        }
    }

    /// The distance and kind of store of the next sweep of `pass` (distance 0 for passes that
    /// do not prefetch).
    pub(crate) fn choice(&self, pass: Pass) -> Choice {
        self.tuning(pass).map_or(
            Choice {
                bytes: 0,
                stores: Stores::Plain,
            },
            |t| t.choice(t.tuner.next()),
        )
    }

    /// Records a sweep of `pass` over `columns` site columns that took `seconds`.
    pub(crate) fn record(&mut self, pass: Pass, columns: usize, seconds: f64) {
        if let Some(t) = self.tuning_mut(pass).filter(|_| columns > 0) {
            t.tuner.record(seconds / columns as f64);
        }
    }

    /// Whether every pass that has run has chosen its distance (benchmarks time only after
    /// this).
    pub(crate) fn settled(&self) -> bool {
        [&self.fused, &self.collide, &self.aa_pull, &self.aa_local]
            .iter()
            .all(|t| t.tuner.settled())
    }

    /// What the tuning of `pass` kept, once it has chosen (`None` before, and for passes that
    /// are not tuned).
    pub(crate) fn kept(&self, pass: Pass) -> Option<Choice> {
        let t = self.tuning(pass)?;
        t.tuner.chosen().map(|c| t.choice(c))
    }
}

#[cfg(test)]
#[path = "prefetch_tests.rs"]
mod tests;
