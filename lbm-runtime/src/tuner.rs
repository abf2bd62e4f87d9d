//! The choice among interchangeable variants of a kernel by timing the real steps: each
//! candidate runs `ROUNDS` timed rounds, in turn, and the fastest (best of its rounds) is
//! kept from then on.
//!
//! The variants must give the same results (a prefetch distance, a kind of store, a
//! workgroup size), so the rounds are the run's own steps and tuning costs nothing but the
//! slower candidates' rounds. Taking the best of a candidate's rounds, and cycling through
//! the candidates rather than timing each in one block, keeps a burst of noise on a shared
//! machine from deciding the choice. The CPU passes' prefetch distances
//! ([`crate::prefetch`]) and the GPU site kernels' workgroup sizes
//! ([`crate::gpu::workgroup`]) are chosen so.

/// Timed rounds per candidate before the choice.
pub(crate) const ROUNDS: usize = 3;

/// The tuning of one kernel among `n` candidates.
#[derive(Debug, Clone)]
pub(crate) struct Tuner {
    /// The fastest round of each candidate so far, per unit of work (`None`: not timed yet).
    fastest: Vec<Option<f64>>,
    /// Rounds timed so far.
    rounds: usize,
    /// The chosen candidate, once every candidate has had its rounds.
    chosen: Option<usize>,
}

impl Tuner {
    /// A tuning among `n ≥ 1` candidates.
    pub(crate) fn new(n: usize) -> Self {
        assert!(n > 0, "a tuning needs a candidate");
        Self {
            fastest: vec![None; n],
            rounds: 0,
            chosen: None,
        }
    }

    /// The candidate the next round uses: the chosen one, once chosen.
    pub(crate) fn next(&self) -> usize {
        self.chosen.unwrap_or(self.rounds % self.fastest.len())
    }

    /// Records that the round of [`Tuner::next`] cost `cost` per unit of work (seconds per
    /// site column, per step, …); after the last round, chooses. Ignored once chosen.
    pub(crate) fn record(&mut self, cost: f64) {
        if self.chosen.is_some() {
            return;
        }
        let c = self.next();
        self.fastest[c] = Some(self.fastest[c].map_or(cost, |t| t.min(cost)));
        self.rounds += 1;
        let n = self.fastest.len();
        if self.rounds == ROUNDS * n {
            let time = |c: usize| self.fastest[c].unwrap_or(f64::INFINITY);
            self.chosen = (0..n).min_by(|&a, &b| time(a).total_cmp(&time(b)));
        }
    }

    /// Ends the tuning at candidate `c` without more rounds (a round could not be timed).
    pub(crate) fn settle(&mut self, c: usize) {
        assert!(
            c < self.fastest.len(),
            "candidate {c} of {}",
            self.fastest.len()
        );
        self.chosen = Some(c);
    }

    /// The chosen candidate, once chosen.
    pub(crate) fn chosen(&self) -> Option<usize> {
        self.chosen
    }

    /// Whether the tuning has not begun (no round timed) or has chosen: a benchmark times
    /// only then.
    pub(crate) fn settled(&self) -> bool {
        self.rounds == 0 || self.chosen.is_some()
    }
}

#[cfg(test)]
#[path = "tuner_tests.rs"]
mod tests;
