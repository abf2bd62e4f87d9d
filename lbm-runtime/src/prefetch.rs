//! How far ahead the CPU passes prefetch, chosen by timing the passes themselves.
//!
//! Every interior load of a pass is preceded by a software prefetch of the element `D` bytes
//! further along the line. The AA pull half-step reads each cluster's `Q` elements from
//! `2H + 1` lines, a pattern the hardware prefetchers do not follow (on a Zen 5 machine
//! D2Q9's pull ran at a quarter of its speed without software prefetches), so `D` matters,
//! and its best value is a property of the machine, not of the code. The pull half-step in
//! MLUPS, CAoSoA⟨8⟩ f64 on two cores, D2Q9 4096² and D3Q19 192³ (issue 15's notes):
//! - Zen 5 (48 KiB L1d): D2Q9 592 at 2 KiB, 616 at 16 KiB; D3Q19 94 at 2 KiB, 165 at 16 KiB;
//! - Zen 4 (32 KiB L1d): D2Q9 275, 258, 245, 232 at 1, 4, 16, 64 KiB; D3Q19 90, 87, 85, 74
//!   at 0.5, 2, 8, 32 KiB.
//!
//! Those were prefetches into L1 (`prefetcht0`). Prefetching into L2 (`prefetcht1`, see
//! `RawBuf::prefetch`) moved the best distance out and the speed up; Zen 4, same probe,
//! MLUPS at 1, 4, 16, 64 KiB: D2Q9 pull 328, 455, 390, 385 (L1: 315, 299, 275, 272), D3Q19
//! pull 84, 102, 99, 113 (L1: 82, 88, 72, 70). Hence the candidates below.
//!
//! No constant serves every machine, so a lattice tunes `D` per pass while it runs: the first
//! `ROUNDS × CANDIDATES.len()` sweeps of each pass cycle through the candidate distances, and
//! the fastest (best of its rounds, per site column) is used from then on. A prefetch is a
//! hint: the distance changes no result, so tuning during the real steps costs nothing but
//! the slower candidates' sweeps. Passes that do not prefetch (propagate, bc) are not tuned.

use crate::kernels::Pass;

/// The candidate distances, in bytes ahead of the cluster being computed, per stream.
const CANDIDATES: [usize; 4] = [1 << 10, 4 << 10, 16 << 10, 64 << 10];

/// Timed sweeps per candidate before the choice.
const ROUNDS: usize = 3;

/// The prefetch distance of each tuned pass of one lattice.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prefetch {
    fused: Tuning,
    collide: Tuning,
    aa_pull: Tuning,
    aa_local: Tuning,
}

/// The tuning of one pass.
#[derive(Debug, Clone, Default)]
struct Tuning {
    /// The fastest sweep of each candidate so far, in seconds per site column (`None`: not
    /// timed yet).
    fastest: [Option<f64>; CANDIDATES.len()],
    /// Sweeps timed so far.
    sweeps: usize,
    /// The chosen candidate, once every candidate has had its rounds.
    chosen: Option<usize>,
}

impl Tuning {
    /// The candidate the next sweep uses.
    fn next(&self) -> usize {
        self.chosen.unwrap_or(self.sweeps % CANDIDATES.len())
    }

    fn record(&mut self, seconds_per_column: f64) {
        if self.chosen.is_some() {
            return;
        }
        let c = self.next();
        let t = self.fastest[c].map_or(seconds_per_column, |t| t.min(seconds_per_column));
        self.fastest[c] = Some(t);
        self.sweeps += 1;
        if self.sweeps == ROUNDS * CANDIDATES.len() {
            let time = |c: usize| self.fastest[c].unwrap_or(f64::INFINITY);
            self.chosen = (0..CANDIDATES.len()).min_by(|&a, &b| time(a).total_cmp(&time(b)));
        }
    }
}

impl Prefetch {
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

    /// The distance, in bytes, for the next sweep of `pass` (0 for passes that do not
    /// prefetch).
    pub(crate) fn bytes(&self, pass: Pass) -> usize {
        self.tuning(pass).map_or(0, |t| CANDIDATES[t.next()])
    }

    /// Records a sweep of `pass` over `columns` site columns that took `seconds`.
    pub(crate) fn record(&mut self, pass: Pass, columns: usize, seconds: f64) {
        if let Some(t) = self.tuning_mut(pass).filter(|_| columns > 0) {
            t.record(seconds / columns as f64);
        }
    }

    /// Whether every pass that has run has chosen its distance (benchmarks time only after
    /// this).
    pub(crate) fn settled(&self) -> bool {
        [&self.fused, &self.collide, &self.aa_pull, &self.aa_local]
            .iter()
            .all(|t| t.sweeps == 0 || t.chosen.is_some())
    }

    /// The chosen distance of `pass` in bytes, once chosen.
    #[cfg(test)]
    fn chosen(&self, pass: Pass) -> Option<usize> {
        self.tuning(pass)?.chosen.map(|c| CANDIDATES[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass whose sweeps are fastest at one candidate settles on it after its rounds,
    /// whatever the order of the noise, and keeps it; untimed passes do not hold back
    /// `settled`.
    #[test]
    fn settles_on_the_fastest_candidate() {
        let mut p = Prefetch::default();
        assert!(p.settled());
        let cost = |bytes: usize| if bytes == 16 << 10 { 1.0 } else { 2.0 };
        for sweep in 0..ROUNDS * CANDIDATES.len() {
            assert!(!p.settled() || sweep == 0);
            let bytes = p.bytes(Pass::AaPull);
            // Noise: every other sweep is slowed by a third.
            let noise = if sweep % 2 == 0 { 1.0 } else { 1.33 };
            p.record(Pass::AaPull, 10, 10.0 * cost(bytes) * noise);
        }
        assert!(p.settled());
        assert_eq!(p.chosen(Pass::AaPull), Some(16 << 10));
        assert_eq!(p.bytes(Pass::AaPull), 16 << 10);
        p.record(Pass::AaPull, 10, 0.001);
        assert_eq!(p.bytes(Pass::AaPull), 16 << 10, "the choice is final");
        assert_eq!(p.chosen(Pass::AaLocal), None);
        assert_eq!(p.bytes(Pass::Propagate), 0);
    }

    /// Each candidate is timed the same number of times before the choice.
    #[test]
    fn every_candidate_gets_its_rounds() {
        let mut p = Prefetch::default();
        let mut seen = [0; CANDIDATES.len()];
        for _ in 0..ROUNDS * CANDIDATES.len() {
            let b = p.bytes(Pass::Fused);
            seen[CANDIDATES.iter().position(|&c| c == b).unwrap()] += 1;
            p.record(Pass::Fused, 1, 1.0);
        }
        assert_eq!(seen, [ROUNDS; CANDIDATES.len()]);
        assert!(p.chosen(Pass::Fused).is_some());
    }
}
